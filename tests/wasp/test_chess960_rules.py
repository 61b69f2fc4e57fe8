"""Chess960 castling, FEN forms and keys against python-chess (chess960=True) as the oracle."""

import random

import chess
import chess.polyglot
import pytest

from wasp import chess960
from wasp.board import IllegalMoveError, Position
from wasp.perft import perft
from wasp.san import parse_san, to_san


def _walks(count, seed, max_plies=50):
    """`count` python-chess 960 boards from random Chess960 and DFRC starts by random play
    that castles whenever it can half the time (so castling stays on the board)."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        white = rng.randrange(960)
        black = white if rng.random() < 0.5 else rng.randrange(960)
        board = chess.Board(chess960.dfrc_fen(white, black), chess960=True)
        for _ in range(rng.randint(0, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if board.is_castling(m)]
            board.push(rng.choice(castles if castles and rng.random() < 0.5 else moves))
            boards.append(board.copy(stack=False))
    return boards[:count]


BOARDS = _walks(3000, seed=960)


def _ours(board):
    return Position(board.fen(), chess960=True)


def test_walks_reach_castling_and_off_corner_rooks():
    castled = sum(1 for b in BOARDS if any(b.is_castling(m) for m in b.legal_moves))
    assert castled > 100  # the walks exercise castling, not just reach it


def test_legal_moves_equal_python_chess_at_thousands_of_960_positions():
    bad = []
    for board in BOARDS:
        ours = set(_ours(board).legal_moves())
        want = {m.uci() for m in board.legal_moves}
        if ours != want:
            bad.append((board.fen(), ours ^ want))
    assert not bad, bad[:5]


def test_fen_round_trip_both_forms_and_keys_equal_python_chess():
    for board in BOARDS:
        xfen, shredder = board.fen(), board.fen(shredder=True)
        p = Position(xfen)
        assert p.fen() == xfen
        assert p.fen(shredder=True) == shredder
        assert Position(shredder).fen() == xfen
        assert p.key == chess.polyglot.zobrist_hash(board), xfen


def test_make_unmake_along_a_game_keeps_keys_and_fens():
    rng = random.Random(5)
    for _ in range(40):
        n = rng.randrange(960)
        board = chess.Board.from_chess960_pos(n)
        p = Position(board.fen(), chess960=True)
        fens = [p.fen()]
        for _ in range(60):
            moves = list(board.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if board.is_castling(m)]
            move = rng.choice(castles if castles else moves)
            assert to_san(p, p.parse_uci(move.uci())) == board.san(move)
            p.push_uci(move.uci())
            board.push(move)
            assert p.key == chess.polyglot.zobrist_hash(board)
            assert p.fen() == board.fen()
            fens.append(p.fen())
        while len(fens) > 1:
            p.pop()
            fens.pop()
            assert p.fen() == fens[-1]


# Castling in awkward arrangements: (FEN, what it pins).
AWKWARD = [
    ("1k6/8/8/8/8/8/8/5RKR w HF - 0 1", "king between rooks on adjacent files"),
    ("1k6/8/8/8/8/8/8/R4KR1 w GA - 0 1", "rook on the king's destination, king on the rook's"),
    ("1k6/8/8/8/8/8/8/6KR w H - 0 1", "king already on its destination (g file)"),
    ("1k6/8/8/8/8/8/8/R1K5 w A - 0 1", "king already on its destination (c file)"),
    ("4k3/8/8/8/8/8/8/RK5R w HA - 0 1", "king on the b file"),
    ("4k3/8/8/8/8/8/8/rR4K1 w B - 0 1", "a-side rook shields the destination from an enemy rook"),
    ("4k3/8/8/8/8/8/8/RK3r2 w A - 0 1", "b-file king: the rook ends between an attacker and it"),
    ("k7/8/8/8/8/8/8/2RKR2R w HC - 0 1", "castling through the other rook is blocked"),
    ("4k3/8/8/8/8/8/8/1R1K3R w KQ - 0 1", "X-FEN KQ with the king on d1"),
    ("4k3/8/8/8/8/8/8/RR2K2R w Q - 0 1", "X-FEN Q: the outermost rook castles"),
    ("4k3/8/8/8/8/8/8/RR2K2R w B - 0 1", "Shredder B: the inner rook castles"),
    ("5k2/8/8/8/8/8/8/1K5R w H - 0 1", "castling gives check with the rook"),
    ("4k3/8/8/8/8/2b5/8/1K5R w H - 0 1", "the king crosses an attacked square"),
    ("4k3/8/8/8/8/8/8/1K4RR w G - 0 1", "the other rook stands on the king's path end"),
    ("rk4r1/8/8/8/8/8/8/1K5R b ga - 0 1", "black: king b8, rooks a8 and g8"),
    ("r2k3r/8/8/8/8/8/8/R2K3R w HAha - 0 1", "both sides, king on d file"),
    ("1r3kr1/8/8/8/8/8/8/1R3KR1 w GBgb - 0 1", "king f1, rook g1: castle one step or swap"),
]


@pytest.mark.parametrize("fen,why", AWKWARD, ids=[w for _, w in AWKWARD])
def test_castling_in_awkward_arrangements_matches_python_chess(fen, why):
    board = chess.Board(fen, chess960=True)
    p = Position(fen, chess960=True)
    assert set(p.legal_moves()) == {m.uci() for m in board.legal_moves}, why
    assert p.key == chess.polyglot.zobrist_hash(board)
    assert p.fen() == board.fen() and p.fen(shredder=True) == board.fen(shredder=True)
    for depth in (2, 3):
        want = sum(1 for _ in _leaves(board, depth))
        assert perft(p, depth) == want, (why, depth)
    for move in board.legal_moves:
        code = p.parse_uci(move.uci())
        assert to_san(p, code) == board.san(move)
        assert parse_san(p, board.san(move)) == code


def _leaves(board, depth):
    if depth == 0:
        yield None
        return
    for m in list(board.legal_moves):
        board.push(m)
        yield from _leaves(board, depth - 1)
        board.pop()


def test_castling_is_read_in_both_forms_and_written_per_mode():
    p = Position("4k3/8/8/8/8/8/8/RK5R w HA - 0 1")  # king on b1
    assert p.parse_uci("b1h1") == p.parse_uci("b1g1")  # king takes rook, or its own step
    assert "b1c1" in p.legal_moves()  # a king step, not castling
    assert not p.is_castling("b1c1") and p.is_castling("b1a1")
    std = Position()
    std.push_uci("e2e4")
    for text in ("e7e5", "g1f3", "b8c6", "f1c4", "g8f6"):
        std.push_uci(text)
    assert std.parse_uci("e1g1") == std.parse_uci("e1h1")
    assert "e1g1" in std.legal_moves()  # standard chess writes the two-square step
    std.chess960 = True
    assert "e1h1" in std.legal_moves() and "e1g1" not in std.legal_moves()


def test_standard_positions_stay_standard():
    assert not Position().chess960
    assert not Position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").chess960
    assert Position(chess960.start_fen(518, shredder=True)).chess960  # a file named
    assert Position(chess960.start_fen(0)).chess960  # rooks off the corners


@pytest.mark.parametrize("fen,message", [
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "no R on the king's h side"),
    ("4k3/8/8/8/8/8/8/R3K3 w C - 0 1", "no R on c1"),
    ("4k3/8/8/8/8/8/4K3/R6R w A - 0 1", "not on its back rank"),
    ("4k3/8/8/8/8/8/8/R3K2R w KH - 0 1", "given twice"),
    ("4k3/8/8/8/8/8/8/R3K2R w Kx - 0 1", "bad castling field"),
])
def test_bad_castling_fields_are_named(fen, message):
    with pytest.raises(ValueError, match=message):
        Position(fen)


def test_illegal_castling_text_is_refused():
    p = Position("4k3/8/8/8/8/2b5/8/1K5R w H - 0 1")
    with pytest.raises(IllegalMoveError):
        p.parse_uci("b1h1")
