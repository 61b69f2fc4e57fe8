"""Perft: count the leaves of the legal move tree (bulk-counted at the last ply)."""

import numpy as np
from numba import njit

from wasp.movegen import generate
from wasp.position import make_move, unmake_move
from wasp.types import GEN_ALL, MAX_MOVES, MAX_PLY


@njit(cache=True, nogil=True, _nrt=False)
def _perft(T, S, depth, buf, ply):
    if depth <= 1:
        if depth <= 0:
            return 1
        return generate(T, S, buf[ply], np.int64(GEN_ALL), np.bool_(False))
    moves = buf[ply]
    n = generate(T, S, moves, np.int64(GEN_ALL), np.bool_(True))
    total = 0
    for i in range(n):
        make_move(T, S, np.int64(moves[i]))
        total += _perft(T, S, depth - 1, buf, ply + 1)
        unmake_move(T, S)
    return total


@njit(cache=True, nogil=True, _nrt=False)
def perft_kernel(T, S, depth, buf):
    # A typed zero: a literal 0 would compile a second overload of the recursive
    # kernel, which numba's cache cannot link on reload (numba issue #6713).
    return _perft(T, S, np.int64(depth), buf, np.int64(0))


def move_buffer():
    return np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int32)


def perft(position, depth: int) -> int:
    """Leaf count of `position` (a wasp.Position) to `depth` plies."""
    return int(perft_kernel(position.T, position.S, depth, move_buffer()))


def divide(position, depth: int) -> list[tuple[str, int]]:
    """Per root move leaf counts, in generation order."""

    buf = move_buffer()
    out = []
    for m in position.legal_move_codes():
        position.push(m)
        out.append((position.uci(m), int(perft_kernel(position.T, position.S, depth - 1, buf))))
        position.pop()
    return out
