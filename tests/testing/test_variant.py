"""-variant fischerandom: 960/DFRC books, engines in Chess960 mode, castling, PGN; python-chess
(chess960=True) is the referee."""

import io
import os
import sqlite3
import sys

import chess
import chess.pgn
import pytest

from testing.cli import main
from testing.driver import EngineUnsupported
from testing.engine import EngineConfig, make_engine
from testing.game import GameSettings, play_game
from testing.openings import OpeningBook, OpeningSequence
from testing.pgn import game_pgn
from testing.plan import plan_match
from testing.reproduce import reproduce
from testing.variant import VariantError, needs_chess960, pgn_is_chess960

from .conftest import DATA, EPD, HERE, ROOT, fake_engine

DFRC = os.path.join(ROOT, "datasets", "dfrc-1000.epd")
GAMES960 = os.path.join(DATA, "chess960_games.pgn")
XB960 = os.path.join(HERE, "fake_engines", "fake_xboard960.py")


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("fen,only960", [
    ("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1", True),  # Shredder-FEN
    ("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1", True),  # X-FEN, king on g1
    ("rr1qkbnr/pppppppp/8/8/8/8/PPPPPPPP/RR1QKBNR w KBkb - 0 1", True),  # an inner rook
    ("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w - - 0 1", False),  # no rights: any rules
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1", False),  # standard, Shredder
    (chess.STARTING_FEN, False),
    ("r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1", False),  # some rights, standard squares
    ("r3k2r/8/8/8/8/8/8/R4K1R w KQkq - 0 1", True),  # the king off e1 keeps them in 960
    ("1r2k2r/8/8/8/8/8/8/R3K2R b Qq - 0 1", True),  # the rook of q on b8
])
def test_castling_rights_only_chess960_reads_are_detected(fen, only960):
    assert needs_chess960(fen) is only960


def test_pgn_variant_tags():
    assert pgn_is_chess960("Chess960") and pgn_is_chess960("fischerandom")
    assert not pgn_is_chess960(None) and not pgn_is_chess960("Standard")
    with pytest.raises(VariantError, match="Crazyhouse"):
        pgn_is_chess960("Crazyhouse")


def test_960_book_is_read_as_written_and_castles_king_takes_rook():
    book = OpeningBook(DFRC, chess960=True)
    with open(DFRC) as f:
        first = f.readline().split()
    op = book.get(0)
    assert op.fen.split() == first and op.chess960  # the Shredder field as written
    board = op.board()
    assert board.chess960 and board.fen(shredder=True) == " ".join(first)
    castles = {m.uci() for m in board.legal_moves if board.is_castling(m)}
    assert castles <= {"g1h1", "g1f1"}  # king takes its own rook (empty here: blocked)
    # PGN openings with [Variant "Chess960"]: O-O in SAN becomes king-takes-rook UCI
    pgn_book = OpeningBook(GAMES960, chess960=True)
    last = pgn_book.get(len(pgn_book) - 1)
    assert "e1b1" in last.moves and "e8b8" in last.moves
    replay = last.board()
    assert replay.fen().startswith("rk1r3r/1pqn1p2")


def test_960_book_without_the_variant_is_refused(capsys, tmp_path):
    with pytest.raises(VariantError, match="-variant fischerandom"):
        OpeningBook(DFRC).get(0)
    with pytest.raises(VariantError, match="-variant fischerandom"):
        OpeningBook(GAMES960).get(0)
    two = fake_engine("a") + fake_engine("b") + ["-each", "nodes=10"]
    for book in (f"file={DFRC}", f"file={GAMES960}"):
        code, _, err = run(capsys, two + ["-openings", book, "-rundir", str(tmp_path / "r")])
        assert code == 2 and ("only make sense in Chess960" in err or "Chess960 game" in err)
        assert "-variant fischerandom" in err
    assert not (tmp_path / "r").exists()


def test_variant_flag(tmp_path, capsys):
    two = fake_engine("a") + fake_engine("b") + ["-each", "nodes=10"]
    cfg = plan_match(two + ["-variant", "fischerandom", "-openings", f"file={DFRC}",
                            "-rundir", str(tmp_path / "a")], new=True).config
    assert cfg.variant == "fischerandom" and cfg.chess960
    cfg = plan_match(two + ["-variant", "standard", "-openings", f"file={EPD}",
                            "-rundir", str(tmp_path / "b")], new=True).config
    assert cfg.variant == "standard" and not cfg.chess960
    cfg = plan_match(two + ["-rundir", str(tmp_path / "c")], new=True).config
    assert cfg.variant == "standard"
    assert type(cfg).from_dict(cfg.to_dict()).variant == "standard"
    code, _, err = run(capsys, two + ["-variant", "crazyhouse", "-rundir", str(tmp_path / "d")])
    assert code == 2 and "-variant: 'crazyhouse'" in err


