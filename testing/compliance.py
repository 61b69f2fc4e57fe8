"""``wasp-match -compliance``: an engine's protocol handling checked step by step.

The steps cover fastchess's ``--compliance`` list and more: for UCI the
handshake, option declarations, ``isready`` (also during a search), positions
from ``startpos`` and ``fen`` with moves, ``go`` with every kind of limit,
``stop``, the syntax of every ``info`` line (pv and currmove legal) and the
legality of every ``bestmove``; for xboard the CECP v2 equivalents. Legality is
judged by python-chess. Each step passes or fails with the offending line.

For UCI, piped scripts (commands streamed without waiting for answers, as EPD harnesses
and shell one-liners send them) count ``bestmove`` against ``go``: many engines lose
answers there, so a shortfall is a warning, not a failure.
"""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass

import chess

from wasp.cliargs import is_number

from .engine import EngineConfig
from .process import kill_process
from .uci import parse_option
from .xboard import parse_features

GRACE = 2.0  # seconds past a limit before an answer counts as late
SEARCH_TIMEOUT = 30.0  # seconds for any bounded search to answer
FEN = "3r2k1/p5n1/1pq1p2p/2p3p1/2P1P1n1/1P1P2pP/PN1Q2K1/5R2 w - - 0 27"  # fastchess's
BLACK_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
INT_KEYS = {"depth", "seldepth", "time", "nodes", "multipv", "currmovenumber", "hashfull",
            "nps", "tbhits", "sbhits", "cpuload"}
MOVE_LIST_KEYS = {"pv", "refutation", "currline"}
INFO_KEYS = INT_KEYS | MOVE_LIST_KEYS | {"score", "currmove", "string", "wdl"}
OPTION_TYPES = {"check", "spin", "combo", "button", "string"}


