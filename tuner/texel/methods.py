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


def linear_counts(ls) -> np.ndarray:
    """How many positions each weight of a `tuner.texel.sparse.LinearSet` (or Wasp's sparse
    traces) counts in: entries with a nonzero coefficient, white's and black's terms not
    cancelling; a tapered term's two weights share its count."""
    from .sparse import as_linear

    ls = as_linear(ls)
    live = ls.coef != 0
    terms = np.bincount(ls.idx[live].astype(np.int64), minlength=len(ls.mg_of))[:len(ls.mg_of)]
    counts = np.zeros(ls.n_weights, dtype=np.int64)
    np.maximum.at(counts, ls.mg_of, terms)  # Wasp's endgame weights are terms never counted
    np.maximum.at(counts, ls.eg_of, terms)
    return counts


def frequent(indices, counts, min_count):
    """The weights of `indices` that count in at least `min_count` positions (`counts`, from
    `linear_counts`): too rare a term is left at its value rather than fitted to a handful of
    games."""
    if min_count <= 0:
        return np.asarray(indices, dtype=np.int64)
    return np.asarray([i for i in indices if counts[i] >= min_count], dtype=np.int64)


# Below this many training positions a tuned weight, the data is small against the terms: a
# line says so before tuning (docs/traces.md, "Small sets").
FEW_POSITIONS_PER_WEIGHT = 1000
FEW_VALID_POSITIONS = 10000  # a validation set smaller than this chooses values by chance
FEW_VALID_GAMES = 150
# The default -reg (`default_reg`): REG_SCALE / (training positions a tuned weight)^2, at most
# REG_MAX, 0 from FEW_POSITIONS_PER_WEIGHT positions a weight on; measured in docs/traces.md.
REG_SCALE = 10.0
REG_MAX = 1e-2
REG_HELP = (f"{REG_SCALE:g} / (training positions a tuned weight)^2, at most {REG_MAX:g}, 0 "
            f"from {FEW_POSITIONS_PER_WEIGHT} positions a weight on")


def default_reg(n_positions, n_weights) -> float:
    """The -reg a run takes when none is given: REG_SCALE / (training positions a tuned
    weight)^2, at most REG_MAX, and 0 from FEW_POSITIONS_PER_WEIGHT positions a weight on,
    where the small-set warning stops. On sets of 40 k to 1 M positions the pull that gave the
    lowest test E fell about as the square of the positions a weight (docs/traces.md, "How the
    default was chosen")."""
    per = n_positions / max(1, n_weights)
    if per >= FEW_POSITIONS_PER_WEIGHT:
        return 0.0
    return float(min(REG_MAX, REG_SCALE / max(per, 1e-9) ** 2))


def settle_reg(config, n_positions, n_weights, starting) -> bool:
    """Fill in a run configuration's `reg` and `reg_source` (run.json): -reg as given, or at
    the start of a run `default_reg` of its training set and tuned weights (a run resumed
    from a run.json without a pull goes on without one). True when they changed."""
    if config.reg is not None and config.reg_source:
        return False
    if config.reg is not None:
        config.reg_source = "-reg" if starting else "as recorded"
    elif starting:
        per = n_positions / max(1, n_weights)
        config.reg = default_reg(n_positions, n_weights)
        config.reg_source = (f"the default for {n_positions} training positions and "
                             f"{n_weights} tuned weights, {per:.0f} a weight")
    else:
        config.reg, config.reg_source = 0.0, "none recorded"
    return True