def test_a_standard_book_under_fischerandom_plays_960_rules():
    seq = OpeningSequence(OpeningBook(EPD, chess960=True))
    assert seq[0].board().chess960
    assert OpeningSequence(None, chess960=True)[0].board().chess960


def test_an_engine_without_uci_chess960_is_refused(capsys, tmp_path):
    argv = fake_engine("a") + fake_engine("b") + [
        "-each", "nodes=10", "-variant", "fischerandom", "-openings", f"file={DFRC}",
        "-rundir", str(tmp_path / "r")]
    code, _, err = run(capsys, argv)
    assert code == 1 and "no UCI_Chess960 option" in err and "fischerandom" in err, err


def xboard960(name, *extra, chess960=True):
    cfg = EngineConfig(cmd=sys.executable, name=name, proto="xboard", args=[XB960, *extra],
                       nodes=100)
    e = make_engine(cfg, chess960=chess960)
    e.start()
    return e


def test_xboard_engines_get_variant_and_castling_as_o_o(tmp_path):
    log = tmp_path / "received.txt"
    a = xboard960("san", "--log", str(log))
    b = xboard960("uci", "--reply", "uci", "--log", str(log))
    try:
        book = OpeningBook(DFRC, chess960=True)
        for k, (white, black) in enumerate(((a, b), (b, a), (a, b))):
            op = book.get(k)
            rec = play_game(white, black, op, GameSettings(maxmoves=30))
            assert rec.termination in ("max-moves", "checkmate", "stalemate", "repetition",
                                       "insufficient-material"), rec.reason
            board = op.board()
            castled = 0
            for m in rec.moves:  # every move king-takes-rook UCI, legal for python-chess
                move = chess.Move.from_uci(m.uci)
                assert board.is_legal(move), (m.uci, board.fen())
                castled += board.is_castling(move)
                board.push(move)
            assert castled, "the fake engines castle whenever they can"
            game = chess.pgn.read_game(io.StringIO(game_pgn(rec)))
            assert game.headers["Variant"] == "Chess960" and game.headers["FEN"] == op.fen
            assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in rec.moves]
        # the fakes refuse castling in coordinates (the protocol's FRC form is O-O): the
        # games above ended by the rules, so every castling went out as O-O / O-O-O
        assert {"O-O", "O-O-O"} & set(log.read_text().split())
    finally:
        a.kill()
        b.kill()
    with pytest.raises(EngineUnsupported, match="fischerandom"):
        e = xboard960("old", "--no-frc")
        e.kill()


def _dfrc_match(capsys, tmp_path, engines, srand):
    """Play 4 games on the DFRC book, check each against python-chess; the castlings seen."""
    pgn = tmp_path / "games.pgn"
    rundir = tmp_path / "run"
    argv = [*engines, "-each", "nodes=3000", "option.Hash=16",
            "-variant", "fischerandom", "-openings", f"file={DFRC}", "order=random",
            "-srand", str(srand), "-rounds", "2", "-repeat", "-maxmoves", "80",
            "-pgnout", str(pgn), "-rundir", str(rundir), "-ratinginterval", "0"]
    code, out, err = run(capsys, argv)
    assert code == 0, err
    with open(DFRC) as f:
        book = [" ".join(line.split()) for line in f]
    db = sqlite3.connect(rundir / "games.sqlite")
    rows = db.execute("SELECT opening_fen, moves, final_fen, termination FROM games "
                      "ORDER BY pair_id, game_in_pair").fetchall()
    games = []
    with open(pgn) as f:
        while (g := chess.pgn.read_game(f)) is not None:
            games.append(g)
    assert len(rows) == len(games) == 4
    castled = 0
    for (fen, moves, final, termination), game in zip(rows, games, strict=True):
        assert termination not in ("illegal-move", "crash", "stall"), termination
        assert fen in book  # the book's line, Shredder castling field as written
        assert game.headers["Variant"] == "Chess960" and game.headers["FEN"] == fen
        assert not game.errors
        board = chess.Board(fen, chess960=True)
        for m in moves.split():
            move = chess.Move.from_uci(m)
            assert board.is_legal(move), (m, board.fen())
            castled += board.is_castling(move)
            board.push(move)
        assert board.fen() == final == game.end().board().fen()
        assert [m.uci() for m in game.mainline_moves()] == moves.split()
    # `wasp-match reproduce` replays a 960 game (castlings included) move for move
    findings = reproduce(str(rundir), 1)
    assert [f.kind for f in findings] == ["identical", "identical"], [f.line() for f in findings]
    return castled


