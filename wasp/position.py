"""The position as numba-friendly arrays, and the kernels that change and query it.

A position is a `State` of two arrays (layout in `wasp.types`): `bb` holds the 16
bitboards (12 piece boards, white, black and all occupancy) and then the Zobrist
key of every position in the history (for repetition checks); `st` holds the
scalar state, the 64-square mailbox and the undo stack. Two arrays, not many:
numba reference-counts every array argument at every call. The key is
Polyglot's, so it equals `chess.polyglot.zobrist_hash(board)` and Polyglot books
can be probed directly.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from wasp.bitboards import (
    LIGHT_SQUARES,
    ONE,
    T_BETWEEN,
    T_KING,
    T_KNIGHT,
    T_LINE,
    T_PAWN,
    T_ZOBRIST_CASTLE,
    T_ZOBRIST_EP,
    T_ZOBRIST_PIECE,
    T_ZOBRIST_WHITE,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    popcount,
    rook_attacks,
)
from wasp.types import (
    B_BISHOP,
    B_KING,
    B_KNIGHT,
    B_PAWN,
    B_QUEEN,
    B_ROOK,
    BISHOP,
    BLACK,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    CASTLING,
    CASTLING_ROOK,
    EMPTY,
    FLAG_CASTLE,
    FLAG_DOUBLE_PUSH,
    FLAG_EP,
    KEYS,
    KING,
    KNIGHT,
    MAILBOX,
    MAX_HISTORY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_ST,
    N_UNDO,
    NO_SQUARE,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_CASTLE,
    ST_EP,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    UNDO,
    UNDO_CAPTURED,
    UNDO_CASTLE,
    UNDO_EP,
    UNDO_HALFMOVE,
    UNDO_MOVE,
    W_BISHOP,
    W_KING,
    W_KNIGHT,
    W_PAWN,
    W_QUEEN,
    W_ROOK,
    WHITE,
)

State = namedtuple("State", ["bb", "st"])

# The castling rights' bits, king squares and rook squares of standard chess.
CASTLE_BITS = (CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ)
STANDARD_KINGS = (4, 60)
STANDARD_ROOKS = (7, 0, 63, 56)


@njit(cache=True, nogil=True)
def set_castling(st, kings, rooks):
    """Fill the castling table for kings on `kings` (white, black) and the rooks of the four
    rights on `rooks` (NO_SQUARE for a right the game does not have); tuples or arrays, so
    kernels that set up a position call it too."""
    keep = st[CASTLING:CASTLING + 64]
    keep[:] = 15
    for i in range(4):
        rook = rooks[i]
        st[CASTLING_ROOK + i] = rook
        if rook != NO_SQUARE:
            bit = CASTLE_BITS[i]
            keep[rook] &= 15 & ~bit
            keep[kings[i // 2]] &= 15 & ~bit


def new_state():
    """Empty arrays for one position (no pieces, white to move, standard castling squares)."""
    bb = np.zeros(KEYS + MAX_HISTORY + 1, dtype=np.uint64)
    st = np.zeros(N_ST, dtype=np.int64)
    st[MAILBOX:MAILBOX + 64] = EMPTY
    st[ST_EP] = NO_SQUARE
    st[ST_FULLMOVE] = 1
    set_castling(st, STANDARD_KINGS, STANDARD_ROOKS)
    return State(bb, st)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def castling_rook(S, m):
    """(from, to) of the rook that castling move `m` moves. A castling move runs from the
    king's square to its destination, g or c file, whatever the rook's file (Chess960)."""
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    if (to & 7) == 6:  # king side: the rook ends on the f file
        return S.st[CASTLING_ROOK + 2 * S.st[ST_SIDE]], to - 1
    return S.st[CASTLING_ROOK + 2 * S.st[ST_SIDE] + 1], to + 1


def copy_state(S):
    return State(S.bb.copy(), S.st.copy())


def mailbox(S):
    """The 64-square mailbox (a view)."""
    return S.st[MAILBOX:MAILBOX + 64]


def history_keys(S):
    """Keys of the positions from the start of the history to now (a view)."""
    return S.bb[KEYS:KEYS + S.st[ST_PLY] + 1]


# ---------------------------------------------------------------------------
# Move fields


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def move_from(m):
    return m & MOVE_FROM_MASK


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def move_to(m):
    return (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def move_promo(m):
    """Promotion piece type (KNIGHT..QUEEN), 0 when not a promotion."""
    return (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK


# ---------------------------------------------------------------------------
# Queries


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def piece_on(S, sq):
    return S.st[MAILBOX + sq]


@njit(cache=True, nogil=True, _nrt=False)
def attackers_to(T, S, sq, occ):
    """Pieces of both colours that attack `sq`, sliders seen through `occ`."""
    return attackers_in(T, S.bb, sq, occ)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def attackers_in(T, bb, sq, occ):
    """`attackers_to` over piece bitboards alone (the swap-off takes pieces off a copy)."""
    rooks = bb[W_ROOK] | bb[B_ROOK] | bb[W_QUEEN] | bb[B_QUEEN]
    bishops = bb[W_BISHOP] | bb[B_BISHOP] | bb[W_QUEEN] | bb[B_QUEEN]
    return (
        (T[T_PAWN + 64 + sq] & bb[W_PAWN])
        | (T[T_PAWN + sq] & bb[B_PAWN])
        | (T[T_KNIGHT + sq] & (bb[W_KNIGHT] | bb[B_KNIGHT]))
        | (T[T_KING + sq] & (bb[W_KING] | bb[B_KING]))
        | (rook_attacks(T, sq, occ) & rooks)
        | (bishop_attacks(T, sq, occ) & bishops)
    )


@njit(cache=True, nogil=True, _nrt=False)
def is_attacked(T, S, sq, by, occ):
    """True when colour `by` attacks `sq` (sliders seen through `occ`)."""
    bb = S.bb
    o = 6 * by
    if T[T_PAWN + 64 * (1 - by) + sq] & bb[o + PAWN]:
        return True
    if T[T_KNIGHT + sq] & bb[o + KNIGHT]:
        return True
    if T[T_KING + sq] & bb[o + KING]:
        return True
    queens = bb[o + QUEEN]
    if rook_attacks(T, sq, occ) & (bb[o + ROOK] | queens):
        return True
    if bishop_attacks(T, sq, occ) & (bb[o + BISHOP] | queens):
        return True
    return False


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def king_square(S, color):
    return lsb(S.bb[6 * color + KING])


@njit(cache=True, nogil=True, _nrt=False)
def checkers(T, S):
    """Enemy pieces giving check to the side to move."""
    us = S.st[ST_SIDE]
    ksq = king_square(S, us)
    return attackers_to(T, S, ksq, S.bb[OCC_ALL]) & S.bb[OCC_WHITE + 1 - us]


@njit(cache=True, nogil=True, _nrt=False)
def in_check(T, S):
    us = S.st[ST_SIDE]
    return is_attacked(T, S, king_square(S, us), 1 - us, S.bb[OCC_ALL])


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def current_key(S):
    return S.bb[KEYS + S.st[ST_PLY]]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def ep_capturable(T, S, ep, us):
    """True when a pawn of `us` stands beside `ep`'s pawn (Polyglot's rule for hashing)."""
    return (T[T_PAWN + 64 * (1 - us) + ep] & S.bb[6 * us + PAWN]) != ZERO


@njit(cache=True, nogil=True, _nrt=False)
def compute_key(T, S):
    """The Polyglot key from scratch (incremental updates are checked against it)."""
    k = ZERO
    for sq in range(64):
        p = S.st[MAILBOX + sq]
        if p != EMPTY:
            k ^= T[T_ZOBRIST_PIECE + p * 64 + sq]
    k ^= T[T_ZOBRIST_CASTLE + S.st[ST_CASTLE]]
    ep = S.st[ST_EP]
    if ep != NO_SQUARE and ep_capturable(T, S, ep, S.st[ST_SIDE]):
        k ^= T[T_ZOBRIST_EP + (ep & 7)]
    if S.st[ST_SIDE] == WHITE:
        k ^= T[T_ZOBRIST_WHITE]
    return k


@njit(cache=True, nogil=True, _nrt=False)
def is_repetition(S, count):
    """True when the current position occurred `count` times before (same side to move)
    since the last irreversible move."""
    ply = S.st[ST_PLY]
    key = S.bb[KEYS + ply]
    limit = min(S.st[ST_HALFMOVE], ply)
    seen = 0
    i = 4
    while i <= limit:
        if S.bb[KEYS + ply - i] == key:
            seen += 1
            if seen >= count:
                return True
        i += 2
    return False


@njit(cache=True, nogil=True, _nrt=False)
def insufficient_material(S):
    """Neither side can mate: K v K, K+minor v K, and kings with bishops all on one colour."""
    bb = S.bb
    if bb[W_PAWN] | bb[B_PAWN] | bb[W_ROOK] | bb[B_ROOK] | bb[W_QUEEN] | bb[B_QUEEN]:
        return False
    knights = bb[W_KNIGHT] | bb[B_KNIGHT]
    bishops = bb[W_BISHOP] | bb[B_BISHOP]
    if popcount(knights | bishops) <= 1:
        return True
    if knights == ZERO:
        return (bishops & LIGHT_SQUARES) == ZERO or (bishops & ~LIGHT_SQUARES) == ZERO
    return False


# ---------------------------------------------------------------------------
# Changing the position


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _color_of(piece):
    return 1 if piece >= 6 else 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _put(T, S, piece, sq):
    b = ONE << U64(sq)
    S.bb[piece] |= b
    S.bb[OCC_WHITE + _color_of(piece)] |= b
    S.bb[OCC_ALL] |= b
    S.st[MAILBOX + sq] = piece
    return T[T_ZOBRIST_PIECE + piece * 64 + sq]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _remove(T, S, piece, sq):
    b = ONE << U64(sq)
    S.bb[piece] ^= b
    S.bb[OCC_WHITE + _color_of(piece)] ^= b
    S.bb[OCC_ALL] ^= b
    S.st[MAILBOX + sq] = EMPTY
    return T[T_ZOBRIST_PIECE + piece * 64 + sq]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _move_piece(T, S, piece, frm, to):
    b = (ONE << U64(frm)) | (ONE << U64(to))
    S.bb[piece] ^= b
    S.bb[OCC_WHITE + _color_of(piece)] ^= b
    S.bb[OCC_ALL] ^= b
    S.st[MAILBOX + frm] = EMPTY
    S.st[MAILBOX + to] = piece
    return T[T_ZOBRIST_PIECE + piece * 64 + frm] ^ T[T_ZOBRIST_PIECE + piece * 64 + to]


@njit(cache=True, nogil=True, _nrt=False)
def make_move(T, S, m):
    """Play legal move `m`, pushing what unmake_move needs; the key is updated incrementally."""
    st = S.st
    ply = st[ST_PLY]
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    us = st[ST_SIDE]
    them = 1 - us
    piece = st[MAILBOX + frm]
    captured = st[MAILBOX + to] if not m & FLAG_CASTLE else EMPTY
    key = S.bb[KEYS + ply]

    u = UNDO + ply * N_UNDO
    st[u + UNDO_MOVE] = m
    st[u + UNDO_CAPTURED] = captured
    st[u + UNDO_CASTLE] = st[ST_CASTLE]
    st[u + UNDO_EP] = st[ST_EP]
    st[u + UNDO_HALFMOVE] = st[ST_HALFMOVE]

    if st[ST_EP] != NO_SQUARE:
        key ^= T[T_ZOBRIST_EP + (st[ST_EP] & 7)]
        st[ST_EP] = NO_SQUARE
    st[ST_HALFMOVE] += 1

    if m & FLAG_CASTLE:
        # King and rook lift off before either lands: in Chess960 either may stand on the
        # other's destination, or the king on its own.
        rook_from, rook_to = castling_rook(S, m)
        rook = 6 * us + ROOK
        key ^= _remove(T, S, piece, frm)
        key ^= _remove(T, S, rook, rook_from)
        key ^= _put(T, S, piece, to)
        key ^= _put(T, S, rook, rook_to)
    else:
        if captured != EMPTY:
            key ^= _remove(T, S, captured, to)
            st[ST_HALFMOVE] = 0
        key ^= _move_piece(T, S, piece, frm, to)

    if piece == 6 * us + PAWN:
        st[ST_HALFMOVE] = 0
        if m & FLAG_EP:
            key ^= _remove(T, S, 6 * them + PAWN, to - 8 if us == WHITE else to + 8)
        elif m & FLAG_DOUBLE_PUSH:
            ep = (frm + to) >> 1
            if ep_capturable(T, S, ep, them):
                st[ST_EP] = ep
                key ^= T[T_ZOBRIST_EP + (ep & 7)]
        else:
            promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
            if promo:
                key ^= _remove(T, S, piece, to)
                key ^= _put(T, S, 6 * us + promo, to)

    castle = st[ST_CASTLE]
    new_castle = castle & st[CASTLING + frm] & st[CASTLING + to]
    if new_castle != castle:
        key ^= T[T_ZOBRIST_CASTLE + castle] ^ T[T_ZOBRIST_CASTLE + new_castle]
        st[ST_CASTLE] = new_castle

    if us == BLACK:
        st[ST_FULLMOVE] += 1
    st[ST_SIDE] = them
    key ^= T[T_ZOBRIST_WHITE]
    st[ST_PLY] = ply + 1
    S.bb[KEYS + ply + 1] = key


@njit(cache=True, nogil=True, _nrt=False)
def unmake_move(T, S):
    """Take back the last move made by make_move."""
    st = S.st
    ply = st[ST_PLY] - 1
    u = UNDO + ply * N_UNDO
    m = st[u + UNDO_MOVE]
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    them = st[ST_SIDE]
    us = 1 - them
    piece = st[MAILBOX + to]

    if m & FLAG_CASTLE:
        st[ST_SIDE] = us  # castling_rook reads the side
        rook_from, rook_to = castling_rook(S, m)
        rook = 6 * us + ROOK
        _remove(T, S, piece, to)
        _remove(T, S, rook, rook_to)
        _put(T, S, piece, frm)
        _put(T, S, rook, rook_from)
    else:
        if (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK:
            _remove(T, S, piece, to)
            piece = 6 * us + PAWN
            _put(T, S, piece, to)
        _move_piece(T, S, piece, to, frm)
        captured = st[u + UNDO_CAPTURED]
        if captured != EMPTY:
            _put(T, S, captured, to)
        if m & FLAG_EP:
            _put(T, S, 6 * them + PAWN, to - 8 if us == WHITE else to + 8)

    st[ST_CASTLE] = st[u + UNDO_CASTLE]
    st[ST_EP] = st[u + UNDO_EP]
    st[ST_HALFMOVE] = st[u + UNDO_HALFMOVE]
    if us == BLACK:
        st[ST_FULLMOVE] -= 1
    st[ST_SIDE] = us
    st[ST_PLY] = ply


@njit(cache=True, nogil=True, _nrt=False)
def make_null(T, S):
    """Pass the move (null-move pruning); undone by unmake_null."""
    st = S.st
    ply = st[ST_PLY]
    key = S.bb[KEYS + ply]
    u = UNDO + ply * N_UNDO
    st[u + UNDO_MOVE] = 0
    st[u + UNDO_CAPTURED] = EMPTY
    st[u + UNDO_CASTLE] = st[ST_CASTLE]
    st[u + UNDO_EP] = st[ST_EP]
    st[u + UNDO_HALFMOVE] = st[ST_HALFMOVE]
    if st[ST_EP] != NO_SQUARE:
        key ^= T[T_ZOBRIST_EP + (st[ST_EP] & 7)]
        st[ST_EP] = NO_SQUARE
    st[ST_HALFMOVE] += 1
    st[ST_SIDE] = 1 - st[ST_SIDE]
    key ^= T[T_ZOBRIST_WHITE]
    st[ST_PLY] = ply + 1
    S.bb[KEYS + ply + 1] = key


@njit(cache=True, nogil=True, _nrt=False)
def unmake_null(T, S):
    st = S.st
    ply = st[ST_PLY] - 1
    u = UNDO + ply * N_UNDO
    st[ST_EP] = st[u + UNDO_EP]
    st[ST_HALFMOVE] = st[u + UNDO_HALFMOVE]
    st[ST_SIDE] = 1 - st[ST_SIDE]
    st[ST_PLY] = ply


@njit(cache=True, nogil=True, _nrt=False)
def gives_check(T, S, m):
    """True when move `m` (legal, not yet made) checks the opponent."""
    us = S.st[ST_SIDE]
    them = 1 - us
    ksq = lsb(S.bb[6 * them + KING])
    king_bit = ONE << U64(ksq)
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    o = 6 * us
    queens = S.bb[o + QUEEN]
    rooks = S.bb[o + ROOK] | queens
    bishops = S.bb[o + BISHOP] | queens
    if m & FLAG_CASTLE:
        # The king gives no check; the rook may, and any slider the two uncover.
        rook_from, rook_to = castling_rook(S, m)
        moved = (ONE << U64(frm)) | (ONE << U64(rook_from))
        landed = (ONE << U64(to)) | (ONE << U64(rook_to))
        occ = (S.bb[OCC_ALL] & ~moved) | landed
        rooks = (rooks & ~(ONE << U64(rook_from))) | (ONE << U64(rook_to))
        return ((rook_attacks(T, ksq, occ) & rooks)
                | (bishop_attacks(T, ksq, occ) & bishops)) != ZERO
    promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    ptype = promo if promo else S.st[MAILBOX + frm] - 6 * us
    occ = (S.bb[OCC_ALL] ^ (ONE << U64(frm))) | (ONE << U64(to))
    if m & FLAG_EP:
        occ ^= ONE << U64(to - 8 if us == WHITE else to + 8)
    # Direct check by the moved (or promoted) piece.
    if ptype == PAWN:
        if T[T_PAWN + 64 * us + to] & king_bit:
            return True
    elif ptype == KNIGHT:
        if T[T_KNIGHT + to] & king_bit:
            return True
    elif ptype == BISHOP:
        if bishop_attacks(T, to, occ) & king_bit:
            return True
    elif ptype == ROOK:
        if rook_attacks(T, to, occ) & king_bit:
            return True
    elif ptype == QUEEN:
        if (rook_attacks(T, to, occ) | bishop_attacks(T, to, occ)) & king_bit:
            return True
    # Discovered checks by our sliders.
    not_moved = ~((ONE << U64(frm)) | (ONE << U64(to)))
    if rook_attacks(T, ksq, occ) & rooks & not_moved:
        return True
    if bishop_attacks(T, ksq, occ) & bishops & not_moved:
        return True
    return False


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def check_squares(T, S):
    """What gives_check_fast needs, computed once per node: the squares from which a pawn,
    knight, bishop or rook of the side to move would attack the enemy king, our pieces that
    stand alone between one of our sliders and that king, and the king's square."""
    bb = S.bb
    us = S.st[ST_SIDE]
    them = 1 - us
    ksq = lsb(bb[6 * them + KING])
    occ = bb[OCC_ALL]
    o = 6 * us
    queens = bb[o + QUEEN]
    snipers = (rook_attacks(T, ksq, ZERO) & (bb[o + ROOK] | queens)) | (
        bishop_attacks(T, ksq, ZERO) & (bb[o + BISHOP] | queens))
    discoverers = ZERO
    while snipers:
        s = lsb(snipers)
        snipers &= snipers - ONE
        between = T[T_BETWEEN + ksq * 64 + s] & occ
        if between and (between & (between - ONE)) == ZERO:
            discoverers |= between & bb[OCC_WHITE + us]
    return (T[T_PAWN + 64 * them + ksq], T[T_KNIGHT + ksq], bishop_attacks(T, ksq, occ),
            rook_attacks(T, ksq, occ), discoverers, ksq)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def gives_check_fast(T, S, m, pawn_sq, knight_sq, bishop_sq, rook_sq, discoverers, ksq):
    """gives_check(T, S, m) from check_squares(T, S), for a legal move in a legal position.

    A slider moving along its line to the king cannot be the one that starts checking (it
    would check already), so the king's view through the current occupancy tells direct
    checks; a discoverer leaving its line uncovers one. Promotions, en passant and castling
    move more than one piece: they take the full test."""
    if m & (FLAG_EP | FLAG_CASTLE | (MOVE_PROMO_MASK << MOVE_PROMO_SHIFT)):
        return gives_check(T, S, m)
    frm = m & MOVE_FROM_MASK
    to_bit = ONE << U64((m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK)
    pt = S.st[MAILBOX + frm] - 6 * S.st[ST_SIDE]
    if pt == PAWN:
        direct = pawn_sq & to_bit
    elif pt == KNIGHT:
        direct = knight_sq & to_bit
    elif pt == BISHOP:
        direct = bishop_sq & to_bit
    elif pt == ROOK:
        direct = rook_sq & to_bit
    elif pt == QUEEN:
        direct = (bishop_sq | rook_sq) & to_bit
    else:
        direct = ZERO
    if direct:
        return True
    if (discoverers >> U64(frm)) & ONE:
        return (T[T_LINE + ksq * 64 + frm] & to_bit) == ZERO
    return False
