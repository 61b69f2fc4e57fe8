"""The evaluation trace: `wasp eval [FEN]` and the coefficients the tuner's gradient uses.

`trace_position(fen)` runs the traced evaluation kernel (caches bypassed) and returns the
coefficient counts of every linear weight plus the non-linear parts: TR[2*i + colour] counts
opening weight i (its endgame partner is ``wasp.params.EG_INDEX[i]``) for white and black, and
TR[2 * N_WEIGHTS:] holds phase, king safety, draw factor, ... (wasp.evaluate X_*). Batches of
positions are stored sparsely (index, white count, black count: about 60 entries of 4 bytes a
position, 250 MB for a million) by `tuner.texel.sparse.sparse_traces`. For positions where only
linear terms act (``extra[X_KS_*] == 0``, scale 64, no special rule), the evaluation equals
``linear_eval(...)``: ``(mg * phase + eg * (24 - phase)) / 24`` truncated, where mg and eg are
the sums of (white - black) * W over the opening and endgame weights.
"""

import numpy as np

from wasp import params as P
from wasp.evaluate import (
    TRACE_SIZE,
    X_EG,
    X_FINAL,
    X_KS_BLACK,
    X_KS_MG,
    X_KS_WHITE,
    X_MG,
    X_PHASE,
    X_SCALE,
    X_SPECIAL,
    X_TAPERED,
    default_weights,
    evaluate_traced,
    new_eval_cache,
)
from wasp.types import N_INFO, ST_SIDE

_N = P.N_WEIGHTS


def _position(fen):
    from wasp.board import Position

    if fen is None:
        return Position()
    if isinstance(fen, Position):
        return fen
    return Position(fen if isinstance(fen, str) else fen.fen())


def trace_position(fen=None, W=None, E=None):
    """(TR array, side-to-move score) of one position: TR[2*i + colour] counts weight i."""
    pos = _position(fen)
    W = default_weights() if W is None else np.asarray(W, dtype=np.int64)
    E = new_eval_cache() if E is None else E
    TR = np.zeros(TRACE_SIZE, dtype=np.int64)
    info = np.zeros(N_INFO, dtype=np.int64)
    score = int(evaluate_traced(pos.T, pos.S, W, E, info, TR))
    return TR, score


def linear_eval(counts, phase, W):
    """White-view tapered score of the linear terms from coefficient counts (white - black)."""
    counts = np.asarray(counts, dtype=np.int64)
    W = np.asarray(W, dtype=np.int64)
    mg_idx = np.nonzero(P.PHASE_OF == 0)[0]
    mg = int(np.dot(counts[mg_idx], W[mg_idx]))
    eg = int(np.dot(counts[mg_idx], W[P.EG_INDEX[mg_idx]]))
    v = mg * phase + eg * (24 - phase)
    return abs(v) // 24 * (1 if v >= 0 else -1)


def coefficients(TR):
    """Per opening-weight index: white count - black count."""
    return TR[0:2 * _N:2] - TR[1:2 * _N:2]


def term_table(TR, W=None):
    """Rows (group, white mg, white eg, black mg, black eg) of the linear terms, by group."""
    W = default_weights() if W is None else np.asarray(W, dtype=np.int64)
    rows = {}
    for i in np.nonzero(P.PHASE_OF == 0)[0]:
        w, b = int(TR[2 * i]), int(TR[2 * i + 1])
        if w == 0 and b == 0:
            continue
        group = P.PARAMS[P.PARAM_OF[i]].group
        e = P.EG_INDEX[i]
        r = rows.setdefault(group, [0, 0, 0, 0])
        r[0] += w * int(W[i])
        r[1] += w * int(W[e])
        r[2] += b * int(W[i])
        r[3] += b * int(W[e])
    order = []
    for p in P.PARAMS:
        if p.linear and p.group not in order:
            order.append(p.group)
    return [(g, *rows.get(g, (0, 0, 0, 0))) for g in order]


def format_trace(fen=None, W=None) -> str:
    """The text `wasp eval` prints."""
    pos = _position(fen)
    TR, score = trace_position(pos, W)
    x = 2 * _N
    phase = int(TR[x + X_PHASE])
    lines = [pos.fen(), "",
             "      Term    |    White    |    Black    |    Total",
             "              |   MG    EG  |   MG    EG  |   MG    EG",
             " -------------+-------------+-------------+------------"]
    for g, wm, we, bm, be in term_table(TR, W):
        lines.append(f" {g:>12} | {wm:5d} {we:5d} | {bm:5d} {be:5d} | {wm - bm:5d} {we - be:5d}")
    ks_w, ks_b = int(TR[x + X_KS_WHITE]), int(TR[x + X_KS_BLACK])
    Wv = default_weights() if W is None else np.asarray(W)
    lines.append(f" {'king safety':>12} | {-int(Wv[P.KS_TABLE + ks_w]):5d}     - |"
                 f" {-int(Wv[P.KS_TABLE + ks_b]):5d}     - | {int(TR[x + X_KS_MG]):5d}     -")
    lines.append(" -------------+-------------+-------------+------------")
    lines.append(f" {'total':>12} |             |             | {int(TR[x + X_MG]):5d} "
                 f"{int(TR[x + X_EG]):5d}")
    lines.append("")
    lines.append(f"Phase: {phase} / 24 (king safety units: white {ks_w}, black {ks_b})")
    lines.append(f"Tapered: {int(TR[x + X_TAPERED])}")
    lines.append(f"Draw factor: {int(TR[x + X_SCALE])}/64"
                 + (" (endgame rule)" if TR[x + X_SPECIAL] else ""))
    white = score if pos.S.st[ST_SIDE] == 0 else -score
    assert white == int(TR[x + X_FINAL])
    lines.append(f"Final evaluation: {white} (white side)")
    return "\n".join(lines)


def print_trace(fen=None) -> int:
    """`wasp eval [FEN]`: print the trace; 0 on success, 1 on a bad FEN."""
    try:
        text = format_trace(fen)
    except ValueError as e:
        print(f"error: {e}")
        return 1
    print(text)
    return 0