@pytest.mark.engines
def test_stockfish_dfrc_match_under_wasp_match(stockfish, capsys, tmp_path):
    engines = ["-engine", f"cmd={stockfish}", "name=sf1", "option.Threads=1",
               "-engine", f"cmd={stockfish}", "name=sf2", "option.Threads=1"]
    castled = _dfrc_match(capsys, tmp_path, engines, srand=3)
    assert castled, "no castling in four DFRC games: the king-takes-rook path went untested"


@pytest.mark.engines
def test_wasp_against_stockfish_on_the_dfrc_book(stockfish, capsys, tmp_path):
    engines = ["-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", "name=wasp",
               "startup=300", "-engine", f"cmd={stockfish}", "name=sf", "option.Threads=1"]
    castled = _dfrc_match(capsys, tmp_path, engines, srand=5)
    assert castled, "no castling in four DFRC games: the king-takes-rook path went untested"


@pytest.mark.engines
def test_cutechess_cli_plays_the_shipped_dfrc_book(stockfish, tmp_path):
    """The shipped book works under cutechess-cli too (skipped where it is not installed:
    Debian has no package; build it from its source)."""
    import subprocess

    from .conftest import installed_engine

    cutechess = installed_engine("cutechess-cli")
    pgn = tmp_path / "cc.pgn"
    subprocess.run([cutechess, "-engine", f"cmd={stockfish}", "name=sf1", "-engine",
                    f"cmd={stockfish}", "name=sf2", "-each", "proto=uci", "tc=inf",
                    "nodes=3000", "option.Hash=16", "-variant", "fischerandom", "-openings",
                    f"file={DFRC}", "format=epd", "order=random", "-srand", "3", "-rounds", "2",
                    "-games", "2", "-repeat", "-pgnout", str(pgn)],
                   check=True, capture_output=True, timeout=300)
    with open(DFRC) as f:
        book = {chess.Board(line, chess960=True).fen() for line in f}
    n = 0
    with open(pgn) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            n += 1
            board = game.board()
            assert board.chess960 and board.fen() in book and not game.errors
            assert game.headers.get("Termination") not in ("illegal move", "abandoned")
    assert n == 4
    # and the runner reads cutechess's [Variant "fischerandom"] games as a book
    book960 = OpeningBook(str(pgn), chess960=True, plies=6)
    assert all(len(book960.get(k).moves) == 6 for k in range(4))


def test_a_960_xboard_run_is_stored_and_reproduced(capsys, tmp_path):
    rundir = tmp_path / "run"
    engines = []
    for name, extra in (("san", []), ("uci", ["arg=--reply", "arg=uci"])):
        engines += ["-engine", f"cmd={sys.executable}", f"arg={XB960}", *extra, f"name={name}",
                    "proto=xboard"]
    code, _, err = run(capsys, [*engines, "-each", "nodes=100", "-variant", "fischerandom",
                                "-openings", f"file={DFRC}", "-rounds", "1", "-repeat",
                                "-maxmoves", "30", "-rundir", str(rundir),
                                "-ratinginterval", "0"])
    assert code == 0, err
    db = sqlite3.connect(rundir / "games.sqlite")
    for fen, moves, termination in db.execute("SELECT opening_fen, moves, termination "
                                              "FROM games"):
        assert termination in ("max-moves", "checkmate", "stalemate", "repetition")
        board = chess.Board(fen, chess960=True)
        castled = 0
        for m in moves.split():
            castled += board.is_castling(chess.Move.from_uci(m))
            board.push_uci(m)
        assert castled
    for game in (1, 2):
        findings = reproduce(str(rundir), game)
        assert [f.kind for f in findings] == ["identical", "identical"], \
            [f.line() for f in findings]
