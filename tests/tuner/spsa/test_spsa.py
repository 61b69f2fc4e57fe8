"""tuner.spsa.algorithm: the OpenBench input, the schedule, the perturbation and the update, a
simulated match, and (below) `wasp-tune spsa` on a fake engine."""

import json
import math
import os
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT as TESTS_ROOT
from tests.conftest import root_on_pythonpath
from tuner import spsa as S

LINES = "x, int, 50, 0, 100, 5, 0.002\ny, float, 0.5, 0, 1, 0.05, 0.002\n"


def test_parse_reads_openbench_lines_and_skips_comments():
    ps = S.parse_params("# header\n\n" + LINES + "  # trailing comment\n")
    assert [p.name for p in ps] == ["x", "y"]
    x, y = ps
    assert (x.is_float, x.start, x.min, x.max, x.c_end, x.r_end) == (False, 50, 0, 100, 5, 0.002)
    assert y.is_float and y.c_end == 0.05
    assert x.line() == "x, int, 50, 0, 100, 5, 0.002"
    assert S.parse_params(x.line() + "\n" + y.line()) == ps


@pytest.mark.parametrize("line, why", [
    ("x, int, 50, 0, 100, 5", "expected 7 comma-separated fields"),
    ("x, double, 50, 0, 100, 5, 0.002", "type must be int or float"),
    ("x, int, fifty, 0, 100, 5, 0.002", "start is not a number"),
    ("x, int, 50.5, 0, 100, 5, 0.002", "start of an int parameter must be an integer"),
    ("x, int, 50, 100, 0, 5, 0.002", "min (100) must be below max (0)"),
    ("x, int, 500, 0, 100, 5, 0.002", "start (500) is outside"),
    ("x, int, 50, 0, 100, 0, 0.002", "c_end must be positive"),
    ("x, int, 50, 0, 100, 5, -1", "r_end must not be negative"),
    ("X, int, 50, 0, 100, 5, 0.002", "X given twice (also line 2)"),
])
def test_a_bad_line_is_named_with_file_and_line_number(line, why):
    text = "# comment\nx, int, 50, 0, 100, 5, 0.002\n" + line + "\n"
    if line.startswith("X"):
        expect = "p.txt:3: "
    else:
        text = "# comment\n\n" + line + "\n"
        expect = "p.txt:3: "
    with pytest.raises(S.SpsaInputError) as e:
        S.parse_params(text, "p.txt")
    assert str(e.value).startswith(expect) and why in str(e.value)


def test_an_input_without_parameters_is_refused():
    with pytest.raises(S.SpsaInputError, match="p.txt: no parameters"):
        S.parse_params("# nothing\n", "p.txt")


def test_schedule_equals_openbench_numbers_derived_by_hand():
    # OpenBench, OpenBench/spsa_utils.py (create_spsa_run, spsa_workload_assignment_dict):
    #   c_value = c_end * iterations ** gamma
    #   a_value = r_end * c_end ** 2 * (a_ratio * iterations + iterations) ** alpha
    #   c = max(c_value / iteration ** gamma, 0.5 for ints), r = a_value / (A + it) ** alpha / c**2
    # with the form's defaults alpha 0.602, gamma 0.101, A-ratio 0.1. For N = 1000, c_end = 5,
    # r_end = 0.002:  A = 100
    #   c   = 5 * 1000^0.101           = 5 * e^(0.101 * ln 1000) = 5 * 2.00909... = 10.045464...
    #   a   = 0.002 * 25 * 1100^0.602  = 0.05 * e^(0.602 * ln 1100) = 0.05 * 67.7514... = 3.38757...
    #   a_1 = a / 101^0.602            = 3.38757... / 16.0918... = 0.210516...
    #   a_N = a / 1100^0.602           = 0.05 (= r_end * c_end^2 by construction)
    #   c_1 = c = 10.045464...;  c_N = c_end = 5;  R_N = a_N / c_N^2 = r_end = 0.002
    sched = S.Schedule(1000)
    x, y = S.parse_params(LINES)
    assert sched.A == pytest.approx(100.0)
    assert sched.c(x) == pytest.approx(10.045464063, rel=1e-9)
    assert sched.a(x) == pytest.approx(3.3875709568, rel=1e-9)
    assert sched.c_k(x, 1) == pytest.approx(10.045464063, rel=1e-9)
    assert sched.c_k(x, 1000) == pytest.approx(5.0, rel=1e-12)
    assert sched.a_k(x, 1) == pytest.approx(0.2105168843, rel=1e-9)
    assert sched.a_k(x, 1000) == pytest.approx(0.05, rel=1e-12)
    assert sched.r_k(x, 1000) == pytest.approx(0.002, rel=1e-12)
    # the float parameter: c_end 0.05 -> c = 0.05 * 2.00909... ; a = 0.002 * 0.0025 * 67.75...
    assert sched.c(y) == pytest.approx(0.10045464063, rel=1e-9)
    assert sched.a_k(y, 1) == pytest.approx(2.105168843e-05, rel=1e-9)
    assert sched.c_k(y, 1000) == pytest.approx(0.05, rel=1e-12)


