"""The xboard protocol: scripted sessions, bad input, and whole games under python-chess's
xboard driver against Debian's fairymax."""

import os
import shutil
import subprocess
import sys
import time

import chess
import chess.engine
import pytest

from tests.conftest import ROOT
from tests.wasp.helpers import Charge, Output

WASP_XBOARD = [sys.executable, "-m", "wasp.cli"]


def _find(name):
    return shutil.which(name) or (f"/usr/games/{name}"
                                  if os.path.exists(f"/usr/games/{name}") else None)


class Session:
    """Our engine in xboard mode, read line by line."""

    def __init__(self):
        self.proc = subprocess.Popen(WASP_XBOARD, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1, cwd=ROOT)
        self.send("xboard")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix, timeout=120):
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            seen.append(line.rstrip())
            if line.startswith(prefix):
                return line.rstrip()
        raise AssertionError(f"no line starting {prefix!r}; got {seen[-10:]}")

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=30)


@pytest.fixture
def session():
    s = Session()
    yield s
    if s.proc.poll() is None:
        s.close()


def test_handshake_ping_and_errors(session):
    session.send("protover 2")
    feature = session.expect("feature ")
    for f in ("ping=1", "setboard=1", "usermove=1", "time=1", "sigint=0", "sigterm=0",
              "myname="):
        assert f in feature
    session.expect("feature done=1")
    session.send("frobnicate 3")
    session.expect("Error (unknown command): frobnicate 3")
    session.send("setboard not/a/fen w - - 0 1")
    session.expect("Error (invalid FEN)")
    session.send("level x y z")
    session.expect("Error (")
    session.send("usermove e2e5")
    session.expect("Illegal move: e2e5")
    session.send("ping 7")
    session.expect("pong 7")


