import chess

from testing.openings import OpeningBook, OpeningSequence

from .conftest import EPD, PGN


def test_epd_book():
    book = OpeningBook(EPD)
    assert len(book) == 50
    op = book.get(0)
    assert op.moves == [] and op.fen is not None
    chess.Board(op.fen)  # a valid FEN with move counters
    assert len(op.fen.split()) == 6


def test_pgn_book_and_plies():
    book = OpeningBook(PGN)
    assert len(book) == 10
    op = book.get(0)
    assert op.fen is None and len(op.moves) == 16
    assert op.moves[:2] == ["g1f3", "d7d5"]
    assert len(OpeningBook(PGN, plies=4).get(0).moves) == 4
    board = op.board()
    assert board.fullmove_number == 9


def test_sequence_orders_are_reproducible():
    book = OpeningBook(EPD)
    seq = OpeningSequence(book, "sequential", start=3)
    assert seq[0].index == 2 and seq[1].index == 3 and seq[48].index == 0  # wraps around
    a = [OpeningSequence(book, "random", seed=7)[k].index for k in range(20)]
    b = [OpeningSequence(book, "random", seed=7)[k].index for k in range(20)]
    c = [OpeningSequence(book, "random", seed=8)[k].index for k in range(20)]
    assert a == b and a != c and len(set(a)) == 20
