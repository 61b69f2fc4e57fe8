"""Engine drivers and single games: real Debian engines and misbehaving fake ones."""

import io
import sys

import chess
import chess.pgn
import pytest

from testing.engine import EngineConfig, make_engine
from testing.game import DrawAdjudication, GameSettings, ResignAdjudication, play_game
from testing.openings import STARTPOS, Opening, OpeningBook
from testing.pgn import game_pgn
from testing.timecontrol import TimeControl
from tests.wasp.helpers import Charge

from .conftest import EPD, FAKE, PGN


def fake(name, *extra, tc="10+0.1", margin=0):
    cfg = EngineConfig(
        cmd=sys.executable,
        name=name,
        args=[FAKE, *extra],
        tc=TimeControl.parse(tc),
        timemargin=margin,
    )
    e = make_engine(cfg)
    e.start()
    return e


@pytest.fixture
def quit_later():
    engines = []
    yield engines.append
    for e in engines:
        e.kill()


@pytest.mark.engines
def test_stockfish_against_fairymax(stockfish, fairymax, quit_later):
    tc = TimeControl.parse("1+0.01")
    sf = make_engine(EngineConfig(cmd=stockfish, name="Stockfish", tc=tc, timemargin=100))
    fm = make_engine(
        EngineConfig(cmd=fairymax, name="Fairy-Max", proto="xboard", tc=tc, timemargin=100)
    )
    for e in (sf, fm):
        quit_later(e)
        e.start()
    assert sf.id_name.startswith("Stockfish") and fm.id_name.startswith("Fairy-Max")
    # EPD opening (fairymax gets it through edit mode) and a PGN opening (moves).
    for opening, (white, black) in (
        (OpeningBook(EPD).get(0), (fm, sf)),
        (OpeningBook(PGN).get(1), (sf, fm)),
    ):
        with Charge() as game:
            rec = play_game(white, black, opening, GameSettings(maxmoves=60))
        assert rec.result in ("1-0", "0-1", "1/2-1/2")
        ends = ("checkmate", "stalemate", "repetition", "fifty-moves", "insufficient-material",
                "max-moves")
        # A loss on time is the runner's clock or protocol handling at fault, unless the
        # machine withheld the CPU during the game (the host's steal, other processes busy on
        # every core): the clocks are the wall's, and neither engine is under test.
        excused = rec.time_loss and game.withheld > 1.0
        assert rec.termination in ends or excused and rec.termination == "timeout", (
            rec.termination, rec.reason, game.wall, game.withheld)
        assert not rec.failed, rec.reason
        game = chess.pgn.read_game(io.StringIO(game_pgn(rec, time_control="1+0.01")))
        assert game.headers["White"] == white.name and game.headers["Result"] == rec.result
        assert game.headers["TimeControl"] == "1+0.01"
        assert len(list(game.mainline_moves())) == len(opening.moves) + rec.plies
        assert game.end().board().fen() == rec.final_fen
    sf.quit()
    fm.quit()


def test_deterministic_fake_game_and_pgn(quit_later):
    a, b = fake("greedy"), fake("random", "--style", "random")
    quit_later(a)
    quit_later(b)
    op = OpeningBook(PGN).get(0)
    r1 = play_game(a, b, op, GameSettings(maxmoves=50))
    r2 = play_game(a, b, op, GameSettings(maxmoves=50))
    assert [m.uci for m in r1.moves] == [m.uci for m in r2.moves]
    assert r1.result == r2.result
    pgn = game_pgn(r1, event="t", round_="3", time_control="10+0.1")
    game = chess.pgn.read_game(io.StringIO(pgn))
    for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result", "PlyCount",
                "Termination", "TimeControl"):
        assert tag in game.headers
    nodes = list(game.mainline())
    assert nodes[0].comment == "book"
    # {score/depth time} comments on the engines' moves, the termination on the last one
    assert "/1 " in nodes[len(op.moves)].comment and nodes[-1].comment.endswith(r1.reason)


