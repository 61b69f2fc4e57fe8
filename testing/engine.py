"""UCI and xboard engine processes, driven directly over pipes.

The drivers read the engine's stdout with ``select``/``os.read`` and keep
the hot path in bytes: a move costs one ``write`` and a few ``read`` calls.
"""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import chess

from .timecontrol import TimeControl

STARTUP_TIMEOUT = 15.0  # default seconds for `uciok` / xboard features / `readyok`
UNLIMITED_MOVE_TIMEOUT = 300.0  # for searches with no clock (nodes=, depth=)
STOP_GRACE = 1.0  # seconds an engine gets to answer `stop` after its deadline
HEAD_BYTES = 4096  # output kept from an engine's start, to explain a failed start
TRANSCRIPT_CAP = 32 << 20  # bytes of protocol text kept per game and engine (a flood is cut)
STDERR_CAP = 1 << 20  # bytes of stderr kept per game and engine (the last ones)

# what an xboard engine says to a `uci` it does not understand (Fairy-Max: `tellics say`)
_XBOARD_SIGNS = (b"tellics ", b"telluser ", b"feature ", b"Error (unknown command)",
                 b"Illegal move", b"Error (")
_UCI_SIGNS = (b"id name ", b"uciok", b"option name ")


def kill_process(proc: subprocess.Popen) -> None:
    """Kill an engine started in a process group of its own (the process alone when the group
    is gone) and reap it, waiting 5 s at most."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            try:
                proc.kill()
            except OSError:
                pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


class EngineError(Exception):
    """The engine failed; ``kind`` is "crash", "stall" or "timeout"."""

    kind = "crash"


class EngineCrashed(EngineError):
    kind = "crash"


class EngineTimeout(EngineError):
    kind = "timeout"


class EngineUnsupported(EngineCrashed):
    """The engine cannot play the run's variant (no UCI_Chess960, no xboard fischerandom)."""


@dataclass
class UciOption:
    """One ``option name NAME type TYPE [default D] [min A] [max B] [var V ...]`` line of a UCI
    engine, its values as written (None: not given)."""

    name: str
    type: str  # "" when the line has no type
    default: str | None = None
    min: str | None = None
    max: str | None = None
    vars: list[str] = field(default_factory=list)

    def bounds(self) -> tuple[float, float] | None:
        """(min, max) as numbers, or None when either is missing or not a number."""
        try:
            return float(self.min), float(self.max)
        except (TypeError, ValueError):
            return None


OPTION_KEYS = ("default", "min", "max", "var")


def parse_option(line: str) -> UciOption:
    """The fields of a UCI ``option name ...`` line (with or without ``option name ``): the name
    is the text before `` type ``; each key's value runs to the next key (the first of a
    repeated default/min/max counts; every var is kept)."""
    text = line.strip()
    if text.startswith("option name "):
        text = text[len("option name "):]
    name, has_type, rest = text.partition(" type ")
    words = rest.split()
    option = UciOption(name.strip(), words[0] if has_type and words else "")
    values: dict[str, list[str]] = {}
    key = None
    for word in words[1:]:
        if word in OPTION_KEYS:
            key = word
            values.setdefault(key, []).append("")
        elif key is not None:
            values[key][-1] = f"{values[key][-1]} {word}".strip()
    for key in ("default", "min", "max"):
        if key in values:
            setattr(option, key, values[key][0])
    option.vars = values.get("var", [])
    return option


@dataclass
class EngineConfig:
    """One engine as given by ``-engine``/``-each`` or a JSON config."""

    cmd: str
    name: str = ""
    proto: str = "uci"
    dir: str | None = None
    args: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    tc: TimeControl | None = None
    st: float | None = None
    nodes: int | None = None
    depth: int | None = None
    timemargin: int = 0  # milliseconds
    restart: bool = False
    env: dict[str, str] = field(default_factory=dict)
    # seconds an engine may take to answer `uci`/`isready` (or send its xboard features):
    # an engine that compiles on first start (numba, a JIT) on a loaded machine needs more
    startup: float = STARTUP_TIMEOUT

    def to_dict(self) -> dict:
        return {
            "cmd": self.cmd,
            "name": self.name,
            "proto": self.proto,
            "dir": self.dir,
            "args": list(self.args),
            "options": dict(self.options),
            "tc": str(self.tc) if self.tc else None,
            "st": self.st,
            "nodes": self.nodes,
            "depth": self.depth,
            "timemargin": self.timemargin,
            "restart": self.restart,
            "env": dict(self.env),
            "startup": self.startup,
        }

    @classmethod
    def from_dict(cls, d: dict) -> EngineConfig:
        d = dict(d)
        tc = d.pop("tc", None)
        cfg = cls(**d)
        cfg.tc = TimeControl.parse(tc) if isinstance(tc, str) else tc
        return cfg

    @property
    def margin(self) -> float:
        return self.timemargin / 1000.0

    def argv(self) -> list[str]:
        return [self.cmd, *self.args]


