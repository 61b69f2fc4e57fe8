"""Legal move generation with pins and check masks, and bulk counting for perft.

One kernel serves every mode: all moves, noisy moves (captures and promotions,
for quiescence), quiet moves (the rest), and a count-only pass that sums
popcounts instead of writing moves. In check it yields exactly the evasions.
"""

import numpy as np
from numba import njit

from wasp.bitboards import (
    FILE_A,
    FILE_H,
    ONE,
    RANK_1,
    RANK_3,
    RANK_6,
    RANK_8,
    T_BETWEEN,
    T_KING,
    T_KNIGHT,
    T_LINE,
    T_PAWN,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    popcount,
    rook_attacks,
)
from wasp.position import attackers_to, is_attacked
from wasp.types import (
    BISHOP,
    CASTLING_ROOK,
    FLAG_CASTLE,
    FLAG_DOUBLE_PUSH,
    FLAG_EP,
    GEN_ALL,
    GEN_NOISY,
    GEN_QUIET,
    KING,
    KNIGHT,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    NO_SQUARE,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_CASTLE,
    ST_EP,
    ST_SIDE,
    WHITE,
)

ALL_BITS = U64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _emit(moves, n, frm, targets, store):
    """Append a move from `frm` to every square of `targets` (or just count them)."""
    if not store:
        return n + popcount(targets)
    while targets:
        to = lsb(targets)
        targets &= targets - ONE
        moves[n] = frm | (to << MOVE_TO_SHIFT)
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _emit_pawns(moves, n, targets, delta, flags, store):
    """Append pawn moves to `targets`, each from `to - delta`."""
    if not store:
        return n + popcount(targets)
    while targets:
        to = lsb(targets)
        targets &= targets - ONE
        moves[n] = (to - delta) | (to << MOVE_TO_SHIFT) | flags
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _emit_promotions(moves, n, targets, delta, store):
    """Four moves per target (queen first), each from `to - delta`."""
    if not store:
        return n + 4 * popcount(targets)
    while targets:
        to = lsb(targets)
        targets &= targets - ONE
        base = (to - delta) | (to << MOVE_TO_SHIFT)
        for promo in (QUEEN, KNIGHT, ROOK, BISHOP):
            moves[n] = base | (promo << MOVE_PROMO_SHIFT)
            n += 1
    return n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _shift(b, delta):
    """Shift a bitboard by a signed square delta (pawn pushes and captures)."""
    if delta > 0:
        return b << U64(delta)
    return b >> U64(-delta)



@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _pawn_moves(moves, n, src, allow, empty, enemy, up, left, right, promo_rank, double_rank,
                mode, store):
    """Pushes, captures and promotions of the pawns in `src`, to squares in `allow`."""
    single = _shift(src, up) & empty
    double = _shift(single & double_rank, up) & empty & allow
    single &= allow
    cap_left = _shift(src & ~FILE_A, left) & enemy & allow
    cap_right = _shift(src & ~FILE_H, right) & enemy & allow
    if mode != GEN_QUIET:
        n = _emit_promotions(moves, n, single & promo_rank, up, store)
        n = _emit_promotions(moves, n, cap_left & promo_rank, left, store)
        n = _emit_promotions(moves, n, cap_right & promo_rank, right, store)
        n = _emit_pawns(moves, n, cap_left & ~promo_rank, left, 0, store)
        n = _emit_pawns(moves, n, cap_right & ~promo_rank, right, 0, store)
    if mode != GEN_NOISY:
        n = _emit_pawns(moves, n, single & ~promo_rank, up, 0, store)
        n = _emit_pawns(moves, n, double, 2 * up, FLAG_DOUBLE_PUSH, store)
    return n


@njit(cache=True, nogil=True, _nrt=False)
def pinned_pieces(T, S, us):
    """Our pieces that stand alone between our king and an enemy slider."""
    bb = S.bb
    them = 1 - us
    ksq = lsb(bb[6 * us + KING])
    occ = bb[OCC_ALL]
    queens = bb[6 * them + QUEEN]
    snipers = (rook_attacks(T, ksq, ZERO) & (bb[6 * them + ROOK] | queens)) | (
        bishop_attacks(T, ksq, ZERO) & (bb[6 * them + BISHOP] | queens)
    )
    pinned = ZERO
    while snipers:
        s = lsb(snipers)
        snipers &= snipers - ONE
        between = T[T_BETWEEN + ksq * 64 + s] & occ
        if between and (between & (between - ONE)) == ZERO:
            pinned |= between & bb[OCC_WHITE + us]
    return pinned


