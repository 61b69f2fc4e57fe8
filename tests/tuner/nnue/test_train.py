"""Training runs: a planted target learnt, tiny data, exact resume, the split, the command line."""

import hashlib
import json
import random

import chess
import numpy as np
import pytest

from tests.wasp.nnue.test_network import arch_json, numpy_forward_arch, random_fens, random_net
from tuner.cli import main as wasp_tune
from tuner.nnue import data as D
from tuner.nnue.grow import start_from
from tuner.nnue.train import Config, Training, epoch_order, read_config, read_history, split
from wasp.board import Position
from wasp.nnue import arch as A
from wasp.nnue import netfile
from wasp.nnue.accumulator import nn_array
from wasp.nnue.arch import Arch
from wasp.nnue.network import output


def _config(tmp_path, data=(), **kw):
    settings = {"hidden": 16, "epochs": 2, "batch_size": 256, "valid": 0.1, "lr": 0.01}
    settings.update(kw)
    return Config(data=[str(p) for p in data], output=str(tmp_path / "net.nnue"), **settings)


def _resume_matches(whole, directory, config, stop_after, net=None):
    """A run stopped after `stop_after` batches, reopened and finished ends on `whole`'s net."""
    part = Training.create(directory, config, net=net)
    assert not part.train(progress=False, stop_after=stop_after)
    part = Training.open(directory)
    assert part.train(progress=False)
    for name, a in whole.net.params.items():
        assert np.array_equal(a, part.net.params[name]), name


def test_a_small_net_learns_material_to_a_low_loss(tmp_path):
    boards = D.random_records(8000, seed=3, pieces=(4, 16))
    target = 1 / (1 + np.exp(-D.scores(boards) / 400))
    cfg = _config(tmp_path, hidden=16, epochs=6, batch_size=512, wdl=0.0)
    run = Training.create(tmp_path / "run", cfg, D.Dataset(boards))
    assert run.train(progress=False)
    valid = [row["valid_loss"] for row in run.history]
    assert valid[-1] < 0.002 < 0.1 * target.var()  # the constant guess would score var
    assert run.best[1] == 1 + int(np.argmin(valid))  # the net kept is the best epoch's


def test_data_smaller_than_a_batch_trains_and_exports(tmp_path):
    boards = D.random_records(40, seed=1)
    bf = tmp_path / "tiny.bf"
    D.write_bf(boards, bf)
    cfg = _config(tmp_path, [bf], batch_size=16384, epochs=3, valid=0.0)
    run = Training.create(tmp_path / "run", cfg)
    assert run.batches() == 1
    before = run.net.copy()
    assert run.train(progress=False)
    assert not np.array_equal(before.params["l0w"], run.net.params["l0w"])
    path = run.export()
    assert netfile.read(path).hidden == 16
    meta = json.loads((tmp_path / "net.nnue.json").read_text())
    assert meta["positions"] == {"train": 40, "valid": 0, "split": "none"}
    assert meta["epochs"] == 3 and len(meta["losses"]) == 3


def test_resume_continues_exactly(tmp_path):
    boards = D.random_records(1500, seed=2)
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    whole = Training.create(tmp_path / "whole", _config(tmp_path, [bf], epochs=3), threads=2)
    assert whole.train(progress=False)
    part = Training.create(tmp_path / "part", _config(tmp_path, [bf], epochs=3), threads=2)
    assert not part.train(progress=False, stop_after=7)  # in the middle of epoch 2
    part = Training.open(tmp_path / "part", threads=1)  # the thread count does not matter
    assert (part.epoch, part.batch) == (1, 1)
    assert part.train(progress=False)
    for name, a in whole.net.arrays().items():
        assert np.array_equal(a, part.net.arrays()[name]), name
    assert [r["valid_loss"] for r in whole.history] == [r["valid_loss"] for r in part.history]
    assert np.array_equal(whole.final_net().params["l0w"], part.final_net().params["l0w"])


