"""Polyglot books: ours built from PGN, read back by python-chess, and our probing."""

import random

import chess
import chess.pgn
import chess.polyglot
import pytest

from tests.conftest import DATA
from wasp.board import Position
from wasp.book import Book, build, encode_move

PGN = DATA / "8moves-300.pgn"


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "book.bin"
    summary = build([str(PGN)], plies=12, out_path=str(path))
    assert summary["games"] == 300 and summary["skipped_games"] == 0
    return path


def _positions_along_games(limit=12):
    with open(PGN, encoding="utf-8") as f:
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                return
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                if ply >= limit:
                    break
                yield board.copy()
                board.push(move)


def test_python_chess_reads_our_book_with_our_moves(book_path):
    ours = Book(book_path)
    checked = 0
    with chess.polyglot.open_reader(book_path) as reader:
        for board in _positions_along_games():
            theirs = sorted((e.move.uci(), e.weight) for e in reader.find_all(board))
            mine = sorted(ours.moves(Position(board.fen())))
            # python-chess reports castling as the king's two-square step in standard chess.
            assert mine == theirs, board.fen()
            assert theirs, "every position along a book game has a book move"
            checked += 1
    assert checked > 3000


def test_start_position_weights_count_games(book_path):
    moves = dict(Book(book_path).moves(Position()))
    with open(PGN, encoding="utf-8") as f:
        firsts = []
        while (game := chess.pgn.read_game(f)) is not None:
            firsts.append(game.next().move.uci())
    # Every game is a draw: one point per game for the move played.
    assert moves == {m: firsts.count(m) for m in set(firsts)}


def test_weighted_choice_follows_the_weights(book_path):
    book = Book(book_path)
    position = Position()
    weights = dict(book.moves(position))
    rng = random.Random(1)
    draws = [book.choose(position, rng) for _ in range(3000)]
    top = max(weights, key=weights.get)
    share = draws.count(top) / len(draws)
    assert abs(share - weights[top] / sum(weights.values())) < 0.05
    assert set(draws) <= set(weights)


def test_out_of_book_gives_none(book_path):
    assert Book(book_path).choose(Position("8/8/8/8/8/8/8/K6k w - - 0 1")) is None


def test_castling_is_written_as_king_takes_rook():
    p = Position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    # to h1 (7), from e1 (file 4 in bits 6-8, rank 0 in bits 9-11)
    assert encode_move(p.parse_uci("e1g1")) == 7 | (4 << 6)
    assert encode_move(p.parse_uci("e1c1")) == 0 | (4 << 6)


def test_a_corrupt_file_is_refused(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"123")
    with pytest.raises(ValueError, match="not a Polyglot book"):
        Book(bad)


def test_cli_builds_and_probes(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "b.bin"
    r = subprocess.run([sys.executable, "-m", "wasp.cli", "book", "build", str(PGN), "--plies",
                        "8", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and "from 300 games" in r.stdout
    r = subprocess.run([sys.executable, "-m", "wasp.cli", "book", "probe", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "weight" in r.stdout
    r = subprocess.run([sys.executable, "-m", "wasp.cli", "book", "probe", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "wasp book probe: error:" in r.stderr and "x: no such file" \
        in r.stderr


def test_uci_own_book_answers_from_the_book(book_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    proc = subprocess.run(
        [sys.executable, "-m", "wasp.cli"], cwd=ROOT, capture_output=True, text=True,
        timeout=300,
        input=(f"uci\nsetoption name OwnBook value true\nsetoption name BookFile value "
               f"{book_path}\nisready\nposition startpos\ngo wtime 1000 btime 1000\n"
               "isready\nsetoption name BookFile value /nonexistent.bin\nisready\nquit\n"))
    lines = proc.stdout.splitlines()
    assert "option name OwnBook type check default false" in lines
    best = [ln for ln in lines if ln.startswith("bestmove")]
    assert best and best[0].split()[1] in dict(Book(book_path).moves(Position()))
    assert any("BookFile not loaded" in ln for ln in lines)
