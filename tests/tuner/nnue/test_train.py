"""Training runs: a planted target learnt, tiny data, exact resume, the split, the command line."""

import json
import random

import chess
import numpy as np
import pytest

from tuner.cli import main as wasp_tune
from tuner.nnue import data as D
from tuner.nnue.train import Config, Training, epoch_order, split
from wasp.nnue import netfile


def _config(tmp_path, data=(), **kw):
    settings = {"hidden": 8, "epochs": 2, "batch_size": 256, "valid": 0.1, "lr": 0.01}
    settings.update(kw)
    return Config(data=[str(p) for p in data], output=str(tmp_path / "net.nnue"), **settings)


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
    assert not np.array_equal(before.l0w, run.net.l0w)
    path = run.export()
    assert netfile.read(path).hidden == 8
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
    assert np.array_equal(whole.final_net().l0w, part.final_net().l0w)


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
    code = wasp_tune(["nnue", "train", str(data), "-o", str(out), "-hidden", "4", "-epochs",
                      "2", "-quiet"])
    assert code == 0
    assert out.stat().st_size == netfile.file_size(4)
    meta = json.loads((tmp_path / "nets" / "a.nnue.json").read_text())
    assert meta["command"].startswith("wasp-tune nnue train ")
    assert meta["data"] == [{"path": str(data), "positions": 60}]
    assert (tmp_path / "nets" / "a.nnue.run" / "history.csv").exists()
    for epoch in (1, 2):
        each = tmp_path / "nets" / "a.nnue.run" / "nets" / f"epoch-{epoch}.nnue"
        assert netfile.read(each).hidden == 4
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
        assert wasp_tune(["nnue", "train", str(data), "-o", str(out), "-hidden", "8",
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
    assert wasp_tune(["nnue", "train", str(vf), "-o", str(out), "-hidden", "4", "-epochs", "1",
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
    assert np.array_equal(whole.net.l0w, part.net.l0w)
    plain = Training.create(tmp_path / "plain", _config(tmp_path, [bf]))
    assert plain.train(progress=False)
    assert not np.array_equal(whole.net.l0w, plain.net.l0w)