@dataclass
class SearchResult:
    move: str
    elapsed: float  # seconds from `go` to the move, measured by the runner
    score: int | None = None  # centipawns from the mover's view
    mate: int | None = None  # moves to mate (negative: being mated)
    depth: int | None = None
    ponder: str | None = None
    resign: bool = False
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    hashfull: int | None = None
    tbhits: int | None = None
    pv: str | None = None


@dataclass
class Limits:
    """What the mover gets for one search."""

    wtime: float | None = None  # seconds
    btime: float | None = None
    winc: float = 0.0
    binc: float = 0.0
    movestogo: int = 0
    movetime: float | None = None
    nodes: int | None = None
    depth: int | None = None
    timeout: float = UNLIMITED_MOVE_TIMEOUT  # seconds until the answer is late
    white: bool = True


class Logger:
    """Thread-safe engine I/O log for ``-log FILE``."""

    def __init__(self, path: str):
        self._f = open(path, "a", buffering=1, encoding="utf-8")
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def write(self, name: str, direction: str, text: str) -> None:
        stamp = time.monotonic() - self._t0
        with self._lock:
            for line in text.splitlines():
                self._f.write(f"{stamp:10.3f} {name} {direction} {line}\n")

    def close(self) -> None:
        self._f.close()


class Recording:
    """What one engine said and was told, and its stderr, since the last ``take``.

    The hot path appends ``(perf_counter, direction, bytes)`` per write and per chunk
    read; lines are split and stamped only when a game's record is taken.
    """

    def __init__(self):
        self.chunks: list[tuple[float, bytes, bytes]] = []
        self.size = 0
        self.cut = False
        self.stderr = None  # an unnamed temporary file the engine writes its stderr to
        self._err_pos = 0

    def add(self, t: float, direction: bytes, data: bytes) -> None:
        if self.size < TRANSCRIPT_CAP:
            self.chunks.append((t, direction, data))
            self.size += len(data)
        else:
            self.cut = True

    def take(self) -> tuple[bytes, bytes]:
        """(transcript, stderr) since the last take, as bytes; then start afresh.

        The transcript has one line per protocol line: ``SECONDS DIR TEXT`` with
        SECONDS from the first line (monotonic clock), DIR ``>`` (sent to the
        engine) or ``<`` (received from it).
        """
        out = []
        chunks, self.chunks, self.size = self.chunks, [], 0
        t0 = chunks[0][0] if chunks else 0.0
        partial = b""
        for t, d, data in chunks:
            stamp = b"%.6f %s " % (t - t0, d)
            if d == b"<":
                data = partial + data
                lines = data.split(b"\n")
                partial = lines.pop()
            elif data:
                lines = data.rstrip(b"\n").split(b"\n")
            else:
                continue
            out.extend(stamp + ln.rstrip(b"\r") for ln in lines)
        if partial:
            out.append(b"%.6f < " % (chunks[-1][0] - t0) + partial)
        if self.cut:
            out.append(b"# transcript cut at %d MB" % (TRANSCRIPT_CAP >> 20))
            self.cut = False
        text = b"\n".join(out) + b"\n" if out else b""
        return text, self._take_stderr()

    def _take_stderr(self) -> bytes:
        f = self.stderr
        if f is None:
            return b""
        try:
            end = os.fstat(f.fileno()).st_size
            start = self._err_pos
            cut = end - start > STDERR_CAP
            if cut:
                start = end - STDERR_CAP
            data = os.pread(f.fileno(), end - start, start) if end > start else b""
        except OSError:
            return b""
        self._err_pos = end
        if cut:
            data = b"[stderr cut: its last %d bytes follow]\n" % STDERR_CAP + data
        return data

    def close_stderr(self) -> None:
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None