class Failed(Exception):
    """A step failed: ``reason``, with the engine's offending ``line`` when there is one."""

    def __init__(self, reason: str, line: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line


class Gone(Failed):
    """The engine exited or closed its output: later steps cannot run."""


@dataclass
class Step:
    name: str
    status: str  # "pass", "fail", "warn" (passed with a warning) or "skip"
    reason: str = ""
    line: str | None = None


class Pipe:
    """The engine process: lines out with deadlines, stderr kept, everything logged."""

    def __init__(self, cfg: EngineConfig):
        env = dict(os.environ)
        env.update(cfg.env)
        try:
            self.proc = subprocess.Popen(
                cfg.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=cfg.dir or None, env=env, bufsize=0,
                start_new_session=True,
            )
        except OSError as e:
            raise Gone(f"cannot start {shlex.join(cfg.argv())}: {e}") from None
        self.stderr: list[str] = []
        self.transcript: list[str] = []
        self._buf = b""
        self._lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode(errors="replace").rstrip("\r\n"))

    def send(self, text: str) -> None:
        for ln in text.splitlines():
            self.transcript.append(f"> {ln}")
        try:
            self.proc.stdin.write(text.encode())
        except OSError:
            raise Gone(f"the engine closed its input (exit status {self.proc.poll()})") from None

    def readline(self, timeout: float) -> str | None:
        """The next line, or None when ``timeout`` seconds pass without one."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not self._lines:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self.proc.wait(2) if self.proc.poll() is None else self.proc.poll()
                raise Gone(f"the engine exited (status {code})")
            parts = (self._buf + chunk).split(b"\n")
            self._buf = parts.pop()
            self._lines.extend(p.decode(errors="replace").rstrip("\r") for p in parts)
        line = self._lines.pop(0)
        self.transcript.append(f"< {line}")
        return line

    def close(self) -> None:
        kill_process(self.proc)


def info_problem(line: str, board: chess.Board) -> str | None:
    """What is wrong with a UCI ``info`` line in ``board`` (None: nothing)."""
    tokens = line.split()
    if not tokens or tokens[0] != "info":
        return "not an info line"
    i, n = 1, len(tokens)
    while i < n:
        key = tokens[i]
        i += 1
        if key == "string":
            return None
        if key not in INFO_KEYS:
            return f"unknown token {key!r}"
        if key in INT_KEYS:
            if i >= n or not is_number(tokens[i], int):
                return f"{key} needs an integer, got {tokens[i] if i < n else 'nothing'!r}"
            i += 1
        elif key == "score":
            if i + 1 >= n or tokens[i] not in ("cp", "mate") or not is_number(tokens[i + 1], int):
                return "score needs cp N or mate N"
            i += 2
            if i < n and tokens[i] in ("lowerbound", "upperbound"):
                i += 1
        elif key == "wdl":
            if i + 2 >= n or not all(is_number(t, int) for t in tokens[i:i + 3]):
                return "wdl needs three integers"
            i += 3
        elif key == "currmove":
            if i >= n or _move_problem(board, tokens[i]):
                return f"currmove {tokens[i] if i < n else ''!r} is not a legal move"
            i += 1
        else:  # pv, refutation, currline: moves up to the next keyword
            if key == "currline" and i < n and tokens[i].isdigit():
                i += 1
            b = board.copy(stack=False)
            start = i
            while i < n and tokens[i] not in INFO_KEYS:
                bad = _move_problem(b, tokens[i])
                if bad:
                    return f"{key} move {tokens[i]!r} is {bad} after {' '.join(tokens[start:i])}"
                b.push_uci(tokens[i])
                i += 1
            if key == "pv" and i == start:
                return "pv without moves"
    return None


def _move_problem(board: chess.Board, text: str) -> str | None:
    try:
        move = chess.Move.from_uci(text)
    except ValueError:
        return "not a move in coordinate notation"
    if move not in board.legal_moves:
        return "not legal"
    return None


def option_problem(line: str) -> str | None:
    """What is wrong with a UCI ``option name ... type ...`` declaration (None: nothing)."""
    option = parse_option(line)
    if " type " not in line:
        return "no type"
    if not option.name:
        return "no name"
    if option.type not in OPTION_TYPES:
        return f"unknown type {option.type!r}"
    if option.type == "check" and option.default not in ("true", "false"):
        return f"check default {option.default!r} (true or false)"
    if option.type == "spin":
        values = [option.default, option.min, option.max]
        if not all(v is not None and is_number(v, int) for v in values):
            return "spin needs integer default, min and max"
        if not int(values[1]) <= int(values[0]) <= int(values[2]):
            return f"spin default {values[0]} outside min {values[1]} .. max {values[2]}"
    if option.type == "combo" and option.default not in option.vars:
        return f"combo default {option.default!r} is not one of its vars"
    return None


class Checker:
    """Runs the steps in order; after the engine is gone the rest are skipped."""

    def __init__(self, cfg: EngineConfig, out=None):
        self.cfg = cfg
        self.out = out
        self.steps: list[Step] = []
        self.pipe: Pipe | None = None
        self.gone: str | None = None

    def run(self) -> list[Step]:
        """Every step in order; the engine is closed whatever happens."""
        try:
            self._steps()
        finally:
            if self.pipe is not None:
                self.pipe.close()
        return self.steps

    def _steps(self) -> None:
        raise NotImplementedError

    def step(self, name: str, action) -> bool:
        if self.gone is not None:
            st = Step(name, "skip", f"not run: {self.gone}")
        else:
            try:
                res = action()
                if isinstance(res, str) and res.startswith("skip:"):
                    st = Step(name, "skip", res[5:].strip())
                elif isinstance(res, str) and res.startswith("warn:"):
                    st = Step(name, "warn", res[5:].strip())
                else:
                    st = Step(name, "pass", res or "")
            except Failed as e:
                st = Step(name, "fail", e.reason, e.line)
                if isinstance(e, Gone):
                    self.gone = e.reason
        self.steps.append(st)
        if self.out is not None:
            self.out.write(format_step(len(self.steps), st) + "\n")
            self.out.flush()
        return st.status in ("pass", "warn")

    def quit(self) -> str:
        """Both protocols end with `quit`: the engine must exit within the grace time."""
        self.pipe.send("quit\n")
        try:
            code = self.pipe.proc.wait(GRACE + 1)
        except subprocess.TimeoutExpired:
            raise Failed(f"still running {GRACE + 1:g} s after `quit`") from None
        return f"exit status {code}"

    def expect(self, want, timeout: float, what: str) -> str:
        """Read until a line ``want(line)`` accepts; Failed with ``what`` on a timeout."""
        while True:
            line = self.pipe.readline(timeout)
            if line is None:
                raise Failed(f"no {what} within {timeout:g} s")
            if want(line):
                return line


# -- UCI -------------------------------------------------------------------------------------


class UciChecker(Checker):
    def _steps(self) -> None:
        self.id_name = self.id_author = None
        self.options: list[str] = []
        self.step("start the engine, `uci` answered by `uciok`", self.handshake)
        self.step("`id name`", lambda: self._need(self.id_name, "id name"))
        self.step("`id author`", lambda: self._need(self.id_author, "id author"))
        self.step("option declarations parse (type, default, min/max, var)", self.options_ok)
        self.step("setoption (each option to its default, and given ones), `isready`",
                  self.setoptions)
        self.step("`isready` answered by `readyok`", self.isready)
        self.step("`ucinewgame`, `isready`", lambda: self.isready("ucinewgame\n"))
        self.step("`position startpos`, `isready`",
                  lambda: self.isready("position startpos\n"))
        self.step("`position fen`, `isready`", lambda: self.isready(f"position fen {FEN}\n"))
        for fen, moves, go in (
            (FEN, [], "go wtime 100"),  # fastchess: only the mover's clock
            (BLACK_FEN, [], "go btime 100"),
            (FEN, [], "go wtime 1000 btime 1000"),
            (None, ["e2e4", "e7e5"], "go wtime 1000 winc 100 btime 1000 binc 100"),
            (BLACK_FEN, ["d7d5", "e4d5"], "go btime 1000 binc 100 wtime 1000 winc 100"),
            (None, [], "go wtime 2000 btime 2000 movestogo 5"),
            (FEN, ["d2d1"], "go depth 3"),
            (None, ["g1f3"], "go nodes 5000"),
            (FEN, [], "go movetime 200"),
        ):
            where = "startpos" if fen is None else ("fen" if fen == FEN else "black fen")
            label = f"`{go}` from {where}" + (f" moves {' '.join(moves)}" if moves else "")
            self.step(label + ": legal bestmove, valid info lines",
                      lambda f=fen, m=moves, g=go: self.search(f, m, g))
        self.step("`go infinite`: no bestmove before `stop`, `isready` answered while "
                  "searching", self.infinite)
        self.step("`stop` answered by a legal bestmove", self.stopped)
        self.step("a game: `ucinewgame`, six plies from startpos with moves", self.game)
        self.step("`quit` ends the process", self.quit)
        for name, script in PIPED_SCRIPTS:
            self.step(f"piped script, {name}: one bestmove per go",
                      lambda s=script: self.piped(s))

    @staticmethod
    def _need(value, what: str) -> str:
        if value is None:
            raise Failed(f"the engine sent no `{what}` before `uciok`")
        return value

    def handshake(self) -> str:
        self.pipe = Pipe(self.cfg)
        self.pipe.send("uci\n")
        deadline = time.monotonic() + self.cfg.startup
        while True:
            line = self.pipe.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise Gone(f"no `uciok` within startup={self.cfg.startup:g} s (an xboard "
                           "engine? try proto=xboard; one that compiles at start? raise "
                           "startup=)")
            if line == "uciok" or line.strip() == "uciok":
                return self.id_name or ""
            if line.startswith("id name "):
                self.id_name = line[8:].strip()
            elif line.startswith("id author "):
                self.id_author = line[10:].strip()
            elif line.startswith("option name "):
                self.options.append(line)

    def options_ok(self) -> str:
        for line in self.options:
            bad = option_problem(line)
            if bad:
                raise Failed(bad, line)
        return f"{len(self.options)} options"

    def setoptions(self) -> str:
        out = []
        for option in map(parse_option, self.options):
            if option.type in ("check", "spin", "combo") and option.default is not None:
                out.append(f"setoption name {option.name} value {option.default}\n")
        out += [f"setoption name {k} value {v}\n" for k, v in self.cfg.options.items()]
        self.isready("".join(out))
        return f"{len(out)} options set"

    def isready(self, before: str = "") -> str:
        self.pipe.send(before + "isready\n")
        self.expect(lambda ln: ln.strip() == "readyok", self.cfg.startup, "`readyok`")
        return ""

    @staticmethod
    def _board(fen: str | None, moves: list[str]) -> chess.Board:
        board = chess.Board(fen) if fen else chess.Board()
        for m in moves:
            board.push_uci(m)
        return board

    def _position(self, fen: str | None, moves: list[str]) -> str:
        pos = "position startpos" if fen is None else f"position fen {fen}"
        return pos + (" moves " + " ".join(moves) if moves else "") + "\n"

    def _drain_to_bestmove(self, timeout: float) -> None:
        """Read and drop the rest of a search's output, up to its bestmove (`timeout` seconds
        in all: an engine that never ends its search does not hold the checker)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.pipe.readline(max(0.0, deadline - time.monotonic()))
            if line is None or line.startswith("bestmove"):
                return

    def read_bestmove(self, board: chess.Board, timeout: float) -> tuple[str, list[str]]:
        """The bestmove (checked) and the info lines (each checked) of one search, within
        `timeout` seconds in all (an engine that ignores a limit and keeps sending info lines
        fails here, then gets a `stop`)."""
        infos = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.pipe.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                self.pipe.send("stop\n")  # so the next step reads its own answer
                self._drain_to_bestmove(GRACE)
                raise Failed(f"no bestmove within {timeout:g} s")
            if line.startswith("info"):
                bad = info_problem(line, board)
                if bad:
                    self._drain_to_bestmove(timeout)  # so the next step reads its own answer
                    raise Failed(f"malformed info line: {bad}", line)
                infos.append(line)
            elif line.startswith("bestmove"):
                tokens = line.split()
                if len(tokens) < 2:
                    raise Failed("bestmove without a move", line)
                bad = _move_problem(board, tokens[1])
                if bad:
                    raise Failed(f"bestmove {tokens[1]} is {bad} in {board.fen()}", line)
                if len(tokens) >= 4 and tokens[2] == "ponder":
                    after = board.copy(stack=False)
                    after.push_uci(tokens[1])
                    bad = _move_problem(after, tokens[3])
                    if bad:
                        raise Failed(f"ponder move {tokens[3]} is {bad}", line)
                elif len(tokens) not in (2, 4):
                    raise Failed("bestmove line should be `bestmove M [ponder P]`", line)
                return tokens[1], infos

    def search(self, fen, moves, go, tries: int = 2) -> str:
        board = self._board(fen, moves)
        for attempt in range(tries):
            self.pipe.send(self._position(fen, moves) + go + "\n")
            t0 = time.monotonic()
            move, infos = self.read_bestmove(board, SEARCH_TIMEOUT)
            elapsed = time.monotonic() - t0
            # A 100 ms clock on a loaded machine can leave no time for one iteration: a
            # missing report fails only when the second search lacks it too.
            if any(" score " in ln for ln in infos):
                break
            if attempt == tries - 1:
                if not infos:
                    raise Failed(f"no info line before bestmove (in {tries} searches)")
                raise Failed("no info line with a score before bestmove", infos[-1])
        if go.startswith("go depth"):
            limit = int(go.split()[2])
            for ln in infos:
                tok = ln.split()
                if "depth" in tok and int(tok[tok.index("depth") + 1]) > limit:
                    raise Failed(f"searched past depth {limit}", ln)
        if go.startswith("go movetime"):
            limit = int(go.split()[2]) / 1000.0
            if elapsed > limit + GRACE:
                raise Failed(f"bestmove after {elapsed * 1000:.0f} ms for movetime "
                             f"{limit * 1000:.0f}")
        again = " (second search: the first sent no score)" if attempt else ""
        return f"bestmove {move} after {elapsed * 1000:.0f} ms{again}"

    def infinite(self) -> str:
        board = chess.Board()
        self.pipe.send("position startpos\ngo infinite\n")
        time.sleep(0.3)
        self.pipe.send("isready\n")
        seen = []
        while True:
            line = self.pipe.readline(self.cfg.startup)
            if line is None:
                self.pipe.send("stop\n")
                raise Failed("no `readyok` to `isready` during `go infinite`")
            if line.startswith("bestmove"):
                raise Failed("bestmove during `go infinite` before `stop`", line)
            if line.startswith("info"):
                bad = info_problem(line, board)
                if bad:
                    raise Failed(f"malformed info line: {bad}", line)
                seen.append(line)
            if line.strip() == "readyok":
                break
        deadline = time.monotonic() + 0.5
        while True:  # still searching half a second later
            line = self.pipe.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                return ""
            if line.startswith("bestmove"):
                raise Failed("bestmove during `go infinite` before `stop`", line)

    def stopped(self) -> str:
        if self.steps and self.steps[-1].status != "pass":
            # make sure a search runs, whatever happened in the previous step
            self.pipe.send("position startpos\ngo infinite\n")
            time.sleep(0.3)
        self.pipe.send("stop\n")
        t0 = time.monotonic()
        try:
            move, _ = self.read_bestmove(chess.Board(), GRACE)
        except Failed as e:
            if e.line is None:
                raise Failed(f"ignores stop: no bestmove within {GRACE:g} s of `stop`") from None
            raise
        return f"bestmove {move} {1000 * (time.monotonic() - t0):.0f} ms after stop"

    def game(self) -> str:
        self.isready("ucinewgame\n")
        moves: list[str] = []
        clock = 3000
        for _ in range(6):
            board = self._board(None, moves)
            self.pipe.send(self._position(None, moves) + f"go wtime {clock} btime {clock}\n")
            move, _ = self.read_bestmove(board, SEARCH_TIMEOUT)
            moves.append(move)
        return " ".join(moves)

    def piped(self, script: list[str]) -> str:
        """Send `script` in one write to a fresh engine process (input closed after it
        unless it ends with `quit`); count its bestmoves against its go commands, in order,
        each legal in the position of its go. Fewer answers are a warning."""
        boards, board = [], chess.Board()
        for line in script:
            words = line.split()
            if words[0] == "position":
                board = self._script_board(words)
            elif words[0] == "go":
                boards.append(board.copy())
        if self.pipe is not None:
            self.pipe.close()
        self.pipe = pipe = Pipe(self.cfg)
        pipe.send("uci\nisready\n")
        self.expect(lambda ln: ln.strip() == "readyok", self.cfg.startup, "`readyok`")
        pipe.send("".join(line + "\n" for line in script))
        if script[-1] != "quit":
            pipe.proc.stdin.close()
        answers, deadline = [], time.monotonic() + SEARCH_TIMEOUT
        try:
            while len(answers) < len(boards) and time.monotonic() < deadline:
                line = pipe.readline(max(0.0, deadline - time.monotonic()))
                if line is not None and line.startswith("bestmove"):
                    answers.append(line)
        except Gone:
            pass  # the engine ended: the count below says what it answered
        for i, answer in enumerate(answers):
            words = answer.split()
            move = words[1] if len(words) > 1 else ""
            # in order when every go was answered; else an answer may belong to any go
            candidates = [boards[i]] if len(answers) == len(boards) else boards
            if all(_move_problem(board, move) for board in candidates):
                raise Failed(f"bestmove {move!r} is not legal in {candidates[0].fen()} (the "
                             f"position of the go it answers, in order)", answer)
        if len(answers) < len(boards):
            return f"warn: {len(answers)} bestmove for {len(boards)} go"
        return f"{len(answers)} bestmove for {len(boards)} go"

    @staticmethod
    def _script_board(words: list[str]) -> chess.Board:
        moves = words[words.index("moves") + 1:] if "moves" in words else []
        if words[1] == "fen":
            end = words.index("moves") if "moves" in words else len(words)
            board = chess.Board(" ".join(words[2:end]))
        else:
            board = chess.Board()
        for move in moves:
            board.push_uci(move)
        return board


