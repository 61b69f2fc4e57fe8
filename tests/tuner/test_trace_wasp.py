"""`wasp-tune trace --write`: Wasp-Py's own evaluation as a trace, tuned as `wasp-tune run`."""

import json

import numpy as np
import pytest

from tests.conftest import DATA
from tuner.cli import main
from tuner.error import Scorer, error
from tuner.positions import load
from tuner.sparse import linear_scores, sparse_traces, wasp_linear
from tuner.trace import check_trace, read_terms, read_trace
from tuner.trace_wasp import WaspLinearE, wasp_terms, wasp_trace
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


@pytest.mark.parametrize("method", ["adam", "binary"])
def test_traced_wasp_tunes_to_the_weights_of_wasp_tune_run(tmp_path, capsys, method):
    """Same data and method, leaves not re-resolved, K given as run fitted it: within 1 (the
    binary search scores both through one objective, term by term: the same weights)."""
    passes = "3" if method == "adam" else "2"
    run = tmp_path / "run"
    extra = (["-batch-size", "100000"] if method == "adam" else
             ["-params", "!ks_*", "!df_*", "!kbnk_*", "!kpk_win"])  # the linear weights
    assert main(["run", str(QUIET), "-valid-data", str(QUIET), "-dir", str(run), "-method",
                 method, "-max-passes", passes, "-resolve-every", "100", "-patience", "0",
                 "-threads", "1", "-quiet", *extra]) == 0
    K = json.loads((run / "run.json").read_text())["k"]
    W_run = P.load(run / "params-last.txt")
    trace = tmp_path / "quiet.trace"
    assert main(["trace", "--write", str(QUIET), "-o", str(trace), "-threads", "1",
                 "-quiet"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert check_trace(read_trace(trace)).bad == 0  # no -no-check needed
    tr = tmp_path / "tr"
    assert main(["trace", str(trace), "-valid-data", str(trace), "-dir", str(tr), "-k",
                 repr(K), "-method", method, "-epochs", "1", "-max-passes", passes,
                 "-patience", "0", "-threads", "1", "-quiet"]) == 0
    got = read_terms(tr / "params-last.txt")
    terms, _ = wasp_terms(W_run)
    diff = np.array([abs(a - b) for name, *vals in terms for a, b in zip(vals, got[name],
                                                                       strict=True)])
    assert np.sum(W_run != P.default_weights()) > 100  # the run did move the weights
    assert diff.max() <= 1, f"{int(np.sum(diff > 1))} weights differ by more than 1"


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


def test_write_refuses_bad_input_with_one_line(tmp_path, capsys):
    out = str(tmp_path / "x.trace")
    assert main(["trace", "--write", str(tmp_path / "none.epd"), "-o", out]) == 1
    assert main(["trace", "--write", str(QUIET)]) == 2
    assert main(["trace", "t.trace", "--write", str(QUIET), "-o", out]) == 2
    assert main(["trace", "--write", str(QUIET), "-o", str(tmp_path / "no" / "x.trace")]) == 2
    bad = tmp_path / "bad.epd"
    bad.write_text("not a fen at all\n")
    assert main(["trace", "--write", str(bad), "-o", out]) == 1
    assert main(["trace", "--write", str(QUIET), "-o", out, "-init", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 6 and all(e.startswith("wasp-tune trace: error:") for e in err)
