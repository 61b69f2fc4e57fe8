"""What the protocol drivers share: the `Engine` interface and its lifecycle (start, restart,
quit, the game's recording), the `Limits` of a search and its `SearchResult`, and the hint a
failed start gives. `testing.uci` and `testing.xboard` implement it; `testing.engine.make_engine`
picks one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from .process import EngineCrashed, EngineError, EngineProcess, EngineTimeout, Logger, Recording

UNLIMITED_MOVE_TIMEOUT = 300.0  # for searches with no clock (nodes=, depth=)
STOP_GRACE = 1.0  # seconds an engine gets to answer `stop` after its deadline

# what an xboard engine says to a `uci` it does not understand (Fairy-Max: `tellics say`)
_XBOARD_SIGNS = (b"tellics ", b"telluser ", b"feature ", b"Error (unknown command)",
                 b"Illegal move", b"Error (")
_UCI_SIGNS = (b"id name ", b"uciok", b"option name ")


class EngineUnsupported(EngineCrashed):
    """The engine cannot play the run's variant (no UCI_Chess960, no xboard fischerandom)."""


@dataclass(kw_only=True)
class SearchFigures:
    """What an engine said of its search beside its move (UCI `info`, xboard's thinking
    output), each None when it did not say: the search's result carries them, and so does
    each move of a game's record."""

    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    hashfull: int | None = None
    tbhits: int | None = None
    pv: str | None = None

    def figures(self) -> dict:
        """The figures alone, by name."""
        return {f.name: getattr(self, f.name) for f in fields(SearchFigures)}


@dataclass
class SearchResult(SearchFigures):
    move: str
    elapsed: float  # seconds from `go` to the move, measured by the runner
    score: int | None = None  # centipawns from the mover's view
    mate: int | None = None  # moves to mate (negative: being mated)
    depth: int | None = None
    ponder: str | None = None
    resign: bool = False


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


class Engine:
    """Common interface of the UCI and xboard drivers."""

    protocol = ""

    def __init__(self, cfg, logger: Logger | None = None, ponder: bool = False,
                 chess960: bool = False):
        self.cfg = cfg  # the engine's EngineConfig
        self.logger = logger
        self.ponder_enabled = ponder
        self.chess960 = chess960  # -variant fischerandom: castling as king-takes-rook
        self.p: EngineProcess | None = None
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

    def _spawn(self) -> EngineProcess:
        self.p = EngineProcess(self.cfg, self.logger, self.recording)
        return self.p

    def take_recording(self) -> tuple[bytes, bytes]:
        """(transcript, stderr) since the last call: the record of one game."""
        return self.recording.take()


def is_wasp_engine(cfg, head: bytes = b"") -> bool:
    """Whether the engine is Wasp-Py: a `wasp` command, `-m wasp.cli`, or its `id name`."""
    words = [os.path.basename(cfg.cmd), *cfg.args]
    return (
        any(w in ("wasp", "wasp.cli", "wasp/cli.py") or w.endswith("/wasp") for w in words)
        or b"id name Wasp-Py" in head
    )


def start_hint(cfg, head: bytes, timeout: bool) -> str:
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
