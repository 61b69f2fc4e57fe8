"""tuner.traces.run: validation every few steps, the pulls that keep a small set from being
overfitted, the lines that say the data is small or the sets disagree, and the run files."""

import csv
import json
import os

import numpy as np

from tests.tuner.traces.helpers import PLANTED, write_synthetic
from tuner.cli import main
from tuner.texel import default_reg, error
from tuner.traces.run import TraceConfig, TraceRun
from tuner.traces.tracefile import read_trace


def _rows(path):
    return list(csv.DictReader(open(path)))


def _run(tmp_path, name, train, valid=None, **kw):
    lines = []
    run = TraceRun.create(tmp_path / name, TraceConfig(trace=str(train), k=1.0, **kw))
    W = run.tune(read_trace(train), read_trace(valid) if valid else None, progress=False,
                 log=lines.append)
    return run, W, "\n".join(lines)


def test_validation_every_few_steps_stops_inside_a_pass_and_keeps_the_best_step(tmp_path):
    train, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(train, n=600, seed=2)  # small: the training set's noise gets fitted
    write_synthetic(valid, n=3000, seed=9)
    run, W, out = _run(tmp_path, "r", train, valid, lr=3.0, epochs=100, max_passes=20,
                       patience=1, valid_every=5, reg=0.0)
    st = run.state
    assert st.stopped == "patience" and st.steps % 100 != 0  # it stopped inside a pass
    checks = _rows(os.path.join(run.dir, "checks.csv"))
    assert [int(r["step"]) for r in checks] == list(range(5, st.steps + 1, 5))
    best = min(checks, key=lambda r: float(r["e_valid"]))
    assert st.best.step == int(best["step"]) and st.best.step < st.steps
    assert np.array_equal(W, np.array(st.best.W))
    # 20 checks (a pass's worth) without a gain after the best one
    assert st.steps - st.best.step == 20 * 5
    assert f"stopping at step {st.steps}" in out
    tr = read_trace(valid)
    assert error(tr.scores(np.rint(W)), tr.results, 1.0) == float(best["e_valid"])


def test_regularisation_lowers_validation_error_on_a_small_planted_set(tmp_path):
    """400 positions for 18 weights, tuned to the end: the pull toward the start values (within
    15 cp of the planted ones), given or the default one, keeps the fit from the training set's
    noise."""
    train, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(train, n=400, seed=3)
    write_synthetic(valid, n=20000, seed=9)
    tv = read_trace(valid)
    e = {}
    for reg in (0.0, 1e-3, None):
        run, W, _ = _run(tmp_path, f"r{reg}", train, lr=2.0, epochs=100, max_passes=10,
                         reg=reg)
        e[reg] = error(tv.scores(np.rint(W)), tv.results, 1.0)
    assert run.config.reg == default_reg(400, 18) > 0
    assert e[1e-3] < e[0.0] - 1e-4, e
    assert e[None] < e[0.0] - 1e-4, e


def test_small_data_gets_a_warning_that_names_the_pull(tmp_path):
    train, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(train, n=2000, seed=2)  # 111 positions a weight
    write_synthetic(valid, n=500, seed=9)
    run, _, out = _run(tmp_path, "r", train, valid, epochs=10, max_passes=1)
    reg = default_reg(2000, 18)
    assert "warning: 2000 training positions for 18 weights" in out and "-params" in out
    assert f"(-reg; {reg:g} unless given)" in out
    assert "warning: the validation set (500 positions)" in out
    # the default pull is recorded as the value used, with the figures it came from
    assert f"reg {reg:g} (the default for 2000 training positions and 18 tuned weights" in out
    config = json.loads(open(os.path.join(run.dir, "run.json")).read())
    assert config["reg"] == reg > 0 and config["max_passes"] == 1
    assert config["reg_source"].startswith("the default for 2000 training positions")
    # the default pass count is recorded as the number used
    run2 = TraceRun.create(tmp_path / "d", TraceConfig(trace=str(train)))
    assert json.loads(open(os.path.join(run2.dir, "run.json")).read())["max_passes"] == 50


def test_sets_that_disagree_are_named_after_the_first_steps(tmp_path):
    """A validation set whose results follow other weights (the piece values turned around):
    training E falls while validation E rises from the first check."""
    train, valid = tmp_path / "t.trace", tmp_path / "v.trace"
    write_synthetic(train, n=3000, seed=2, start_shift=np.full(18, -60))
    other = [(t[0], *[-v for v in t[1:]]) for t in PLANTED]
    write_synthetic(valid, n=3000, seed=9, terms=other,
                    start_shift=np.array([-60 - 2 * v for v in
                                          np.r_[[v for t in PLANTED for v in t[1:]]]]))
    _, _, out = _run(tmp_path, "r", train, valid, epochs=20, max_passes=1, lr=3.0, reg=0.0,
                       valid_every=5)
    assert "the two sets disagree" in out


def test_an_equal_validation_error_is_not_below_the_lowest(tmp_path):
    train = tmp_path / "t.trace"
    write_synthetic(train, n=2000, seed=2)
    # steps so small that the rounded values, and so the validation E, stay where they are
    _, _, out = _run(tmp_path, "r", train, train, epochs=2, max_passes=3, lr=0.01,
                       valid_every=0, reg=0.0, patience=5)
    assert "is not below its lowest" in out and "is above" not in out


def test_resuming_a_finished_run_leaves_its_files_alone(tmp_path):
    train = tmp_path / "t.trace"
    write_synthetic(train, n=1000, seed=2)
    run_dir = tmp_path / "r"
    assert main(["trace", str(train), "-dir", str(run_dir), "-max-passes", "2", "-epochs", "5",
                 "-quiet"]) == 0
    before = {n: (run_dir / n).read_bytes() for n in ("passes.csv", "params.txt")}
    stamp = os.stat(run_dir / "passes.csv").st_mtime_ns
    assert main(["trace", "-resume", str(run_dir), "-quiet"]) == 0
    assert {n: (run_dir / n).read_bytes() for n in before} == before
    assert os.stat(run_dir / "passes.csv").st_mtime_ns == stamp


def test_trace_takes_the_run_flags_reg_min_count_and_smooth(tmp_path, capsys):
    train = tmp_path / "t.trace"
    write_synthetic(train, n=1000, seed=2)
    assert main(["trace", str(train), "-dir", str(tmp_path / "r"), "-max-passes", "1",
                 "-epochs", "5", "-reg", "0.001", "-min-count", "700", "-smooth", "0.01",
                 "-quiet"]) == 0
    config = json.loads((tmp_path / "r" / "run.json").read_text())
    assert (config["reg"], config["min_count"], config["smooth"]) == (0.001, 700, 0.01)
    assert config["reg_source"] == "-reg"
    assert "min count 700:" in capsys.readouterr().out
    assert main(["trace", str(train), "-dir", str(tmp_path / "n"), "-reg", "-1"]) == 2
