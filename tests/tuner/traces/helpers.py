"""Synthetic traces for the trace tests: results drawn from a known logistic model."""

import numpy as np

from tuner.traces.tracefile import TraceWriter, weight_layout

K_TRUE = 1.0
# (name, planted opening, planted endgame) or (name, planted value)
PLANTED = [("pawn", 90, 120), ("knight", 320, 300), ("bishop", 330, 320),
           ("rook", 480, 540), ("queen", 950, 1000), ("mobility", 4, 3),
           ("passed", 10, 40), ("bishop_pair", 35), ("tempo", 12), ("king_shelter", 15, -5)]


def planted_weights(terms=PLANTED):
    tapered = [len(t) == 3 for t in terms]
    mg_of, eg_of, nw = weight_layout(tapered)
    W = np.zeros(nw)
    for t, tv in enumerate(terms):
        W[mg_of[t]], W[eg_of[t]] = tv[1], tv[-1]
    return W, mg_of, eg_of


def synthetic_positions(n, seed=1, terms=PLANTED):
    """Random positions: (coefs [n, T], phase, mg_scale, eg_scale, fixed)."""
    rng = np.random.default_rng(seed)
    T = len(terms)
    coefs = rng.integers(-1, 2, size=(n, T)).astype(float)  # small imbalances: no saturation
    coefs[:, 5] = rng.integers(-12, 13, size=n)  # mobility: larger counts
    coefs[:, 8] = rng.choice([-1.0, 1.0], size=n)  # tempo: the side to move
    coefs[rng.random((n, T)) < 0.3] = 0.0
    phase = rng.integers(0, 25, size=n) / 24.0
    mg_scale = np.where(rng.random(n) < 0.2, 0.75, 1.0)  # a draw factor on both phases
    eg_scale = mg_scale * np.where(rng.random(n) < 0.3, 0.5, 1.0)  # endgame-only scaling
    fixed = rng.integers(-30, 31, size=n).astype(float)
    return coefs, phase, mg_scale, eg_scale, fixed


def model(W, mg_of, eg_of, coefs, phase, mg_scale, eg_scale, fixed):
    mg = coefs @ W[mg_of]
    eg = coefs @ W[eg_of]
    return phase * mg_scale * mg + (1 - phase) * eg_scale * eg + fixed


def write_synthetic(path, n=20000, seed=1, start_shift=None, drop_term=None, drawn=True,
                    terms=PLANTED, K=K_TRUE):
    """A trace of n positions whose results follow the planted weights; its start values are
    the planted ones moved by start_shift (default: -15..+15 cp each). EVAL is the model with
    the start values over all terms, rounded; drop_term leaves a term out of the position
    lines (the trace writer's bug the check must find). Returns the planted weights."""
    rng = np.random.default_rng(seed + 1000)
    Wp, mg_of, eg_of = planted_weights(terms)
    coefs, phase, ms, es, fixed = synthetic_positions(n, seed, terms)
    q = model(Wp, mg_of, eg_of, coefs, phase, ms, es, fixed)
    p = 1.0 / (1.0 + 10.0 ** (-K * q / 400.0))
    results = (rng.random(n) < p).astype(float) if drawn else p
    shift = rng.integers(-15, 16, size=len(Wp)) if start_shift is None else start_shift
    Ws = Wp + shift
    ev = np.rint(model(Ws, mg_of, eg_of, coefs, phase, ms, es, fixed))
    start = [(t[0], Ws[mg_of[i]], Ws[eg_of[i]]) if len(t) == 3 else (t[0], Ws[mg_of[i]])
             for i, t in enumerate(terms)]
    with TraceWriter(path, start) as w:
        for j in range(n):
            c = {i: coefs[j, i] for i in range(len(terms)) if coefs[j, i] and i != drop_term}
            w.position(results[j], c, phase[j], ms[j], es[j], fixed[j], ev[j])
    return Wp
