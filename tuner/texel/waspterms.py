"""Wasp-Py's linear evaluation terms as the trace tuner's linear model: the terms, their trace
at packed leaves (`wasp_trace`) and `WaspLinearE`, the E through which `wasp-tune run`'s
coordinate methods score the linear weights, so that it and `wasp-tune trace` of Wasp's own
trace are one tuner.

Each position of a labelled set is traced at its leaf, as `wasp-tune run` does when its leaves
are not re-resolved: the quiescence search with the start parameters picks the leaf, and
`tuner.texel.sparse.sparse_traces` / `wasp_linear` give its coefficients, phase (/ 24), draw factor
(/ 64, both scales) and king safety (the fixed part, scaled as the evaluation scales it). EVAL
is the engine's own evaluation of the leaf, white's view. Wasp's evaluation truncates twice
(the taper's / 24, then the draw factor's * scale / 64), so EVAL misses the float model by up
to 2 cp; FIXED takes that rounding (EVAL less the model), so the start values reproduce EVAL
exactly and the trace passes the 1 cp check without -no-check.
"""

import numpy as np

from wasp import params as P
from wasp.evaluate import X_FINAL

from .sparse import (
    LinearObjective,
    LinearSet,
    linear_scores,
    sparse_traces,
    wasp_linear,
    weight_layout,
)


def wasp_terms(W):
    """(terms, term_of): Wasp's linear parameters as trace terms, ``(name, opening, endgame)``
    for a phased one, ``(name, value)`` otherwise, one per element ('pst_knight[27]'), with
    their values in W; term_of maps a weight index (an opening one) to its term (-1: none)."""
    W = np.asarray(W)
    terms = []
    term_of = np.full(P.N_WEIGHTS, -1, dtype=np.int64)
    for p in P.PARAMS:
        if not p.linear:
            continue
        o = P.OFFSETS[p.name]
        for e in range(p.size):
            name = p.name if p.size == 1 else f"{p.name}[{e}]"
            term_of[o + e] = len(terms)
            if p.phased:
                terms.append((name, int(W[o + e]), int(W[o + p.size + e])))
            else:
                terms.append((name, int(W[o + e])))
    return terms, term_of


def wasp_trace(W, leaves, threads=None):
    """(terms, LinearSet in the terms' layout, EVALs) of packed leaf rows under weights W.

    FIXED is the king safety as the evaluation scales it plus the evaluation's rounding, so
    the model with W gives EVAL exactly; a position an endgame rule scored has both scales 0
    and FIXED its score."""
    W = np.ascontiguousarray(W, dtype=np.int64)
    traces = sparse_traces(W, leaves, threads)
    wl = wasp_linear(traces)
    evals = traces[3][:, X_FINAL].astype(np.float64)
    fixed = wl.fixed + (evals - linear_scores(W.astype(np.float64), wl))
    terms, term_of = wasp_terms(W)
    idx = term_of[wl.idx]
    if np.any(idx < 0):  # a weight the trace kernel counts that no linear parameter owns
        bad = int(wl.idx[np.argmax(idx < 0)])
        raise ValueError(f"weight {bad} is traced but is not a linear parameter's")
    mg_of, eg_of, n_weights = weight_layout([len(t) == 3 for t in terms])
    ls = LinearSet(wl.offsets, idx.astype(np.int16), wl.coef, wl.phase, wl.mg_scale,
                   wl.eg_scale, fixed, mg_of, eg_of, n_weights)
    return terms, ls, evals


def wasp_weight_map():
    """(trace weight of each Wasp weight in `wasp_trace`'s layout, -1 for a non-linear
    parameter's; the number of trace weights)."""
    terms, term_of = wasp_terms(P.default_weights())
    mg_of, eg_of, n_weights = weight_layout([len(t) == 3 for t in terms])
    out = np.full(P.N_WEIGHTS, -1, dtype=np.int64)
    mg = np.flatnonzero(term_of >= 0)
    out[mg] = mg_of[term_of[mg]]
    eg = P.EG_INDEX[mg]
    phased = eg >= 0
    out[eg[phased]] = eg_of[term_of[mg[phased]]]
    return out, n_weights


class WaspLinearE:
    """E at fixed leaves of Wasp weight vectors through the trace tuner's objective (a
    `tuner.texel.sparse.LinearObjective` over `wasp_trace` of the leaves): how `wasp-tune run`'s
    coordinate methods score Wasp's linear weights, so that they and `wasp-tune trace` on
    Wasp's own trace are one tuner. It holds for vectors whose non-linear weights (king
    safety, draw factors) are those it was built with (`serves`)."""

    def __init__(self, W, leaves, results, K, threads=None):
        self.W_built = np.array(W, dtype=np.int64)
        _, ls, _ = wasp_trace(self.W_built, leaves, threads)
        self.trace_of, self.n_weights = wasp_weight_map()
        self._linear = np.flatnonzero(self.trace_of >= 0)
        self.obj = LinearObjective(ls, results, K, self.trace_weights(self.W_built))

    def __repr__(self):
        return f"WaspLinearE({len(self.obj.ls)} positions, K={self.obj.K})"

    def trace_weights(self, W) -> np.ndarray:
        """Wasp's weights W in the trace's layout (int64)."""
        Wt = np.zeros(self.n_weights, dtype=np.int64)
        Wt[self.trace_of[self._linear]] = np.asarray(W)[self._linear]
        return Wt

    def serves(self, W) -> bool:
        return bool(np.array_equal(np.asarray(W)[~P.LINEAR], self.W_built[~P.LINEAR]))

    def __call__(self, W):
        return self.obj(self.trace_weights(W))

    def commit(self, W):
        """Make W the base (after a weight moved; nothing to do when none did)."""
        Wt = self.trace_weights(W)
        if not np.array_equal(Wt, self.obj.W):
            self.obj.commit(Wt)
