"""SAN in and out against python-chess, and the forms people type."""

import pytest

from tests.wasp.helpers import random_positions
from wasp.board import IllegalMoveError, Position
from wasp.san import line_to_san, parse_san, to_san


def test_san_out_and_back_equals_python_chess():
    for board in random_positions(700, seed=21):
        p = Position(board.fen())
        for move in board.legal_moves:
            san = board.san(move)
            code = p.parse_uci(move.uci())
            assert to_san(p, code) == san, (board.fen(), move)
            assert parse_san(p, san) == code, (board.fen(), san)


@pytest.mark.parametrize("fen,text,uci", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e4", "e2e4"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Ng1f3", "g1f3"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e2e4", "e2e4"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6e.p.", "e5d6"),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6 e.p.", "e5d6"),
    ("3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c8Q", "c7c8q"),
    ("3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c8=Q", "c7c8q"),
    ("3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1", "cxd8Q", "c7d8q"),
    ("3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1", "cxd8=N+", "c7d8n"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O", "e1c1"),
    ("r4rk1/8/8/8/8/8/8/4K3 b - - 0 1", "Rae8", "a8e8"),
    ("4k3/8/8/8/7Q/8/8/K3r3 w - - 0 1", "Qh4e1", "h4e1"),
    ("4k3/8/8/8/7Q/8/8/K3r3 w - - 0 1", "Qh4xe1+", "h4e1"),
    ("4k3/8/8/8/8/R7/8/R3K3 w - - 0 1", "R1a2", "a1a2"),
])
def test_forms_people_type(fen, text, uci):
    p = Position(fen)
    assert p.parse_uci(uci) == parse_san(p, text)


@pytest.mark.parametrize("fen,text,reason", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e5", "no pawn"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Qh5", "no queen"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "hello", "not a move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "O-O", "castling"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "", "empty"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Nxf3", "nothing to capture"),
    ("4k3/8/8/8/8/R7/8/R3K3 w - - 0 1", "Ra2", "ambiguous"),
    ("3rk3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c8", "must promote"),
    ("4k3/8/8/8/8/8/8/r3K3 w - - 0 1", "Kd1", "check"),
])
def test_unreadable_or_illegal_moves_say_why(fen, text, reason):
    with pytest.raises(IllegalMoveError, match=reason):
        parse_san(Position(fen), text)


def test_line_to_san_leaves_the_position_unchanged():
    p = Position()
    codes = [p.parse_uci("e2e4")]
    p.push(codes[0])
    codes.append(p.parse_uci("e7e5"))
    p.pop()
    assert line_to_san(p, codes) == ["e4", "e5"]
    assert p.fen() == Position().fen()
