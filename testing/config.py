"""The settings of a run, as one JSON-serializable object (saved in the run directory) that
checks itself (`MatchConfig.validate`), whether it came from the command line or from Python."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from wasp.exitcodes import InputError, UsageError

from .engine import EngineConfig
from .game import DrawAdjudication, GameSettings, ResignAdjudication
from .tablebase import TablebaseAdjudication

ORDERS = ("sequential", "random")
FORMATS = ("epd", "pgn")
TOURNAMENTS = ("gauntlet", "roundrobin")
PROTOCOLS = ("uci", "xboard")
SPRT_MODELS = ("normalized", "logistic")
NOTATIONS = ("san", "lan", "uci")


def at_least(where: str, x, lo):
    """`x` when it is at least `lo`; else UsageError naming `where`."""
    if x < lo:
        raise UsageError(f"{where}: must be at least {lo}, got {x}")
    return x


def in_range(where: str, x: float, lo: float | None = None, hi: float | None = None) -> float:
    """`x` when it is a number within [lo, hi]; else UsageError naming `where`."""
    if x != x or (lo is not None and x < lo) or (hi is not None and x > hi):
        raise UsageError(f"{where}: {x} is out of range")
    return x


def input_file(where: str, path: str) -> str:
    """`path` if it is a readable, non-empty file; else InputError naming it."""
    if not os.path.exists(path):
        raise InputError(f"{where}: {path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{where}: {path}: is a directory, not a file")
    try:
        with open(path, "rb") as f:
            head = f.read(1)
    except OSError as e:
        raise InputError(f"{where}: {path}: cannot read: {e.strerror}") from None
    if not head:
        raise InputError(f"{where}: {path}: the file is empty")
    return path


def find_cmd(where: str, cmd: str, wd: str | None) -> str:
    """The engine's executable (looked up in PATH, then /usr/games); UsageError if none."""
    if wd is not None and not os.path.isdir(wd):
        raise UsageError(f"{where}: dir={wd!r} is not a directory")
    exe = cmd
    if wd and os.sep in cmd and not os.path.isabs(cmd):
        exe = os.path.join(wd, cmd)
    if os.sep in exe:
        found = exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None
    else:  # Debian installs engines in /usr/games, often outside PATH
        found = shutil.which(exe) or shutil.which(exe, path="/usr/games")
    if found is None:
        raise UsageError(f"{where}: engine command {cmd!r} not found or not executable")
    return found


def check_engine(i: int, e: EngineConfig) -> None:
    """One engine's settings (raises UsageError naming ``-engine #i``)."""
    if not e.cmd:
        raise UsageError(f"-engine #{i + 1}: cmd= is required")
    where = f"-engine #{i + 1} ({e.name or e.cmd})"
    find_cmd(where, e.cmd, e.dir)
    if e.proto not in PROTOCOLS:
        raise UsageError(f"{where}: proto={e.proto!r} (expected uci or xboard)")
    if e.tc is None and e.st is None and e.nodes is None and e.depth is None:
        raise UsageError(f"{where}: no time control (give tc=, st=, nodes= or depth=)")
    if e.tc is not None and e.st is not None:
        raise UsageError(f"{where}: tc= and st= cannot be combined")
    if e.st is not None:
        in_range(f"{where}: st", e.st, lo=0.001)
    if e.nodes is not None:
        at_least(f"{where}: nodes", e.nodes, 1)
    if e.depth is not None:
        at_least(f"{where}: depth", e.depth, 1)
    at_least(f"{where}: timemargin", e.timemargin, 0)
    in_range(f"{where}: startup", e.startup, lo=0.1)


@dataclass
class OpeningsConfig:
    file: str
    format: str | None = None  # epd | pgn (default: from the file name)
    order: str = "sequential"  # sequential | random
    plies: int | None = None
    start: int = 1
    policy: str = "default"  # default | encounter | round (cutechess-cli's)


@dataclass
class PgnOptions:
    """fastchess's ``-pgnout`` switches: what each move's comment and the tags hold."""

    nodes: bool = False
    seldepth: bool = False
    nps: bool = False
    hashfull: bool = False
    tbhits: bool = False
    pv: bool = False
    timeleft: bool = False
    latency: bool = False
    min: bool = False  # the seven tag roster (and FEN), no comments
    notation: str = "san"  # san | lan | uci


@dataclass
class SprtConfig:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"


