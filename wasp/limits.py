"""What a search is asked (`Limits`) and what it reports (`Line` each iteration, `Result` at
the end): plain data that the kernel search (`wasp.driver`) and the fallback search of a cold
start (`wasp.fallback`) share with the front ends, importable without numba."""

from dataclasses import dataclass, field


@dataclass
class Limits:
    """What `go` asked for (times in milliseconds)."""

    depth: int | None = None
    nodes: int | None = None
    movetime: int | None = None
    mate: int | None = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: list[str] = field(default_factory=list)
    soft_ms: float | None = None  # do not start an iteration after this
    hard_ms: float | None = None  # stop the search here
    # time.monotonic() when the move's clock started (the GUI's command arrived): soft_ms,
    # hard_ms and movetime count from here; None: from the search's own start
    start: float | None = None


@dataclass
class Line:
    depth: int
    seldepth: int
    multipv: int
    score: int
    bound: str  # "", "lowerbound" or "upperbound"
    nodes: int
    time_ms: int
    pv: list[str]
    hashfull: int = 0
    tbhits: int = 0  # tablebase probes (made at the root, by wasp.engine)


@dataclass
class Result:
    best: str  # "0000" when there is no legal move
    ponder: str | None
    score: int
    depth: int
    nodes: int
    time_ms: int
    pv: list[str]
    depth_nodes: list[int] = field(default_factory=list)
    tt_hits: int = 0
    tt_probes: int = 0
    seldepth: int = 0
