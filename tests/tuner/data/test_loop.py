"""`wasp-tune loop --quick` end to end: self-play, set, tuning, SPRT, report; kills and resumes."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pandas as pd
import pytest

import testing
from wasp import params as P

LOOP = [sys.executable, "-m", "tuner.cli", "loop", "--quick", "-quiet"]


def _loop(loop_dir, *extra, timeout=600):
    r = subprocess.run([*LOOP, "-dir", str(loop_dir), *extra], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout


def _games(rundir):
    path = os.path.join(rundir, "games.sqlite")
    if not os.path.exists(path):
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


@pytest.fixture(scope="module")
def quick_loop(tmp_path_factory):
    loop_dir = tmp_path_factory.mktemp("loop") / "q"
    return loop_dir, _loop(loop_dir)


def test_quick_loop_runs_every_stage_and_writes_a_report(quick_loop):
    loop_dir, out = quick_loop
    rep = json.loads((loop_dir / "report.json").read_text())
    assert rep["selfplay_games"] == 24
    assert rep["positions"] == rep["train"] + rep["valid"] > 0 and rep["valid"] > 0
    # the shipped sample's 600 games (about 21,000 positions) join the 24 played here
    assert rep["positions"] > 15000
    assert rep["passes"] >= 1
    # the tuned parameters are those of the lowest validation E (the defaults when every pass
    # raised it): never worse on the held-out games than the start
    assert rep["E_valid_after"] <= rep["E_valid_before"] + 1e-12
    assert rep["E_valid_rose"] is False
    assert rep["best_pass"] == 0 or rep["changed_weights"] > 0
    assert rep["sprt_games"] == 8 and sum(rep["sprt_pentanomial"]) == 4
    assert rep["sprt_decision"] in ("H0", "H1", "inconclusive")
    for stage in ("[games]", "[data]", "[tune]", "[sprt]", "[report]"):
        assert stage in out
    assert "E train" in out and "SPRT tuned vs default" in out


def test_quick_loop_stage_outputs_are_the_tools_own_formats(quick_loop):
    loop_dir, _ = quick_loop
    games = testing.results(loop_dir / "games" / "match")
    assert len(games) == 24 and set(games["engine1"]) == {"wasp"}
    summary = json.loads((loop_dir / "data" / "summary.json").read_text())
    assert summary["games_bad"] == 0 and summary["games_read"] == 24 + 600
    passes = pd.read_csv(loop_dir / "tune" / "passes.csv")
    assert passes["pass"].iloc[0] == 0 and len(passes) >= 2
    assert passes["e_train"].iloc[-1] < passes["e_train"].iloc[0]  # the training E falls
    tuned = P.load(loop_dir / "tune" / "params-last.txt")
    moved = {P.PARAMS[P.PARAM_OF[i]].name for i in (tuned != P.default_weights()).nonzero()[0]}
    assert moved and moved <= {"pawn_value", "knight_value", "bishop_value", "rook_value",
                               "queen_value", "tempo"}
    sprt = testing.results(loop_dir / "sprt" / "match")
    assert set(sprt["engine1"]) == {"wasp-tuned"} and len(sprt) == 8
    config = json.loads((loop_dir / "sprt" / "match" / "config.json").read_text())
    evalfile = config["engines"][0]["options"]["EvalFile"]
    assert evalfile == str(loop_dir / "tune" / "params.txt")
    assert "EvalFile" not in config["engines"][1]["options"]


def test_quick_loop_run_again_reuses_every_stage(quick_loop):
    loop_dir, _ = quick_loop
    before = (loop_dir / "report.json").read_text()
    out = _loop(loop_dir)
    for stage in ("games", "data", "tune", "sprt", "report"):
        assert f"[{stage}] done: reused" in out
    assert _games(loop_dir / "games" / "match") == 24
    assert (loop_dir / "report.json").read_text() == before


def _after_data(quick_loop, loop_dir, **settings):
    """A new loop directory holding the quick loop's games and data stages, with the quick
    settings changed by `settings` (so only the later stages run)."""
    import shutil
    from dataclasses import asdict

    from tuner.data.loop import LoopConfig

    src, _ = quick_loop
    loop_dir.mkdir()
    for stage in ("games", "data"):
        shutil.copytree(src / stage, loop_dir / stage)
    config = LoopConfig.quick()
    for name, value in settings.items():
        setattr(config, name, value)
    (loop_dir / "loop.json").write_text(json.dumps(asdict(config)))
    return loop_dir


def test_then_binary_searches_the_nonlinear_weights_after_the_method(quick_loop, tmp_path):
    """-then-binary: a second run, from the first run's result and K, over the named weights
    only; the SPRT plays its parameters and the report measures them."""
    loop_dir = _after_data(quick_loop, tmp_path / "nl", then_binary=["df_pawnless", "ks_shield"],
                           then_passes=1)
    out = _loop(loop_dir)
    assert "[games] done: reused" in out and "[data] done: reused" in out
    assert "then binary search over df_pawnless, ks_shield" in out
    first = P.load(loop_dir / "tune" / "params.txt")
    second = P.load(loop_dir / "tune" / "nonlinear" / "params.txt")
    changed = {P.PARAMS[P.PARAM_OF[i]].name for i in (second != first).nonzero()[0]}
    assert changed <= {"df_pawnless", "ks_shield"}
    history = pd.read_csv(loop_dir / "tune" / "nonlinear" / "history.csv")
    assert list(history["parameter"]) == ["ks_shield", "df_pawnless"]  # table order
    k_first = json.loads((loop_dir / "tune" / "run.json").read_text())["k"]
    assert json.loads((loop_dir / "tune" / "nonlinear" / "run.json").read_text())["k"] == k_first
    config = json.loads((loop_dir / "sprt" / "match" / "config.json").read_text())
    evalfile = config["engines"][0]["options"]["EvalFile"]
    assert evalfile == str(loop_dir / "tune" / "nonlinear" / "params.txt")
    rep = json.loads((loop_dir / "report.json").read_text())
    assert rep["changed_weights"] == int((second != P.default_weights()).sum())
    assert rep["passes"] >= 2


def test_then_binary_glob_naming_nothing_fails_before_tuning(quick_loop, tmp_path):
    loop_dir = _after_data(quick_loop, tmp_path / "bad", then_binary=["ks_no_such_term"])
    r = subprocess.run([*LOOP, "-dir", str(loop_dir)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode != 0 and "ks_no_such_term" in r.stderr
    assert not (loop_dir / "tune").exists()


def test_killed_loop_resumes_its_match_and_finishes(tmp_path):
    loop_dir = tmp_path / "k"
    proc = subprocess.Popen([*LOOP, "-dir", str(loop_dir), "-until", "data"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    rundir = loop_dir / "games" / "match"
    deadline = time.time() + 300
    try:
        while _games(rundir) < 4 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    played = _games(rundir)
    assert 4 <= played < 24, "the self-play stage ended before it could be killed"
    assert not (loop_dir / "games" / "done.json").exists()
    out = _loop(loop_dir, "-until", "data")
    assert "resuming the loop" in out and "resuming the match" in out
    assert _games(rundir) == 24
    assert (loop_dir / "data" / "summary.json").exists()
    assert not (loop_dir / "tune").exists()


def test_report_text_states_both_errors_and_flags_a_validation_rise():
    from tuner.data.loop import report_text

    rep = {"selfplay_games": 24, "positions": 100, "train": 90, "valid": 10, "passes": 2,
           "tuning_seconds": 1.0, "changed_weights": 3, "K": 1.3, "E_train_before": 0.103,
           "E_train_after": 0.099, "E_valid_before": 0.097, "E_valid_after": 0.096,
           "sprt_decision": "inconclusive", "sprt_games": 8, "sprt_score": 0.5, "sprt_elo": 0.0,
           "sprt_elo_error": 10.0, "sprt_llr": 0.0, "sprt_bounds": [-2.94, 2.94],
           "sprt_pentanomial": [0, 0, 4, 0, 0]}
    text = report_text(rep)
    assert "E train 0.103000 -> 0.099000; E valid 0.097000 -> 0.096000" in text
    assert "WARNING" not in text
    text = report_text({**rep, "E_valid_after": 0.1})
    assert "WARNING: the validation E rose by 0.003000" in text
