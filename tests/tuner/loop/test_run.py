"""`wasp-tune loop --quick` end to end: self-play, set, tuning, SPRT, report; kills and resumes.

The tests run the quick loop with a shorter match (8 games at 400 nodes instead of 40 at 2000):
that the tuned engine then wins is measured by hand, not here (README's figures)."""

import json
import os
import re
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
SHORT_MATCH = ["-sprt-games", "8", "-sprt-nodes", "400"]


def _loop(loop_dir, *extra, timeout=600):
    r = subprocess.run([*LOOP, "-dir", str(loop_dir), *extra], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "compiling kernels" not in r.stderr  # -quiet: no bar, cold cache or warm
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
    return loop_dir, _loop(loop_dir, *SHORT_MATCH)


def test_quick_loop_runs_every_stage_and_writes_a_report(quick_loop):
    loop_dir, out = quick_loop
    rep = json.loads((loop_dir / "report.json").read_text())
    assert rep["selfplay_games"] == 24
    assert rep["positions"] == rep["train"] + rep["valid"] > 0 and rep["valid"] > 0
    # the shipped sample's 600 games (about 21,000 positions) join the 24 played here
    assert rep["positions"] > 15000
    assert rep["passes"] >= 1
    # from the material cut to 30 %, tuning lowers E on the training and the held-out games
    assert rep["start"] == "material*0.3" and rep["opponent"] == "wasp-start"
    assert rep["E_train_after"] < rep["E_train_before"]
    assert rep["E_valid_after"] < rep["E_valid_before"]
    assert rep["E_valid_rose"] is False and rep["changed_weights"] > 0
    assert rep["sprt_games"] == 8 and sum(rep["sprt_pentanomial"]) == 4
    assert 0 <= rep["sprt_score"] <= 1
    assert rep["sprt_decision"] in ("H0", "H1", "inconclusive")
    for stage in ("[games]", "[data]", "[tune]", "[sprt]", "[report]"):
        assert stage in out
    assert "E train" in out and "SPRT tuned vs start" in out
    # the closing summary: the figures and where to look next; no nan anywhere
    summary = out[out.index("summary:"):]
    assert "E valid" in summary and "score" in summary and "Elo" in summary
    assert f"wasp gui --runs {loop_dir}" in summary and str(loop_dir / "report.json") in summary
    assert not re.search(r"\bnan\b", out.lower())
    json.loads((loop_dir / "report.json").read_text(), parse_constant=_no_nan)


def _no_nan(name):
    raise AssertionError(f"report.json holds {name}: JSON has no NaN (undefined is null)")


def test_quick_loop_stage_outputs_are_the_tools_own_formats(quick_loop):
    loop_dir, _ = quick_loop
    games = testing.results(loop_dir / "games" / "match")
    assert len(games) == 24 and set(games["engine1"]) == {"wasp"}
    summary = json.loads((loop_dir / "data" / "summary.json").read_text())
    assert summary["games_bad"] == 0 and summary["games_read"] == 24 + 600
    passes = pd.read_csv(loop_dir / "tune" / "passes.csv")
    assert passes["pass"].iloc[0] == 0 and len(passes) >= 2
    assert passes["e_train"].iloc[-1] < passes["e_train"].iloc[0]  # the training E falls
    assert passes["e_valid"].iloc[-1] < passes["e_valid"].iloc[0]  # and the held-out E
    # the start: the built-in values with the material (mg and eg) cut to 30 %
    start = P.load(loop_dir / "start.txt")
    defaults = P.default_weights()
    for name in ("pawn_value", "queen_value"):
        for phase in ("mg", "eg"):
            i = P.weight_index(name, 0, phase)
            assert start[i] == round(defaults[i] * 0.3)
    assert {P.PARAMS[P.PARAM_OF[i]].group for i in (start != defaults).nonzero()[0]} == \
        {"material"}
    tuned = P.load(loop_dir / "tune" / "params-last.txt")
    moved = {P.PARAMS[P.PARAM_OF[i]].name for i in (tuned != start).nonzero()[0]}
    assert moved and moved <= {"pawn_value", "knight_value", "bishop_value", "rook_value",
                               "queen_value", "tempo"}
    config = json.loads((loop_dir / "games" / "match" / "config.json").read_text())
    assert config["engines"][0]["options"]["EvalFile"] == str(loop_dir / "start.txt")
    sprt = testing.results(loop_dir / "sprt" / "match")
    assert set(sprt["engine1"]) == {"wasp-tuned"} and len(sprt) == 8
    config = json.loads((loop_dir / "sprt" / "match" / "config.json").read_text())
    evalfile = config["engines"][0]["options"]["EvalFile"]
    assert evalfile == str(loop_dir / "tune" / "params.txt")
    assert config["engines"][1]["name"] == "wasp-start"
    assert config["engines"][1]["options"]["EvalFile"] == str(loop_dir / "start.txt")


def test_the_runs_dashboard_reads_the_loops_runs_without_nan(quick_loop):
    """`wasp gui --runs DIR`, as the summary says: the three runs, JSON with no NaN."""
    from dashboard.runs import Runs

    loop_dir, _ = quick_loop
    runs = Runs(str(loop_dir))
    listed = runs.list()
    assert {r["id"] for r in listed["runs"]} == {"games/match", "tune", "sprt/match"}
    for run in listed["runs"]:
        text = json.dumps(runs.detail(run["id"]), allow_nan=False)  # raises on a NaN
        assert not re.search(r"\bnan\b", text.lower())


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

    from tuner.loop.run import LoopConfig

    src, _ = quick_loop
    loop_dir.mkdir()
    for stage in ("games", "data"):
        shutil.copytree(src / stage, loop_dir / stage)
    config = LoopConfig.quick()
    config.sprt_games, config.sprt_nodes, config.max_passes = 8, 400, 2
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
    assert rep["changed_weights"] == int((second != P.load(loop_dir / "start.txt")).sum())
    assert rep["passes"] >= 2


def test_then_binary_glob_naming_nothing_fails_before_tuning(quick_loop, tmp_path):
    loop_dir = _after_data(quick_loop, tmp_path / "bad", then_binary=["ks_no_such_term"])
    r = subprocess.run([*LOOP, "-dir", str(loop_dir)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode != 0 and "ks_no_such_term" in r.stderr
    assert not (loop_dir / "tune").exists()


def test_with_its_kernels_cached_the_loop_shows_no_compile(quick_loop, tmp_path):
    """The loop compiles (or loads) its kernels first, under one bar (`tuner.loop.warm`): the
    quick loop before left them all in the cache, so no bar opens, before the stages or in
    them."""
    loop_dir = _after_data(quick_loop, tmp_path / "warm", then_binary=["ks_no_such_term"])
    r = subprocess.run([*LOOP[:-1], "-dir", str(loop_dir)], capture_output=True, text=True,
                       timeout=600, env={**os.environ, "WASP_NO_PROGRESS": ""})
    assert r.returncode != 0 and "ks_no_such_term" in r.stderr  # after the compile phase
    assert "compiling kernels" not in r.stderr and "compilations" not in r.stderr
    assert "Traceback" not in r.stderr


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
    from tuner.loop.run import report_text

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


def test_report_text_and_summary_say_undefined_figures_in_words():
    from tuner.loop.run import closing_summary, report_text

    rep = {"start": "material*0.5", "opponent": "wasp-start", "selfplay_games": 24,
           "positions": 100, "train": 90, "valid": 10, "passes": 2, "tuning_seconds": 1.0,
           "changed_weights": 3, "K": 1.3, "E_train_before": 0.103, "E_train_after": 0.099,
           "E_valid_before": 0.097, "E_valid_after": 0.096, "sprt_decision": "inconclusive",
           "sprt_games": 8, "sprt_score": 0.5, "sprt_elo": 0.0, "sprt_elo_error": None,
           "sprt_llr": 0.0, "sprt_bounds": [-2.94, 2.94], "sprt_pentanomial": [0, 0, 4, 0, 0]}
    text = report_text(rep) + closing_summary(rep, "loops/q")
    assert "nan" not in text and "None" not in text
    assert "Elo +0.0 +/- undefined (the 95 % interval reaches a score of 0)" in text
    high = {**rep, "sprt_score": 0.958, "sprt_elo": 544.7}
    assert "Elo +544.7 +/- undefined (the 95 % interval reaches a score of 1)" in \
        closing_summary(high, "loops/q")
    assert "SPRT tuned vs start" in text and "no difference" in text
    assert "from a start of material*0.5" in text
    # the engine's default evaluation is a net now: the loop names what it tunes
    assert "from the built-in weights" in closing_summary({**rep, "start": "built-in"}, "q")
    won = {**rep, "sprt_score": 1.0, "sprt_elo": None, "sprt_llr": 2.1}
    assert "Elo undefined (every game won)" in closing_summary(won, "loops/q")
    assert "the tuned engine is stronger" in closing_summary(won, "loops/q")
    none = {**rep, "sprt_games": 0, "sprt_score": None, "sprt_elo": None, "sprt_llr": None,
            "sprt_pentanomial": [0, 0, 0, 0, 0]}
    text = report_text(none) + closing_summary(none, "loops/q")
    assert "score undefined (no games)" in text and "Elo undefined (no games)" in text
    assert "None" not in text


def test_start_weights_scale_the_material_or_read_a_file(tmp_path):
    from tuner.loop.run import start_weights

    W = start_weights("material*0.5")
    i = P.weight_index("rook_value", 0, "eg")
    assert W[i] == round(P.default_weights()[i] * 0.5)
    assert (start_weights("") == P.default_weights()).all()
    P.save(W, tmp_path / "s.txt")
    assert (start_weights(str(tmp_path / "s.txt")) == W).all()
    for bad in ("material*x", "material*0", str(tmp_path / "missing.txt")):
        with pytest.raises(ValueError, match="start"):
            start_weights(bad)


def test_a_bad_start_is_one_line_and_exit_1(tmp_path):
    r = subprocess.run([*LOOP, "-dir", str(tmp_path / "q"), "-start", "material*half"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "-start" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "q").exists()


def test_a_start_file_is_copied_and_is_the_matchs_opponent(tmp_path):
    """-start FILE (relative): self-play, tuning and the match's opponent all use its values."""
    from tuner.loop.run import start_weights

    P.save(start_weights("material*0.3"), tmp_path / "mine.txt")
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "loop", "-dir", "s", "-start",
                        "mine.txt", "-games", "4", "-nodes", "200", "-valid", "0.5", "-params",
                        "tempo", "-max-passes", "1", "-sprt-games", "4", "-sprt-nodes", "200",
                        "-quiet"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    loop_dir = tmp_path / "s"
    assert json.loads((loop_dir / "loop.json").read_text())["start"] == str(tmp_path / "mine.txt")
    assert (P.load(loop_dir / "start.txt") == P.load(tmp_path / "mine.txt")).all()
    config = json.loads((loop_dir / "sprt" / "match" / "config.json").read_text())
    assert config["engines"][1]["options"]["EvalFile"] == str(loop_dir / "start.txt")
    assert json.loads((loop_dir / "report.json").read_text())["opponent"] == "wasp-start"
    assert "tuned vs start" in r.stdout
