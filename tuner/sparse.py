"""Sparse evaluation traces of packed positions, and the linear model the gradient tuner fits.

The compact form of Ethereal's tuner (index, white count, black count), built by a parallel
kernel straight from packed rows (the one builder of batch traces; `wasp.trace` traces one
position): ``idx`` int16 (opening-weight index,
its endgame partner is `wasp.params.EG_INDEX`), ``cnt`` int8 [., 2], ``offsets`` int64 [n + 1],
``extra`` int32 [n, N_EXTRA] (phase, king safety, draw factor, ... as `wasp.evaluate.X_*`).

The model, white's view: q = ((mg + ks) * phase + eg * (24 - phase)) / 24 * scale / 64 with
mg = sum (white - black) * w[i], eg the same over the endgame partners, ks the king safety
opening term and scale the draw factor, both taken as fixed from the trace. Positions an endgame
rule scored (``extra[X_SPECIAL]``) keep their traced score and give no gradient.
"""

import numpy as np
from numba import njit, prange

from tuner.error import CHUNK
from tuner.kernels import unpack_row
from tuner.rows import ROW_WIDTH
from wasp import params as P
from wasp.bitboards import tables
from wasp.evaluate import (
    N_EXTRA,
    TRACE_SIZE,
    X_FINAL,
    X_KS_MG,
    X_PHASE,
    X_SCALE,
    X_SPECIAL,
    evaluate_traced,
    new_eval_cache,
)
from wasp.position import State, new_state
from wasp.types import N_INFO

NW2 = 2 * P.N_WEIGHTS


