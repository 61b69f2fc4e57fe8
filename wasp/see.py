"""Static exchange evaluation: a recursive swap-off (a tiny alpha-beta on one square).

Used for move ordering (good and bad captures), qsearch pruning and the "safe move" tests of
the futility and LMR rules, as Wasp does. Pins are ignored; a king may recapture only when the
other side has no attacker left.

The piece values are search parameters (`wasp.searchparams`, SeePawn..SeeQueen): each kernel
takes the parameter vector `P` and the offset `po` of the parameter block in it (the search
passes its SD array and SD_PARAMS; the tuner a vector of its own and 0).
"""

import numpy as np
from numba import njit

from wasp.bitboards import ONE, U64, ZERO, lsb
from wasp.position import attackers_in
from wasp.searchparams import P_SEE, SEE_KING
from wasp.types import (
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    KING,
    MAILBOX,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    ST_SIDE,
)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def see_value(P, po, pt):
    """Exchange value of piece type `pt` (the king is priceless, but never lost)."""
    return np.int64(SEE_KING) if pt == KING else P[po + P_SEE + pt]


@njit(cache=True, nogil=True, _nrt=False)
def _swap(T, bb, sq, side, occ, on_square, P, po):
    """Best gain for `side` capturing (or not) the piece worth `on_square` on `sq`."""
    attackers = attackers_in(T, bb, sq, occ) & occ
    mine = attackers & bb[OCC_WHITE + side]
    if mine == ZERO:
        return np.int64(0)
    # Least valuable attacker.
    for pt in range(6):
        b = mine & bb[6 * side + pt]
        if b:
            if pt == KING and (attackers & bb[OCC_WHITE + 1 - side]):
                return np.int64(0)  # the king cannot take a defended piece
            frm = lsb(b)
            gain = on_square - _swap(T, bb, sq, np.int64(1 - side), occ ^ (ONE << U64(frm)),
                                     see_value(P, po, pt), P, po)
            return gain if gain > 0 else np.int64(0)
    return np.int64(0)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _see_start(T, S, m, P, po):
    """(gain of the move itself, value then standing on `to`, occupancy after it, to, us)."""
    bb = S.bb
    us = S.st[ST_SIDE]
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    mover = S.st[MAILBOX + frm] - 6 * us
    victim = S.st[MAILBOX + to]
    gain = np.int64(0)
    occ = bb[OCC_ALL] ^ (ONE << U64(frm))
    if victim != EMPTY:
        gain = see_value(P, po, victim % 6)
    elif m & FLAG_EP:
        gain = see_value(P, po, PAWN)
        occ ^= ONE << U64(to - 8 if us == 0 else to + 8)
    on_square = see_value(P, po, mover)
    promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    if promo:
        gain += see_value(P, po, promo) - see_value(P, po, PAWN)
        on_square = see_value(P, po, promo)
    return gain, on_square, occ, to, us


@njit(cache=True, nogil=True, _nrt=False)
def see(T, S, m, P, po):
    """Expected material gain of move `m` for the side to move (negative: it loses material)."""
    if m & FLAG_CASTLE:
        return np.int64(0)
    gain, on_square, occ, to, us = _see_start(T, S, m, P, po)
    return gain - _swap(T, S.bb, to, np.int64(1 - us), occ, on_square, P, np.int64(po))


@njit(cache=True, nogil=True, _nrt=False)
def see_ge0(T, S, m, P, po):
    """see(T, S, m, P, po) >= 0, without the swap-off when the move takes at least what it puts on
    the square: the replies can win back at most that (0 <= _swap <= on_square)."""
    if m & FLAG_CASTLE:
        return True
    gain, on_square, occ, to, us = _see_start(T, S, m, P, po)
    if gain >= on_square:
        return True
    return gain - _swap(T, S.bb, to, np.int64(1 - us), occ, on_square, P, np.int64(po)) >= 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def captured_type(S, m):
    """Piece type taken by `m` (PAWN for en passant), or -1 for a non-capture."""
    if m & (FLAG_EP | FLAG_CASTLE):  # a Chess960 king may castle onto its own rook's square
        return PAWN if m & FLAG_EP else -1
    v = S.st[MAILBOX + ((m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK)]
    if v == EMPTY:
        return -1
    return v % 6

