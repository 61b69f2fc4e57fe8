"""The tuner's quiescence search: captures and promotions, stand pat, alpha-beta, MVV-LVA order.

Delta pruning skips a capture that cannot reach alpha even with the captured piece's exchange
value plus the delta margin: both are the engine search's own parameters (`wasp.searchparams`:
DeltaMargin, SeePawn..SeeQueen), read from the vector `P` the caller passes. No transposition
table and no check detection (a position in check still stands pat), as in Texel's method.
Besides the score it keeps the principal variation, so the position the score comes from (the
leaf) can be rebuilt: the error of another parameter vector can then be taken from leaf
evaluations alone. By construction the leaf's static evaluation equals the quiescence score
(same side's view).

Buffers: `buf` int32 [QPLY, BUF_WIDTH], one row per ply: the moves, their order keys, the
principal variation from that ply and its length.
"""

import numpy as np
from numba import njit

from wasp.evaluate import evaluate
from wasp.movegen import generate
from wasp.position import make_move, unmake_move
from wasp.searchparams import P_DELTA_MARGIN
from wasp.see import see_value
from wasp.types import (
    EMPTY,
    FLAG_EP,
    GEN_NOISY,
    MAILBOX,
    MAX_MOVES,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    PAWN,
    ST_SIDE,
)

from .kernels import pack_state

QPLY = 48  # deepest quiescence line; at the limit the position stands pat
B_MOVES = 0
B_KEYS = MAX_MOVES
B_PV = 2 * MAX_MOVES
B_PVLEN = B_PV + QPLY
BUF_WIDTH = B_PVLEN + 1
INF = 1 << 20

# MVV-LVA: victim value * 8 - attacker type; a promotion counts its new piece as a victim too.
_VICTIM = np.array([1, 3, 3, 5, 9, 0, 0], dtype=np.int64)


def new_buffer():
    return np.zeros((QPLY, BUF_WIDTH), dtype=np.int32)


@njit(cache=True, nogil=True, _nrt=False)
def _order_key(S, m):
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    victim = S.st[MAILBOX + to]
    v = 0
    if victim != EMPTY:
        v = _VICTIM[victim % 6]
    elif m & FLAG_EP:
        v = 1
    promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    if promo:
        v += _VICTIM[promo] - 1
    return v * 8 - S.st[MAILBOX + frm] % 6


@njit(cache=True, nogil=True, _nrt=False)
def qsearch(T, S, W, P, E, info, buf, alpha, beta, ply):
    """Fail-soft quiescence score from the side to move's view; buf[ply] gets the PV.

    Call with int64 alpha, beta and ply (np.int64(0) at the root), never literals.
    """
    row = buf[ply]
    row[B_PVLEN] = 0
    best = evaluate(T, S, W, E, info)
    if best >= beta or ply >= QPLY - 1:
        return best
    if best > alpha:
        alpha = best
    n = generate(T, S, row, GEN_NOISY, True)
    for i in range(n):
        row[B_KEYS + i] = _order_key(S, row[B_MOVES + i])
    for i in range(n):
        # selection sort step: the best remaining move to slot i
        k = i
        for j in range(i + 1, n):
            if row[B_KEYS + j] > row[B_KEYS + k]:
                k = j
        if k != i:
            t = row[B_MOVES + i]
            row[B_MOVES + i] = row[B_MOVES + k]
            row[B_MOVES + k] = t
            t = row[B_KEYS + i]
            row[B_KEYS + i] = row[B_KEYS + k]
            row[B_KEYS + k] = t
        m = row[B_MOVES + i]
        # delta pruning: a capture that cannot lift the score to alpha even with a margin
        if (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK == 0:
            victim = S.st[MAILBOX + ((m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK)]
            gain = see_value(P, 0, PAWN if victim == EMPTY else victim % 6)
            if best + gain + P[P_DELTA_MARGIN] <= alpha:
                continue
        make_move(T, S, m)
        score = -qsearch(T, S, W, P, E, info, buf, -beta, -alpha, ply + 1)
        unmake_move(T, S)
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                child = buf[ply + 1]
                cl = child[B_PVLEN]
                row[B_PV] = m
                for q in range(cl):
                    row[B_PV + 1 + q] = child[B_PV + q]
                row[B_PVLEN] = cl + 1
                if score >= beta:
                    break
    return best


@njit(cache=True, nogil=True, _nrt=False)
def resolve(T, S, W, P, E, info, buf, leaves, j):
    """Quiescence score of S (white's view); the leaf is packed into leaves[j].

    S is left unchanged.
    """
    score = qsearch(T, S, W, P, E, info, buf, np.int64(-INF), np.int64(INF), np.int64(0))
    row = buf[0]
    n = row[B_PVLEN]
    for q in range(n):
        make_move(T, S, row[B_PV + q])
    pack_state(S, leaves, j)
    for _ in range(n):
        unmake_move(T, S)
    return score if S.st[ST_SIDE] == 0 else -score
