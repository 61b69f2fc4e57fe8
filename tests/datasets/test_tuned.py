"""The shipped tuned parameter file (datasets/tuned/): it parses and the engine takes it."""

from pathlib import Path

import numpy as np

from tests.wasp.test_uci import Proc
from tuner.methods import select_weights
from wasp import params as P

TUNED = Path(__file__).resolve().parents[2] / "datasets" / "tuned" / "union-ks.txt"


def test_tuned_file_moves_only_the_scalar_terms():
    W = P.load(TUNED)
    moved = np.nonzero(W != P.default_weights())[0]
    assert len(moved) > 100
    pst = set(select_weights(["pst_*", "ks_table"]).tolist())
    assert not pst & set(moved.tolist())


def test_engine_loads_the_tuned_file_over_uci():
    e = Proc()
    try:
        e.send("uci")
        e.wait_for("uciok", 30)
        e.send(f"setoption name EvalFile value {TUNED}")
        e.send("isready")
        i = e.wait_for("readyok", 600)
        assert any(line == f"info string EvalFile {TUNED} loaded" for line in e.lines[:i])
        e.send("position startpos moves e2e4")
        e.send("go depth 6")
        e.wait_for("bestmove", 120)
    finally:
        e.close()
