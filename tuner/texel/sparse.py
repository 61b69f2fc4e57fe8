"""Sparse evaluation traces of packed positions, and the linear model the tuner fits.

The compact form of Ethereal's tuner (index, white count, black count), built by a parallel
kernel straight from packed rows (the one builder of batch traces; `wasp.trace` traces one
position): ``idx`` int16 (opening-weight index,
its endgame partner is `wasp.params.EG_INDEX`), ``cnt`` int8 [., 2], ``offsets`` int64 [n + 1],
``extra`` int32 [n, N_EXTRA] (phase, king safety, draw factor, ... as `wasp.evaluate.X_*`).

The model, white's view: q = ((mg + ks) * phase + eg * (24 - phase)) / 24 * scale / 64 with
mg = sum (white - black) * w[i], eg the same over the endgame partners, ks the king safety
opening term and scale the draw factor, both taken as fixed from the trace. Positions an endgame
rule scored (``extra[X_SPECIAL]``) keep their traced score and give no gradient.

Both Wasp's traces and any engine's (`tuner.traces.tracefile`) are fitted through one generic form,
`LinearSet` (compressed rows of term coefficients with a phase, two scales and a fixed part per
position): its gradient kernel serves the gradient methods, `LinearObjective` the coordinate
ones.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

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

from .kernels import unpack_row
from .objective import CHUNK
from .rows import ROW_WIDTH

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
    from .objective import set_threads

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


# ---------------------------------------------------------------------------
# The generic linear model (any engine's trace; Wasp's traces through `as_linear`)


def weight_layout(tapered):
    """(mg_of, eg_of, n_weights): a tapered term's two weights, a one-value term's one."""
    mg_of = np.zeros(len(tapered), dtype=np.int64)
    eg_of = np.zeros(len(tapered), dtype=np.int64)
    w = 0
    for t, tp in enumerate(tapered):
        mg_of[t] = w
        eg_of[t] = w + 1 if tp else w
        w += 2 if tp else 1
    return mg_of, eg_of, w


@dataclass
class LinearSet:
    """Positions of a linear tapered evaluation, in compressed rows.

    Position j has the coefficients ``coef[offsets[j]:offsets[j + 1]]`` of the terms
    ``idx[...]``; term t has its opening weight at ``mg_of[t]`` and its endgame weight at
    ``eg_of[t]`` of the weight vector (the same index for a one-value term). The model, white's
    view: ``phase * mg_scale * sum(coef * w[mg_of]) + (1 - phase) * eg_scale * sum(coef *
    w[eg_of]) + fixed``.
    """

    offsets: np.ndarray  # int64 [n + 1]
    idx: np.ndarray  # int16 [nnz] (int32 beyond 32,767 terms)
    coef: np.ndarray  # float32 [nnz]
    phase: np.ndarray  # float64 [n], 1 = all opening
    mg_scale: np.ndarray  # float64 [n]
    eg_scale: np.ndarray  # float64 [n]
    fixed: np.ndarray  # float64 [n], centipawns
    mg_of: np.ndarray  # int64 [terms]
    eg_of: np.ndarray  # int64 [terms]
    n_weights: int

    def __len__(self):
        return len(self.phase)

    def __repr__(self):
        return (f"LinearSet({len(self)} positions, {len(self.mg_of)} terms, "
                f"{self.n_weights} weights, {len(self.idx)} coefficients)")

    def subset(self, rows) -> "LinearSet":
        """The positions `rows` (sorted indices), as a new set."""
        rows = np.asarray(rows, dtype=np.int64)
        lens = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        take = np.repeat(self.offsets[rows] - offsets[:-1], lens) + np.arange(offsets[-1])
        return LinearSet(offsets, self.idx[take], self.coef[take], self.phase[rows],
                         self.mg_scale[rows], self.eg_scale[rows], self.fixed[rows],
                         self.mg_of, self.eg_of, self.n_weights)


def wasp_linear(traces) -> LinearSet:
    """Wasp's sparse traces (`sparse_traces`) as a `LinearSet` over `wasp.params` weights:
    phase / 24, the draw factor / 64 as both scales, the king safety opening term as the
    fixed part; a position an endgame rule scored keeps that score (both scales 0)."""
    idx, cnt, offsets, extra = traces
    phase = extra[:, X_PHASE].astype(np.float64) / 24.0
    scale = extra[:, X_SCALE].astype(np.float64) / 64.0
    fixed = extra[:, X_KS_MG].astype(np.float64) * phase * scale
    special = extra[:, X_SPECIAL] != 0
    scale = np.where(special, 0.0, scale)
    fixed = np.where(special, extra[:, X_FINAL].astype(np.float64), fixed)
    coef = (cnt[:, 0].astype(np.float32) - cnt[:, 1].astype(np.float32))
    eg_of = np.where(P.EG_INDEX >= 0, P.EG_INDEX, np.arange(P.N_WEIGHTS)).astype(np.int64)
    return LinearSet(np.ascontiguousarray(offsets, dtype=np.int64), idx.astype(np.int16),
                     coef, phase, scale, scale.copy(), fixed,
                     np.arange(P.N_WEIGHTS, dtype=np.int64), eg_of, P.N_WEIGHTS)


_LAST = [None, None]  # the last Wasp traces converted (held, so `is` is safe) and their set


def as_linear(traces) -> LinearSet:
    """A `LinearSet` as is; Wasp's (idx, cnt, offsets, extra) converted (the last conversion
    is kept: a run passes the same traces to every epoch)."""
    if isinstance(traces, LinearSet):
        return traces
    if _LAST[0] is not traces:
        _LAST[1] = wasp_linear(traces)
        _LAST[0] = traces
    return _LAST[1]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _linear_q(wm, we, idx, coef, lo, hi, phase, mg_scale, eg_scale, fixed):
    """(q, d q / d opening sum, d q / d endgame sum) of one position; wm, we: each term's
    opening and endgame value."""
    mg = 0.0
    eg = 0.0
    for k in range(lo, hi):
        c = float(coef[k])
        t = idx[k]
        mg += c * wm[t]
        eg += c * we[t]
    dmg = phase * mg_scale
    deg = (1.0 - phase) * eg_scale
    return dmg * mg + deg * eg + fixed, dmg, deg


@njit(cache=True, parallel=True)
def _linear_scores_kernel(wm, we, offsets, idx, coef, phase, mg_scale, eg_scale, fixed, out):
    n = out.shape[0]
    n_chunks = (n + CHUNK - 1) // CHUNK
    for c in prange(n_chunks):
        for j in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            out[j] = _linear_q(wm, we, idx, coef, offsets[j], offsets[j + 1], phase[j],
                               mg_scale[j], eg_scale[j], fixed[j])[0]


@njit(cache=True, parallel=True)
def _gradient_kernel(wm, we, offsets, idx, coef, phase, mg_scale, eg_scale, fixed, results,
                     order, K, gpart, epart):
    """Per chunk of `order` (positions to use; empty: all): the gradient of sum (R - s)^2 over
    each term's opening and endgame value (gpart[c, 0], gpart[c, 1]) and that sum."""
    n = order.shape[0] if order.shape[0] else phase.shape[0]
    use_order = order.shape[0] > 0
    n_chunks = gpart.shape[0]
    ln10 = np.log(10.0)
    for c in prange(n_chunks):
        gm = gpart[c, 0]
        ge = gpart[c, 1]
        for i in range(gm.shape[0]):
            gm[i] = 0.0
            ge[i] = 0.0
        e = 0.0
        for t in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            j = order[t] if use_order else t
            lo = offsets[j]
            hi = offsets[j + 1]
            q, dmg, deg = _linear_q(wm, we, idx, coef, lo, hi, phase[j], mg_scale[j],
                                    eg_scale[j], fixed[j])
            s = 1.0 / (1.0 + 10.0 ** (-K * q / 400.0))
            d = results[j] - s
            e += d * d
            # d/dq (R - s)^2 = -2 (R - s) s (1 - s) ln10 K / 400
            f = -2.0 * d * s * (1.0 - s) * ln10 * K / 400.0
            if dmg != 0.0 or deg != 0.0:
                fm = f * dmg
                fe = f * deg
                for k in range(lo, hi):
                    cf = float(coef[k])
                    t2 = idx[k]
                    gm[t2] += cf * fm
                    ge[t2] += cf * fe
        epart[c] = e


