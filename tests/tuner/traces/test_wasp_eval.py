"""`wasp-tune trace --write`: Wasp-Py's own evaluation as a trace, tuned as `wasp-tune run`."""

import json

import numpy as np
import pytest

from tests.conftest import DATA
from tuner.cli import main
from tuner.texel.waspterms import wasp_terms
from tuner.traces.tracefile import check_trace, read_terms, read_trace
from wasp import params as P

QUIET = DATA / "tuner_quiet_200.epd"


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
