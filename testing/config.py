"""The settings of a run, as one JSON-serializable object (saved in the run directory)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .engine import EngineConfig
from .game import DrawAdjudication, GameSettings, ResignAdjudication
from .tablebase import TablebaseAdjudication


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
