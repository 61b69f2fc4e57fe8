"""Make/unmake, incremental Zobrist keys, draws, and the Position face."""

import chess
import chess.polyglot
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.wasp.helpers import opening_fens, random_positions
from wasp.board import IllegalMoveError, Position
from wasp.position import compute_key
from wasp.types import KEYS, N_UNDO, ST_PLY, UNDO

BOARDS = random_positions(2000, seed=11)


def test_zobrist_key_equals_polyglot_hash():
    for board in BOARDS:
        p = Position(board.fen())
        assert p.key == chess.polyglot.zobrist_hash(board), board.fen()


def test_incremental_key_follows_every_move():
    for board in BOARDS[:600]:
        p = Position(board.fen())
        for move in board.legal_moves:
            p.push_uci(move.uci())
            board.push(move)
            assert p.key == chess.polyglot.zobrist_hash(board), (board.fen(), move)
            assert p.key == int(compute_key(p.T, p.S))
            assert p.fen() == board.fen()
            board.pop()
            p.pop()


def _used(p):
    ply = int(p.S.st[ST_PLY])
    return p.S.bb[: KEYS + ply + 1].copy(), p.S.st[: UNDO + ply * N_UNDO].copy()


def test_make_then_unmake_restores_every_field():
    for board in BOARDS[:800]:
        p = Position(board.fen())
        before_bb, before_st = _used(p)
        for code in p.legal_move_codes():
            p.push(code)
            p.pop()
            after_bb, after_st = _used(p)
            assert np.array_equal(before_bb, after_bb), board.fen()
            assert np.array_equal(before_st, after_st), board.fen()


@settings(deadline=None, max_examples=200)
@given(st.integers(0, 2499), st.lists(st.integers(0, 10**6), max_size=40))
def test_random_games_agree_with_python_chess(opening, choices):
    fen = opening_fens()[opening]
    board = chess.Board(fen)
    p = Position(fen)
    for c in choices:
        moves = sorted(m.uci() for m in board.legal_moves)
        assert moves == sorted(p.legal_moves())
        if not moves:
            break
        m = moves[c % len(moves)]
        board.push_uci(m)
        p.push_uci(m)
        assert p.fen() == board.fen()
        assert p.key == chess.polyglot.zobrist_hash(board)
    while board.move_stack:
        assert p.pop() == board.pop().uci()
        assert p.fen() == board.fen()


def test_threefold_repetition_and_fifty_moves():
    p = Position()
    for m in ["g1f3", "g8f6", "f3g1", "f6g8"] * 2:
        assert not p.is_repetition(3)
        p.push_uci(m)
    assert p.is_repetition(3)
    assert Position("8/8/8/8/8/8/8/K1k5 w - - 100 80").is_fifty_moves()


@pytest.mark.parametrize("fen,insufficient", [
    ("8/8/8/8/8/8/8/K1k5 w - - 0 1", True),
    ("8/8/8/8/8/8/8/KBk5 w - - 0 1", True),
    ("8/8/8/8/8/8/8/KNk5 w - - 0 1", True),
    ("8/8/8/8/8/8/2b5/KBk5 w - - 0 1", True),  # both bishops on light squares
    ("8/8/8/8/8/8/1b6/KBk5 w - - 0 1", False),  # bishops on both colours
    ("8/8/8/8/8/8/R7/K6k w - - 0 1", False),
    ("8/8/8/8/8/8/P7/K1k5 w - - 0 1", False),
])
def test_insufficient_material(fen, insufficient):
    assert Position(fen).is_insufficient_material() == insufficient
    assert chess.Board(fen).is_insufficient_material() == insufficient


def test_illegal_and_malformed_moves_raise_clear_errors():
    p = Position()
    for bad in ["e2e5", "e7e5", "zz", "", "e2e4q", "a1a1", None]:
        with pytest.raises(IllegalMoveError):
            p.push_uci(bad)
    assert p.fen() == chess.STARTING_FEN


def test_long_games_compact_history_and_keep_repetition():
    p = Position()
    cycle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    # Far past the history buffer: captures never happen, so repetitions keep counting.
    for i in range(3000):
        p.push_uci(cycle[i % 4])
    assert p.is_repetition(3)
    assert p.fen().split()[0] == chess.STARTING_FEN.split()[0]
