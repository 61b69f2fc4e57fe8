"""wasp.fallback: the board and the pure-Python search a cold engine plays with."""

import threading

import chess
import pytest

from tests.wasp.helpers import random_positions
from wasp.fallback import Board, Search
from wasp.types import MATE


def test_board_plays_uci_and_san_and_takes_them_back():
    board = Board()
    board.push_uci("e2e4")
    board.push_san("e5")
    assert board.move_stack() == ["e2e4", "e7e5"]
    assert board.turn == 0 and board.white_to_move
    assert board.pop() == "e7e5"
    assert board.fen() == chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
                                      ).fen()


def test_board_refuses_illegal_moves_and_bad_fens_in_one_line():
    board = Board()
    with pytest.raises(ValueError, match="illegal move 'e2e5'"):
        board.push_uci("e2e5")
    with pytest.raises(ValueError, match="invalid fen"):
        Board("not a fen")
    with pytest.raises(IndexError):
        Board().pop()


def test_board_reads_castling_in_either_form():
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    standard = Board(fen)
    standard.push_uci("e1h1")  # king takes rook, as Chess960 writes it
    assert standard.move_stack() == ["e1g1"]
    chess960 = Board(fen, chess960=True)
    chess960.push_uci("e1g1")
    assert chess960.move_stack() == ["e1h1"] and chess960.is_castling("e8a8")


def test_board_game_over_names_the_rule():
    assert Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1").game_over() == ("1-0", "checkmate, White wins")
    assert Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").game_over() == ("1/2-1/2", "stalemate")
    assert Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1").game_over()[1] == \
        "draw by insufficient material"
    assert Board().game_over() is None


def test_search_finds_mate_in_one_and_the_free_queen():
    best, _, score, *_ = Search(Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), depth=3).run()
    assert best == "a1a8" and score == MATE - 1
    best, *_ = Search(Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1"), depth=2).run()
    assert best == "d1d5"


def test_search_returns_a_legal_move_within_its_node_limit():
    for board in random_positions(12, seed=5):
        game = Board(board.fen())
        best, ponder, _, _, nodes, pv = Search(game, nodes=300).run()
        if board.is_game_over(claim_draw=False) and not any(board.legal_moves):
            assert best == "0000"
            continue
        assert chess.Move.from_uci(best) in board.legal_moves
        assert nodes <= 300
        replay = board.copy()
        for move in pv:  # the line is legal move by move
            replay.push_uci(move)


def test_search_keeps_to_searchmoves_and_reports_each_iteration():
    lines = []
    best, *_ = Search(Board(), depth=2, searchmoves=["a2a3", "h2h3"],
                      on_info=lambda *line: lines.append(line)).run()
    assert best in ("a2a3", "h2h3")
    assert [line[0] for line in lines] == [1, 2]


def test_an_infinite_search_waits_for_stop():
    stop = threading.Event()
    out = []
    thread = threading.Thread(
        target=lambda: out.append(Search(Board(), depth=1, stop=stop, infinite=True).run()))
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and not out
    stop.set()
    thread.join(10)
    assert out and out[0][0] in Board().legal_moves()
