"""The net in the engine: one int16 array `NN` holding the quantised weights and a stack of
accumulators, one for each ply of the game's history, and the kernels that keep them.

Layout (int16 slots): NN[NN_HIDDEN] = N (0: no net loaded, and NN is the header alone),
NN[NN_L1B] = the output bias; from NN_HEADER the weights in the file's order (`l0w` [768][N],
`l0b` [N], `l1w` [2N]); then, 32-slot aligned, the accumulators: for the position after `ply`
moves of the history (S.st[ST_PLY]) White's N values then Black's, each `l0b` plus the `l0w`
rows of its pieces' features (`wasp.nnue.inputs`).

`acc_make` runs after `make_move` and writes the child's accumulators from the parent's with
the move's few rows added and subtracted; taking a move back costs nothing (the parent's are
still below it in the stack). A null move copies them. `acc_refresh` computes them from the
pieces: the search does it once at the root, since in Chess768 (no king buckets) no move
changes more than four rows and the incremental update is always the cheaper one.
"""

import numpy as np
from numba import njit

from wasp.nnue.inputs import FEATURES, PIECE_TYPES, feature
from wasp.nnue.netfile import Net
from wasp.types import (
    CASTLING_ROOK,
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    KING,
    MAILBOX,
    MAX_HISTORY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_UNDO,
    PAWN,
    ROOK,
    ST_PLY,
    ST_SIDE,
    UNDO,
    UNDO_CAPTURED,
    UNDO_MOVE,
    WHITE,
)

NN_HIDDEN = 0  # N, 0 when no net is loaded
NN_L1B = 1  # the output bias (scale QA * QB)
NN_HEADER = 32  # slots before the weights (64 bytes)
ACC_ALIGN = 32  # the accumulator stack starts on a 64-byte boundary of NN
STACK = MAX_HISTORY + 1  # one entry for every position a history can hold