@dataclass
class MatchConfig:
    """A match's settings (``wasp-match``'s flags, by name): at least two engines with their
    limits, the schedule, openings, adjudication, SPRT and outputs. `validate` checks them;
    `to_dict`/`from_dict` are the JSON saved in the run directory. `SESSION_FIELDS` are the
    settings a resumed run may change: how it is played, not what is played (`played`)."""

    SESSION_FIELDS: ClassVar[tuple[str, ...]] = (
        "concurrency", "dask", "log", "progress", "ratinginterval", "affinity")

    engines: list[EngineConfig]
    tournament: str = "roundrobin"
    rounds: int = 1
    games: int = 1
    repeat: bool = False
    concurrency: int = 1
    openings: OpeningsConfig | None = None
    srand: int | None = None
    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    maxmoves: int | None = None
    tb: TablebaseAdjudication | None = None
    sprt: SprtConfig | None = None
    pgnout: str | None = None
    epdout: str | None = None
    ratinginterval: int = 10
    recover: bool = False
    log: str | None = None
    ponder: bool = False
    event: str = "?"
    site: str = "?"
    dask: str | None = None
    progress: bool | None = None  # live progress line (default: when stderr is a tty)
    pgn: PgnOptions = field(default_factory=PgnOptions)
    affinity: list[int] | None = None  # -use-affinity: the cores split among the games
    scale_tc: dict | None = None  # -scale-tc: a testing.speed.ScaleConfig's fields
    variant: str = "standard"  # standard | fischerandom (Chess960 and DFRC books)
    extra: dict = field(default_factory=dict)

    def validate(self) -> MatchConfig:
        """Check every setting before a game starts; returns the config.

        Raises UsageError (a ValueError) naming the flag and the reason, InputError for a file
        that cannot be used (the openings, the tablebases). `testing.plan_match` calls it for
        every match, from the command line or from Python alike."""
        from .schedule import POLICIES
        from .variant import VARIANTS

        n = len(self.engines)
        if n < 2:
            raise UsageError(f"at least two engines are needed (-engine ...), got {n}")
        for i, e in enumerate(self.engines):
            check_engine(i, e)
        names = [e.name for e in self.engines]
        if len(set(names)) < n:
            twice = next(x for x in names if names.count(x) > 1)
            raise UsageError(f"engine names identify engines in the store: {twice!r} is given "
                             f"twice")
        if self.tournament not in TOURNAMENTS:
            raise UsageError(f"-tournament: {self.tournament!r} (expected gauntlet or "
                             f"roundrobin)")
        at_least("-concurrency", self.concurrency, 1)
        at_least("-rounds", self.rounds, 1)
        at_least("-games", self.games, 1)
        o = self.openings
        if o is not None:
            input_file("-openings", o.file)
            if o.format is not None and o.format not in FORMATS:
                raise UsageError(f"-openings: format={o.format!r} (expected epd or pgn)")
            if o.order not in ORDERS:
                raise UsageError(f"-openings: order={o.order!r} (expected random or "
                                 f"sequential)")
            if o.policy not in POLICIES:
                raise UsageError(f"-openings: policy={o.policy!r} (expected default, "
                                 f"encounter or round)")
            if o.plies is not None:
                at_least("-openings: plies", o.plies, 0)
            at_least("-openings: start", o.start, 1)
        if self.variant not in VARIANTS:
            raise UsageError(f"-variant: {self.variant!r} (expected {' or '.join(VARIANTS)})")
        if self.draw is not None:
            at_least("-draw: movenumber", self.draw.movenumber, 0)
            at_least("-draw: movecount", self.draw.movecount, 1)
            at_least("-draw: score", self.draw.score, 0)
        if self.resign is not None:
            at_least("-resign: movecount", self.resign.movecount, 1)
            at_least("-resign: score", self.resign.score, 1)
        if self.maxmoves is not None:
            at_least("-maxmoves", self.maxmoves, 1)
        if self.tb is not None:
            self._check_tablebases()
        if self.sprt is not None:
            s = self.sprt
            in_range("-sprt: alpha", s.alpha, lo=1e-9, hi=0.5)
            in_range("-sprt: beta", s.beta, lo=1e-9, hi=0.5)
            if s.elo0 >= s.elo1:
                raise UsageError(f"-sprt: elo0 ({s.elo0}) must be below elo1 ({s.elo1})")
            if s.model not in SPRT_MODELS:
                raise UsageError(f"-sprt: model={s.model!r} (expected normalized or logistic)")
            if n != 2:
                raise UsageError(f"-sprt needs exactly two engines, got {n}")
        if self.pgn.notation not in NOTATIONS:
            raise UsageError(f"-pgnout: notation={self.pgn.notation!r} (expected san, lan or "
                             f"uci)")
        for key in ("pgnout", "epdout", "log"):
            path = getattr(self, key)
            if path is not None:
                parent = os.path.dirname(os.path.abspath(path))
                if not os.path.isdir(parent):
                    raise UsageError(f"-{key}: directory {parent!r} does not exist")
        at_least("-ratinginterval", self.ratinginterval, 0)
        if self.dask is not None and not str(self.dask).strip():
            raise UsageError("-dask: empty scheduler address")
        self._check_affinity()
        if self.scale_tc is not None:
            if not self.dask:
                raise UsageError("-scale-tc scales each Dask worker's clock by its speed: it "
                                 "needs -dask ADDRESS")
            if not any(e.tc is not None or e.st is not None for e in self.engines):
                raise UsageError("-scale-tc: no engine has a clock to scale (tc= or st=)")
        return self

    def check_openings(self) -> None:
        """Read the openings the run will play (from `srand`), so that a bad file, a bad line or
        a bad start= fails before any game (InputError, or UsageError for a setting)."""
        if self.openings is None:
            return
        from .openings import OpeningBook, OpeningSequence
        from .schedule import make_schedule
        from .variant import VariantError

        o = self.openings
        try:
            book = OpeningBook(o.file, o.format, o.plies, chess960=self.chess960)
        except (ValueError, OSError) as e:
            raise InputError(f"-openings: {e}") from None
        try:
            seq = OpeningSequence(book, o.order, o.start, self.srand)
        except ValueError as e:
            raise UsageError(f"-openings: {e}") from None
        used = 1 + max(p.opening_k for p in make_schedule(
            len(self.engines), self.tournament, self.rounds, self.games, self.repeat, o.policy))
        try:
            for k in range(min(len(book), used)):
                seq[k]
        except VariantError as e:  # the book is fine, the settings lack the variant
            raise UsageError(f"-openings: {e}") from None
        except ValueError as e:
            raise InputError(f"-openings: {e}") from None

    def _check_tablebases(self) -> None:
        from .tablebase import open_tables

        at_least("-tbpieces", self.tb.pieces, 0)
        try:
            tables, _ = open_tables(self.tb.paths)
        except ValueError as e:
            raise InputError(f"-tb: {e}") from None
        tables.close()

    def _check_affinity(self) -> None:
        if self.affinity is None:
            return
        if self.dask:
            raise UsageError("-use-affinity pins local games: it cannot be combined with -dask")
        from .affinity import available_cores, slots

        here = available_cores()
        missing = [c for c in self.affinity if c not in here]
        if missing:
            raise UsageError(f"-use-affinity: core {missing[0]} is not present (this machine "
                             f"offers cores {','.join(map(str, here))})")
        try:
            slots(self.affinity, self.concurrency)
        except ValueError as e:
            raise UsageError(f"-use-affinity: {e} (-concurrency {self.concurrency})") from None

    @property
    def chess960(self) -> bool:
        return self.variant == "fischerandom"

    def game_settings(self) -> GameSettings:
        return GameSettings(
            draw=self.draw, resign=self.resign, maxmoves=self.maxmoves, ponder=self.ponder,
            tb=self.tb,
        )

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "engines"}
        for k in ("openings", "sprt", "draw", "resign", "tb", "pgn"):
            if d[k] is not None:
                d[k] = asdict(d[k])
        d["engines"] = [e.to_dict() for e in self.engines]
        return d

    def played(self) -> dict:
        """What makes the games (`to_dict` without `SESSION_FIELDS`): a run directory is resumed
        only by settings that play the same."""
        return {k: v for k, v in self.to_dict().items() if k not in self.SESSION_FIELDS}

    @classmethod
    def from_dict(cls, d: dict) -> MatchConfig:
        d = dict(d)
        d["engines"] = [EngineConfig.from_dict(e) for e in d["engines"]]
        for key, typ in (
            ("openings", OpeningsConfig),
            ("sprt", SprtConfig),
            ("draw", DrawAdjudication),
            ("resign", ResignAdjudication),
            ("tb", TablebaseAdjudication),
            ("pgn", PgnOptions),
        ):
            if d.get(key) is not None:
                d[key] = typ(**d[key])
        return cls(**d)
