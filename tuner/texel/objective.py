"""Texel's error E = mean (R - sigmoid(K q / 400))^2, sigmoid(x) = 1 / (1 + 10^-x), and K.

q is the white-relative score of each position: the full quiescence search (`qsearch_scores`,
which also keeps each position's leaf) or the static evaluation of stored leaves
(`leaf_scores`). Both run numba `parallel=True` kernels over a fixed number of workers, each
with its own scratch position and its own evaluation cache, cleared at every call (so no entry
made with another parameter vector is ever read). Scores are integers, so they do not depend on
the thread count; E sums fixed chunks of `CHUNK` positions and adds the chunk sums in order, so
it repeats bit for bit.
"""

import numba
import numpy as np
from numba import njit, prange

from wasp.bitboards import tables
from wasp.evaluate import clear_caches, evaluate, new_eval_cache
from wasp.position import State, new_state
from wasp.searchparams import default_search_params
from wasp.types import N_INFO, ST_SIDE

from .kernels import unpack_row
from .qsearch import BUF_WIDTH, QPLY, resolve
from .rows import ROW_WIDTH

CHUNK = 4096
MODE_LEAF, MODE_QSEARCH = 0, 1


@njit(cache=True, parallel=True)
def _scores_kernel(T, W, P, rows, mode, Es, bbs, sts, infos, bufs, scores, leaves):
    n = rows.shape[0]
    nw = Es.shape[0]
    n_chunks = (n + CHUNK - 1) // CHUNK
    for w in prange(nw):
        S = State(bbs[w], sts[w])
        E = Es[w]
        info = infos[w]
        buf = bufs[w]
        clear_caches(E)
        for c in range(w, n_chunks, nw):
            for j in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
                if mode == MODE_LEAF:
                    unpack_row(T, S, rows, np.int64(j), False)
                    v = evaluate(T, S, W, E, info)
                    scores[j] = v if S.st[ST_SIDE] == 0 else -v
                else:
                    unpack_row(T, S, rows, np.int64(j), True)
                    scores[j] = resolve(T, S, W, P, E, info, buf, leaves, np.int64(j))


@njit(cache=True, parallel=True)
def _error_kernel(scores, results, K, partial):
    n = scores.shape[0]
    n_chunks = partial.shape[0]
    for c in prange(n_chunks):
        s = 0.0
        for j in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            sig = 1.0 / (1.0 + 10.0 ** (-K * scores[j] / 400.0))
            d = results[j] - sig
            s += d * d
        partial[c] = s
    total = 0.0
    for c in range(n_chunks):
        total += partial[c]
    return total / max(n, 1)


def set_threads(threads=None) -> int:
    """Fix numba's thread count (default: all cores numba sees); returns it."""
    threads = int(threads or numba.config.NUMBA_NUM_THREADS)
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    return threads


def sigmoid(q, K):
    """1 / (1 + 10^(-K q / 400)) (numpy)."""
    return 1.0 / (1.0 + 10.0 ** (-K * np.asarray(q, dtype=np.float64) / 400.0))


def _as_scores(scores):
    """Integer scores stay int64 (the engine's), float ones (a linear model's) float64."""
    scores = np.asarray(scores)
    dtype = np.float64 if np.issubdtype(scores.dtype, np.floating) else np.int64
    return np.ascontiguousarray(scores, dtype=dtype)


def error(scores, results, K) -> float:
    """E of white-relative scores against results (deterministic chunked parallel sum)."""
    scores = _as_scores(scores)
    results = np.ascontiguousarray(results, dtype=np.float64)
    partial = np.zeros(max(1, (len(scores) + CHUNK - 1) // CHUNK), dtype=np.float64)
    return float(_error_kernel(scores, results, float(K), partial))


def fit_k(scores, results, bounds=(0.1, 4.0)) -> float:
    """The K minimising E for fixed scores (scipy's bounded scalar minimisation)."""
    from scipy.optimize import minimize_scalar

    scores = _as_scores(scores)
    results = np.ascontiguousarray(results, dtype=np.float64)
    r = minimize_scalar(lambda k: error(scores, results, k), bounds=bounds, method="bounded",
                        options={"xatol": 1e-6})
    return float(r.x)


class Scorer:
    """Scratch state for the parallel kernels: one position, cache, info and buffer per worker.

    >>> sc = Scorer(threads=2)
    >>> q, leaves = sc.qsearch_scores(W, ps.rows)      # resolves and keeps the leaves
    >>> E = error(sc.leaf_scores(W, leaves), ps.results, K)
    """

    def __init__(self, threads=None, search_params=None):
        self.threads = set_threads(threads)
        self.T = tables()
        # The quiescence search's delta margin and exchange values: the engine's own
        # search parameters (wasp.searchparams), its defaults unless given.
        self.P = np.ascontiguousarray(
            default_search_params() if search_params is None else search_params,
            dtype=np.int64)
        proto = new_eval_cache()
        self.Es = np.tile(proto, (self.threads, 1))
        S = new_state()
        self.bbs = np.tile(S.bb, (self.threads, 1))
        self.sts = np.tile(S.st, (self.threads, 1))
        self.infos = np.zeros((self.threads, N_INFO), dtype=np.int64)
        self.bufs = np.zeros((self.threads, QPLY, BUF_WIDTH), dtype=np.int32)
        self._no_leaves = np.zeros((1, ROW_WIDTH), dtype=np.uint8)

    def __repr__(self):
        return f"Scorer(threads={self.threads})"

    def _run(self, W, rows, mode, leaves):
        numba.set_num_threads(self.threads)
        W = np.ascontiguousarray(W, dtype=np.int64)
        rows = np.ascontiguousarray(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
        scores = np.zeros(len(rows), dtype=np.int64)
        if len(rows):
            _scores_kernel(self.T, W, self.P, rows, np.int64(mode), self.Es, self.bbs, self.sts,
                           self.infos, self.bufs, scores, leaves)
        return scores

    def leaf_scores(self, W, rows) -> np.ndarray:
        """White-relative static evaluations of packed rows (int64)."""
        return self._run(W, rows, MODE_LEAF, self._no_leaves)

    def qsearch_scores(self, W, rows):
        """(white-relative quiescence scores, packed leaf rows) of packed rows."""
        leaves = np.zeros((len(rows), ROW_WIDTH), dtype=np.uint8)
        scores = self._run(W, rows, MODE_QSEARCH, leaves)
        return scores, leaves

    def leaf_error(self, W, rows, results, K) -> float:
        return error(self.leaf_scores(W, rows), results, K)

    def qsearch_error(self, W, rows, results, K) -> float:
        return error(self.qsearch_scores(W, rows)[0], results, K)
