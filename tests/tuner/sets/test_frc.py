"""tuner.sets.frc: Chess960 numbering, DFRC positions and books, `wasp-tune data dfrc`."""

import os

import chess
import pytest

from tests.conftest import ROOT
from tuner.cli import main as wasp_tune
from tuner.sets import frc

# published Chess960 numbers (Scharnagl's standard numbering)
KNOWN = {0: "BBQNNRKR", 1: "BQNBNRKR", 518: "RNBQKBNR", 959: "RKRNNQBB"}


def back_rank(n):
    return frc.dfrc_fen(frc.chess960_number(n)).split("/")[-1].split()[0]


def test_back_ranks_follow_the_standard_numbering_and_the_960_rules():
    for n, rank in KNOWN.items():
        assert back_rank(n) == rank
    ranks = [back_rank(n) for n in range(frc.N960)]
    assert len(set(ranks)) == 960
    for rank in ranks:
        assert sorted(rank) == sorted("RNBQKBNR")
        b1, b2 = (i for i, p in enumerate(rank) if p == "B")
        assert (b1 + b2) % 2 == 1  # bishops on opposite colours
        r1, r2 = (i for i, p in enumerate(rank) if p == "R")
        assert r1 < rank.index("K") < r2  # the king between its rooks
    for n in range(frc.N960):  # python-chess's numbering is the reference
        board = chess.Board.from_chess960_pos(n)
        assert frc.dfrc_board(frc.chess960_number(n)).board_fen() == board.board_fen()
    with pytest.raises(ValueError, match="outside 0..921599"):
        frc.dfrc_fen(frc.NDFRC)


def test_dfrc_numbers_are_white_times_960_plus_black():
    # the first two lines of the DFRC book fishtest and OpenBench use
    assert frc.dfrc_fen(0) == "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
    assert frc.dfrc_fen(1) == "bqnbnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
    assert frc.dfrc_fen(frc.chess960_number(518), "xfen") == chess.STARTING_FEN
    board = frc.dfrc_board(960 * 959 + 518)
    assert board.is_valid() and board.chess960
    assert board.fen(shredder=True) == \
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w CAha - 0 1"
    for n in (0, 123456, frc.NDFRC - 1):
        b = frc.dfrc_board(n)
        again = chess.Board(b.fen(shredder=True), chess960=True)
        assert again.castling_rights == b.rooks & (chess.BB_RANK_1 | chess.BB_RANK_8)
        assert again.fen() == b.fen() and len(chess.SquareSet(b.castling_rights)) == 4


def test_books_are_seeded_distinct_and_sorted():
    a = frc.book_numbers(500, seed=7)
    assert a == frc.book_numbers(500, seed=7) != frc.book_numbers(500, seed=8)
    assert a == sorted(set(a)) and all(0 <= n < frc.NDFRC for n in a)
    c960 = frc.book_numbers(None, chess960=True)
    assert len(c960) == 960 and all(n // 960 == n % 960 for n in c960)
    with pytest.raises(ValueError, match="expected 1..960"):
        frc.book_numbers(961, chess960=True)


def test_cli_writes_a_book_and_refuses_bad_counts(tmp_path, capsys):
    out = tmp_path / "b.epd"
    assert wasp_tune(["data", "dfrc", "-o", str(out), "-n", "20", "-castling", "xfen"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 20
    for line in lines:
        board = chess.Board(line, chess960=True)
        assert board.is_valid() and board.fen() == line
    assert wasp_tune(["data", "dfrc", "-o", str(out), "-n", "0"]) == 2
    assert "-n 0" in capsys.readouterr().err
    assert wasp_tune(["data", "dfrc", "-o", str(tmp_path / "no" / "b.epd")]) == 1


@pytest.mark.parametrize("name, args", [
    ("dfrc-1000.epd", ["-n", "1000", "-seed", "1"]),
    ("chess960.epd", ["-chess960", "-all"]),
])
def test_shipped_books_are_what_the_recipe_writes(tmp_path, name, args):
    out = tmp_path / name
    assert wasp_tune(["data", "dfrc", "-o", str(out), *args]) == 0
    with open(os.path.join(ROOT, "datasets", name)) as f:
        assert f.read() == out.read_text()


def test_the_loop_refuses_a_dfrc_book_and_says_what_to_do(tmp_path, capsys):
    book = os.path.join(ROOT, "datasets", "dfrc-1000.epd")
    assert wasp_tune(["loop", "-dir", str(tmp_path / "lp"), "-openings", book]) == 1
    err = capsys.readouterr().err
    assert "dfrc-1000.epd:1" in err and "-variant fischerandom" in err
