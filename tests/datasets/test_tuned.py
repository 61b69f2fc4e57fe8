"""The shipped tuned parameter files (datasets/tuned/): they parse and the engine takes them."""

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.wasp.test_uci import Proc
from tuner.texel.methods import select_weights
from wasp import params as P

SHIPPED = sorted((ROOT / "datasets" / "tuned").glob("*.txt"))


def test_tuned_files_are_shipped():
    assert {p.name for p in SHIPPED} >= {"union-ks.txt", "union-deep-ks.txt"}


@pytest.mark.parametrize("tuned", SHIPPED, ids=lambda p: p.name)
def test_tuned_file_moves_only_the_scalar_terms(tuned):
    """Against Wasp 1.02's values, where the tuning started (the defaults now are one of
    these sets)."""
    W = P.load(tuned)
    start = P.load(ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt")
    moved = np.nonzero(W != start)[0]
    assert len(moved) > 100
    pst = set(select_weights(["pst_*", "ks_table"]).tolist())
    assert not pst & set(moved.tolist())


@pytest.mark.parametrize("tuned", SHIPPED, ids=lambda p: p.name)
def test_engine_loads_the_tuned_file_over_uci(tuned):
    e = Proc()
    try:
        e.send("uci")
        e.wait_for("uciok", 30)
        e.send(f"setoption name EvalFile value {tuned}")
        e.send("isready")
        i = e.wait_for("readyok", 600)
        assert any(line == f"info string EvalFile {tuned} loaded" for line in e.lines[:i])
        e.send("position startpos moves e2e4")
        e.send("go depth 6")
        e.wait_for("bestmove", 120)
    finally:
        e.close()