def test_an_int_parameter_c_k_never_falls_below_half_a_unit():
    (p,) = S.parse_params("x, int, 5, 0, 10, 0.3, 0.002")
    (q,) = S.parse_params("x, float, 5, 0, 10, 0.3, 0.002")
    sched = S.Schedule(100)
    assert sched.c_k(p, 100) == 0.5
    assert sched.c_k(q, 100) == pytest.approx(0.3)


def test_perturbation_is_seeded_clipped_and_rounds_ints_stochastically():
    ps = S.parse_params("x, int, 99, 0, 100, 5, 0.002\ny, float, 0.5, 0, 1, 0.05, 0.002")
    sched = S.Schedule(1000)
    a = S.perturb(ps, sched, [99, 0.5], 7, seed=3)
    assert a == S.perturb(ps, sched, [99, 0.5], 7, seed=3)
    assert all(f in (-1, 1) for f in a.flips)
    assert all(0 <= v <= 100 and float(v).is_integer() for v in (a.plus[0], a.minus[0]))
    assert a.plus[1] == pytest.approx(0.5 + a.c[1] * a.flips[1])
    assert a.minus[1] == pytest.approx(0.5 - a.c[1] * a.flips[1])
    assert a.options(ps, 1)["x"] == str(a.plus[0])
    # the mean of the rounded value is the clipped theta +- c_k (fishtest's floor(x + U))
    (p,) = S.parse_params("x, int, 40, 0, 100, 5, 0.002")
    plus = [S.perturb([p], sched, [40.3], k, seed=1) for k in range(1, 4001)]
    mean = np.mean([s.plus[0] - s.c[0] * s.flips[0] for s in plus])
    assert mean == pytest.approx(40.3, abs=0.03)
    top = S.perturb([p], sched, [100], 1, seed=1)
    assert top.plus[0] <= 100 and top.minus[0] <= 100


def test_update_moves_toward_the_winning_side_and_clips():
    (p,) = S.parse_params("x, float, 50, 0, 100, 5, 0.002")
    sched = S.Schedule(1000)
    step = S.perturb([p], sched, [50.0], 1, seed=1)
    moved = S.update([p], [50.0], step, wins=3, losses=1)[0]
    assert moved == pytest.approx(50.0 + step.a[0] / step.c[0] * 2 * step.flips[0])
    assert S.update([p], [50.0], step, wins=2, losses=2) == [50.0]
    assert S.update([p], [100.0], step, wins=10**6 * (step.flips[0] > 0), losses=10**6 *
                    (step.flips[0] < 0))[0] == 100.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spsa_converges_near_the_optimum_of_a_simulated_match(seed):
    # Elo is concave in theta with its top at (42, 0.7): -231 Elo at the start (10, 0.4).
    ps = S.parse_params("x, int, 10, 0, 100, 5, 0.02\ny, float, 0.4, 0, 1, 0.05, 0.02")

    def elo(v):
        return -0.05 * (v[0] - 42) ** 2 - 2000 * (v[1] - 0.7) ** 2

    res = S.simulate(ps, S.Schedule(1500), elo, pairs=2, seed=seed)
    assert res.thetas.shape == (1501, 2)
    x, y = res.thetas[-100:].mean(axis=0)
    assert abs(x - 42) < 7 and abs(y - 0.7) < 0.05
    assert math.isclose(elo(res.final), 0, abs_tol=10)
    again = S.simulate(ps, S.Schedule(1500), elo, pairs=2, seed=seed)
    assert np.array_equal(res.thetas, again.thetas)


# -- wasp-tune spsa with real games (a fake engine that plays instantly) ---------------------

