"""The 960 start-position generator against python-chess's numbering."""

import chess
import pytest

from wasp import chess960


def test_every_number_gives_python_chess_position():
    for n in range(chess960.N_POSITIONS):
        board = chess.Board.from_chess960_pos(n)
        assert chess960.start_fen(n) == board.fen()
        assert chess960.start_fen(n, shredder=True) == board.fen(shredder=True)
        assert chess960.index_of(chess960.back_rank(n)) == n


def test_standard_start_is_518():
    assert chess960.back_rank(chess960.STANDARD) == "RNBQKBNR"
    assert chess960.start_fen(518) == chess.STARTING_FEN


def test_dfrc_pair_puts_each_rank_on_its_side():
    fen = chess960.dfrc_fen(0, 959, shredder=True)
    board = chess.Board(fen, chess960=True)
    assert board.is_valid()
    assert fen.split("/")[0] == chess960.back_rank(959).lower()
    assert fen.split("/")[7].split()[0] == chess960.back_rank(0)
    assert fen.split()[2] == board.fen(shredder=True).split()[2]
    assert chess960.dfrc_fen(7, 7) == chess960.start_fen(7)


@pytest.mark.parametrize("bad", [-1, 960, 1.5, "3", True])
def test_bad_numbers_are_refused(bad):
    with pytest.raises(ValueError, match="0..959"):
        chess960.back_rank(bad)


def test_index_of_refuses_non_960_rank():
    with pytest.raises(ValueError, match="not a chess960 back rank"):
        chess960.index_of("RRBQKBNN")
