"""Tuning methods: Wasp's per-parameter binary search, Texel's local search, Adam and AdaGrad.

The coordinate methods work on the integer weight vector W and any objective f(W) -> E (the
run module passes the leaf-path E of the training set). One call of `tune_parameter` settles one
weight; a pass is a loop over the chosen weights, so a run can checkpoint after every one.
The gradient methods work on float copies of the linear weights through `tuner.texel.sparse`. Both
serve any linear evaluation (`tuner.traces.tracefile`): Wasp's parameters enter only through
`select_weights` and the weight counts.
"""

import fnmatch
import re

import numpy as np

from wasp import params as P

BINARY, LOCAL, ADAM, ADAGRAD = "binary", "local", "adam", "adagrad"
METHODS = (BINARY, LOCAL, ADAM, ADAGRAD)
DEFAULT_LR = {ADAM: 1.0, ADAGRAD: 5.0}  # learning rates of the gradient methods, centipawns


# ---------------------------------------------------------------------------
# Choosing parameters


def weight_label(i) -> str:
    """A readable name of weight i: 'pawn_value.mg', 'pst_knight.eg[27]', 'ks_table[5]'."""
    p = P.PARAMS[P.PARAM_OF[i]]
    e = int(P.ELEMENT_OF[i])
    name = p.name
    if p.phased:
        name += ".eg" if P.PHASE_OF[i] == 1 else ".mg"
    return name if p.size == 1 else f"{name}[{e}]"


_KEYS = None


def select_weights(patterns=None, linear_only=False) -> np.ndarray:
    """Indices into W of the weights matching any pattern (all when none), in table order.

    A pattern is a glob over parameter names ('pst_*', 'pawn_value'), entry names
    ('passed_rank.eg') or single weights ('pst_knight.mg[27]', 'ks_table[5]'). A pattern
    starting with '!' takes its matches out again ('!pst_*': all but the piece-square tables),
    so the few scalar terms can be tuned without listing them when the tables would overfit.
    """
    global _KEYS
    if _KEYS is None:
        _KEYS = []
        for i in range(P.N_WEIGHTS):
            label = weight_label(i)
            _KEYS.append((P.PARAMS[P.PARAM_OF[i]].name, re.sub(r"\[\d+\]$", "", label), label))
    chosen = select_matching(_KEYS, patterns)
    if linear_only:
        chosen &= P.LINEAR
    return np.nonzero(chosen)[0]


def select_matching(keys, patterns=None) -> np.ndarray:
    """Mask of the weights matching the globs (all when none): weight i matches a glob that
    matches any of its names `keys[i]` (e.g. term, entry, label); '!GLOB' takes matches out
    again. Any engine's weights are chosen by this (`tuner.traces.run` with trace term names)."""
    patterns = list(patterns or ())
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]
    chosen = np.zeros(len(keys), dtype=bool)
    if not include:
        chosen[:] = True
    for pat in include:
        chosen |= _matches(keys, pat)
    for pat in exclude:
        chosen &= ~_matches(keys, pat)
    return chosen


def _matches(keys, pat) -> np.ndarray:
    """Mask of the weights a glob names; a glob naming none is an error (a typo would
    otherwise tune everything or nothing without a word)."""
    if not pat:
        raise ValueError("empty parameter pattern")
    hits = np.zeros(len(keys), dtype=bool)
    for i, names in enumerate(keys):
        if any(fnmatch.fnmatchcase(k, pat) or k == pat for k in names):
            hits[i] = True
    if not hits.any():
        raise ValueError(f"no parameter matches {pat!r}")
    return hits


# ---------------------------------------------------------------------------
# Coordinate methods


class _Probe:
    """E of W with weight i set to v, remembered per value."""

    def __init__(self, f, W, i, e0):
        self.f, self.W, self.i = f, W, i
        self.v0 = int(W[i])
        self.seen = {self.v0: e0}

    def __call__(self, v):
        v = int(v)
        if v not in self.seen:
            self.W[self.i] = v
            self.seen[v] = self.f(self.W)
            self.W[self.i] = self.v0
        return self.seen[v]

    def best(self):
        # the lowest E; ties go to the value nearest the start
        return min(self.seen.items(), key=lambda kv: (kv[1], abs(kv[0] - self.v0)))


def binary_search(f, W, i, e0, max_step=1024):
    """(value, E) minimising E over weight i with the others fixed (W is left unchanged).

    Steps of 1 decide the direction; doubling steps bracket the minimum; then a binary search
    on the sign of E(m + 1) - E(m) inside the bracket (E assumed unimodal in one weight).
    """
    E = _Probe(f, W, i, e0)
    v0 = E.v0
    if E(v0 + 1) < e0:
        d = 1
    elif E(v0 - 1) < e0:
        d = -1
    else:
        return v0, e0
    prev, cur, step = v0, v0 + d, 1
    while step < max_step:
        nxt = v0 + d * 2 * step
        if E(nxt) < E(cur):
            prev, cur, step = cur, nxt, 2 * step
        else:
            lo, hi = sorted((prev, nxt))
            break
    else:
        return E.best()
    while hi - lo > 2:
        m = (lo + hi) // 2
        if E(m + 1) < E(m):
            lo = m + 1  # still falling at m: the minimum is to the right
        else:
            hi = m
    for v in range(lo, hi + 1):
        E(v)
    return E.best()