# Scripts a user pipes into an engine without waiting for its answers (issue: engines that
# cancel a search when the next command arrives, or exit at the end of input before it
# reports). Depth limits keep them short for any engine.
PIPED_SCRIPTS = (
    ("`quit` during a search", ["position startpos", "go depth 30", "quit"]),
    ("`ucinewgame` during a search, then go",
     ["position startpos", "go depth 9", "ucinewgame", "position startpos moves e2e4",
      "go depth 3"]),
    ("`position` during a search, then go",
     ["position startpos", "go depth 9", f"position fen {FEN}", "go depth 3"]),
    ("`setoption` during a search, then go",
     ["position startpos", "go depth 9", "setoption name Hash value 8",
      "position startpos moves d2d4", "go depth 3"]),
    ("`go infinite` then `stop`", ["position startpos", "go infinite", "stop"]),
    ("twenty `ucinewgame`, `position`, `go depth 2`",
     ["ucinewgame", "position startpos", "go depth 2"] * 20),
)


# -- xboard (CECP v2) ------------------------------------------------------------------------


class XboardChecker(Checker):
    def _steps(self) -> None:
        self.features: dict[str, str] = {}
        self.ping_n = 0
        self.step("start the engine, `xboard` + `protover 2` answered by "
                  "`feature ... done=1`", self.handshake)
        self.step("`ping` answered by `pong`", self.ping)
        self.step("`new`, `force`, options", self.new)
        self.step("`force`, a move, `go`: engine plays black, thinking output valid",
                  self.plays_black)
        self.step("engine answers the opponent's move when not in force mode", self.reply)
        self.step("`setboard` FEN, `go`: legal move", self.setboard)
        self.step("`st 1`: a move within a second (plus grace)", self.st)
        self.step("`sd 3`: no thinking output past depth 3", self.sd)
        self.step("`level 40 0:30 0` with `time`/`otim`: a legal move", self.level)
        self.step("`?` during `st 5`: a move now (or, as CECP allows, by the limit)",
                  self.move_now)
        self.step("an illegal move from the GUI answered by `Illegal move`", self.illegal)
        self.step("`result`, then `new` and `ping`", self.result)
        self.step("`quit` ends the process", self.quit)

    def handshake(self) -> str:
        self.pipe = Pipe(self.cfg)
        self.pipe.send("xboard\nprotover 2\n")
        timeout = 2.0  # a protocol-1 engine never sends features
        deadline = time.monotonic() + timeout
        while True:
            line = self.pipe.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                if not self.features:
                    raise Gone(f"no `feature` line within {timeout:g} s of `protover 2` "
                               "(a protocol-1 engine? a UCI engine: try proto=uci)")
                raise Failed("no `feature done=1`", None)
            if not line.startswith("feature "):
                continue
            replies = []
            for key, value in parse_features(line[8:]):
                if not key or " " in key:
                    raise Failed(f"malformed feature {key!r}", line)
                if key == "done":
                    if value == "0":
                        deadline = time.monotonic() + self.cfg.startup
                    elif value == "1":
                        deadline = -1.0
                    continue
                self.features[key] = value
                ok = key != "san" or value == "0"
                replies.append(f"{'accepted' if ok else 'rejected'} {key}\n")
            if replies:
                self.pipe.send("".join(replies))
            if deadline < 0:
                return self.features.get("myname", "")

    def sync(self) -> None:
        if self.features.get("ping") == "1":
            self.ping()

    def ping(self) -> str:
        if self.features.get("ping") != "1":
            return "skip: the engine has no feature ping=1"
        self.ping_n += 1
        self.pipe.send(f"ping {self.ping_n}\n")
        want = f"pong {self.ping_n}"
        self.expect(lambda ln: ln.strip() == want, self.cfg.startup, f"`{want}`")
        return ""

    def mv(self, move: str) -> str:
        return f"usermove {move}\n" if self.features.get("usermove") == "1" else f"{move}\n"

    def new(self) -> str:
        self.pipe.send("new\nforce\npost\neasy\n"
                       + "".join(f"option {k}={v}\n" for k, v in self.cfg.options.items()))
        self.sync()
        return ""

    def _drain_to_move(self, timeout: float) -> None:
        while True:
            line = self.pipe.readline(timeout)
            if line is None or line.strip().startswith(("move ", "resign", "Illegal", "Error")):
                return

    def read_move(self, board: chess.Board, timeout: float, max_depth: int | None = None):
        """The engine's move (checked) after checking its thinking output."""
        while True:
            line = self.pipe.readline(timeout)
            if line is None:
                raise Failed(f"no `move` within {timeout:g} s")
            s = line.strip()
            if s[:1].isdigit():
                tok = s.split()
                problem = None
                if len(tok) < 4 or not all(is_number(t.rstrip(".&"), int) for t in tok[:4]):
                    problem = "thinking output should be `ply score time nodes pv`"
                elif max_depth is not None and int(tok[0].rstrip(".&")) > max_depth:
                    problem = f"thinking past depth {max_depth}"
                if problem:  # read on to this search's move: the next step reads its own
                    self._drain_to_move(timeout)
                    raise Failed(problem, line)
            elif s.startswith("move "):
                move = s.split()[1]
                bad = _move_problem(board, move)
                if bad:
                    raise Failed(f"move {move} is {bad} in {board.fen()}", line)
                board.push_uci(move)
                return move
            elif s.startswith(("Illegal move", "Error")):
                raise Failed("the engine refused the game's input", line)
            elif s.startswith("resign") or s.startswith(("1-0", "0-1", "1/2-1/2")):
                raise Failed("the engine ended the game instead of moving", line)

    def plays_black(self) -> str:
        self.board = chess.Board()
        self.board.push_uci("e2e4")
        self.pipe.send("new\nforce\npost\n" + self.mv("e2e4") + "st 1\ngo\n")
        return self.read_move(self.board, SEARCH_TIMEOUT)

    def reply(self) -> str:
        if not hasattr(self, "board") or self.board.turn != chess.WHITE:
            return "skip: the previous step did not leave a game in progress"
        ours = sorted(m.uci() for m in self.board.legal_moves)[0]
        self.board.push_uci(ours)
        self.pipe.send(self.mv(ours))
        move = self.read_move(self.board, SEARCH_TIMEOUT)
        self.pipe.send("force\n")
        self.sync()
        return f"{ours} answered by {move}"

    def setboard(self) -> str:
        if self.features.get("setboard") != "1":
            return "skip: the engine has no feature setboard=1"
        self.pipe.send(f"new\nforce\nsetboard {FEN}\nst 1\ngo\n")
        return self.read_move(chess.Board(FEN), SEARCH_TIMEOUT)

    def st(self) -> str:
        self.pipe.send("new\nforce\nst 1\ngo\n")
        t0 = time.monotonic()
        move = self.read_move(chess.Board(), 1 + GRACE + 3)
        elapsed = time.monotonic() - t0
        if elapsed > 1 + GRACE:
            raise Failed(f"move after {elapsed:.1f} s with `st 1`")
        return f"{move} after {elapsed * 1000:.0f} ms"

    def sd(self) -> str:
        self.pipe.send("new\nforce\nst 30\nsd 3\ngo\n")
        return self.read_move(chess.Board(), SEARCH_TIMEOUT, max_depth=3)

    def level(self) -> str:
        self.pipe.send("new\nforce\nsd 64\nlevel 40 0:30 0\ntime 3000\notim 3000\ngo\n")
        return self.read_move(chess.Board(), SEARCH_TIMEOUT)

    def move_now(self) -> str:
        self.pipe.send("new\nforce\nst 5\ngo\n")
        time.sleep(0.5)
        self.pipe.send("?\n")
        t0 = time.monotonic()
        try:
            move = self.read_move(chess.Board(), GRACE)
        except Failed as e:
            if e.line is not None:
                raise
            # CECP v2 allows an engine to ignore `?`: it must still move by its `st` limit
            move = self.read_move(chess.Board(), 5 + GRACE)
            return (f"{move} after {1000 * (time.monotonic() - t0 + 0.5):.0f} ms: `?` ignored, "
                    f"as CECP v2 allows")
        return f"{move} {1000 * (time.monotonic() - t0):.0f} ms after `?`"

    def illegal(self) -> str:
        self.pipe.send("new\nforce\n")
        self.sync()  # earlier output drained
        self.pipe.send(self.mv("e2e5"))
        line = self.expect(lambda ln: ln.startswith(("Illegal move", "Error")), GRACE,
                           "`Illegal move` for e2e5")
        if not line.startswith("Illegal move"):
            raise Failed("an illegal move should be answered by `Illegal move (reason): MOVE`",
                         line)
        self.sync()
        return line

    def result(self) -> str:
        self.pipe.send("new\n" + self.mv("e2e4") + "force\nresult 1-0 {White mates}\nnew\n")
        if self.features.get("ping") == "1":
            self.ping()
        elif self.pipe.proc.poll() is not None:
            raise Gone(f"the engine exited (status {self.pipe.proc.poll()})")
        return ""


