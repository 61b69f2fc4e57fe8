"""tuner.texel.waspterms: Wasp-Py's linear terms as the trace tuner's linear model, exact to the
evaluation, and the objective through which `wasp-tune run` scores the linear weights."""


import numpy as np
import pytest

from tests.conftest import DATA
from tuner.texel.objective import Scorer, error
from tuner.texel.positions import load
from tuner.texel.sparse import linear_scores, sparse_traces, wasp_linear
from tuner.texel.waspterms import WaspLinearE, wasp_trace
from wasp import params as P

QUIET = DATA / "tuner_quiet_200.epd"


def test_wasp_trace_reproduces_the_evaluation_with_its_rounding_in_fixed():
    ps = load(QUIET)
    W = P.default_weights()
    q, leaves = Scorer(1).qsearch_scores(W, ps.rows)
    terms, ls, evals = wasp_trace(W, leaves, threads=1)
    assert np.array_equal(evals, q)  # EVAL: the leaf's evaluation, the quiescence score
    W0 = np.zeros(ls.n_weights)
    W0[ls.mg_of] = [t[1] for t in terms]
    W0[ls.eg_of] = [t[-1] for t in terms]
    assert np.max(np.abs(linear_scores(W0, ls) - evals)) < 1e-6
    # FIXED is king safety (as wasp_linear has it) plus the two truncations: under 2 cp
    rounding = ls.fixed - wasp_linear(sparse_traces(W, leaves, 1)).fixed
    assert np.max(np.abs(rounding)) < 2.0
    # without it, more than the check's 0.1 % would miss EVAL by over 1 cp
    assert np.mean(np.abs(rounding) > 1.0 + 1e-6) > 0.001
    names = [t[0] for t in terms]
    assert names[0] == "pawn_value" and "pst_knight[27]" in names and len(set(names)) == len(
        names)
    assert all(len(t) == 3 for t in terms)  # every linear parameter of Wasp is phased
    assert len(ls.mg_of) == int(np.sum(P.LINEAR & (P.PHASE_OF != 1)))


def test_run_scores_linear_weights_through_the_trace_objective():
    """`wasp-tune run`'s coordinate methods score a linear weight by the trace tuner's
    objective: equal to the evaluation's E at the weights it was built with, and moving
    one weight costs only that weight's positions."""
    ps = load(QUIET)
    W = P.default_weights()
    sc = Scorer(1)
    q, leaves = sc.qsearch_scores(W, ps.rows)
    lin = WaspLinearE(W, leaves, ps.results, 1.2, threads=1)
    assert lin(W) == pytest.approx(error(q, ps.results, 1.2), abs=1e-12)
    i = P.OFFSETS["pawn_value"]
    W2 = W.copy()
    W2[i] += 7
    e_lin = lin(W2)
    assert lin.obj(lin.trace_weights(W2)) == e_lin
    # the evaluation truncates; the linear model differs from it by that rounding only
    assert e_lin == pytest.approx(error(sc.leaf_scores(W2, leaves), ps.results, 1.2),
                                  rel=1e-3)
    W3 = W.copy()
    W3[P.OFFSETS["ks_table"]] += 5
    assert lin.serves(W2) and not lin.serves(W3)


