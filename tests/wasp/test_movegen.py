"""Legal move generation, check status and modes, against python-chess as the oracle."""

import chess
import numpy as np
import pytest
from numba import njit

from tests.wasp.helpers import random_positions
from wasp.board import Position, move_to_uci
from wasp.movegen import count_legal, generate
from wasp.position import check_squares, gives_check_fast
from wasp.types import GEN_ALL, GEN_NOISY, GEN_QUIET, MAX_MOVES

BOARDS = random_positions(3000, seed=7)


def _uci_set(board):
    return {m.uci() for m in board.legal_moves}


def test_legal_moves_equal_python_chess_at_thousands_of_positions():
    mismatches = []
    for board in BOARDS:
        ours = set(Position(board.fen()).legal_moves())
        if ours != _uci_set(board):
            mismatches.append((board.fen(), ours ^ _uci_set(board)))
    assert not mismatches, mismatches[:5]


def test_check_status_equals_python_chess():
    for board in BOARDS:
        p = Position(board.fen())
        assert p.is_check() == board.is_check(), board.fen()
        assert p.is_checkmate() == board.is_checkmate(), board.fen()
        assert p.is_stalemate() == board.is_stalemate(), board.fen()


def test_noisy_and_quiet_partition_all_moves():
    buf = np.zeros(MAX_MOVES, dtype=np.int32)
    for board in BOARDS[:1000]:
        p = Position(board.fen())
        every = set(p.legal_move_codes(GEN_ALL))
        noisy = set(p.legal_move_codes(GEN_NOISY))
        quiet = set(p.legal_move_codes(GEN_QUIET))
        assert noisy | quiet == every and not noisy & quiet, board.fen()
        expected_noisy = {m.uci() for m in board.legal_moves
                          if board.is_capture(m) or m.promotion}
        assert {move_to_uci(m) for m in noisy} == expected_noisy, board.fen()
        assert count_legal(p.T, p.S, buf) == len(every)
        assert generate(p.T, p.S, buf, GEN_ALL, False) == board.legal_moves.count()


def test_gives_check_equals_python_chess():
    for board in BOARDS[:800]:
        p = Position(board.fen())
        for move in board.legal_moves:
            assert p.gives_check(move.uci()) == board.gives_check(move), (board.fen(), move)


@njit(cache=True)
def _fast_checks(T, S, moves, n, out):
    cs_p, cs_n, cs_b, cs_r, cs_disc, cs_k = check_squares(T, S)
    for i in range(n):
        out[i] = gives_check_fast(T, S, moves[i], cs_p, cs_n, cs_b, cs_r, cs_disc, cs_k)


DISCOVERED = [
    "4k3/8/8/8/4N3/8/8/4R1K1 w - - 0 1",  # the knight uncovers the rook
    "4k3/8/8/8/4P3/8/8/4RK2 w - - 0 1",  # the pawn push stays on the file
    "4k3/8/8/8/4B3/8/8/K3Q3 w - - 0 1",  # the bishop leaves the queen's file
    "k7/8/8/8/4K3/8/8/7B w - - 0 1",  # the king steps off the diagonal
    "4k3/8/8/3pP3/8/8/8/4R1K1 w - d6 0 1",  # en passant
    "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1",  # promotions
    "5k2/8/8/8/8/8/8/4K2R w K - 0 1",  # castling checks with the rook
]


def test_gives_check_fast_equals_gives_check():
    buf = np.zeros(MAX_MOVES, dtype=np.int32)
    out = np.zeros(MAX_MOVES, dtype=np.bool_)
    fens = DISCOVERED + [b.fen() for b in BOARDS[:1500]]
    checks = 0
    for fen in fens:
        p = Position(fen)
        n = generate(p.T, p.S, buf, GEN_ALL, True)
        _fast_checks(p.T, p.S, buf, n, out)
        board = chess.Board(fen)
        for i in range(n):
            move = chess.Move.from_uci(move_to_uci(int(buf[i])))
            assert out[i] == board.gives_check(move), (fen, move)
            checks += int(out[i])
    assert checks > 500


@pytest.mark.parametrize("fen,moves", [
    # En passant that would expose the king along the rank is illegal.
    ("8/8/8/KPp4r/8/8/8/7k w - c6 0 1", {"b5c6"}),
    # Double check: only king moves.
    ("4k3/8/8/8/8/8/3n4/r3K3 w - - 0 1", set()),
    # Castling through an attacked square is illegal.
    ("4k3/8/8/8/8/8/8/R3K2r w Q - 0 1", {"e1c1"}),
])
def test_special_rules(fen, moves):
    board = chess.Board(fen)
    ours = set(Position(fen).legal_moves())
    assert ours == _uci_set(board)
    for m in moves:
        assert (m in ours) == (chess.Move.from_uci(m) in board.legal_moves)