# -- report ----------------------------------------------------------------------------------


def format_step(number: int, st: Step) -> str:
    mark = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "skip": "SKIP"}[st.status]
    text = f"{mark} step {number:2d}: {st.name}"
    if st.reason:
        text += f" -- {st.reason}"
    if st.line is not None:
        text += f"\n       offending line: {st.line!r}"
    return text


def check(cfg: EngineConfig, out=None) -> tuple[list[Step], Checker]:
    """Run every step against the engine of ``cfg`` (``cfg.proto`` picks the protocol)."""
    checker = (UciChecker if cfg.proto == "uci" else XboardChecker)(cfg, out)
    return checker.run(), checker


def main(cfg: EngineConfig, out, err) -> int:
    """``wasp-match -compliance``: print the steps; 0 when every step passed, else 1."""
    out.write(f"Compliance of {shlex.join(cfg.argv())} ({cfg.proto}):\n")
    steps, checker = check(cfg, out)
    failed = [s for s in steps if s.status == "fail"]
    skipped = [s for s in steps if s.status == "skip"]
    warned = [s for s in steps if s.status == "warn"]
    passed = len(steps) - len(failed) - len(skipped) - len(warned)
    out.write(f"{passed} passed, {len(failed)} failed, {len(skipped)} skipped, "
              f"{len(warned)} warnings\n")
    if failed:
        pipe = checker.pipe
        if pipe is not None and pipe.stderr:
            err.write("The engine's stderr (last lines):\n")
            err.writelines(f"  {ln}\n" for ln in pipe.stderr[-20:])
        err.write(f"Not compliant: {failed[0].name}: {failed[0].reason}\n")
        return 1
    if warned:
        out.write(f"The engine passed every compliance check, with {len(warned)} warnings "
                  f"(WARN lines above).\n")
    else:
        out.write("The engine passed every compliance check.\n")
    return 0