def offsets(hidden: int):
    """(l0w, l0b, l1w, acc, size) slot offsets of NN for a net of `hidden` neurons."""
    l0w = NN_HEADER
    l0b = l0w + FEATURES * hidden
    l1w = l0b + hidden
    acc = -(-(l1w + 2 * hidden) // ACC_ALIGN) * ACC_ALIGN
    return l0w, l0b, l1w, acc, acc + STACK * 2 * hidden


def no_net() -> np.ndarray:
    """The NN of the hand-written evaluation: the header alone, N = 0."""
    return np.zeros(NN_HEADER, dtype=np.int16)


def nn_array(net: Net | None) -> np.ndarray:
    """The NN array of `net` (its accumulators not yet computed), or no_net() for None."""
    if net is None:
        return no_net()
    hidden = net.hidden
    if not 0 < hidden <= 32767:
        raise ValueError(f"a net of N = {hidden} neurons cannot be loaded")
    l0w, l0b, l1w, acc, size = offsets(hidden)
    NN = np.zeros(size, dtype=np.int16)
    NN[NN_HIDDEN] = hidden
    NN[NN_L1B] = net.l1b
    NN[l0w:l0b] = net.l0w.ravel()
    NN[l0b:l1w] = net.l0b
    NN[l1w:l1w + 2 * hidden] = net.l1w
    return NN


# ---------------------------------------------------------------------------
# Kernels


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def acc_offset(NN, ply):
    """Slot of the accumulators (White's, then Black's) of the position after `ply` moves."""
    n = np.int64(NN[NN_HIDDEN])
    l1w = NN_HEADER + (FEATURES + 1) * n
    return ((l1w + 2 * n + ACC_ALIGN - 1) // ACC_ALIGN) * ACC_ALIGN + ply * 2 * n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _row(n, perspective, piece, sq):
    """Slot of the l0w row of `piece` (colour * 6 + type) on `sq` as `perspective` sees it."""
    colour = 1 if piece >= PIECE_TYPES else 0
    return NN_HEADER + feature(perspective, colour, piece - PIECE_TYPES * colour, sq) * n


@njit(cache=True, nogil=True, _nrt=False)
def acc_refresh(S, NN):
    """The accumulators of the current position from its pieces."""
    n = np.int64(NN[NN_HIDDEN])
    l0b = NN_HEADER + FEATURES * n
    base = acc_offset(NN, S.st[ST_PLY])
    for p in range(2):
        dst = base + p * n
        for i in range(n):
            NN[dst + i] = NN[l0b + i]
        for sq in range(64):
            piece = S.st[MAILBOX + sq]
            if piece != EMPTY:
                row = _row(n, p, piece, sq)
                for i in range(n):
                    NN[dst + i] += NN[row + i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add_sub(NN, n, src, dst, a1, s1):
    # Slices, not NN[x + i]: with indices known to be >= 0 the loops vectorise.
    d, s, a, b = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[s1:s1 + n]
    for i in range(n):
        d[i] = s[i] + a[i] - b[i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add_sub2(NN, n, src, dst, a1, s1, s2):
    d, s, a, b, c = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[s1:s1 + n], \
        NN[s2:s2 + n]
    for i in range(n):
        d[i] = s[i] + a[i] - b[i] - c[i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add2_sub2(NN, n, src, dst, a1, a2, s1, s2):
    d, s, a, a_, b, c = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[a2:a2 + n], \
        NN[s1:s1 + n], NN[s2:s2 + n]
    for i in range(n):
        d[i] = s[i] + a[i] + a_[i] - b[i] - c[i]


@njit(cache=True, nogil=True, _nrt=False)
def acc_make(S, NN):
    """After make_move: the new position's accumulators from its parent's (one ply below),
    the rows of the move's pieces added where they land and taken where they left."""
    st = S.st
    n = np.int64(NN[NN_HIDDEN])
    ply = st[ST_PLY]
    dst = acc_offset(NN, ply)
    src = dst - 2 * n
    u = UNDO + (ply - 1) * N_UNDO
    m = st[u + UNDO_MOVE]
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    us = 1 - st[ST_SIDE]
    if m & FLAG_CASTLE:
        # The king runs from frm to to (the g or c file), the rook to the f or d file.
        king = 6 * us + KING
        rook = 6 * us + ROOK
        if (to & 7) == 6:
            rook_from, rook_to = st[CASTLING_ROOK + 2 * us], to - 1
        else:
            rook_from, rook_to = st[CASTLING_ROOK + 2 * us + 1], to + 1
        for p in range(2):
            _add2_sub2(NN, n, src + p * n, dst + p * n, _row(n, p, king, to),
                       _row(n, p, rook, rook_to), _row(n, p, king, frm),
                       _row(n, p, rook, rook_from))
        return
    landed = st[MAILBOX + to]  # the promoted piece after a promotion
    moved = 6 * us + PAWN if (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK else landed
    captured = st[u + UNDO_CAPTURED]
    cap_sq = to
    if m & FLAG_EP:
        captured = 6 * (1 - us) + PAWN
        cap_sq = to - 8 if us == WHITE else to + 8
    if captured == EMPTY:
        for p in range(2):
            _add_sub(NN, n, src + p * n, dst + p * n, _row(n, p, landed, to),
                     _row(n, p, moved, frm))
    else:
        for p in range(2):
            _add_sub2(NN, n, src + p * n, dst + p * n, _row(n, p, landed, to),
                      _row(n, p, moved, frm), _row(n, p, captured, cap_sq))


@njit(cache=True, nogil=True, _nrt=False)
def acc_null(S, NN):
    """After make_null: the parent's accumulators, unchanged."""
    n = np.int64(NN[NN_HIDDEN])
    dst = acc_offset(NN, S.st[ST_PLY])
    d, s = NN[dst:dst + 2 * n], NN[dst - 2 * n:dst]
    for i in range(2 * n):
        d[i] = s[i]