def test_checkmate_and_rules(quit_later):
    a, b = fake("a"), fake("b")
    quit_later(a)
    quit_later(b)
    # White mates in one (greedy finds it).
    op = Opening(index=0, fen="6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    rec = play_game(a, b, op)
    assert (rec.result, rec.termination, rec.reason) == ("1-0", "checkmate", "White mates")
    # Insufficient material from the start.
    rec = play_game(a, b, Opening(index=1, fen="8/8/4k3/8/8/4K3/8/8 w - - 0 1"))
    assert (rec.result, rec.termination) == ("1/2-1/2", "insufficient-material")
    # Fifty-move rule.
    op = Opening(index=2, fen="8/8/4k3/8/8/4K3/7R/8 w - - 99 80")
    rec = play_game(a, b, op)
    assert rec.result == "1/2-1/2" and rec.termination in ("fifty-moves", "insufficient-material")


def test_adjudication(quit_later):
    a, b = fake("a"), fake("b")
    quit_later(a)
    quit_later(b)
    draw = GameSettings(draw=DrawAdjudication(movenumber=0, movecount=2, score=0))
    rec = play_game(a, b, STARTPOS, draw)
    assert (rec.result, rec.termination, rec.plies) == ("1/2-1/2", "adjudication", 4)
    # Black is a queen down: scores -900 for black.
    op = Opening(index=3, fen="4k3/pppp4/8/8/8/8/PPPP4/3QK3 b - - 0 1")
    resign = GameSettings(resign=ResignAdjudication(movecount=1, score=500))
    rec = play_game(a, b, op, resign)
    assert (rec.result, rec.termination, rec.reason) == (
        "1-0", "adjudication", "White wins by adjudication")
    two = GameSettings(resign=ResignAdjudication(movecount=1, score=500, twosided=True))
    rec = play_game(a, b, op, two)
    assert rec.plies >= 2 and rec.result == "1-0" and rec.termination == "adjudication"


@pytest.mark.parametrize(
    "fail,termination,restart",
    [
        ("crash", "crash", True),
        ("hang", "stall", True),
        ("illegal", "illegal-move", False),
        ("stall", "timeout", False),
    ],
)
def test_failures_lose_the_game(quit_later, fail, termination, restart):
    # The good engine's clock is not under test (a long one: a stalled host does not flag
    # it); the bad one's is short, but its sound moves (instant) have seconds to spare. A
    # stall of 2.6 s oversteps its 2 s + 0.1 s margin and answers within the runner's 1 s
    # grace for `stop`: a loss on time (a longer one is a stalled connection).
    good = fake("good", tc="30+0", margin=100)
    bad = fake("bad", "--fail", fail, "--after", "3", "--delay", "2.6", tc="2+0", margin=100)
    quit_later(good)
    quit_later(bad)
    rec = play_game(good, bad, STARTPOS)
    assert rec.termination == termination
    assert rec.result == "1-0"
    assert rec.plies == 5  # black failed on its third move
    assert (rec.failed == ["black"]) == restart
    assert bad.broken == restart
    if fail == "stall":
        assert rec.time_loss
    # The good engine is unaffected and plays on.
    assert good.alive() and not good.broken


def test_startup_limit_is_per_engine():
    """An engine that compiles at start (2 s here) misses a short start-up limit with a clear
    error, and starts when its `startup=` allows for it."""
    from testing.process import EngineTimeout

    def cfg(startup):
        return EngineConfig(cmd=sys.executable, name="slow", args=[FAKE, "--slowready", "2"],
                            tc=TimeControl.parse("1+0"), startup=startup)

    e = make_engine(cfg(0.5))
    with pytest.raises(EngineTimeout,
                       match=r"slow: no `readyok` after `isready` within 0.5 s \(startup=0.5\)"):
        e.start()
    e.kill()
    e = make_engine(cfg(30))
    e.start()
    assert e.alive()
    e.kill()
    assert EngineConfig.from_dict(cfg(30).to_dict()).startup == 30