FAKE_DIR = str(TESTS_ROOT / "tests" / "testing" / "fake_engines")
SPSA_FAKE = os.path.join(FAKE_DIR, "spsa_uci.py")
ROOT = str(TESTS_ROOT)
EPD = os.path.join(ROOT, "tests", "data", "uho_sample.epd")
SPSA_KNOB = os.path.join(ROOT, "tests", "data", "spsa_knob.txt")  # Knob from 10, c_end 10
ENGINE = ["-engine", f"cmd={sys.executable}", f"arg={SPSA_FAKE}", "name=fake"]
# the fake engine reports its material balance: a side 3 pawns down resigns at once
GAMES = ["-each", "nodes=1", "-resign", "movecount=1", "score=300", "-maxmoves", "60",
         "-openings", f"file={EPD}", "order=random", "-progress", "off"]


def spsa(*argv):
    from tuner.cli import main

    return main(["spsa", *map(str, argv)])


def test_emit_params_writes_the_engines_spin_options_but_resource_ones(tmp_path, capsys):
    out = tmp_path / "p.txt"
    assert spsa("--emit-params", *ENGINE, "-o", out) == 0
    ps = S.load_params(out)
    # Hash is left out by the rule; Knob 0..100 -> c_end 100 / 20; Other 0..10 -> 0.5 (floor)
    assert [(p.name, p.start, p.min, p.max, p.c_end, p.r_end) for p in ps] == [
        ("Knob", 0, 0, 100, 5, 0.002), ("Other", 5, 0, 10, 0.5, 0.002)]
    assert spsa("--emit-params", *ENGINE, "-params", "hash", "ratio") == 0
    text = capsys.readouterr().out
    assert "Hash, int, 1, 1, 16, 0.75, 0.002" in text and "Knob" not in text
    assert "# Ratio, float, 0.5, MIN, MAX" in text  # a numeric string option: to complete


def test_a_bad_params_line_exits_1_naming_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("Knob, int, 10, 0, 100, 5, 0.002\nOther, int, 5, 0, 10, 0.5\n")
    assert spsa(bad, "-iterations", 5, *ENGINE, *GAMES, "-rundir", tmp_path / "r") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"wasp-tune spsa: error: {bad}:2: expected 7 comma-separated")
    assert spsa(tmp_path / "none.txt", "-iterations", 5, *ENGINE, *GAMES) == 1
    assert "no such file" in capsys.readouterr().err
    assert spsa(bad, "-iterations", "x", *ENGINE, *GAMES) == 2
    assert spsa(bad, "-iterations", 5, *ENGINE, *ENGINE, *GAMES) == 2
    assert "exactly one -engine" in capsys.readouterr().err


def test_an_option_the_engine_lacks_exits_1(tmp_path, capsys):
    p = tmp_path / "p.txt"
    p.write_text("Nope, int, 10, 0, 100, 5, 0.002\n")
    assert spsa(p, "-iterations", 2, *ENGINE, *GAMES, "-rundir", tmp_path / "r") == 1
    assert "has no option 'Nope'" in capsys.readouterr().err


def test_the_option_moves_toward_the_engines_best_value_in_200_games(tmp_path):
    # The fake engine plays a random move with probability |Knob - 42| / 40: from 10, SPSA
    # must find the better values within 50 iterations of 2 pairs.
    p = tmp_path / "p.txt"
    p.write_text("Knob, int, 10, 0, 100, 10, 0.05\n")
    run = tmp_path / "run"
    assert spsa(p, "-iterations", 50, "-pairs", 2, *ENGINE, *GAMES, "-srand", 1,
                "-rundir", run) == 0
    df = pd.read_csv(run / "params.csv")
    assert list(df["iteration"]) == list(range(1, 51)) and df["games"].sum() == 200
    assert abs(df["Knob"].tail(10).mean() - 42) < 8
    assert (run / "result.txt").read_text() == f"Knob, {round(df['Knob'].iloc[-1])}\n"
    assert (run / "result-options.txt").read_text() == f"Knob = {round(df['Knob'].iloc[-1])}\n"
    from testing.store import results

    assert len(results(str(run))) == 200


