"""Terminal play: scripted sessions through a pty (pexpect), bad input included."""

import sys

import chess.pgn
import pexpect
import pytest

from tests.conftest import ROOT
from wasp.board import Position
from wasp.pgn import pgn_text
from wasp.play import draw_board


def _spawn(tmp_path, *args):
    return pexpect.spawn(sys.executable, ["-m", "wasp.cli", "play", "--pgn",
                                          str(tmp_path / "game.pgn"), *args],
                         cwd=str(ROOT), encoding="utf-8", timeout=240)


def test_session_with_bad_input_undo_hint_and_resign(tmp_path):
    child = _spawn(tmp_path, "--side", "w", "--time", "0.2")
    child.expect("your move: ")
    child.sendline("e5")
    child.expect("illegal move: e5: no pawn of yours can move to e5")
    child.expect("your move: ")
    child.sendline("hello")
    child.expect("not a move")
    child.expect("your move: ")
    child.sendline("e4")
    child.expect("wasp plays (\\S+)")
    child.expect("your move: ")
    child.sendline("hint")
    child.expect("hint: \\S+")
    child.expect("your move: ")
    child.sendline("undo")
    child.expect("your move: ")
    child.sendline("d4")
    child.expect("wasp plays")
    child.expect("your move: ")
    child.sendline("q")
    child.expect("Game over: White resigns \\(0-1\\)")
    child.expect(pexpect.EOF)
    game = chess.pgn.read_game(open(tmp_path / "game.pgn", encoding="utf-8"))
    moves = [m.uci() for m in game.mainline_moves()]
    assert moves[0] == "d2d4" and len(moves) == 2  # e4 and its reply were taken back
    assert game.headers["Result"] == "0-1"
    assert game.headers["White"] == "You"


def test_engine_mates_and_the_game_ends_with_a_message(tmp_path):
    # Black to move is mated after the engine's (white's) only sensible reply: Qh7#? Any
    # mate in one: the engine must find it at 0.3 s.
    child = _spawn(tmp_path, "--side", "b", "--time", "0.3", "--fen",
                   "6k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1")
    child.expect("wasp plays Qd8#")
    child.expect("Game over: checkmate, White wins \\(1-0\\)")
    child.expect(pexpect.EOF)
    game = chess.pgn.read_game(open(tmp_path / "game.pgn", encoding="utf-8"))
    assert game.end().board().is_checkmate()


def test_board_is_flipped_for_black():
    text = draw_board(Position(), flipped=True)
    assert text.splitlines()[0].startswith(" 1  R N B K Q B N R")
    assert text.splitlines()[-1].strip() == "h g f e d c b a"


@pytest.mark.parametrize("fen,result,reason", [
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "1/2-1/2", "stalemate"),
    ("8/8/8/8/8/8/8/K6k w - - 0 1", "1/2-1/2", "insufficient"),
    ("7k/8/8/8/8/8/8/K5R1 w - - 100 80", "1/2-1/2", "fifty"),
    ("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", "1-0", "checkmate"),
])
def test_game_end_messages(fen, result, reason):
    r, why = Position(fen).game_over()
    assert r == result and reason in why


def test_pgn_from_a_set_up_position_parses():
    text = pgn_text("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1", ["Kd7", "e4"],
                    {"Event": "t", "Site": "?", "Date": "?", "Round": "1", "White": "a",
                     "Black": "b", "Result": "*"})
    game = chess.pgn.read_game(__import__("io").StringIO(text))
    assert [m.uci() for m in game.mainline_moves()] == ["e8d7", "e2e4"]


# -- engine options of `wasp play` ------------------------------------------------------------

ORIGINAL = ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt"


def _first_engine_report(settings):
    """What the engine says of its first move (white, depth 6) with these options."""
    from wasp.engine import Engine
    from wasp.play import TerminalGame

    engine = Engine()
    engine.configure(settings)
    said = []
    game = TerminalGame("b", depth=6, engine=engine, read=lambda prompt: "q",
                        write=said.append, pgn_path="/dev/null")
    game.play()
    return next(line for line in said if line.startswith("wasp plays"))


def test_terminal_engine_takes_an_eval_file_and_search_parameters():
    base = _first_engine_report([])
    assert "(depth 6, " in base and " nodes)" in base
    assert _first_engine_report([("EvalFile", str(ORIGINAL))]) != base
    assert _first_engine_report([("NullMoveR", "1")]) != base


def test_cli_takes_engine_options_and_refuses_bad_ones(tmp_path):
    child = _spawn(tmp_path, "--side", "b", "--depth", "4", "--eval-file", str(ORIGINAL),
                   "--option", "NullMoveR=2", "--hash", "8")
    child.expect("wasp plays \\S+  \\(depth 4, ")
    child.expect("your move: ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    for args, message in ((["--option", "NullMoveR=99"], "NullMoveR: 99 is outside"),
                          (["--eval-file", str(tmp_path / "none.txt")],
                           "EvalFile: .*none.txt: no such file"),
                          (["--option", "Frobnicate=1"], "unknown option: Frobnicate")):
        child = _spawn(tmp_path, *args)
        child.expect(message)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 1