def data_warnings(n_train, n_weights, n_valid=None, valid_games=None) -> list[str]:
    """Lines to print before tuning when the data is too small for a reliable result: too few
    training positions a tuned weight, or too small a validation set to choose the values."""
    out = []
    per = n_train / max(1, n_weights)
    if per < FEW_POSITIONS_PER_WEIGHT:
        out.append(f"warning: {n_train} training positions for {n_weights} weights ({per:.0f} "
                   f"a weight, under {FEW_POSITIONS_PER_WEIGHT}) will fit noise: more data, "
                   f"fewer terms (-params), or a pull toward the start values (-reg; "
                   f"{default_reg(n_train, n_weights):g} unless given)")
    if n_valid is not None and (n_valid < FEW_VALID_POSITIONS or
                                (valid_games is not None and valid_games < FEW_VALID_GAMES)):
        games = "" if valid_games is None else f" from {valid_games} games"
        out.append(f"warning: the validation set ({n_valid} positions{games}) is too small to "
                   f"choose the values reliably: give it {FEW_VALID_POSITIONS}+ positions from "
                   f"{FEW_VALID_GAMES}+ games it shares no game with the training set")
    return out


_SQUARE = re.compile(r"\[(\d+)\]")


def neighbour_pairs(labels) -> np.ndarray:
    """(a, b) pairs of weights that are neighbouring squares of one piece-square table, for
    the smoothing penalty. A table is the weights whose labels differ only in one bracketed
    index 0-63 ('pst_knight[27].mg', 'pst_knight.mg[27]') and that cover at least 32 squares;
    squares are a1 = 0 ... h8 = 63 (any flip keeps the neighbours), neighbours one file or one
    rank apart."""
    tables = {}
    for w, label in enumerate(labels):
        m = _SQUARE.search(label)
        if m and int(m.group(1)) < 64:
            key = label[:m.start()] + "[]" + label[m.end():]
            tables.setdefault(key, {})[int(m.group(1))] = w
    pairs = []
    for squares in tables.values():
        if len(squares) < 32:
            continue
        for sq, w in squares.items():
            for nb in ((sq + 1) if sq % 8 < 7 else -1, sq + 8):
                if 0 <= nb < 64 and nb in squares:
                    pairs.append((w, squares[nb]))
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def penalty(W, W0, reg, indices=None, smooth=0.0, pairs=None):
    """The pulls that keep a small set from buying large swings with tiny gains in training
    E: reg * sum(((w - w0) / 100)^2) over the tuned weights (`indices`; all when None), toward
    the starting weights, so `reg` is the E a weight pays for moving 100 cp; and smooth *
    sum(((w_a - w_b) / 100)^2) over neighbouring squares of a table (`neighbour_pairs`)."""
    total = 0.0
    W = np.asarray(W, dtype=np.float64)
    if reg:
        d = (W - W0) / 100.0
        if indices is not None:
            d = d[indices]
        total += float(reg * np.dot(d, d))
    if smooth and pairs is not None and len(pairs):
        d = (W[pairs[:, 0]] - W[pairs[:, 1]]) / 100.0
        total += float(smooth * np.dot(d, d))
    return total


def penalty_gradient(wf, W0, reg, smooth=0.0, pairs=None) -> np.ndarray:
    """The gradient of `penalty` (all weights; the step masks the untuned ones)."""
    g = 2.0 * reg * (wf - W0) / 1e4 if reg else np.zeros_like(wf)
    if smooth and pairs is not None and len(pairs):
        d = 2.0 * smooth * (wf[pairs[:, 0]] - wf[pairs[:, 1]]) / 1e4
        np.add.at(g, pairs[:, 0], d)
        np.add.at(g, pairs[:, 1], -d)
    return g


def gradient_epoch(state, traces, results, K, mask, batch_size=16384, seed=0, reg=0.0,
                   W0=None, smooth=0.0, pairs=None):
    """One pass over the data in shuffled mini-batches (seeded: repeatable; batch_size 0: the
    full batch, one step); returns E before. `traces`: a `tuner.texel.sparse.LinearSet` or Wasp's
    sparse traces. With reg or smooth > 0 the gradient of `penalty` is added to every step."""
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
        if reg or smooth:
            g = g + penalty_gradient(state.wf, W0, reg, smooth, pairs)
        total += e * (n if batch is None else len(batch))
        state.step(g, mask)
    return total / max(1, n)
