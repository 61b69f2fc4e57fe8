"""Attack tables: magics, rays and leaper tables against python-chess."""

import chess
import numpy as np
from numba import njit

from tests.wasp.helpers import random_positions
from wasp.bitboards import (
    T_BETWEEN,
    T_KING,
    T_KNIGHT,
    T_LINE,
    T_PAWN,
    bishop_attacks,
    build_tables,
    lsb,
    msb,
    popcount,
    rook_attacks,
    tables,
)


@njit(cache=True)
def _sliders(T, sq, occ):
    return rook_attacks(T, sq, occ), bishop_attacks(T, sq, occ)


@njit(cache=True)
def _bits(x):
    return popcount(x), lsb(x), msb(x)


def test_magic_slider_attacks_equal_python_chess():
    T = build_tables()
    for board in random_positions(300, seed=5):
        occ = board.occupied
        for sq in range(64):
            rook, bishop = _sliders(T, sq, np.uint64(occ))
            expect_rook = (chess.BB_RANK_ATTACKS[sq][chess.BB_RANK_MASKS[sq] & occ]
                           | chess.BB_FILE_ATTACKS[sq][chess.BB_FILE_MASKS[sq] & occ])
            assert int(rook) == expect_rook
            assert int(bishop) == chess.BB_DIAG_ATTACKS[sq][chess.BB_DIAG_MASKS[sq] & occ]


def test_leaper_and_line_tables_equal_python_chess():
    T = build_tables()
    for sq in range(64):
        assert int(T[T_KNIGHT + sq]) == chess.BB_KNIGHT_ATTACKS[sq]
        assert int(T[T_KING + sq]) == chess.BB_KING_ATTACKS[sq]
        assert int(T[T_PAWN + sq]) == chess.BB_PAWN_ATTACKS[chess.WHITE][sq]
        assert int(T[T_PAWN + 64 + sq]) == chess.BB_PAWN_ATTACKS[chess.BLACK][sq]
        for other in range(64):
            assert int(T[T_BETWEEN + sq * 64 + other]) == chess.between(sq, other)
            if sq != other:
                assert int(T[T_LINE + sq * 64 + other]) == chess.ray(sq, other)


def test_bit_intrinsics_at_the_edges():
    for value in [1, 2**63, 2**63 + 1, 0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0x10]:
        count, low, high = _bits(np.uint64(value))
        assert count == bin(value).count("1")
        assert low == (value & -value).bit_length() - 1
        assert high == value.bit_length() - 1


def test_cached_tables_equal_freshly_built_ones():
    assert np.array_equal(tables(), build_tables())
    assert not tables().flags.writeable