@njit(cache=True, nogil=True, _nrt=False)
def generate(T, S, moves, mode, store):
    """Write the legal moves of `mode` (GEN_ALL/NOISY/QUIET) into `moves`; return the count.

    With store=False nothing is written and the count is returned (perft bulk counting).
    """
    bb = S.bb
    st = S.st
    us = st[ST_SIDE]
    them = 1 - us
    own = bb[OCC_WHITE + us]
    enemy = bb[OCC_WHITE + them]
    occ = bb[OCC_ALL]
    ksq = lsb(bb[6 * us + KING])
    n = 0

    # Which destination squares a mode allows (before check masks).
    if mode == GEN_NOISY:
        piece_targets = enemy
    elif mode == GEN_QUIET:
        piece_targets = ~occ
    else:
        piece_targets = ~own

    # King moves: squares not attacked once the king has left its square.
    occ_without_king = occ ^ (ONE << U64(ksq))
    targets = T[T_KING + ksq] & piece_targets
    safe = ZERO
    while targets:
        to = lsb(targets)
        targets &= targets - ONE
        if not is_attacked(T, S, to, them, occ_without_king):
            safe |= ONE << U64(to)
    n = _emit(moves, n, ksq, safe, store)

    checking = attackers_to(T, S, ksq, occ) & enemy
    num_checkers = popcount(checking)
    if num_checkers > 1:
        return n  # double check: only the king moves

    if num_checkers == 1:
        checker = lsb(checking)
        check_mask = T[T_BETWEEN + ksq * 64 + checker] | checking
    else:
        check_mask = ALL_BITS
    pinned = pinned_pieces(T, S, us)
    o = 6 * us

    # Knights (a pinned knight never moves).
    pieces = bb[o + KNIGHT] & ~pinned
    mask = piece_targets & check_mask
    while pieces:
        frm = lsb(pieces)
        pieces &= pieces - ONE
        n = _emit(moves, n, frm, T[T_KNIGHT + frm] & mask, store)

    # Sliders; a pinned slider moves only along the line through its king.
    queens = bb[o + QUEEN]
    pieces = bb[o + BISHOP] | queens
    while pieces:
        frm = lsb(pieces)
        pieces &= pieces - ONE
        t = bishop_attacks(T, frm, occ) & mask
        if pinned & (ONE << U64(frm)):
            t &= T[T_LINE + ksq * 64 + frm]
        n = _emit(moves, n, frm, t, store)
    pieces = bb[o + ROOK] | queens
    while pieces:
        frm = lsb(pieces)
        pieces &= pieces - ONE
        t = rook_attacks(T, frm, occ) & mask
        if pinned & (ONE << U64(frm)):
            t &= T[T_LINE + ksq * 64 + frm]
        n = _emit(moves, n, frm, t, store)

    # Pawns, set-wise for unpinned ones; pinned pawns one at a time along their line.
    pawns = bb[o + PAWN]
    if us == WHITE:
        up, left, right = 8, 7, 9
        promo_rank = RANK_8
        double_rank = RANK_3
    else:
        up, left, right = -8, -9, -7
        promo_rank = RANK_1
        double_rank = RANK_6
    n = _pawn_moves(moves, n, pawns & ~pinned, check_mask, ~occ, enemy, up, left, right,
                    promo_rank, double_rank, mode, store)
    pinned_pawns = pawns & pinned
    while pinned_pawns:
        frm = lsb(pinned_pawns)
        pinned_pawns &= pinned_pawns - ONE
        allow = check_mask & T[T_LINE + ksq * 64 + frm]
        n = _pawn_moves(moves, n, ONE << U64(frm), allow, ~occ, enemy,
                        up, left, right, promo_rank, double_rank, mode, store)

    # En passant: test the king's safety with both pawns gone (catches the rank pin).
    ep = st[ST_EP]
    if ep != NO_SQUARE and mode != GEN_QUIET:
        cap_sq = ep - up
        movers = T[T_PAWN + 64 * them + ep] & pawns
        while movers:
            frm = lsb(movers)
            movers &= movers - ONE
            occ2 = (occ ^ (ONE << U64(frm)) ^ (ONE << U64(cap_sq))) | (ONE << U64(ep))
            attackers = attackers_to(T, S, ksq, occ2) & enemy & ~(ONE << U64(cap_sq))
            if attackers == ZERO:
                if store:
                    moves[n] = frm | (ep << MOVE_TO_SHIFT) | FLAG_EP
                n += 1

    # Castling (Chess960 rules, standard chess being one case): not in check; every square
    # the king and the rook cross or land on empty but for those two; no square the king
    # crosses attacked, and its destination not attacked once the rook stands beside it.
    if num_checkers == 0 and mode != GEN_NOISY:
        rights = st[ST_CASTLE] >> (2 * us)
        base = 56 * us
        king_bit = ONE << U64(ksq)
        for side in range(2):
            if rights & (1 << side):
                rook = st[CASTLING_ROOK + 2 * us + side]
                king_to = base + 6 - 4 * side
                rook_to = king_to - 1 + 2 * side
                rook_bit = ONE << U64(rook)
                path = T[T_BETWEEN + ksq * 64 + king_to]
                span = (path | T[T_BETWEEN + rook * 64 + rook_to] | (ONE << U64(king_to))
                        | (ONE << U64(rook_to)))
                if (occ ^ king_bit ^ rook_bit) & span:
                    continue
                ok = True
                crossed = path
                while crossed:
                    sq = lsb(crossed)
                    crossed &= crossed - ONE
                    if is_attacked(T, S, sq, them, occ ^ king_bit):
                        ok = False
                        break
                if ok and not is_attacked(T, S, king_to, them,
                                          (occ ^ king_bit ^ rook_bit) | (ONE << U64(rook_to))):
                    if store:
                        moves[n] = ksq | (king_to << MOVE_TO_SHIFT) | FLAG_CASTLE
                    n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def count_legal(T, S, scratch):
    """Number of legal moves, without writing them (`scratch`: any int32 array)."""
    return generate(T, S, scratch, np.int64(GEN_ALL), np.bool_(False))