def test_plays_a_move_and_answers_user_moves(session):
    session.send("protover 2")
    session.expect("feature done=1")
    for line in ("new", "post", "st 0.3", "usermove e2e4"):
        session.send(line)
    assert session.expect("move ").split()[1] in {m.uci() for m in chess.Board(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").legal_moves}
    session.send("force")
    session.send("setboard 6k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1")
    session.send("sd 3")
    session.send("go")
    assert session.expect("move ") == "move d1d8"
    session.expect("1-0 {checkmate")


def test_analyze_undo_remove_and_memory(session):
    session.send("protover 2")
    session.expect("feature done=1")
    for line in ("new", "force", "usermove e2e4", "usermove e7e5", "memory 8", "analyze"):
        session.send(line)
    info = session.expect("1 ")  # depth-1 thinking line: ply score time nodes pv
    assert len(info.split()) >= 5
    session.send("undo")
    session.send("remove")  # back to the start position
    session.send("exit")
    session.send("remove")
    session.expect("Error (no moves to take back)")
    session.send("ping 2")
    session.expect("pong 2")


class Fairymax:
    """Fairy-Max through the match runner's xboard driver: it lacks `setboard`, which
    python-chess's xboard driver insists on."""

    def __init__(self, path, base, inc):
        from testing.engine import EngineConfig, make_engine
        from testing.timecontrol import TimeControl

        self.engine = make_engine(EngineConfig(cmd=path, proto="xboard",
                                               tc=TimeControl(base=base, inc=inc)))
        self.engine.start()
        self.engine.new_game(None, white=False)

    def play(self, board, clocks, inc):
        from testing.driver import Limits

        result = self.engine.go(None, [m.uci() for m in board.move_stack],
                                Limits(wtime=clocks[chess.WHITE], btime=clocks[chess.BLACK],
                                       winc=inc, binc=inc, white=board.turn == chess.WHITE,
                                       timeout=clocks[board.turn] + 5))
        return chess.Move.from_uci(result.move)

    def quit(self):
        self.engine.quit()


def _play_game(ours, fairymax_path, ours_white, base=6.0, inc=0.1, max_plies=160):
    """One game: ours under python-chess's xboard driver, Fairy-Max under the runner's."""
    board = chess.Board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    theirs = Fairymax(fairymax_path, base, inc)
    try:
        while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
            # a move's charge: its wall time less what the machine withheld, never less than
            # the engine's own CPU time (helpers.Charge)
            mine = (board.turn == chess.WHITE) == ours_white
            pid = ours.transport.get_pid() if mine else theirs.engine.p.proc.pid
            with Charge([pid]) as charge:
                if mine:
                    limit = chess.engine.Limit(white_clock=clocks[chess.WHITE],
                                               black_clock=clocks[chess.BLACK], white_inc=inc,
                                               black_inc=inc)
                    move = ours.play(board, limit).move
                else:
                    move = theirs.play(board, clocks, inc)
            clocks[board.turn] += inc - charge.seconds
            if mine:
                assert clocks[board.turn] > 0, (
                    f"wasp lost on time: this move {charge.wall:.2f} s on the wall, "
                    f"{charge.cpu} s CPU, charged {charge.seconds:.2f} s")
            assert move in board.legal_moves, f"illegal move {move} in {board.fen()}"
            board.push(move)
    finally:
        theirs.quit()
    return board


@pytest.mark.engines
def test_whole_games_against_fairymax():
    fairymax = _find("fairymax")
    if fairymax is None:
        pytest.skip("fairymax is not installed (apt-get install fairymax)")
    ours = chess.engine.SimpleEngine.popen_xboard(WASP_XBOARD, cwd=ROOT, timeout=120)
    try:
        for ours_white in (True, False):
            board = _play_game(ours, fairymax, ours_white)
            assert board.ply() > 10
    finally:
        ours.quit()


@pytest.mark.parametrize("lag_ms", [0, 400])
def test_time_lost_outside_the_search_is_learnt_from_the_clocks(lag_ms):
    """As in UCI: a GUI charging 400 ms more per move than the engine thought shows in the
    next `time`; the engine keeps that lag in reserve."""
    from wasp.xboard import XboardEngine

    out = Output("move ")
    e = XboardEngine(out=out)
    for line in ("protover 2", "new", "level 0 1 0.1"):
        e.handle(line)
    board = chess.Board()
    clock = 60000.0  # the engine's (black's) clock in ms
    for _ in range(4):
        board.push(sorted(board.legal_moves, key=lambda m: m.uci())[0])
        e.handle(f"time {int(clock) // 10}")
        e.handle("otim 6000")
        out.seen.clear()
        t0 = time.monotonic()
        e.handle(f"usermove {board.peek().uci()}")
        assert out.seen.wait(60)
        clock -= (time.monotonic() - t0) * 1000 + lag_ms - 100
        board.push_uci(out.lines[-1].split()[1])
    if lag_ms:
        assert lag_ms * 0.8 <= e.engine.lag_ms <= lag_ms * 1.2 + 10
    else:
        assert e.engine.lag_ms < 50
    e.handle("quit")


# -- options of the engine layer ------------------------------------------------------------

ORIGINAL = ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt"


def _lines_until_move(session):
    """Every line the engine writes up to and including its `move`."""
    lines = []
    while True:
        line = session.expect("")
        lines.append(line)
        if line.startswith("move "):
            return lines


def _thinking(session, *setup):
    """(nodes of the engine's depth-6 thinking line, its move) as white after `setup`."""
    for line in ("new", *setup, "post", "sd 6", "go"):
        session.send(line)
    session.send("ping 1")
    lines = _lines_until_move(session)
    sixes = [ln.split() for ln in lines if ln.split()[:1] == ["6"]]
    return int(sixes[-1][3]), lines[-1]


def test_xboard_declares_the_options_and_they_change_what_it_plays_or_posts(session, tmp_path):
    from wasp.searchparams import PARAMS

    session.send("protover 2")
    features = ""
    while "done=1" not in features:
        features += session.expect("feature ")
    for p in PARAMS:
        assert f'option="{p.name} -spin {p.default} {p.lo} {p.hi}"' in features
    for name in ("EvalFile -file", "SearchFile -file", "MultiPV -spin", "OwnBook -check",
                 "NullMove -check 1"):
        assert f'option="{name}' in features
    assert 'option="EvalFile -file wasp-py-3.nnue"' in features
    base = _thinking(session)  # the default net
    hand_written = _thinking(session, "option EvalFile=")
    original = _thinking(session, f"option EvalFile={ORIGINAL}")
    assert len({base[0], hand_written[0], original[0]}) == 3
    assert _thinking(session, "option EvalFile=wasp-py-3.nnue") == base
    null_r = _thinking(session, "option NullMoveR=1")
    assert null_r[0] != base[0]
    session.send("option NullMoveR=3")
    session.send("option NullMoveR=42")
    assert "NullMoveR: 42 is outside its range" in session.expect("Error (")
    assert _thinking(session) == base


def test_variant_fischerandom_castles_as_o_o(session):
    session.send("protover 2")
    assert 'variants="normal,fischerandom"' in session.expect("feature ping=1")
    session.expect("feature done=1")
    for line in ("new", "variant fischerandom", "force",
                 "setboard 1k6/8/8/8/8/8/8/R4KR1 b GA - 0 1", "usermove b8a7", "sd 1",
                 "usermove O-O"):
        session.send(line)
    session.send("ping 7")
    session.expect("pong 7")
    session.send("setboard 1k6/8/8/8/8/8/8/R4KR1 w GA - 0 1")
    session.send("usermove f1g1")  # king takes rook: castling too
    session.send("setboard 7k/8/8/8/8/8/6PP/R3K3 w Q - 0 1")
    session.send("sd 2")
    session.send("go")
    move = session.expect("move ").split()[1]
    assert move in {m.uci() for m in chess.Board("7k/8/8/8/8/8/6PP/R3K3 w Q - 0 1",
                                                 chess960=True).legal_moves} | {"O-O-O"}
    session.send("variant shogi")
    session.expect("Error (unsupported variant)")


def test_bare_castling_without_usermove_is_played(session):
    """A GUI that never sent `usermove=1` back sends moves bare; in Chess960 castling comes as
    O-O / O-O-O, which must be played, not refused as an unknown command."""
    for line in ("new", "variant fischerandom", "force",
                 "setboard r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O", "0-0", "ping 4"):
        session.send(line)
    assert session.expect("") == "pong 4"  # no "Error (unknown command)" before it
    session.send("sd 1")
    session.send("go")
    move = session.expect("move ").split()[1]
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    board.push_san("O-O-O")
    board.push_san("O-O")
    legal = {m.uci() for m in board.legal_moves} | {board.san(m) for m in board.legal_moves}
    assert move in legal


def test_nps_with_st_searches_that_many_nodes_not_seconds(session):
    """CECP `nps N` with `st S`: time is counted in nodes, S * N a move (match runners ask
    for node-limited games so); a 30-second `st` then ends in a blink."""
    for line in ("new", "post", "st 30", "nps 2000", "go"):
        session.send(line)
    lines = _lines_until_move(session)
    nodes = [int(ln.split()[3]) for ln in lines if ln.split()[:1] and ln.split()[0].isdigit()]
    assert nodes and max(nodes) <= 60_000 * 1.2
    session.send("nps -1")
    assert "Error" in session.expect("Error")


def _piped(lines):
    done = subprocess.run(WASP_XBOARD, input="".join(line + "\n" for line in lines),
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [ln for ln in done.stdout.splitlines() if not ln.startswith("feature")]


def test_a_ping_while_thinking_is_answered_after_the_move():
    lines = _piped(["xboard", "protover 2", "new", "sd 7", "go", "ping 7", "ping 8"])
    move = next(i for i, ln in enumerate(lines) if ln.startswith("move "))
    assert lines[move + 1:move + 3] == ["pong 7", "pong 8"], lines
    assert chess.Move.from_uci(lines[move].split()[1]) in chess.Board().legal_moves


def test_end_of_input_while_thinking_still_plays_the_move():
    lines = _piped(["xboard", "protover 2", "new", "post", "sd 6", "usermove e2e4"])
    moves = [ln for ln in lines if ln.startswith("move ")]
    assert len(moves) == 1, lines
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(moves[0].split()[1]) in board.legal_moves
    assert any(ln.split()[0] == "6" for ln in lines if ln[:1].isdigit()), lines


def test_force_while_thinking_abandons_the_move_and_answers_the_ping():
    lines = _piped(["xboard", "protover 2", "new", "sd 30", "go", "force", "ping 3"])
    assert "pong 3" in lines and not any(ln.startswith("move ") for ln in lines), lines
