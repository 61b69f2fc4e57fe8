"""tuner.texel.run and wasp-tune: the run directory, SIGKILL and --resume, the CLI's errors and
help, a validation set given as files (SplitRun)."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from tests.conftest import DATA, ROOT
from tuner import cli
from tuner.texel.positions import load
from tuner.texel.run import VALID_FILE, RunState, SplitRun
from wasp import params as P

EPD = str(DATA / "tuner_quiet_200.epd")
ARGS = ["run", EPD, "-method", "local", "-params", "pst_knight", "pst_bishop", "-max-passes",
        "1", "-k", "1.2", "-quiet"]


def _env(tmp_path):
    env = dict(os.environ)
    env["WASP_TUNE_CACHE"] = str(tmp_path / "data-cache")
    env["PYTHONPATH"] = str(ROOT)
    return env


def _cli(tmp_path, args, **kw):
    return subprocess.Popen([sys.executable, "-m", "tuner.cli", *args], cwd=ROOT,
                            env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def _rows(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return max(0, len(f.read().splitlines()) - 1)


def test_resume_after_sigkill_gives_the_same_parameters_as_an_uninterrupted_run(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    p = _cli(tmp_path, [*ARGS, "-dir", str(a)])
    out = p.communicate(timeout=600)[0]
    assert p.returncode == 0, out

    p = _cli(tmp_path, [*ARGS, "-dir", str(b)])
    deadline = time.time() + 600
    while _rows(b / "history.csv") < 60 and p.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    assert p.poll() is None, "the run ended before it could be killed"
    p.send_signal(signal.SIGKILL)
    p.wait()
    killed_at = _rows(b / "history.csv")
    assert 0 < killed_at < 256

    p = _cli(tmp_path, ["run", "-dir", str(b), "--resume", "-quiet"])
    out = p.communicate(timeout=600)[0]
    assert p.returncode == 0, out
    assert "resuming" in out

    assert P.load(a / "params.txt").tolist() == P.load(b / "params.txt").tolist()
    ha, hb = pd.read_csv(a / "history.csv"), pd.read_csv(b / "history.csv")
    assert len(ha) == len(hb) == 256  # nothing lost or redone
    cols = ["pass", "parameter", "old", "new", "e_train", "e_valid"]
    pd.testing.assert_frame_equal(ha[cols], hb[cols])
    assert list(pd.read_csv(a / "passes.csv").columns)[:4] == ["pass", "moved", "e_train",
                                                                "e_valid"]
    assert (ha["new"] != ha["old"]).any()


def test_run_lowers_the_training_error_and_writes_a_loadable_parameter_file(tmp_path):
    d = tmp_path / "r"
    assert cli.main(["run", EPD, "-dir", str(d), "-method", "binary", "-params", "*_value",
                     "-max-passes", "2", "-quiet", "-valid", "0.2"]) == 0
    passes = pd.read_csv(d / "passes.csv")
    hist = pd.read_csv(d / "history.csv")
    assert hist["e_train"].iloc[-1] < hist["e_train"].iloc[0] or len(hist) == 0
    assert len(passes) >= 1
    W = P.load(d / "params.txt")
    assert W.shape == (P.N_WEIGHTS,)
    import json

    assert json.loads((d / "run.json").read_text())["k"] > 0


def test_gradient_run_resumes_from_its_epoch_checkpoint(tmp_path):
    base = ["run", EPD, "-method", "adam", "-params", "*_value", "-k", "1.2", "-quiet",
            "-batch-size", "64"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli.main([*base, "-dir", str(a), "-max-passes", "4"]) == 0
    assert cli.main([*base, "-dir", str(b), "-max-passes", "2"]) == 0
    # continue b to four epochs: raise its limit and resume
    import json

    cfg = json.loads((b / "run.json").read_text())
    cfg["max_passes"] = 4
    (b / "run.json").write_text(json.dumps(cfg))
    assert cli.main(["run", "-dir", str(b), "--resume", "-quiet"]) == 0
    assert np.array_equal(P.load(a / "params.txt"), P.load(b / "params.txt"))


def test_bad_line_stops_the_cli_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.epd"
    bad.write_text(open(EPD).readline() + "this is not a position\n")
    assert cli.main(["error", str(bad)]) == 1
    assert "bad.epd:2:" in capsys.readouterr().err
    assert cli.main(["run", str(bad), "-dir", str(tmp_path / "r")]) == 1
    assert "bad.epd:2:" in capsys.readouterr().err


def test_help_shows_an_example(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "wasp-tune run positions.epd" in out and "-resume runs/a" in out
    assert "data" in cli.build_parser()._subparsers._group_actions[0].choices


def test_regularised_run_records_reg_and_plain_training_error(tmp_path):
    import json

    from tuner.texel.objective import Scorer, error

    d = tmp_path / "reg"
    assert cli.main(["run", EPD, "-dir", str(d), "-method", "binary", "-params", "pawn_value",
                     "-max-passes", "1", "-k", "1.2", "-quiet", "-reg", "1e-4"]) == 0
    assert json.loads((d / "run.json").read_text())["reg"] == 1e-4
    hist = pd.read_csv(d / "history.csv")
    # e_train is E itself (without the penalty): it matches E of the parameters written
    with np.load(d / "leaves.npz") as z:
        leaves = z["train"]
    from tuner.texel.run import Run

    run = Run.open(str(d))
    run.load_data()
    e = error(Scorer(2).leaf_scores(P.load(d / "params-last.txt"), leaves), run._train.results,
              1.2)
    assert hist["e_train"].iloc[-1] == pytest.approx(e, rel=1e-12)


def test_run_without_reg_takes_the_default_and_records_the_value_used(tmp_path, capsys):
    from tuner.texel.methods import default_reg
    from tuner.texel.run import Run

    d = tmp_path / "auto"
    assert cli.main(["run", EPD, "-dir", str(d), "-method", "binary", "-params", "pawn_value",
                     "-max-passes", "1", "-k", "1.2", "-quiet"]) == 0
    run = Run.open(str(d))
    run.load_data()
    n = len(run._train)
    config = json.loads((d / "run.json").read_text())
    assert config["reg"] == default_reg(n, 2) > 0  # pawn_value's two weights, a small set
    assert config["reg_source"] == (f"the default for {n} training positions and 2 tuned "
                                    f"weights, {n / 2:.0f} a weight")
    assert f"reg {config['reg']:g} (the default for {n} training positions" in \
        capsys.readouterr().out


def test_min_count_leaves_rare_weights_alone(tmp_path):
    import json

    d = tmp_path / "mc"
    assert cli.main(["run", EPD, "-dir", str(d), "-method", "adam", "-params", "pst_*",
                     "-max-passes", "2", "-k", "1.2", "-quiet", "-batch-size", "64",
                     "-min-count", "30"]) == 0
    state = json.loads((d / "state.json").read_text())
    tuned = set(state["frequent"])
    assert 0 < len(tuned) < 768
    moved = np.nonzero(P.load(d / "params-last.txt") != P.default_weights())[0]
    assert len(moved) > 0 and set(moved.tolist()) <= tuned


# state.json as runs have written it: only the keys every run has, and then every key
_STATE_MINIMAL = {"pass": 0, "cursor": 0, "moved": 0, "history_rows": 0, "pass_rows": 0,
                  "leaves_pass": -1, "done": False, "W": [1, 2], "W0": [1, 2], "K": 0.0,
                  "elapsed": 0.0}
_STATE_FULL = {"pass": 3, "cursor": 0, "moved": 0, "history_rows": 9, "pass_rows": 4,
               "leaves_pass": 3, "done": True, "W": [5, 2], "W0": [1, 2], "K": 1.2,
               "elapsed": 12.5, "frequent": [0], "start_row": True,
               "best": {"pass": 1, "e_valid": 0.0712, "W": [4, 2]}, "stale": 2,
               "stopped": "patience", "gradient": "gradient-2.npz"}


@pytest.mark.parametrize("saved", [_STATE_MINIMAL, _STATE_FULL])
def test_a_saved_state_reads_and_writes_back_unchanged(saved):
    state = RunState.from_json(saved)
    assert state.to_json() == saved
    assert list(json.loads(json.dumps(state.to_json()))) == list(saved)  # and in its order


def test_an_old_state_reads_with_the_optional_fields_unset():
    state = RunState.from_json(_STATE_MINIMAL)
    assert (state.passes, state.best, state.frequent, state.stale, state.stopped) == (
        0, None, None, None, "")
    state = RunState.from_json(_STATE_FULL)
    assert (state.passes, state.best.passes, state.best.W, state.stale) == (3, 1, [4, 2], 2)


def _head(src, dst, n):
    lines = src.read_text().splitlines(keepends=True)[:n]
    dst.write_text("".join(lines))
    return dst


def test_run_with_valid_data_uses_the_files_as_they_are(tmp_path):
    sample = ROOT / "datasets" / "sample"
    train = _head(sample / "train.epd", tmp_path / "train.epd", 300)
    valid = _head(sample / "valid.epd", tmp_path / "valid.epd", 60)
    run_dir = tmp_path / "run"
    assert cli.main(["run", str(train), "-valid-data", str(valid), "-dir", str(run_dir),
                     "-params", "pawn_value", "tempo", "-max-passes", "1", "-threads", "1",
                     "-quiet"]) == 0
    assert json.loads((run_dir / VALID_FILE).read_text())["valid_data"] == [str(valid)]
    run = SplitRun.open(run_dir)
    run.load_data()
    assert len(run._train) == 300 and len(run._valid) == 60
    assert np.array_equal(run._valid.rows, load(valid, use_cache=False).rows)
    # --resume picks the split run up again from the run directory
    assert cli.main(["run", "-dir", str(run_dir), "--resume", "-max-passes", "1",
                     "-quiet"]) == 0


def test_adam_on_the_sample_stops_when_validation_e_rises_and_keeps_the_best(tmp_path, capsys):
    """The shipped sample overfits under adam: the run stops after -patience passes without a
    validation gain, says so, and params.txt is never worse on validation than the start."""
    import json

    from tuner.texel.objective import Scorer, error
    from tuner.texel.positions import load

    sample = ROOT / "datasets" / "sample"
    d = tmp_path / "adam"
    assert cli.main(["run", str(sample / "train.epd"), "-valid-data", str(sample / "valid.epd"),
                     "-dir", str(d), "-method", "adam", "-max-passes", "8", "-quiet"]) == 0
    out = capsys.readouterr().out
    assert "stopping: 2 passes without a lower validation E" in out
    passes = pd.read_csv(d / "passes.csv")
    assert passes["pass"].tolist()[0] == 0 and passes["moved"].iloc[0] == 0
    assert len(passes) < 9
    run = json.loads((d / "run.json").read_text())
    assert run["lr"] == 1.0 and run["patience"] == 2
    valid = load(sample / "valid.epd", use_cache=False)
    sc = Scorer(2)
    e_best = error(sc.qsearch_scores(P.load(d / "params.txt"), valid.rows)[0], valid.results,
                   run["k"])
    assert e_best <= passes["e_valid_qsearch"].iloc[0] + 1e-12
    assert e_best == pytest.approx(passes["e_valid_qsearch"].min(), rel=1e-9)
    assert not np.array_equal(P.load(d / "params-last.txt"), P.load(d / "params.txt"))


def test_k_and_error_check_the_parameter_file_before_the_data(tmp_path, capsys):
    for cmd in ("k", "error"):
        assert cli.main([cmd, str(tmp_path / "nofile.epd")]) == 1
        assert "nofile.epd: no such file" in capsys.readouterr().err
        assert cli.main([cmd, EPD, "-params", str(ROOT / "README.md")]) == 1
        err = capsys.readouterr().err
        assert "README.md:3: expected 'name = value'" in err and "data:" not in err
