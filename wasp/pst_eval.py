"""Interim evaluation: tapered material + piece-square tables, with a cheap hung-material estimate.

Same interface as the full evaluation (`wasp.evaluate`): `evaluate(T, S, W, E, info) -> int`,
centipawns from the side to move's point of view, filling `info` (INFO_* slots of wasp.types).
Material is Wasp 1.02's; the piece-square tables are small hand-made centralisation terms.
"""

import numpy as np
from numba import njit

from wasp.bitboards import (
    FILE_A,
    FILE_H,
    ONE,
    T_KING,
    T_KNIGHT,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    rook_attacks,
)
from wasp.types import (
    BISHOP,
    INFO_HUNG,
    INFO_MATE_THREAT,
    INFO_PAWN_ENDING,
    INFO_PROMO_THREAT,
    KING,
    KNIGHT,
    MAILBOX,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_SIDE,
    WHITE,
)

# Layout of the weights array W.
W_MAT_MG = 0  # [piece type] opening material
W_MAT_EG = 6  # [piece type] ending material
W_PST_MG = 12  # [piece type * 64 + square from white's side] opening piece-square
W_PST_EG = W_PST_MG + 384  # [piece type * 64 + square] ending piece-square
N_WEIGHTS = W_PST_EG + 384

# Game phase: 24 with all pieces on the board, 0 with kings and pawns only.
PHASE_WEIGHT = np.array([0, 1, 1, 2, 4, 0], dtype=np.int64)
MAX_PHASE = 24

MATERIAL_MG = (85, 335, 335, 465, 975, 0)
MATERIAL_EG = (100, 320, 325, 535, 1035, 0)

# Values for the hung-material estimate (and SEE, which uses the same scale).
HUNG_VALUE = np.array([100, 325, 325, 500, 1000, 0], dtype=np.int64)


def _centre(sq: int) -> int:
    """0 on the edge .. 3 in the four centre squares."""
    f, r = sq & 7, sq >> 3
    return min(f, 7 - f, r, 7 - r)


def default_weights() -> np.ndarray:
    """The interim evaluation's parameters (int64, N_WEIGHTS long)."""
    W = np.zeros(N_WEIGHTS, dtype=np.int64)
    W[W_MAT_MG:W_MAT_MG + 6] = MATERIAL_MG
    W[W_MAT_EG:W_MAT_EG + 6] = MATERIAL_EG
    for sq in range(64):
        f, r = sq & 7, sq >> 3
        c = _centre(sq)
        centre_file = min(f, 7 - f)
        # Pawns: advance in the centre in the opening, advance everywhere in the ending.
        if 1 <= r <= 6:
            W[W_PST_MG + PAWN * 64 + sq] = (r - 1) * 2 * (1 + centre_file)
            W[W_PST_EG + PAWN * 64 + sq] = (r - 1) * 8
        W[W_PST_MG + KNIGHT * 64 + sq] = 10 * c - 20
        W[W_PST_EG + KNIGHT * 64 + sq] = 8 * c - 15
        W[W_PST_MG + BISHOP * 64 + sq] = 5 * c - 8 - (5 if r == 0 and f in (2, 5) else 0)
        W[W_PST_EG + BISHOP * 64 + sq] = 5 * c - 8
        back_centre = 4 if centre_file >= 2 and r == 0 else 0
        W[W_PST_MG + ROOK * 64 + sq] = (12 if r == 6 else 0) + back_centre
        W[W_PST_EG + ROOK * 64 + sq] = 4 if r == 6 else 0
        W[W_PST_MG + QUEEN * 64 + sq] = 3 * c - 5
        W[W_PST_EG + QUEEN * 64 + sq] = 6 * c - 10
        # King: shelter on the back rank corners in the opening, centre in the ending.
        shelter = (20 if f in (1, 2, 6) else 0) - (10 if f in (3, 4) else 0)
        W[W_PST_MG + KING * 64 + sq] = shelter - 15 * r
        W[W_PST_EG + KING * 64 + sq] = 12 * c - 20
    return W


def new_eval_cache() -> np.ndarray:
    """The interim evaluation keeps no cache; a one-slot array keeps the interface."""
    return np.zeros(1, dtype=np.int64)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _pawn_attacks(pawns, colour):
    if colour == WHITE:
        return ((pawns & ~FILE_A) << U64(7)) | ((pawns & ~FILE_H) << U64(9))
    return ((pawns & ~FILE_A) >> U64(9)) | ((pawns & ~FILE_H) >> U64(7))


