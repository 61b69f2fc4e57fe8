"""tuner.texel.objective: E and K against a direct pure-Python computation; repeatable parallel
sums."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import DATA, ROOT
from tuner.texel import positions as Ps
from tuner.texel.objective import Scorer, error, fit_k
from wasp.evaluate import evaluate_white
from wasp.params import default_weights


@pytest.fixture(scope="module")
def small():
    ps = Ps.load(DATA / "tuner_quiet_200.epd", use_cache=False)
    return ps.subset(slice(0, 60))


def _py_error(q, r, K):
    total = 0.0
    for qi, ri in zip(q, r, strict=True):
        s = 1.0 / (1.0 + math.pow(10.0, -K * qi / 400.0))
        total += (ri - s) ** 2
    return total / len(q)


def test_error_and_k_match_a_pure_python_computation(small):
    W = default_weights()
    q, leaves = Scorer(2).qsearch_scores(W, small.rows)
    q_py = [evaluate_white(Ps.row_to_fen(row)) for row in leaves]
    assert list(q) == q_py
    for K in (0.5, 1.13, 1.6):
        assert error(q, small.results, K) == pytest.approx(_py_error(q_py, small.results, K),
                                                           rel=1e-12)
    K = fit_k(q, small.results)
    grid = np.linspace(0.1, 4.0, 3901)
    K_py = grid[np.argmin([_py_error(q_py, small.results, k) for k in grid])]
    assert abs(K - K_py) < 2e-3
    assert error(q, small.results, K) <= _py_error(q_py, small.results, K_py) + 1e-12


def test_error_repeats_bit_for_bit_whatever_the_thread_count():
    ps = Ps.load(DATA / "tuner_quiet_200.epd", use_cache=False)
    rows = np.tile(ps.rows, (50, 1))  # 10,000 positions: several chunks
    res = np.tile(ps.results, 50)
    W = default_weights()
    e1 = Scorer(1).qsearch_error(W, rows, res, 1.2)
    e2 = Scorer(2).qsearch_error(W, rows, res, 1.2)
    e3 = Scorer(2).qsearch_error(W, rows, res, 1.2)
    assert e1 == e2 == e3


def test_caches_never_leak_between_parameter_vectors(small):
    sc = Scorer(2)
    W = default_weights()
    W2 = W.copy()
    W2[:20] += 7  # material and first PST entries
    a = sc.leaf_scores(W, small.rows)
    b = sc.leaf_scores(W2, small.rows)
    assert np.array_equal(Scorer(2).leaf_scores(W2, small.rows), b)
    assert np.array_equal(sc.leaf_scores(W, small.rows), a)
    qa, _ = sc.qsearch_scores(W, small.rows)
    qb, _ = sc.qsearch_scores(W2, small.rows)
    assert np.array_equal(Scorer(1).qsearch_scores(W2, small.rows)[0], qb)
    assert np.array_equal(sc.qsearch_scores(W, small.rows)[0], qa)


def test_cached_kernels_load_and_run_in_a_fresh_process():
    code = ("import numpy as np; from tuner.texel import positions as Ps; "
            "from tuner.texel.objective import Scorer; from wasp.params import default_weights; "
            f"ps = Ps.load({str(DATA / 'tuner_quiet_200.epd')!r}, use_cache=False); "
            "q, l = Scorer(2).qsearch_scores(default_weights(), ps.rows); "
            "print(int(q.sum()), int(Scorer(2).leaf_scores(default_weights(), l).sum()))")
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env=dict(os.environ), timeout=600)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert outs[0] == outs[1] and outs[0][0] == outs[0][1]
