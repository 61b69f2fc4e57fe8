"""FEN/EPD in and out: round trips, python-chess's en-passant convention, clear errors."""

import chess
import pytest

from tests.wasp.helpers import random_positions
from wasp.board import Position
from wasp.fen import STARTING_FEN


def test_fen_round_trip_equals_python_chess():
    for board in random_positions(3000, seed=3):
        fen = board.fen()
        p = Position(fen)
        assert p.fen() == fen
        assert p.epd() == board.epd()


def test_epd_four_field_positions_load():
    p = Position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -")
    assert p.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def test_en_passant_written_only_when_a_legal_capture_exists():
    # After e2e4 no black pawn can take: python-chess writes '-'.
    p = Position()
    p.push_uci("e2e4")
    assert p.fen().split()[3] == "-"
    # A capture exists but is illegal (pinned pawn): still '-'.
    fen = "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1"
    assert Position(fen).fen() == chess.Board(fen).fen()
    # A legal capture exists: written.
    fen = "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1"
    assert Position(fen).fen().split()[3] == "d3"


@pytest.mark.parametrize("fen,reason", [
    ("", "fields"),
    ("garbage", "fields"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "8 ranks"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "empty-square count"),
    ("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "more than 8"),
    ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "7 squares"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "unexpected character"),
    ("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "two digits"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w KQkq - 0 1", "white must have exactly one"),
    ("rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", "black must have exactly one"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQxq - 0 1", "castling"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKq - 0 1", "twice"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "castling right 'K'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "en-passant"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "rank 6"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1", "no pawn on e5"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "halfmove"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "negative"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 z", "fullmove"),
    ("rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1", "pawns on the first or last"),
    ("4k3/8/8/8/8/8/8/r3K3 b - - 0 1", "side not to move is in check"),
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1 extra", "fields"),
])
def test_bad_fens_raise_value_errors_that_say_why(fen, reason):
    with pytest.raises(ValueError, match="invalid fen") as info:
        Position(fen)
    assert reason in str(info.value)


def test_non_string_fen_is_rejected():
    with pytest.raises(ValueError):
        Position(None)


def test_starting_fen_constant():
    assert STARTING_FEN == chess.STARTING_FEN