def test_a_king_bucketed_run_with_a_factoriser_resumes_exactly_and_exports_its_arch(tmp_path):
    layout = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
              8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]
    arch = Arch("buckets-mirrored", layout, 16, output_buckets=8)
    boards = D.random_records(1500, seed=2)
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    settings = {"arch": arch.to_json(), "factoriser": True, "epochs": 2}
    whole = Training.create(tmp_path / "whole", _config(tmp_path, [bf], **settings))
    assert whole.opt.clip_of("l0f") == 0.99 and whole.opt.clip_of("l1w") == 1.98
    assert whole.train(progress=False)
    _resume_matches(whole, tmp_path / "part", _config(tmp_path, [bf], **settings), 4)
    assert np.abs(whole.net.params["l0f"]).max() > 0  # the factoriser trained
    assert np.abs(whole.net.params["l0w"]).max() <= 0.99
    path = whole.export()
    assert path.stat().st_size == arch.file_size()  # the factoriser merged, not written
    assert A.arch_of(path) == arch
    assert A.arch_of(whole.dir / "nets" / "epoch-2.nnue") == arch
    meta = json.loads((tmp_path / "net.nnue.json").read_text())
    assert meta["architecture"] == "(768x10hm -> 16)x2 -> 1x8, SCReLU, a factoriser merged"


def test_a_factoriser_needs_king_buckets(tmp_path):
    with pytest.raises(ValueError, match="-factoriser needs king buckets"):
        _config(tmp_path, factoriser=True).check()


def test_split_keeps_games_whole_or_takes_blocks():
    games = np.repeat(np.arange(50), 20)
    train, valid = split(len(games), games, 0.1, seed=1)
    assert len(np.intersect1d(games[train], games[valid])) == 0
    assert len(np.unique(games[valid])) == 5
    assert sorted(np.concatenate([train, valid]).tolist()) == list(range(1000))
    train, valid = split(100_000, None, 0.05, seed=1)
    assert len(valid) == 5000 and np.all(np.diff(valid)[:999] == 1)  # blocks of 1,000
    train, valid = split(3, None, 0.05, seed=1)
    assert len(train) == 2 and len(valid) == 1