def test_sigkill_then_resume_ends_with_the_same_params_csv(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("Knob, int, 10, 0, 100, 10, 0.05\nOther, int, 5, 0, 10, 1, 0.002\n")
    args = [p, "-iterations", 30, "-pairs", 2, *ENGINE, *GAMES, "-srand", 7]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert spsa(*args, "-rundir", whole) == 0
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "tuner.cli", "spsa", *map(str, args),
                             "-concurrency", "2", "-rundir", str(cut)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = cut / "games.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if db.exists() and _count(db) >= 41:  # mid-iteration 11
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.kill()
    proc.wait()
    stored = _count(db)
    assert 41 <= stored < 120
    assert spsa("-resume", cut) == 0
    assert _count(db) == 120
    assert (cut / "params.csv").read_text() == (whole / "params.csv").read_text()
    assert (cut / "result.txt").read_text() == (whole / "result.txt").read_text()


def _count(db) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        con.close()


def test_then_sprt_plays_the_tuned_values_against_the_start_and_accepts_h1(tmp_path, capsys):
    run = tmp_path / "run"
    assert spsa(SPSA_KNOB, "-iterations", 40, "-pairs", 2, *ENGINE, *GAMES, "-srand", 3,
                "-rundir", run, "-then-sprt", "elo0=0", "elo1=50", "pairs=200") == 0
    summary = json.loads((run / "sprt" / "summary.json").read_text())
    assert summary["sprt_decision"]["decision"] == "H1"
    config = json.loads((run / "sprt" / "config.json").read_text())
    tuned = (run / "result.txt").read_text().split(", ")[1].strip()
    assert [(e["name"], e["options"]) for e in config["engines"]] == [
        ("fake-tuned", {"Knob": tuned}), ("fake-start", {"Knob": "10"})]
    capsys.readouterr()
    assert spsa(SPSA_KNOB, "-iterations", 4, *ENGINE, *GAMES, "-rundir", tmp_path / "bad",
                "-then-sprt", "elo0=5", "elo1=0") == 2
    assert "-then-sprt: elo0 (5.0) must be below elo1 (0.0)" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "games.sqlite").exists()


def test_then_sprt_can_play_at_its_own_limits(tmp_path, capsys):
    """Tuned at nodes=1, checked at depth=2: the SPRT's engines get depth 2 and no node limit,
    and a bad limit is refused before the run starts."""
    run = tmp_path / "run"
    assert spsa(SPSA_KNOB, "-iterations", 2, *ENGINE, *GAMES, "-rundir", run, "-then-sprt",
                "elo0=0", "elo1=50", "pairs=3", "depth=2") == 0
    config = json.loads((run / "sprt" / "config.json").read_text())
    assert [(e["depth"], e["nodes"], e["tc"]) for e in config["engines"]] == [(2, None, None)] * 2
    con = sqlite3.connect(run / "games.sqlite")
    tuned = json.loads(con.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    con.close()
    assert tuned["engines"][0]["nodes"] == 1  # the tune itself kept its limits
    capsys.readouterr()
    assert spsa(SPSA_KNOB, "-iterations", 2, *ENGINE, *GAMES, "-rundir", tmp_path / "bad",
                "-then-sprt", "elo0=0", "elo1=5", "tc=fast") == 2
    assert "-then-sprt" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "games.sqlite").exists()


def test_iterations_in_flight_give_one_path_whatever_the_concurrency(tmp_path):
    # -in-flight 3: iteration k starts from theta after k - 3; the updates are applied in
    # order, so 3 threads and 1 thread give the same params.csv
    args = [SPSA_KNOB, "-iterations", 30, "-pairs", 1, "-in-flight", 3, *ENGINE, *GAMES,
            "-srand", 5]
    assert spsa(*args, "-concurrency", 3, "-rundir", tmp_path / "three") == 0
    assert spsa(*args, "-rundir", tmp_path / "one") == 0
    text = (tmp_path / "three" / "params.csv").read_text()
    assert text == (tmp_path / "one" / "params.csv").read_text()
    df = pd.read_csv(tmp_path / "one" / "params.csv")
    assert df["Knob"].iloc[-1] > 25  # from 10 toward 42 with stale thetas too


def test_dask_plays_the_pairs_with_the_same_path_as_local_threads(tmp_path):
    distributed = pytest.importorskip("distributed")
    args = [SPSA_KNOB, "-iterations", 12, "-pairs", 2, "-in-flight", 2, *ENGINE, *GAMES,
            "-srand", 9]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0", silence_logs=40) as cluster:
        assert spsa(*args, "-dask", cluster.scheduler_address, "-rundir", tmp_path / "d") == 0
    assert spsa(*args, "-concurrency", 2, "-rundir", tmp_path / "l") == 0
    text = (tmp_path / "d" / "params.csv").read_text()
    assert text == (tmp_path / "l" / "params.csv").read_text()
    assert len(text.splitlines()) == 13