def _term_values(wf, ls):
    wf = np.asarray(wf, dtype=np.float64)
    return np.ascontiguousarray(wf[ls.mg_of]), np.ascontiguousarray(wf[ls.eg_of])


def _rows(ls):
    return (ls.offsets, ls.idx, ls.coef, ls.phase, ls.mg_scale, ls.eg_scale, ls.fixed)


def linear_scores(wf, ls) -> np.ndarray:
    """White-view model scores (float64) of every position of a `LinearSet` under weights wf."""
    out = np.zeros(len(ls), dtype=np.float64)
    if len(ls):
        _linear_scores_kernel(*_term_values(wf, ls), *_rows(ls), out)
    return out


def gradient(wf, traces, results, K, order=None):
    """(gradient of E over float weights wf, E) for the positions `order` (default all) of a
    `LinearSet` or Wasp's sparse traces. Chunk sums are added in order: repeatable."""
    ls = as_linear(traces)
    if order is not None and len(order) == 0:
        return np.zeros(ls.n_weights), 0.0
    order = np.zeros(0, np.int64) if order is None else np.asarray(order, np.int64)
    m = len(order) if len(order) else len(ls)
    n_chunks = max(1, (m + CHUNK - 1) // CHUNK)
    gpart = np.zeros((n_chunks, 2, len(ls.mg_of)), dtype=np.float64)
    epart = np.zeros(n_chunks, dtype=np.float64)
    if m:
        _gradient_kernel(*_term_values(wf, ls), *_rows(ls),
                         np.ascontiguousarray(results, dtype=np.float64), order, float(K),
                         gpart, epart)
    gt = np.zeros((2, len(ls.mg_of)))
    for c in range(n_chunks):  # in order: repeatable
        gt += gpart[c]
    g = np.zeros(ls.n_weights)
    np.add.at(g, ls.mg_of, gt[0])  # a one-value term gets both phases' parts
    np.add.at(g, ls.eg_of, gt[1])
    m = max(1, m)
    e = 0.0
    for c in range(n_chunks):
        e += epart[c]
    return g / m, e / m


# ---------------------------------------------------------------------------
# One weight at a time: E after moving one weight, from the positions it counts in


@njit(cache=True, nogil=True, _nrt=False)
def _column_delta(q, results, K, rows, coefs, phase, mg_scale, eg_scale, part, dv, apply):
    """Sum over the column's positions of the change of (R - s)^2 when the weight moves by dv
    (part 0: an opening weight, 1: an endgame weight, 2: a one-value term's); with apply, also
    move q."""
    total = 0.0
    for k in range(rows.shape[0]):
        j = rows[k]
        if part == 0:
            f = phase[j] * mg_scale[j]
        elif part == 1:
            f = (1.0 - phase[j]) * eg_scale[j]
        else:
            f = phase[j] * mg_scale[j] + (1.0 - phase[j]) * eg_scale[j]
        q1 = q[j] + dv * float(coefs[k]) * f
        s0 = 1.0 / (1.0 + 10.0 ** (-K * q[j] / 400.0))
        s1 = 1.0 / (1.0 + 10.0 ** (-K * q1 / 400.0))
        d0 = results[j] - s0
        d1 = results[j] - s1
        total += d1 * d1 - d0 * d0
        if apply:
            q[j] = q1
    return total


class LinearObjective:
    """E(W) of a `LinearSet` for the coordinate methods (`tuner.texel.methods.tune_parameter`).

    A call with W differing from the committed weights in one place costs only the positions
    that weight counts in (the term's column); any other W is scored in full. `commit(W)`
    makes W the base after a weight is settled.
    """

    def __init__(self, ls, results, K, W):
        from .objective import error

        self._error = error
        self.ls, self.K = ls, float(K)
        self.results = np.ascontiguousarray(results, dtype=np.float64)
        order = np.argsort(ls.idx, kind="stable")
        self.col_offsets = np.zeros(len(ls.mg_of) + 1, dtype=np.int64)
        np.cumsum(np.bincount(ls.idx, minlength=len(ls.mg_of)), out=self.col_offsets[1:])
        pos = np.repeat(np.arange(len(ls), dtype=np.int32), np.diff(ls.offsets))
        self.col_rows = pos[order]
        self.col_coef = ls.coef[order]
        # weight -> (term, part)
        self.term_of = np.zeros(ls.n_weights, dtype=np.int64)
        self.part_of = np.zeros(ls.n_weights, dtype=np.int64)
        for t, (a, b) in enumerate(zip(ls.mg_of, ls.eg_of, strict=True)):
            if a == b:
                self.term_of[a], self.part_of[a] = t, 2
            else:
                self.term_of[a], self.part_of[a] = t, 0
                self.term_of[b], self.part_of[b] = t, 1
        self.commit(W)

    def _full(self, W):
        q = linear_scores(np.asarray(W, dtype=np.float64), self.ls)
        return q, self._error(q, self.results, self.K)

    def commit(self, W):
        """Make W the base (scored in full, so rounding never accumulates)."""
        self.W = np.array(W, dtype=np.int64)
        self.q, self.E = self._full(self.W)

    def _delta(self, i, dv, apply=False):
        t = self.term_of[i]
        lo, hi = self.col_offsets[t], self.col_offsets[t + 1]
        ls = self.ls
        return _column_delta(self.q, self.results, self.K, self.col_rows[lo:hi],
                             self.col_coef[lo:hi], ls.phase, ls.mg_scale, ls.eg_scale,
                             int(self.part_of[i]), float(dv), apply)

    def __call__(self, W):
        W = np.asarray(W)
        diff = np.flatnonzero(W != self.W)
        if len(diff) == 0:
            return self.E
        if len(diff) == 1:
            i = int(diff[0])
            return self.E + self._delta(i, float(W[i] - self.W[i])) / max(1, len(self.ls))
        return self._full(W)[1]


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