@njit(cache=True, parallel=True)
def _trace_kernel(T, W, rows, Es, bbs, sts, infos, TRs, fill, idx, cnt, offsets, extra):
    """fill=0: offsets[j + 1] = number of nonzero terms of j; fill=1: write them at offsets[j]."""
    n = rows.shape[0]
    nw = Es.shape[0]
    n_chunks = (n + CHUNK - 1) // CHUNK
    for w in prange(nw):
        S = State(bbs[w], sts[w])
        TR = TRs[w]
        for c in range(w, n_chunks, nw):
            for j in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
                for i in range(TR.shape[0]):
                    TR[i] = 0
                unpack_row(T, S, rows, np.int64(j), False)
                evaluate_traced(T, S, W, Es[w], infos[w], TR)
                k = offsets[j] if fill else 0
                for i in range(NW2 // 2):
                    a = TR[2 * i]
                    b = TR[2 * i + 1]
                    if a != 0 or b != 0:
                        if fill:
                            idx[k] = i
                            cnt[k, 0] = min(127, max(-128, a))
                            cnt[k, 1] = min(127, max(-128, b))
                        k += 1
                if fill:
                    for x in range(extra.shape[1]):
                        extra[j, x] = TR[NW2 + x]
                else:
                    offsets[j + 1] = k


def sparse_traces(W, rows, threads=None):
    """(idx, cnt, offsets, extra) of packed rows evaluated with W."""
    from tuner.error import set_threads

    nw = set_threads(threads)
    W = np.ascontiguousarray(W, dtype=np.int64)
    rows = np.ascontiguousarray(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    n = len(rows)
    T = tables()
    Es = np.tile(new_eval_cache(), (nw, 1))
    S = new_state()
    bbs = np.tile(S.bb, (nw, 1))
    sts = np.tile(S.st, (nw, 1))
    infos = np.zeros((nw, N_INFO), dtype=np.int64)
    TRs = np.zeros((nw, TRACE_SIZE), dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    extra = np.zeros((n, N_EXTRA), dtype=np.int32)
    idx = np.zeros(1, dtype=np.int16)
    cnt = np.zeros((1, 2), dtype=np.int8)
    if n == 0:
        return idx[:0], cnt[:0], offsets, extra
    _trace_kernel(T, W, rows, Es, bbs, sts, infos, TRs, 0, idx, cnt, offsets, extra)
    offsets = np.cumsum(offsets)
    idx = np.zeros(offsets[-1], dtype=np.int16)
    cnt = np.zeros((offsets[-1], 2), dtype=np.int8)
    _trace_kernel(T, W, rows, Es, bbs, sts, infos, TRs, 1, idx, cnt, offsets, extra)
    return idx, cnt, offsets, extra


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _model(wf, eg_index, idx, cnt, extra, j, lo, hi):
    """(q, d q / d mg, d q / d eg) of position j under float weights wf."""
    if extra[j, X_SPECIAL]:
        return float(extra[j, X_FINAL]), 0.0, 0.0
    mg = float(extra[j, X_KS_MG])
    eg = 0.0
    for k in range(lo, hi):
        c = float(cnt[k, 0] - cnt[k, 1])
        i = idx[k]
        mg += c * wf[i]
        eg += c * wf[eg_index[i]]
    phase = float(extra[j, X_PHASE])
    scale = float(extra[j, X_SCALE]) / 64.0
    q = (mg * phase + eg * (24.0 - phase)) / 24.0 * scale
    return q, phase / 24.0 * scale, (24.0 - phase) / 24.0 * scale


@njit(cache=True, parallel=True)
def _gradient_kernel(wf, eg_index, idx, cnt, offsets, extra, results, order, K, gpart, epart):
    """Per chunk of `order` (positions to use): the gradient of sum (R - s)^2 and that sum."""
    n = order.shape[0]
    n_chunks = gpart.shape[0]
    ln10 = np.log(10.0)
    for c in prange(n_chunks):
        g = gpart[c]
        for i in range(g.shape[0]):
            g[i] = 0.0
        e = 0.0
        for t in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            j = order[t]
            lo = offsets[j]
            hi = offsets[j + 1]
            q, dmg, deg = _model(wf, eg_index, idx, cnt, extra, j, lo, hi)
            s = 1.0 / (1.0 + 10.0 ** (-K * q / 400.0))
            d = results[j] - s
            e += d * d
            # d/dq (R - s)^2 = -2 (R - s) s (1 - s) ln10 K / 400
            f = -2.0 * d * s * (1.0 - s) * ln10 * K / 400.0
            if dmg != 0.0 or deg != 0.0:
                for k in range(lo, hi):
                    cf = float(cnt[k, 0] - cnt[k, 1]) * f
                    i = idx[k]
                    g[i] += cf * dmg
                    g[eg_index[i]] += cf * deg
        epart[c] = e


def gradient(wf, traces, results, K, order=None):
    """(gradient of E over float weights wf, E) for the positions `order` (default all)."""
    idx, cnt, offsets, extra = traces
    n = len(results)
    order = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, np.int64)
    n_chunks = max(1, (len(order) + CHUNK - 1) // CHUNK)
    gpart = np.zeros((n_chunks, P.N_WEIGHTS), dtype=np.float64)
    epart = np.zeros(n_chunks, dtype=np.float64)
    eg_index = np.where(P.EG_INDEX >= 0, P.EG_INDEX, np.arange(P.N_WEIGHTS)).astype(np.int64)
    _gradient_kernel(np.ascontiguousarray(wf, dtype=np.float64), eg_index, idx, cnt, offsets,
                     extra, np.ascontiguousarray(results, dtype=np.float64), order, float(K),
                     gpart, epart)
    g = np.zeros(P.N_WEIGHTS)
    for c in range(n_chunks):  # in order: repeatable
        g += gpart[c]
    m = max(1, len(order))
    e = 0.0
    for c in range(n_chunks):
        e += epart[c]
    return g / m, e / m


def model_scores(wf, traces):
    """White-view model scores (float) of every position (tests)."""
    idx, cnt, offsets, extra = traces
    eg_index = np.where(P.EG_INDEX >= 0, P.EG_INDEX, np.arange(P.N_WEIGHTS))
    out = np.zeros(len(extra))
    for j in range(len(extra)):
        lo, hi = offsets[j], offsets[j + 1]
        if extra[j, X_SPECIAL]:
            out[j] = extra[j, X_FINAL]
            continue
        c = cnt[lo:hi, 0].astype(float) - cnt[lo:hi, 1]
        mg = extra[j, X_KS_MG] + np.dot(c, wf[idx[lo:hi]])
        eg = np.dot(c, wf[eg_index[idx[lo:hi]]])
        ph = extra[j, X_PHASE]
        out[j] = (mg * ph + eg * (24 - ph)) / 24 * extra[j, X_SCALE] / 64
    return out