def test_cli_trains_a_net_from_text(tmp_path, capsys):
    lines = [f"{'4k3/8/8/8/8/8/8/4K3' if i % 2 else '4k3/8/8/8/8/8/8/Q3K3'} w - - 0 1 | "
             f"{0 if i % 2 else 900} | {0.5 if i % 2 else 1.0}\n" for i in range(60)]
    data = tmp_path / "d.txt"
    data.write_text("".join(lines))
    out = tmp_path / "nets" / "a.nnue"
    code = wasp_tune(["nnue", "train", str(data), "-o", str(out), "-hidden", "16", "-epochs",
                      "2", "-quiet"])
    assert code == 0
    assert out.stat().st_size == netfile.file_size(16)
    meta = json.loads((tmp_path / "nets" / "a.nnue.json").read_text())
    assert meta["command"].startswith("wasp-tune nnue train ")
    run_json = json.loads((tmp_path / "nets" / "a.nnue.run" / "run.json").read_text())
    assert "init" not in meta and "init" not in run_json  # from random weights: no record
    assert meta["data"] == [{"path": str(data), "positions": 60}]
    assert (tmp_path / "nets" / "a.nnue.run" / "history.csv").exists()
    for epoch in (1, 2):
        each = tmp_path / "nets" / "a.nnue.run" / "nets" / f"epoch-{epoch}.nnue"
        assert netfile.read(each).hidden == 16
    assert wasp_tune(["nnue", "train", str(data), "-o", str(out), "-quiet"]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert wasp_tune(["nnue", "train", "-resume", str(out) + ".run", "-epochs", "3",
                      "-quiet"]) == 0
    meta = json.loads((tmp_path / "nets" / "a.nnue.json").read_text())
    assert meta["epochs"] == 3 and meta["resumed"][0].endswith("-epochs 3 -quiet")
    data.unlink()
    assert wasp_tune(["nnue", "train", "-resume", str(out) + ".run", "-epochs", "4",
                      "-quiet"]) == 1
    assert capsys.readouterr().err.strip() == (f"wasp-tune nnue train: error: data file "
                                               f"{data}: no such file")


def random_games_as_text(path, games=12, seed=3):
    """Random legal games as datagen writes them: text lines and their .moves side record."""
    rng = random.Random(seed)
    lines, side = [], []
    for g in range(games):
        board, result = chess.Board(), rng.choice(["1.0", "0.5", "0.0"])
        for _ in range(rng.randint(20, 60)):
            move = rng.choice(list(board.legal_moves))
            lines.append(f"{board.fen()} | {rng.randint(-600, 600)} | {result}\n")
            side.append(f"{g} {board.ply()} {move.uci()}\n")
            board.push(move)
            if board.is_game_over():
                break
    path.write_text("".join(lines))
    path.with_suffix(".moves").write_text("".join(side))
    return path


def test_a_vf_file_trains_the_net_its_text_trains(tmp_path):
    text = random_games_as_text(tmp_path / "d.txt")
    vf = tmp_path / "d.vf"
    assert wasp_tune(["data", "convert", str(text), str(vf), "-quiet"]) == 0
    nets = []
    for data in (text, vf):
        out = tmp_path / f"{data.suffix[1:]}.nnue"
        assert wasp_tune(["nnue", "train", str(data), "-o", str(out), "-hidden", "16",
                          "-epochs", "2", "-batch-size", "64", "-valid", "0.2", "-quiet"]) == 0
        nets.append(out.read_bytes())
        meta = json.loads((tmp_path / f"{out.name}.json").read_text())
        assert meta["positions"]["split"] == "by game"
    assert nets[0] == nets[1]


def test_the_filter_flags_read_vf_files_and_stay_with_the_run(tmp_path, capsys):
    text = random_games_as_text(tmp_path / "d.txt")
    vf = tmp_path / "d.vf"
    assert wasp_tune(["data", "convert", str(text), str(vf), "-quiet"]) == 0
    flags = ["-min-ply", "10", "-no-check", "-no-capture", "-max-score", "400"]
    kept = tmp_path / "kept.txt"
    assert wasp_tune(["data", "convert", str(vf), str(kept), *flags, "-quiet"]) == 0
    out = tmp_path / "f.nnue"
    assert wasp_tune(["nnue", "train", str(vf), "-o", str(out), "-hidden", "16", "-epochs", "1",
                      *flags, "-quiet"]) == 0
    meta = json.loads((tmp_path / "f.nnue.json").read_text())
    positions = len(kept.read_text().splitlines())
    assert 0 < positions < len(text.read_text().splitlines())
    assert meta["data"] == [{"path": str(vf), "positions": positions}]
    assert wasp_tune(["nnue", "train", "-resume", str(out) + ".run", "-epochs", "2",
                      "-quiet"]) == 0
    assert wasp_tune(["nnue", "train", "-resume", str(out) + ".run", "-epochs", "3",
                      "-min-ply", "4", "-quiet"]) == 2
    assert "-min-ply cannot change with -resume" in capsys.readouterr().err
    assert wasp_tune(["nnue", "train", str(text), "-o", str(tmp_path / "t.nnue"), "-no-check",
                      "-quiet"]) == 2
    assert "viriformat" in capsys.readouterr().err
    bad = tmp_path / "bad.vf"
    bad.write_bytes(vf.read_bytes()[:-2])
    assert wasp_tune(["nnue", "train", str(bad), "-o", str(tmp_path / "b.nnue"), "-quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ends inside game" in err[0]


def test_cli_bad_line_is_one_message_with_file_and_line(tmp_path, capsys):
    data = tmp_path / "d.txt"
    data.write_text("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0 | 0.5\n4k3/8/8/8/8/8/8/4K3 w - - 0 1 | "
                    "zero | 0.5\n")
    code = wasp_tune(["nnue", "train", str(data), "-o", str(tmp_path / "n.nnue"), "-quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert err[0].startswith(f"wasp-tune nnue train: error: {data}:2: bad score")


@pytest.mark.parametrize("argv, code, words", [
    (["-o", "n.nnue"], 2, "no data files"),
    (["missing.txt", "-o", "n.nnue"], 1, "no such file"),
    (["DATA", "-o", "n.nnue", "-wdl", "2"], 2, "-wdl must be in [0, 1]"),
    (["DATA"], 2, "-o NET.nnue is required"),
    (["-resume", "nowhere"], 1, "no run to resume"),
    (["-resume", "nowhere", "-hidden", "64"], 2, "-hidden cannot change with -resume"),
    (["-resume", "nowhere", "-mirror"], 2, "-mirror cannot change with -resume"),
])
def test_cli_usage_errors(tmp_path, capsys, monkeypatch, argv, code, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DATA").write_text("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0 | 0.5\n")
    assert wasp_tune(["nnue", "train", *argv, "-quiet"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_the_run_directory_readers_give_back_the_settings_and_history(tmp_path):
    from tuner.nnue.train import read_config, read_history

    boards = D.random_records(300, seed=4)
    cfg = _config(tmp_path, batch_size=64)
    run = Training.create(tmp_path / "run", cfg, D.Dataset(boards))
    assert read_history(run.dir) == []  # before the first epoch ends
    assert run.train(progress=False)
    config, positions = read_config(run.dir)
    assert config == cfg and positions == 300
    rows = read_history(run.dir)
    assert [r["epoch"] for r in rows] == [1, 2]
    for row, kept in zip(rows, run.history, strict=True):
        assert row == pytest.approx(kept)


def test_mirror_flips_half_of_each_epoch_and_resumes_exactly(tmp_path):
    train = np.arange(10_000, dtype=np.int64)
    plain = epoch_order(train, 3, 4)
    mirrored = epoch_order(train, 3, 4, mirror=True)
    assert np.array_equal(np.where(mirrored < 0, ~mirrored, mirrored), plain)
    assert 4700 < (mirrored < 0).sum() < 5300
    assert np.array_equal(mirrored, epoch_order(train, 3, 4, mirror=True))
    assert not np.array_equal(mirrored < 0, epoch_order(train, 3, 5, mirror=True) < 0)
    boards = D.random_records(1200, seed=5)
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    whole = Training.create(tmp_path / "whole", _config(tmp_path, [bf], mirror=True))
    assert whole.train(progress=False)
    part = Training.create(tmp_path / "part", _config(tmp_path, [bf], mirror=True))
    assert not part.train(progress=False, stop_after=5)
    part = Training.open(tmp_path / "part")
    assert part.config.mirror and part.train(progress=False)
    assert np.array_equal(whole.net.params["l0w"], part.net.params["l0w"])
    plain = Training.create(tmp_path / "plain", _config(tmp_path, [bf]))
    assert plain.train(progress=False)
    assert not np.array_equal(whole.net.params["l0w"], plain.net.params["l0w"])


EXAMPLE_LAYOUT = "0,1,2,3,4,4,5,5,6,6,6,6,7,7,7,7,8,8,8,8,8,8,8,8,9,9,9,9,9,9,9,9"


def test_the_architecture_flags_and_an_arch_file_train_the_same_net(tmp_path):
    text = random_games_as_text(tmp_path / "d.txt", games=4)
    common = ["-epochs", "1", "-batch-size", "64", "-factoriser", "-quiet"]
    flags = tmp_path / "flags.nnue"
    assert wasp_tune(["nnue", "train", str(text), "-o", str(flags), "-hidden", "16",
                      "-buckets", EXAMPLE_LAYOUT, "-output-buckets", "8", *common]) == 0
    arch = A.arch_of(flags)
    assert arch == Arch("buckets-mirrored", [int(b) for b in EXAMPLE_LAYOUT.split(",")], 16,
                        output_buckets=8)
    spec = tmp_path / "arch.json"
    spec.write_text(json.dumps({"arch": arch.to_json()}))
    from_file = tmp_path / "file.nnue"
    assert wasp_tune(["nnue", "train", str(text), "-o", str(from_file), "-arch", str(spec),
                      *common]) == 0
    assert flags.read_bytes() == from_file.read_bytes()
    assert netfile.read_net(from_file).arch == arch  # the engine's loader reads it
    meta = json.loads((tmp_path / "file.nnue.json").read_text())
    assert meta["settings"]["factoriser"] and meta["arch"] == arch.to_json()


def test_example_4_trains_from_the_command_line_and_resumes_with_its_architecture(tmp_path):
    text = random_games_as_text(tmp_path / "d.txt", games=3)
    out = tmp_path / "m.nnue"
    assert wasp_tune(["nnue", "train", str(text), "-o", str(out), "-hidden", "32", "-layers",
                      "16,32", "-buckets", EXAMPLE_LAYOUT, "-factoriser", "-output-buckets",
                      "8", "-epochs", "1", "-batch-size", "64", "-quiet"]) == 0
    arch = A.arch_of(out)
    assert arch.layers == (16, 32) and arch.activation == "crelu"
    assert wasp_tune(["nnue", "train", "-resume", str(out) + ".run", "-epochs", "2",
                      "-quiet"]) == 0
    assert A.arch_of(out) == arch and out.stat().st_size == arch.file_size()


@pytest.mark.parametrize("argv, words", [
    (["-buckets", "0,1,2"], "-buckets takes 32 bucket numbers"),
    (["-buckets", "0,x"], "-buckets takes comma-separated numbers"),
    (["-factoriser"], "-factoriser needs king buckets"),
    (["-hidden", "8"], "-hidden must be from 16 to 2048, not 8"),
    (["-layers", "16,32", "-activation", "screlu"], "-activation must be crelu with layers"),
    (["-output-buckets", "40"], "-output-buckets must be from 1 to 32"),
    (["-arch", "ARCH", "-hidden", "64"], "-hidden cannot be given with it"),
    (["-arch", "DATA"], "DATA: not JSON"),
    (["-wdl", "0.2,1.5"], "-wdl must be in [0, 1]"),
    (["-wdl", "1,2,3"], "-wdl takes W or START,END"),
    (["-epochs", "3", "-superbatches", "2"], "-epochs and -superbatches: give one"),
    (["-resume", "nowhere", "-buckets", EXAMPLE_LAYOUT], "-buckets cannot change with -resume"),
])
def test_bad_architecture_and_schedule_flags_are_one_line(tmp_path, capsys, monkeypatch, argv,
                                                          words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "DATA").write_text("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0 | 0.5\n")
    (tmp_path / "ARCH").write_text(json.dumps({"arch": Arch().to_json()}))
    data = [] if "-resume" in argv else ["DATA", "-o", "n.nnue"]
    assert wasp_tune(["nnue", "train", *data, *argv, "-quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_the_schedules_are_bullets_by_superbatch(tmp_path):
    cfg = _config(tmp_path, superbatches=40, lr=0.001, lr_schedule="cosine",
                  lr_final=0.001 * 0.3 ** 5, wdl=0.2, wdl_end=0.8)
    for s in (1, 7, 20, 39):  # bullet's CosineDecayLR at superbatch s
        lam = 1 - 0.5 * (1 + np.cos(np.pi * s / 40))
        assert cfg.learning_rate(s - 1, 5, 100) == pytest.approx(0.001 + lam * (cfg.lr_final
                                                                                 - 0.001))
    assert cfg.learning_rate(39, 0, 100) == cfg.lr_final
    assert [cfg.wdl_at(u) for u in (0, 39)] == [0.2, pytest.approx(0.8)]  # LinearWDL
    assert cfg.wdl_at(13) == pytest.approx(0.2 + 0.6 * 13 / 39)
    assert _config(tmp_path, wdl=0.3).wdl_at(7) == 0.3
    step = _config(tmp_path, superbatches=10, lr_gamma=0.5, lr_step=4)
    assert [step.learning_rate(u, 0, 1) for u in (0, 3, 4, 8)] == [0.01, 0.01, 0.005, 0.0025]


def test_superbatches_stream_across_epochs_and_resume_exactly(tmp_path):
    boards = D.random_records(1000, seed=6)
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    settings = {"superbatches": 3, "batches_per_superbatch": 5, "batch_size": 128,
                "save_rate": 2, "wdl": 0.1, "wdl_end": 0.9, "lr_schedule": "cosine"}
    whole = Training.create(tmp_path / "whole", _config(tmp_path, [bf], **settings))
    assert whole.batches() == 5 and len(whole.train_idx) == 900
    stream = whole.positions(0, 3 * 5 * 128)  # 1,920 positions: the epochs' orders in turn
    assert np.array_equal(stream[:900], epoch_order(whole.train_idx, 1, 0))
    assert np.array_equal(stream[900:1800], epoch_order(whole.train_idx, 1, 1))
    assert whole.train(progress=False)
    assert [r["superbatch"] for r in read_history(whole.dir)] == [1, 2, 3]
    assert sorted(p.name for p in (whole.dir / "nets").iterdir()) == [
        "superbatch-2.nnue", "superbatch-3.nnue"]
    _resume_matches(whole, tmp_path / "part", _config(tmp_path, [bf], **settings), 7)
    with pytest.raises(ValueError, match="counts superbatches: extend it with -superbatches"):
        Training.open(tmp_path / "part", epochs=4)


def test_streamed_data_trains_the_net_data_in_memory_trains(tmp_path):
    """Records read from disk a batch at a time (a .bf mapped, text and .vf through their
    .bfcache) train byte for byte the net the same records in memory train, with the same seed
    and order (here windows of 300 positions, mirrored halves)."""
    text = random_games_as_text(tmp_path / "d.txt", games=8)
    vf = tmp_path / "g.vf"
    assert wasp_tune(["data", "convert", str(random_games_as_text(tmp_path / "g.txt", games=6,
                                                                  seed=9)), str(vf),
                      "-quiet"]) == 0
    bf = tmp_path / "r.bf"
    D.write_bf(D.random_records(700, seed=3), bf)
    data = [str(text), {"path": str(vf), "filter": {"min_ply": 4, "no_check": True,
                                                    "no_capture": False, "max_score": None}},
            str(bf)]
    settings = {"epochs": 2, "batch_size": 100, "shuffle_buffer": 300, "mirror": True,
                "valid": 0.1}
    runs = {}
    for stream in (False, True):
        cfg = Config(data=data, output=str(tmp_path / f"{stream}.nnue"), hidden=16, lr=0.01,
                     stream=stream, **settings)
        runs[stream] = Training.create(tmp_path / f"run-{stream}", cfg)
        assert runs[stream].train(progress=False)
    memory, streamed = runs[False], runs[True]
    assert isinstance(streamed.dataset.boards, D.MappedRecords)
    assert np.array_equal(streamed.dataset.boards.take(np.arange(len(memory.dataset))),
                          memory.dataset.boards)
    assert np.array_equal(memory.valid_idx, streamed.valid_idx)
    for name, a in memory.net.params.items():
        assert np.array_equal(a, streamed.net.params[name]), name
    assert memory.history[-1]["valid_loss"] == streamed.history[-1]["valid_loss"]
    assert (tmp_path / "d.txt.bfcache").exists()  # a text file's records, written once
    resumed = Training.open(tmp_path / "run-True", epochs=3, stream=False)  # either way on
    assert resumed.train(progress=False) and not resumed.config.stream


def test_a_shuffle_buffer_shuffles_windows_of_consecutive_positions():
    train = np.arange(1000, dtype=np.int64)
    order = epoch_order(train, 5, 2, buffer=300)
    assert sorted(order.tolist()) == list(range(1000))
    window = order // 300  # each window's positions come together, the windows shuffled
    assert np.count_nonzero(np.diff(window)) == 3 and sorted(set(window.tolist())) == [0, 1, 2, 3]
    assert window[0] != 0 or window[-1] != 3
    assert not np.array_equal(order, epoch_order(train, 5, 3, buffer=300))
    assert np.array_equal(epoch_order(train, 5, 2, buffer=1000), epoch_order(train, 5, 2))


def _grown(tmp_path, old_arch, config):
    """config's run started from a random old net of `old_arch` (-init): the old net's path
    and the grown net."""
    old = tmp_path / "old.nnue"
    random_net(old, old_arch, seed=4)
    start = start_from(old, config)
    config.init = start.record
    return old, start.net


def test_a_run_from_init_exports_the_old_nets_evaluations_before_any_step_and_records_it(
        tmp_path):
    bf = tmp_path / "data.bf"
    D.write_bf(D.random_records(200, seed=1), bf)
    new_arch = arch_json(2, hidden=32, k=8)
    cfg = _config(tmp_path, [bf], hidden=32, arch=new_arch)
    old, net = _grown(tmp_path, arch_json(1, hidden=16), cfg)
    run = Training.create(tmp_path / "run", cfg, net=net)
    path = run.export()
    engine_old, engine_new = nn_array(netfile.read_net(old)), nn_array(netfile.read_net(path))
    for fen in random_fens(30, 5):
        expected = numpy_forward_arch(old.read_bytes(), arch_json(1, hidden=16), fen)
        assert abs(numpy_forward_arch(path.read_bytes(), new_arch, fen) - expected) <= 1
        S = Position(fen).S
        assert abs(output(engine_new, S) - output(engine_old, S)) <= 1, fen
    record = {"path": str(old), "sha256": hashlib.sha256(old.read_bytes()).hexdigest(),
              "architecture": "(768 -> 16)x2 -> 1, SCReLU"}
    assert json.loads((run.dir / "run.json").read_text())["init"] == record
    assert json.loads(A.meta_path(path).read_text())["init"] == record


def test_an_init_run_learns_and_resumes_exactly(tmp_path):
    boards = D.random_records(1500, seed=2, pieces=(4, 16))
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    settings = {"hidden": 32, "arch": arch_json(2, hidden=32, k=4), "epochs": 2, "wdl": 0.0}
    cfg = _config(tmp_path, [bf], **settings)
    _, net = _grown(tmp_path, arch_json(1, hidden=16), cfg)
    whole = Training.create(tmp_path / "whole", cfg, net=net)
    before = whole.valid_loss()
    assert whole.train(progress=False)
    assert whole.history[-1]["valid_loss"] < 0.9 * before  # it learns from where it starts
    again = _config(tmp_path, [bf], **settings)
    again.init = cfg.init
    _resume_matches(whole, tmp_path / "part", again, 5, net=net)
    assert read_config(tmp_path / "part")[0].init == cfg.init


def test_cli_init_grows_a_net_resumes_and_refuses_what_cannot_be_mapped(tmp_path, capsys):
    text = random_games_as_text(tmp_path / "d.txt", games=4)
    common = ["-epochs", "1", "-batch-size", "64", "-quiet"]
    old, new = tmp_path / "a.nnue", tmp_path / "b.nnue"
    assert wasp_tune(["nnue", "train", str(text), "-o", str(old), "-hidden", "16",
                      *common]) == 0
    spec = tmp_path / "arch.json"  # an -arch run grows from it as a run of the flags
    spec.write_text(json.dumps({"arch": arch_json(2, hidden=32, k=8)}))
    assert wasp_tune(["nnue", "train", str(text), "-o", str(new), "-init", str(old), "-arch",
                      str(spec), *common]) == 0
    meta = json.loads(A.meta_path(new).read_text())
    assert meta["init"]["sha256"] == hashlib.sha256(old.read_bytes()).hexdigest()
    assert "-init" in meta["command"]
    run = f"{new}.run"
    assert wasp_tune(["nnue", "train", "-resume", run, "-epochs", "2", "-quiet"]) == 0
    assert json.loads(A.meta_path(new).read_text())["epochs"] == 2
    capsys.readouterr()
    for argv, code, words in [
            (["-resume", run, "-init", str(old)], 2, "-init starts a new run"),
            ([str(text), "-o", str(tmp_path / "c.nnue"), "-init", str(new), "-hidden", "16"], 2,
             "-init " + str(new) + ": (768 -> 32)x2 -> 1x8, SCReLU cannot be mapped into "
             "(768 -> 16)x2 -> 1, SCReLU: hidden 32 cannot shrink to 16"),
            ([str(text), "-o", str(tmp_path / "c.nnue"), "-init", str(text)], 1,
             "-init net " + str(text) + ": 11")]:
        assert wasp_tune(["nnue", "train", *argv, "-quiet"]) == code
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err
    assert not (tmp_path / "c.nnue.run").exists()
