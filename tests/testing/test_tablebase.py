"""Tablebase adjudication in the match runner (`-tb`, `-tbpieces`, `-tbignore50`,
`-tbadjudicate`): games that start in a tablebase position end at once with the tables'
result in each mode; python-chess's probe of tests/data/syzygy is the oracle."""

import io
import json
import os

import chess
import chess.pgn
import chess.syzygy
import pytest

from testing.cli import main
from testing.game import GameSettings, play_game
from testing.openings import Opening
from testing.pgn import game_pgn
from testing.tablebase import TablebaseAdjudication, adjudicate, parse_mode, verdict

from .conftest import DATA, fake_engine
from .test_engine_game import fake, quit_later  # noqa: F401  (the fixture)

TABLES = os.path.join(DATA, "syzygy")
KRK_WON = "8/8/8/4k3/8/8/8/R3K3 w - - 0 1"  # White to move wins
KRK_LOST = "8/8/8/4k3/8/8/8/R3K3 b - - 0 1"  # Black to move loses
KRKR_DRAWN = "8/8/3k4/8/r7/8/3K4/7R b - - 0 1"


def test_the_test_positions_are_what_the_tables_say():
    with chess.syzygy.open_tablebase(TABLES) as tables:
        assert tables.probe_wdl(chess.Board(KRK_WON)) == 2
        assert tables.probe_wdl(chess.Board(KRK_LOST)) == -2
        assert tables.probe_wdl(chess.Board(KRKR_DRAWN)) == 0


@pytest.mark.parametrize("mode", ["BOTH", "WIN_LOSS", "DRAW"])
def test_games_from_tablebase_positions_end_at_once_in_each_mode(quit_later, mode):  # noqa: F811
    a, b = fake("a"), fake("b")
    quit_later(a)
    quit_later(b)
    settings = GameSettings(tb=TablebaseAdjudication(TABLES, adjudicate=mode), maxmoves=2)
    for i, (fen, result) in enumerate(((KRK_WON, "1-0"), (KRK_LOST, "1-0"),
                                       (KRKR_DRAWN, "1/2-1/2"))):
        rec = play_game(a, b, Opening(index=i, fen=fen), settings)
        decided = result != "1/2-1/2"
        if mode == "BOTH" or (mode == "WIN_LOSS") == decided:
            assert (rec.result, rec.termination, rec.plies) == (result, "tablebase", 0)
            assert "SyzygyTB" in rec.reason and "WDL" in rec.reason
            game = chess.pgn.read_game(io.StringIO(game_pgn(rec)))
            assert game.headers["Termination"] == "adjudication"
            assert game.headers["Result"] == result
            assert "WDL " in game.comment and "SyzygyTB" in game.comment
        else:  # left to the game: the fake engines play on to -maxmoves
            assert rec.termination != "tablebase" and rec.plies > 0


def test_only_positions_with_the_fifty_move_counter_at_zero_are_probed():
    tb = TablebaseAdjudication(TABLES)
    assert adjudicate(chess.Board(KRK_WON), tb)[0] == "1-0"
    assert adjudicate(chess.Board(KRK_WON.replace(" 0 1", " 3 10")), tb) is None
    # a capture into KRvK resets the counter: adjudicated right after it
    board = chess.Board("8/8/8/4k3/8/8/3n4/R3K3 w - - 7 40")
    board.push_uci("e1d2")
    assert adjudicate(board, tb)[:2] == ("1-0", "tablebase")


def test_tbpieces_and_positions_beyond_the_tables():
    assert adjudicate(chess.Board(KRKR_DRAWN), TablebaseAdjudication(TABLES, pieces=3)) is None
    assert adjudicate(chess.Board(KRK_WON), TablebaseAdjudication(TABLES, pieces=3))[0] == "1-0"
    five = chess.Board("8/8/3k4/8/r7/8/3K4/5B1R w - - 0 1")
    assert adjudicate(five, TablebaseAdjudication(TABLES)) is None
    missing = chess.Board("8/8/3k4/8/b7/8/3K4/7R w - - 0 1")  # KRvKB: not in the test tables
    assert adjudicate(missing, TablebaseAdjudication(TABLES)) is None


def test_cursed_results_are_draws_unless_tbignore50():
    tb = TablebaseAdjudication(TABLES)
    assert verdict(1, chess.WHITE, tb)[0] == "1/2-1/2"
    assert verdict(-1, chess.WHITE, tb)[0] == "1/2-1/2"
    ignore = TablebaseAdjudication(TABLES, ignore50=True)
    assert verdict(1, chess.WHITE, ignore)[0] == "1-0"
    assert verdict(-1, chess.WHITE, ignore)[0] == "0-1"
    assert verdict(1, chess.BLACK, ignore)[0] == "0-1"
    assert verdict(1, chess.WHITE, TablebaseAdjudication(TABLES, True, True, "DRAW")) is None


def test_mode_names():
    assert parse_mode("both") == "BOTH" and parse_mode("WON_LOST") == "WIN_LOSS"
    with pytest.raises(ValueError, match="expected BOTH"):
        parse_mode("WINS")


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


TWO = fake_engine("a") + fake_engine("b") + ["-each", "tc=10+0.1"]


@pytest.mark.parametrize("extra,code,needle", [
    (["-tb", "/nonexistent/syzygy"], 1, "-tb: /nonexistent/syzygy: no such directory"),
    (["-tb", f"{TABLES}:/nonexistent"], 1, "/nonexistent: no such directory"),
    (["-tbpieces", "5"], 2, "-tbpieces needs -tb"),
    (["-tb", TABLES, "-tbadjudicate", "SOMETIMES"], 2, "-tbadjudicate: 'SOMETIMES'"),
    (["-tb", TABLES, "-tbpieces", "x"], 2, "-tbpieces: expected an integer"),
])
def test_bad_tb_flags_fail_before_any_game(capsys, tmp_path, extra, code, needle):
    got, out, err = _run(capsys, TWO + extra + ["-rundir", str(tmp_path / "run")])
    assert got == code and needle in err
    assert not os.path.exists(tmp_path / "run")


def test_a_directory_without_tables_is_refused(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no tables here\n")
    code, _, err = _run(capsys, TWO + ["-tb", str(empty), "-rundir", str(tmp_path / "run")])
    assert code == 1 and "no Syzygy WDL tables" in err


def test_a_run_counts_its_tablebase_adjudications(capsys, tmp_path):
    book = tmp_path / "endings.epd"
    book.write_text(f"{' '.join(KRK_WON.split()[:4])}\n{' '.join(KRKR_DRAWN.split()[:4])}\n")
    pgn = tmp_path / "games.pgn"
    argv = TWO + ["-openings", f"file={book}", "-rounds", "2", "-repeat", "-tb", TABLES,
                  "-tbadjudicate", "BOTH", "-pgnout", str(pgn), "-rundir",
                  str(tmp_path / "run")]
    code, out, _ = _run(capsys, argv)
    assert code == 0
    assert "Tablebase adjudications: 4 of 4 games" in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["tb_adjudications"] == 4
    with open(pgn) as f:
        games = [chess.pgn.read_game(f) for _ in range(4)]
    assert sorted(g.headers["Result"] for g in games) == ["1-0", "1-0", "1/2-1/2", "1/2-1/2"]
    assert all(g.headers["Termination"] == "adjudication" for g in games)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["tb"]["adjudicate"] == "BOTH" and saved["tb"]["paths"] == TABLES
