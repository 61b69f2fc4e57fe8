"""An engine to play: its settings (`EngineConfig`, as ``-engine``/``-each`` or a JSON config
give them) and `make_engine`, the driver of its protocol (`testing.uci`, `testing.xboard`).
The process and its pipes are `testing.process`; what every driver shares, `testing.driver`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .driver import Engine
from .process import Logger
from .timecontrol import TimeControl
from .uci import UciEngine
from .xboard import XboardEngine

STARTUP_TIMEOUT = 15.0  # default seconds for `uciok` / xboard features / `readyok`


@dataclass
class EngineConfig:
    """One engine as given by ``-engine``/``-each`` or a JSON config. `tc` may be given as its
    text (``"10+0.1"``, ``"40/60"``): it is read into a TimeControl here (ValueError if bad)."""

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

    def __post_init__(self):
        if isinstance(self.tc, str):
            self.tc = TimeControl.parse(self.tc)

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
        return cls(**d)

    @property
    def margin(self) -> float:
        return self.timemargin / 1000.0

    def argv(self) -> list[str]:
        return [self.cmd, *self.args]


def make_engine(cfg: EngineConfig, logger: Logger | None = None, ponder: bool = False,
                chess960: bool = False) -> Engine:
    """The driver of `cfg`'s protocol (UCI or xboard), not started yet (`Engine.start`)."""
    if cfg.proto == "uci":
        return UciEngine(cfg, logger, ponder, chess960)
    if cfg.proto == "xboard":
        return XboardEngine(cfg, logger, ponder, chess960)
    raise ValueError(f"unknown protocol {cfg.proto!r}")