def test_wasp_match_refuses_to_resume_an_spsa_run(tmp_path, capsys):
    from testing.cli import main as match_main

    run = tmp_path / "run"
    assert spsa(SPSA_KNOB, "-iterations", 1, *ENGINE, *GAMES, "-rundir", run) == 0
    capsys.readouterr()
    assert match_main(["-resume", str(run)]) == 1
    assert f"resume it with wasp-tune spsa -resume {run}" in capsys.readouterr().err


@pytest.mark.slow
def test_emit_params_of_wasp_py_lists_its_search_parameters(tmp_path):
    out = tmp_path / "wasp.txt"
    assert spsa("--emit-params", "-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli",
                "-o", out) == 0
    ps = {p.name: p for p in S.load_params(out)}
    from wasp.searchparams import PARAMS

    assert set(ps) == {sp.name for sp in PARAMS}  # Hash, MultiPV, Move Overhead left out
    lmr = ps["LmrDepth"]
    assert (lmr.start, lmr.min, lmr.max, lmr.c_end, lmr.r_end) == (4, 1, 20, 0.95, 0.002)


@pytest.mark.engines
def test_stockfish_skill_level_moves_toward_full_strength(tmp_path):
    import shutil

    sf = shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
    if sf is None:
        pytest.skip("stockfish not installed")
    p = tmp_path / "sf.txt"
    p.write_text("Skill Level, int, 3, 0, 20, 4, 0.05\n")
    run = tmp_path / "run"
    assert spsa(p, "-iterations", 30, "-pairs", 2, "-engine", f"cmd={sf}", "option.Hash=1",
                "-each", "nodes=400", "-resign", "movecount=2", "score=500", "-maxmoves", 80,
                "-openings", f"file={EPD}", "order=random", "-srand", 1, "-progress", "off",
                "-rundir", run) == 0
    df = pd.read_csv(run / "params.csv")
    assert df["Skill Level"].tail(5).mean() > 7  # from 3, in 120 games of 400 nodes a move


def test_the_engine_and_settings_can_come_from_a_config_file(tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"engines": [{"cmd": sys.executable, "args": [SPSA_FAKE],
                                               "name": "cfg"}], "each": {"nodes": 1},
                                  "resign": {"movecount": 1, "score": 300}, "maxmoves": 60}))
    run = tmp_path / "run"
    assert spsa(SPSA_KNOB, "-iterations", 2, "-config", config, "-rundir", run,
                "-progress", "off") == 0
    con = sqlite3.connect(run / "games.sqlite")
    saved = json.loads(con.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    con.close()
    assert [e["name"] for e in saved["engines"]] == ["cfg-plus", "cfg-minus"]
    assert len(pd.read_csv(run / "params.csv")) == 2


@pytest.mark.timeout(300)
def test_a_lost_scheduler_ends_the_run_and_resume_gives_the_uninterrupted_path(tmp_path, capsys):
    import threading
    import time

    distributed = pytest.importorskip("distributed")
    args = [SPSA_KNOB, "-iterations", 40, "-pairs", 1, "-in-flight", 2, *ENGINE, *GAMES,
            "-srand", 4]
    csv = tmp_path / "d" / "params.csv"

    def cluster():
        return distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                        host="127.0.0.1", dashboard_address=":0",
                                        silence_logs=40)

    with root_on_pythonpath():
        first = cluster()

        def kill_the_scheduler():
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if csv.exists() and len(csv.read_text().splitlines()) >= 4:
                    break
                time.sleep(0.05)
            first.close()

        threading.Thread(target=kill_the_scheduler, daemon=True).start()
        assert spsa(*args, "-dask", first.scheduler_address, "-rundir", tmp_path / "d") == 1
        err = capsys.readouterr().err
        assert "lost the scheduler" in err and f"-resume {tmp_path / 'd'}" in err, err
        assert len(csv.read_text().splitlines()) < 41
        second = cluster()
        try:
            assert spsa("-resume", tmp_path / "d", "-dask", second.scheduler_address) == 0
        finally:
            second.close()
    assert spsa(*args, "-concurrency", 2, "-rundir", tmp_path / "l") == 0
    assert csv.read_text() == (tmp_path / "l" / "params.csv").read_text()