def local_search(f, W, i, e0):
    """Texel's step: +1 if it lowers E, else -1 if it does, else no change. (value, E)."""
    E = _Probe(f, W, i, e0)
    if E(E.v0 + 1) < e0:
        return E.v0 + 1, E(E.v0 + 1)
    if E(E.v0 - 1) < e0:
        return E.v0 - 1, E(E.v0 - 1)
    return E.v0, e0


def tune_parameter(method, f, W, i, e0, partial=1.0):
    """Settle weight i of W in place by `method`; returns (old, new, E)."""
    old = int(W[i])
    if method == BINARY:
        v, e = binary_search(f, W, i, e0)
        if partial < 1.0 and v != old:
            step = max(1, int(round(partial * abs(v - old))))
            v = old + step * (1 if v > old else -1)
            if v != old:
                W[i] = v
                e = f(W)
                if e >= e0:  # a partial step must still help
                    W[i] = old
                    return old, old, e0
    elif method == LOCAL:
        v, e = local_search(f, W, i, e0)
    else:
        raise ValueError(f"not a coordinate method: {method}")
    W[i] = v
    return old, v, e


# ---------------------------------------------------------------------------
# Gradient methods


class GradientState:
    """Float weights and optimiser moments (Adam: m, v; AdaGrad: sum of squares)."""

    def __init__(self, W, method, lr=None, beta1=0.9, beta2=0.999, eps=1e-8):
        if method not in (ADAM, ADAGRAD):
            raise ValueError(f"not a gradient method: {method}")
        self.method = method
        self.wf = np.asarray(W, dtype=np.float64).copy()
        self.m = np.zeros_like(self.wf)
        self.v = np.zeros_like(self.wf)
        self.t = 0
        self.lr = float(lr if lr is not None else DEFAULT_LR[method])
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    def step(self, g, mask):
        """One update of the weights in mask from the gradient g."""
        g = np.where(mask, g, 0.0)
        self.t += 1
        if self.method == ADAM:
            self.m = self.beta1 * self.m + (1 - self.beta1) * g
            self.v = self.beta2 * self.v + (1 - self.beta2) * g * g
            mh = self.m / (1 - self.beta1 ** self.t)
            vh = self.v / (1 - self.beta2 ** self.t)
            upd = self.lr * mh / (np.sqrt(vh) + self.eps)
        else:
            self.v += g * g
            upd = self.lr * g / (np.sqrt(self.v) + self.eps)
        self.wf -= np.where(mask, upd, 0.0)

    def rounded(self, W_base):
        """W_base with the tuned weights rounded to integer centipawns."""
        W = np.array(W_base, dtype=np.int64)
        W[:] = np.rint(self.wf).astype(np.int64)
        return W

    def arrays(self):
        return {"wf": self.wf, "m": self.m, "v": self.v, "t": np.array(self.t)}

    def restore(self, z):
        self.wf, self.m, self.v = z["wf"].copy(), z["m"].copy(), z["v"].copy()
        self.t = int(z["t"])


def weight_counts(traces) -> np.ndarray:
    """How many positions each weight counts in (white and black terms not cancelling), from
    sparse traces (`tuner.texel.sparse.sparse_traces`); an endgame weight shares its opening
    partner's count."""
    idx, cnt = traces[0], traces[1]
    live = cnt[:, 0] != cnt[:, 1]
    counts = np.bincount(idx[live].astype(np.int64), minlength=P.N_WEIGHTS)[:P.N_WEIGHTS]
    partner = P.EG_INDEX >= 0
    counts[P.EG_INDEX[partner]] = counts[partner]
    return counts


def frequent(indices, traces, min_count):
    """The weights of `indices` that count in at least `min_count` positions: too rare a
    term is left at its value rather than fitted to a handful of games."""
    if min_count <= 0:
        return np.asarray(indices)
    counts = weight_counts(traces)
    return np.asarray([i for i in indices if counts[i] >= min_count], dtype=np.int64)


def penalty(W, W0, reg, indices=None):
    """The L2 pull toward the starting weights: reg * sum(((w - w0) / 100)^2) over the tuned
    weights. `reg` is the E a weight pays for moving 100 cp, so a rare term (a few hundred
    positions) cannot buy a large swing with a tiny gain in training E: the overfitting seen
    on small sets."""
    if not reg:
        return 0.0
    d = (np.asarray(W, dtype=np.float64) - W0) / 100.0
    if indices is not None:
        d = d[indices]
    return float(reg * np.dot(d, d))


def gradient_epoch(state, traces, results, K, mask, batch_size=16384, seed=0, reg=0.0,
                   W0=None):
    """One pass over the data in shuffled mini-batches (seeded: repeatable; batch_size 0: the
    full batch, one step); returns E before. `traces`: a `tuner.texel.sparse.LinearSet` or Wasp's
    sparse traces. With reg > 0 the gradient of `penalty` toward W0 is added to every step."""
    from .sparse import as_linear, gradient

    ls = as_linear(traces)
    n = len(results)
    if batch_size <= 0 or batch_size >= n:
        batches = [None]
    else:
        order = np.random.default_rng(seed).permutation(n)
        batches = [order[s:s + batch_size] for s in range(0, n, batch_size)]
    total = 0.0
    for batch in batches:
        g, e = gradient(state.wf, ls, results, K, batch)
        if reg:
            g = g + 2.0 * reg * (state.wf - W0) / 1e4
        total += e * (n if batch is None else len(batch))
        state.step(g, mask)
    return total / max(1, n)
