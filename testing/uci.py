"""The UCI driver: `UciEngine` (options, ``isready`` syncs, ``go`` with the clock, pondering,
UCI_Chess960) and the parser of ``option name ...`` lines (`parse_option`)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from .driver import STOP_GRACE, Engine, EngineUnsupported, Limits, SearchResult
from .process import EngineCrashed, EngineError


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