@njit(cache=True, nogil=True, _nrt=False)
def _attacks(T, bb, colour, occ):
    """(pawn attacks, minor attacks, rook attacks, all attacks) of `colour`."""
    o = 6 * colour
    pawn = _pawn_attacks(bb[o + PAWN], colour)
    minor = ZERO
    b = bb[o + KNIGHT]
    while b:
        minor |= T[T_KNIGHT + lsb(b)]
        b &= b - ONE
    b = bb[o + BISHOP]
    while b:
        minor |= bishop_attacks(T, lsb(b), occ)
        b &= b - ONE
    rook = ZERO
    b = bb[o + ROOK]
    while b:
        rook |= rook_attacks(T, lsb(b), occ)
        b &= b - ONE
    other = T[T_KING + lsb(bb[o + KING])]
    b = bb[o + QUEEN]
    while b:
        sq = lsb(b)
        other |= rook_attacks(T, sq, occ) | bishop_attacks(T, sq, occ)
        b &= b - ONE
    return pawn, minor, rook, pawn | minor | rook | other


@njit(cache=True, nogil=True, _nrt=False)
def evaluate(T, S, W, E, info):
    """Tapered material + PST score for the side to move; fills `info`."""
    bb = S.bb
    us = S.st[ST_SIDE]
    them = 1 - us
    mg = 0
    eg = 0
    phase = 0
    for colour in range(2):
        sign = 1 if colour == WHITE else -1
        flip = 0 if colour == WHITE else 56
        for pt in range(6):
            b = bb[6 * colour + pt]
            while b:
                sq = lsb(b) ^ flip
                b &= b - ONE
                mg += sign * (W[W_MAT_MG + pt] + W[W_PST_MG + pt * 64 + sq])
                eg += sign * (W[W_MAT_EG + pt] + W[W_PST_EG + pt * 64 + sq])
                phase += PHASE_WEIGHT[pt]
    if phase > MAX_PHASE:
        phase = MAX_PHASE
    score = (mg * phase + eg * (MAX_PHASE - phase)) // MAX_PHASE
    if us != WHITE:
        score = -score

    # Hung material of the side to move: its biggest piece attacked by a cheaper enemy
    # piece, or attacked and undefended.
    occ = bb[OCC_ALL]
    e_pawn, e_minor, e_rook, e_all = _attacks(T, bb, them, occ)
    o_pawn, o_minor, o_rook, o_all = _attacks(T, bb, us, occ)
    hung = 0
    o = 6 * us
    own = bb[OCC_WHITE + us] & ~bb[o + KING]
    target = own & e_all
    while target:
        sq = lsb(target)
        target &= target - ONE
        pt = S.st[MAILBOX + sq] - o
        bit = ONE << U64(sq)
        v = 0
        if (o_all & bit) == ZERO:
            v = HUNG_VALUE[pt]
        elif pt >= KNIGHT and (e_pawn & bit):
            v = HUNG_VALUE[pt] - HUNG_VALUE[PAWN]
        elif pt >= ROOK and (e_minor & bit):
            v = HUNG_VALUE[pt] - HUNG_VALUE[KNIGHT]
        elif pt == QUEEN and (e_rook & bit):
            v = HUNG_VALUE[QUEEN] - HUNG_VALUE[ROOK]
        if v > hung:
            hung = v
    info[INFO_HUNG] = hung

    # Pawn ending: the side to move has only king and pawns.
    pieces = bb[o + KNIGHT] | bb[o + BISHOP] | bb[o + ROOK] | bb[o + QUEEN]
    info[INFO_PAWN_ENDING] = 1 if pieces == ZERO else 0

    # Promotion threat: an enemy pawn on its 7th rank with the square in front free.
    ep = bb[6 * them + PAWN]
    if them == WHITE:
        pushes = ((ep & U64(0x00FF000000000000)) << U64(8)) & ~occ
    else:
        pushes = ((ep & U64(0x000000000000FF00)) >> U64(8)) & ~occ
    info[INFO_PROMO_THREAT] = 1 if pushes != ZERO else 0

    # Mate threat (cheap proxy): an enemy queen attacks a square next to our king that
    # only our king defends, while the king has no flight square.
    threat = 0
    ksq = lsb(bb[o + KING])
    ring = T[T_KING + ksq]
    if bb[6 * them + QUEEN] and (ring & e_all & ~(o_pawn | o_minor | o_rook)):
        flight = ring & ~bb[OCC_WHITE + us] & ~e_all
        if flight == ZERO:
            threat = 1
    info[INFO_MATE_THREAT] = threat
    return score