class _Process:
    """An engine subprocess with a line reader on its stdout."""

    def __init__(self, cfg: EngineConfig, logger: Logger | None, rec: Recording | None = None):
        self.cfg = cfg
        self.logger = logger
        self.rec = rec
        err = subprocess.DEVNULL
        if rec is not None:
            rec.close_stderr()
            rec.stderr = tempfile.TemporaryFile(prefix="wasp-stderr-")
            rec._err_pos = 0
            err = rec.stderr
        env = dict(os.environ)
        env.update(cfg.env)
        cmd = cfg.cmd
        if cfg.dir and not os.path.isabs(cmd) and os.sep in cmd:
            cmd = os.path.join(cfg.dir, cmd)
        try:
            self.proc = subprocess.Popen(
                [cmd, *cfg.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=cfg.dir or None,
                env=env,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as e:
            raise EngineCrashed(f"cannot start {shlex.join(cfg.argv())}: {e}") from e
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._buf = b""
        self._lines: deque[bytes] = deque()
        self.last_read = 0.0  # perf_counter() when the last chunk arrived
        self.head = b""  # the first HEAD_BYTES of output: start failures look at it

    def send(self, text: str) -> None:
        data = text.encode()
        if self.rec is not None:
            self.rec.add(time.perf_counter(), b">", data)
        if self.logger:
            self.logger.write(self.cfg.name, ">", text)
        try:
            os.write(self._in, data)
        except (BrokenPipeError, OSError) as e:
            raise EngineCrashed(f"{self.cfg.name}: cannot write to engine: {e}") from e

    def _read(self, deadline: float | None) -> bytes | None:
        """The next bytes the engine wrote (recorded), or None when the wait woke with none;
        EngineTimeout past ``deadline`` (a perf_counter() value), EngineCrashed at its end."""
        if deadline is None:
            timeout = -1
        else:
            timeout = int((deadline - time.perf_counter()) * 1000.0 + 0.999)
            if timeout <= 0:
                raise EngineTimeout(f"{self.cfg.name}: no answer in time")
        if not self._poll.poll(timeout):
            return None
        chunk = os.read(self._out, 65536)
        self.last_read = time.perf_counter()
        if not chunk:
            raise EngineCrashed(f"{self.cfg.name}: engine closed its output (crashed?)")
        if self.rec is not None:
            self.rec.add(self.last_read, b"<", chunk)
        return chunk

    def readline(self, deadline: float | None) -> bytes:
        """Next line (bytes, no newline); ``deadline`` is a perf_counter() value."""
        lines = self._lines
        while not lines:
            chunk = self._read(deadline)
            if chunk is None:
                continue
            if len(self.head) < HEAD_BYTES:
                self.head += chunk[: HEAD_BYTES - len(self.head)]
            buf = self._buf + chunk
            parts = buf.split(b"\n")
            self._buf = parts.pop()
            for p in parts:
                if p.endswith(b"\r"):
                    p = p[:-1]
                lines.append(p)
            if self.logger:
                self.logger.write(self.cfg.name, "<", b"\n".join(parts).decode(errors="replace"))
        return lines.popleft()

    def read_until(self, prefix: bytes, deadline: float | None, keep: bytes):
        """Skip output up to the first line starting with ``prefix``.

        The hot path of a search: chunks are scanned with bytes methods, not
        split into lines. Returns ``(line, last)`` where ``last`` is the last
        skipped line containing ``keep`` (or None).
        """
        last = None
        lines = self._lines
        while lines:  # lines already split by readline()
            line = lines.popleft()
            if line.startswith(prefix):
                return line, last
            if keep in line:
                last = line
        data = self._buf
        self._buf = b""
        marker = b"\n" + prefix
        while True:
            # Complete lines are data[:end]; data[end:] is a partial line.
            end = data.rfind(b"\n") + 1
            if end:
                if data.startswith(prefix):
                    pos = 0
                else:
                    pos = data.find(marker, 0, end)
                    pos = pos + 1 if pos >= 0 else -1
                if pos >= 0 and data.find(b"\n", pos) >= 0:
                    stop = data.find(b"\n", pos)
                    line = data[pos:stop].rstrip(b"\r")
                    k = data.rfind(keep, 0, pos)
                    if k >= 0:
                        last = data[data.rfind(b"\n", 0, k) + 1 : data.find(b"\n", k)]
                    rest = data[stop + 1 :]
                    if rest:
                        parts = rest.split(b"\n")
                        self._buf = parts.pop()
                        lines.extend(p.rstrip(b"\r") for p in parts)
                    return line, last
                k = data.rfind(keep, 0, end)
                if k >= 0:
                    last = data[data.rfind(b"\n", 0, k) + 1 : data.find(b"\n", k)].rstrip(b"\r")
                data = data[end:]
            try:
                chunk = self._read(deadline)
            except EngineError:
                self._buf = data  # what was read stays for the next call
                raise
            if chunk is None:
                continue
            if self.logger:
                self.logger.write(self.cfg.name, "<", chunk.decode(errors="replace"))
            data += chunk

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, quit_cmd: str | None, wait: float = 1.0) -> None:
        if self.proc.poll() is None and quit_cmd:
            try:
                self.send(quit_cmd)
                self.proc.wait(wait)
            except (EngineError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        kill_process(self.proc)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


class Engine:
    """Common interface of the UCI and xboard drivers."""

    protocol = ""

    def __init__(self, cfg: EngineConfig, logger: Logger | None = None, ponder: bool = False,
                 chess960: bool = False):
        self.cfg = cfg
        self.logger = logger
        self.ponder_enabled = ponder
        self.chess960 = chess960  # -variant fischerandom: castling as king-takes-rook
        self.p: _Process | None = None
        self.id_name: str | None = None
        self.broken = False  # set after a crash or stall: restart before reuse
        self.recording = Recording()  # transcript and stderr, taken game by game

    @property
    def name(self) -> str:
        return self.cfg.name

    def start(self) -> None:
        """Start the process and the protocol; a failure says what to try (start_hint)."""
        self._awaiting = "an answer"
        try:
            self._start()
        except EngineError as e:
            head = self.p.head if self.p is not None else b""
            timeout = isinstance(e, EngineTimeout)
            text = str(e)
            if timeout:
                text = (f"{self.name}: no {self._awaiting} within {self.cfg.startup:g} s "
                        f"(startup={self.cfg.startup:g})")
            raise type(e)(text + start_hint(self.cfg, head, timeout)) from e

    def _start(self) -> None:
        raise NotImplementedError

    def new_game(self, start_fen: str | None, white: bool) -> None:
        raise NotImplementedError

    def set_options(self, options: dict[str, str]) -> None:
        """Set options between games, without a restart (a tuner changes them every game)."""
        raise NotImplementedError

    def go(self, start_fen: str | None, moves: list[str], limits: Limits) -> SearchResult:
        raise NotImplementedError

    def ponder(self, start_fen: str | None, moves: list[str], limits: Limits) -> None:
        """Start pondering on ``moves`` (the expected reply last); default: nothing."""

    def stop(self, grace: float = STOP_GRACE) -> bool:
        """After a timeout: ask for the move and drain it; False when there is no answer."""
        return False

    def end_game(self) -> None:
        """Called at the end of every game (stop pondering, etc.)."""

    def quit(self) -> None:
        if self.p is not None:
            self.p.close(self.quit_command())
            self.p = None
        self.recording.close_stderr()

    def quit_command(self) -> str:
        return "quit\n"

    def kill(self) -> None:
        if self.p is not None:
            self.p.kill()
            self.p = None
        self.recording.close_stderr()

    def restart(self) -> None:
        self.kill()
        self.broken = False
        self.start()

    def alive(self) -> bool:
        return self.p is not None and self.p.alive()

    def _spawn(self) -> _Process:
        self.p = _Process(self.cfg, self.logger, self.recording)
        return self.p

    def take_recording(self) -> tuple[bytes, bytes]:
        """(transcript, stderr) since the last call: the record of one game."""
        return self.recording.take()


def _int_after(tokens: list[bytes], key: bytes) -> int | None:
    try:
        return int(tokens[tokens.index(key) + 1])
    except (ValueError, IndexError):
        return None


_WARNED: set[tuple[str, str]] = set()


def _warn_once(engine: str, option: str, why: str) -> None:
    """One line on stderr per engine and option for this process (fastchess warns too)."""
    if (engine, option) not in _WARNED:
        _WARNED.add((engine, option))
        print(f"warning: {engine}: option {option!r}: {why}", file=sys.stderr, flush=True)


class UciEngine(Engine):
    protocol = "uci"

    def __init__(self, cfg, logger=None, ponder=False, chess960=False):
        super().__init__(cfg, logger, ponder, chess960)
        self.options: dict[str, UciOption] = {}  # by lower-case name
        self._pondering: list[str] | None = None
        self._ponder_limits: Limits | None = None

    def _start(self) -> None:
        p = self._spawn()
        p.send("uci\n")
        self._awaiting = "`uciok` after `uci`"
        deadline = time.perf_counter() + self.cfg.startup
        while True:
            line = p.readline(deadline)
            if line == b"uciok":
                break
            if line.startswith(b"id name "):
                self.id_name = line[8:].decode(errors="replace").strip()
            elif line.startswith(b"option name "):
                option = parse_option(line.decode(errors="replace"))
                self.options[option.name.lower()] = option
        out = []
        opts = dict(self.cfg.options)
        if self.ponder_enabled and "ponder" in self.options:
            opts.setdefault("Ponder", "true")
        if self.chess960:  # UCI's Chess960 mode: FENs with 960 castling, castling as e1h1
            if "uci_chess960" not in self.options:
                raise EngineUnsupported(f"{self.name}: the engine has no UCI_Chess960 option: "
                                        f"it cannot play -variant fischerandom")
            opts = {k: v for k, v in opts.items() if k.lower() != "uci_chess960"}
            opts["UCI_Chess960"] = "true"
        for k, v in opts.items():
            out.append(f"setoption name {k} value {v}\n")
            if k.lower() not in self.options and self.options:
                _warn_once(self.name, k, "the engine declares no such option (a typo?); "
                                         "sent anyway")
        p.send("".join(out))
        self._sync()

    def set_options(self, options: dict[str, str]) -> None:
        if options:
            self.p.send("".join(f"setoption name {k} value {v}\n" for k, v in options.items()))
            self._sync()

    def _sync(self) -> None:
        self.p.send("isready\n")
        self._awaiting = "`readyok` after `isready`"
        deadline = time.perf_counter() + self.cfg.startup
        while self.p.readline(deadline) != b"readyok":
            pass

    def new_game(self, start_fen, white) -> None:
        self._pondering = None
        self.p.send("ucinewgame\n")
        self._sync()

    @staticmethod
    def _position(start_fen: str | None, moves: list[str]) -> str:
        pos = "position startpos" if start_fen is None else f"position fen {start_fen}"
        if moves:
            pos += " moves " + " ".join(moves)
        return pos + "\n"

    @staticmethod
    def _go(limits: Limits, ponder: bool = False) -> str:
        parts = ["go ponder"] if ponder else ["go"]
        if limits.wtime is not None:
            parts.append(
                f"wtime {max(0, int(limits.wtime * 1000))} btime {max(0, int(limits.btime * 1000))}"
            )
            if limits.winc or limits.binc:
                parts.append(f"winc {int(limits.winc * 1000)} binc {int(limits.binc * 1000)}")
            if limits.movestogo:
                parts.append(f"movestogo {limits.movestogo}")
        if limits.movetime is not None:
            parts.append(f"movetime {int(limits.movetime * 1000)}")
        if limits.nodes is not None:
            parts.append(f"nodes {limits.nodes}")
        if limits.depth is not None:
            parts.append(f"depth {limits.depth}")
        if len(parts) == 1:
            parts.append("infinite")
        return " ".join(parts) + "\n"

    def go(self, start_fen, moves, limits) -> SearchResult:
        p = self.p
        if self._pondering is not None:
            if self._pondering == moves:
                self._pondering = None
                p.send("ponderhit\n")
                t0 = time.perf_counter()
                return self._read_bestmove(t0, limits.timeout)
            self._pondering = None
            p.send("stop\n")
            self._drain_bestmove(time.perf_counter() + max(limits.timeout, STOP_GRACE))
        p.send(self._position(start_fen, moves) + self._go(limits))
        t0 = time.perf_counter()  # the clock starts once `go` is in the engine's pipe
        return self._read_bestmove(t0, limits.timeout)

    def _read_bestmove(self, t0: float, timeout: float) -> SearchResult:
        p = self.p
        line, last_info = p.read_until(b"bestmove", t0 + timeout, b" score ")
        elapsed = p.last_read - t0
        tokens = line.split()
        if len(tokens) < 2:
            raise EngineCrashed(f"{self.name}: malformed bestmove line {line!r}")
        res = SearchResult(move=tokens[1].decode(errors="replace"), elapsed=elapsed)
        if len(tokens) >= 4 and tokens[2] == b"ponder":
            res.ponder = tokens[3].decode(errors="replace")
        if last_info is not None:
            info = last_info.split()
            res.depth = _int_after(info, b"depth")
            res.seldepth = _int_after(info, b"seldepth")
            res.nodes = _int_after(info, b"nodes")
            res.nps = _int_after(info, b"nps")
            res.hashfull = _int_after(info, b"hashfull")
            res.tbhits = _int_after(info, b"tbhits")
            if b"pv" in info:
                res.pv = b" ".join(info[info.index(b"pv") + 1 :]).decode(errors="replace")
            i = info.index(b"score")
            try:
                if info[i + 1] == b"cp":
                    res.score = int(info[i + 2])
                elif info[i + 1] == b"mate":
                    res.mate = int(info[i + 2])
            except (ValueError, IndexError):
                pass
        return res

    def _drain_bestmove(self, deadline: float) -> None:
        while not self.p.readline(deadline).startswith(b"bestmove"):
            pass

    def ponder(self, start_fen, moves, limits) -> None:
        if not self.ponder_enabled:
            return
        self.p.send(self._position(start_fen, moves) + self._go(limits, ponder=True))
        self._pondering = list(moves)

    def stop(self, grace: float = STOP_GRACE) -> bool:
        try:
            self.p.send("stop\n")
            self._drain_bestmove(time.perf_counter() + grace)
            return True
        except EngineError:
            return False

    def end_game(self) -> None:
        if self._pondering is not None and self.p is not None:
            self._pondering = None
            if not self.stop():
                self.broken = True


class XboardEngine(Engine):
    protocol = "xboard"

    def __init__(self, cfg, logger=None, ponder=False, chess960=False):
        super().__init__(cfg, logger, ponder, chess960)
        self.features: dict[str, str] = {}
        self._board: chess.Board | None = None  # Chess960: the game, to write castling O-O
        self._known: list[str] = []  # moves the engine has been told or made
        self._playing = False  # False: engine in force mode
        self._ping = 0

    def _start(self) -> None:
        p = self._spawn()
        p.send("xboard\nprotover 2\n")
        self._awaiting = "`feature ... done=1` after `protover 2`"
        # Engines that speak protocol 1 never send `done`: give them 2 s.
        deadline = time.perf_counter() + 2.0
        try:
            while True:
                line = p.readline(deadline).decode(errors="replace")
                if line.startswith("feature "):
                    replies = []
                    for key, value in _parse_features(line[8:]):
                        if key == "done":
                            if value == "0":
                                deadline = time.perf_counter() + self.cfg.startup
                            elif value == "1":
                                deadline = 0.0
                            continue
                        self.features[key] = value
                        ok = key not in ("san",) or value == "0"
                        replies.append(f"{'accepted' if ok else 'rejected'} {key}\n")
                        if key == "myname":
                            self.id_name = value
                    if replies:
                        p.send("".join(replies))
                    if deadline == 0.0:
                        break
        except EngineTimeout:
            pass
        if self.chess960 and "fischerandom" not in self.features.get("variants", "").split(","):
            raise EngineUnsupported(f"{self.name}: the engine's variants feature does not "
                                    f"list fischerandom: it cannot play -variant fischerandom")
        if self.chess960 and self.features.get("setboard") != "1":
            raise EngineUnsupported(f"{self.name}: the engine has no setboard feature: a "
                                    f"Chess960 position cannot be set up (edit mode has no "
                                    f"960 castling)")
        out = []
        for k, v in self.cfg.options.items():
            out.append(f"option {k}={v}\n")
        if out:
            p.send("".join(out))

    def set_options(self, options: dict[str, str]) -> None:
        if options:
            self.p.send("".join(f"option {k}={v}\n" for k, v in options.items()))
            self._sync()

    def _sync(self) -> None:
        if self.features.get("ping") == "1":
            self._ping += 1
            self.p.send(f"ping {self._ping}\n")
            want = f"pong {self._ping}".encode()
            self._awaiting = f"`pong {self._ping}` after `ping {self._ping}`"
            deadline = time.perf_counter() + self.cfg.startup
            while self.p.readline(deadline).strip() != want:
                pass

    def new_game(self, start_fen, white) -> None:
        cfg = self.cfg
        cmds = ["new", "post", "hard" if self.ponder_enabled else "easy"]
        if self.chess960:
            cmds.insert(1, "variant fischerandom")  # after `new`, before the position
            self._board = chess.Board(start_fen or chess.STARTING_FEN, chess960=True)
            start_fen = start_fen or chess.STARTING_FEN  # always set up: no random array
        if cfg.tc is not None and not cfg.tc.infinite:
            base = cfg.tc.base
            mins, secs = divmod(int(round(base)), 60)
            base_s = f"{mins}:{secs:02d}" if secs else f"{mins}"
            cmds.append(f"level {cfg.tc.moves} {base_s} {cfg.tc.inc:g}")
        elif cfg.st is not None:
            cmds.append(f"st {max(1, int(round(cfg.st)))}")
        if cfg.depth is not None:
            cmds.append(f"sd {cfg.depth}")
        if cfg.nodes is not None:  # CECP: time counted in nodes, N a second; st 1: N a move
            if cfg.tc is None and cfg.st is None:
                cmds.append("st 1")
            cmds.append(f"nps {cfg.nodes}")
        cmds.append("force")
        if start_fen is not None and (start_fen != chess.STARTING_FEN or self.chess960):
            cmds.extend(self._setup(start_fen))
        self.p.send("\n".join(cmds) + "\n")
        self._known = []
        self._playing = False
        self._sync()

    def _setup(self, fen: str) -> list[str]:
        if self.features.get("setboard") == "1":
            return [f"setboard {fen}"]
        # Protocol-1 style `edit` mode (fairymax has no setboard).
        board = chess.Board(fen)
        out = []
        if board.turn == chess.BLACK:
            out.append("a2a3")
        out += ["edit", "#"]
        for color in (chess.WHITE, chess.BLACK):
            if color == chess.BLACK:
                out.append("c")
            for sq, piece in board.piece_map().items():
                if piece.color == color:
                    out.append(piece.symbol().upper() + chess.square_name(sq))
        out.append(".")
        return out

    def _move_cmd(self, move: str) -> str:
        if self._board is not None:  # Chess960: castling goes out as O-O / O-O-O
            mv = chess.Move.from_uci(move)
            if self._board.is_castling(mv):
                move = "O-O" if self._board.is_kingside_castling(mv) else "O-O-O"
            self._board.push(mv)
        return f"usermove {move}" if self.features.get("usermove") == "1" else move

    def _read_move(self, text: str) -> str:
        """Chess960: the engine's move (O-O, e1h1, ...) as king-takes-rook UCI; as sent
        when it is not legal (the game then scores it)."""
        if self._board is None:
            return text
        try:
            mv = self._board.parse_san(text) if text[:1] in "O0" else self._board.parse_uci(text)
        except ValueError:
            return text
        self._board.push(mv)
        return mv.uci()

    def go(self, start_fen, moves, limits) -> SearchResult:
        known = self._known
        if moves[: len(known)] != known:
            raise EngineCrashed(f"{self.name}: position out of sync")
        new = moves[len(known) :]
        cs = 100.0
        own = limits.wtime if limits.white else limits.btime
        opp = limits.btime if limits.white else limits.wtime
        clock = ""
        if own is not None and self.features.get("time", "1") == "1":
            clock = f"time {max(0, int(own * cs))}\notim {max(0, int(opp * cs))}\n"
        if self._playing and new:
            cmd = "".join(self._move_cmd(m) + "\n" for m in new[:-1])
            cmd += clock + self._move_cmd(new[-1]) + "\n"
        else:
            cmd = "".join(self._move_cmd(m) + "\n" for m in new) + clock + "go\n"
        known.extend(new)
        self.p.send(cmd)
        t0 = time.perf_counter()
        self._playing = True
        deadline = t0 + limits.timeout
        last_post = None
        p = self.p
        while True:
            line = p.readline(deadline)
            if line.lstrip()[:1].isdigit():
                last_post = line
                continue
            if line.startswith(b"move "):
                elapsed = p.last_read - t0
                mv = self._read_move(line[5:].strip().decode(errors="replace"))
                res = SearchResult(move=mv, elapsed=elapsed)
                if last_post is not None:
                    tok = last_post.split()
                    try:
                        res.depth = int(tok[0].rstrip(b".&"))
                        if len(tok) > 3 and tok[3].isdigit():
                            res.nodes = int(tok[3])
                            if tok[2].isdigit() and int(tok[2]) > 0:  # centiseconds
                                res.nps = res.nodes * 100 // int(tok[2])
                        if len(tok) > 4:
                            res.pv = b" ".join(tok[4:]).decode(errors="replace")
                        score = int(tok[1])
                        if abs(score) >= 100000:  # xboard convention: 100000 + moves
                            n = max(1, abs(score) - 100000)
                            res.mate = n if score > 0 else -n
                        else:
                            res.score = score
                    except (ValueError, IndexError):
                        pass
                known.append(mv)
                return res
            if line.startswith(b"resign") or (b"resign" in line and b"{" in line):
                return SearchResult(move="", elapsed=p.last_read - t0, resign=True)
            if line.startswith(b"Illegal move") or line.startswith(b"Error"):
                raise EngineCrashed(f"{self.name}: {line.decode(errors='replace')}")

    def stop(self, grace: float = STOP_GRACE) -> bool:
        # "?" asks the engine to move now; any reply shows it is alive.
        try:
            self.p.send("?\n")
            deadline = time.perf_counter() + grace
            while not self.p.readline(deadline).startswith(b"move "):
                pass
            self.p.send("force\n")
            self._playing = False
            return True
        except EngineError:
            return False

    def end_game(self) -> None:
        if self.p is not None:
            try:
                self.p.send("force\n")
            except EngineError:
                self.broken = True
            self._playing = False


def is_wasp_engine(cfg: EngineConfig, head: bytes = b"") -> bool:
    """Whether the engine is Wasp-Py: a `wasp` command, `-m wasp.cli`, or its `id name`."""
    words = [os.path.basename(cfg.cmd), *cfg.args]
    return (
        any(w in ("wasp", "wasp.cli", "wasp/cli.py") or w.endswith("/wasp") for w in words)
        or b"id name Wasp-Py" in head
    )


def start_hint(cfg: EngineConfig, head: bytes, timeout: bool) -> str:
    """What to try after a failed start, from the command and the first output (or "")."""
    if cfg.proto == "uci" and any(sign in head for sign in _XBOARD_SIGNS):
        first = head.strip().splitlines()[0].decode(errors="replace")[:60]
        return (f"; its first output ({first!r}) looks like an xboard engine: "
                f"give proto=xboard")
    if cfg.proto == "xboard" and any(sign in head for sign in _UCI_SIGNS):
        return "; its output looks like a UCI engine: give proto=uci"
    if not timeout:
        return ""
    if is_wasp_engine(cfg, head):
        return ("; a Wasp-Py engine compiles its numba kernels on the first start with a "
                "cold cache (minutes): run `wasp warmup` once beforehand (with the same "
                "NUMBA_CACHE_DIR / WASP_CACHE_DIR), or allow more time with startup=300")
    return ("; an engine that is slow to start needs a larger startup=SECONDS; an xboard "
            "engine needs proto=xboard")


def _parse_features(text: str):
    """Yield (key, value) pairs of an xboard ``feature`` line."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        j = text.find("=", i)
        if j < 0:
            return
        key = text[i:j].strip()
        j += 1
        if j < n and text[j] == '"':
            k = text.find('"', j + 1)
            k = n if k < 0 else k
            value = text[j + 1 : k]
            i = k + 1
        else:
            k = text.find(" ", j)
            k = n if k < 0 else k
            value = text[j:k]
            i = k
        yield key, value


def make_engine(cfg: EngineConfig, logger: Logger | None = None, ponder: bool = False,
                chess960: bool = False) -> Engine:
    if cfg.proto == "uci":
        return UciEngine(cfg, logger, ponder, chess960)
    if cfg.proto == "xboard":
        return XboardEngine(cfg, logger, ponder, chess960)
    raise ValueError(f"unknown protocol {cfg.proto!r}")
