"""Per-engine search statistics of a run: depth, seldepth, nps, time per move, clock left,
time losses, crashes, stalls and illegal moves (for the report and the DataFrames).

Each stored game keeps its moves' figures per side as JSON (``move_stats``); this
module writes that JSON and sums it up by engine.
"""

from __future__ import annotations

import json
import math
from array import array

# termination -> the counter of the engine that lost by it
FAILURES = {"timeout": "time_losses", "crash": "crashes", "stall": "stalls",
            "illegal-move": "illegal_moves"}
COUNTERS = tuple(FAILURES.values())


def move_stats(rec, first_white: bool) -> str:
    """JSON of a GameRecord's per-move figures, by side; ``first_white``: White made the
    first engine move. A move that saw a mate keeps no depth: engines search such trees to
    their ceiling in a blink (Stockfish says ``depth 245``), which says nothing of how deep
    they see in play, and a handful of those would swamp the mean."""
    sides = {s: {"depth": [], "seldepth": [], "nodes": [], "time": []} for s in ("white", "black")}
    white = first_white
    for m in rec.moves:
        d = sides["white" if white else "black"]
        mated = m.mate is not None
        d["depth"].append(None if mated else m.depth)
        d["seldepth"].append(None if mated else m.seldepth)
        d["nodes"].append(m.nodes)
        d["time"].append(round(m.elapsed, 4))
        white = not white
    sides["white"]["left"] = rec.white_left
    sides["black"]["left"] = rec.black_left
    return json.dumps(sides, separators=(",", ":"))


def loser_failure(termination: str, result: str) -> tuple[str, str] | None:
    """(side, counter) when the game ended by an engine's failure, else None."""
    counter = FAILURES.get(termination)
    if counter is None:
        return None
    return ("white" if result == "0-1" else "black"), counter


def _mean(xs) -> float:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else math.nan


def _nps(nodes, times) -> float:
    n = t = 0.0
    for a, b in zip(nodes, times, strict=False):
        if a is not None and b:
            n += a
            t += b
    return n / t if t > 0 else math.nan


def quantile(xs, q: float) -> float:
    """The q-quantile (nearest rank) of xs; nan for none."""
    if not len(xs):
        return math.nan
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def side_summary(stats: dict) -> dict:
    """One side of one game: mean depth and seldepth, nps, time per move (median, p95),
    clock left at the end."""
    times = stats.get("time", [])
    return {
        "depth": _mean(stats.get("depth", [])),
        "seldepth": _mean(stats.get("seldepth", [])),
        "nps": _nps(stats.get("nodes", []), times),
        "time_median": quantile(times, 0.5),
        "time_p95": quantile(times, 0.95),
        "left": math.nan if stats.get("left") is None else stats["left"],
    }


class _Acc:
    __slots__ = ("games", "depth", "depth_n", "seldepth", "seldepth_n", "nodes", "node_time",
                 "times", "left", "left_n", *COUNTERS)

    def __init__(self):
        self.games = 0
        self.depth = self.seldepth = self.nodes = self.node_time = self.left = 0.0
        self.depth_n = self.seldepth_n = self.left_n = 0
        self.times = array("f")  # 4 bytes a move: a million moves cost 4 MB
        for c in COUNTERS:
            setattr(self, c, 0)


class EngineTally:
    """Per-engine sums over the games added so far (runner report, ``engine_stats``)."""

    def __init__(self, names: list[str] | None = None):
        self.acc: dict[str, _Acc] = {n: _Acc() for n in names or ()}

    def add(self, row: dict) -> None:
        """Count a store row (white, black, result, termination, move_stats)."""
        try:
            stats = json.loads(row.get("move_stats") or "{}")
        except ValueError:
            stats = {}
        fail = loser_failure(row["termination"], row["result"])
        for side in ("white", "black"):
            a = self.acc.setdefault(row[side], _Acc())
            a.games += 1
            if fail is not None and fail[0] == side:
                setattr(a, fail[1], getattr(a, fail[1]) + 1)
            s = stats.get(side)
            if not s:
                continue
            for d in s.get("depth", ()):
                if d is not None:
                    a.depth += d
                    a.depth_n += 1
            for d in s.get("seldepth", ()):
                if d is not None:
                    a.seldepth += d
                    a.seldepth_n += 1
            for n, t in zip(s.get("nodes", ()), s.get("time", ()), strict=False):
                if n is not None and t:
                    a.nodes += n
                    a.node_time += t
            a.times.extend(s.get("time", ()))
            if s.get("left") is not None:
                a.left += s["left"]
                a.left_n += 1

    def rows(self) -> list[dict]:
        out = []
        for name, a in self.acc.items():
            out.append({
                "engine": name,
                "games": a.games,
                "moves": len(a.times),
                "depth": a.depth / a.depth_n if a.depth_n else math.nan,
                "seldepth": a.seldepth / a.seldepth_n if a.seldepth_n else math.nan,
                "nps": a.nodes / a.node_time if a.node_time > 0 else math.nan,
                "time_median": quantile(a.times, 0.5),
                "time_p95": quantile(a.times, 0.95),
                "left": a.left / a.left_n if a.left_n else math.nan,
                **{c: getattr(a, c) for c in COUNTERS},
            })
        return out

    def table(self) -> str:
        """The statistics as a text table (a column per figure, a row per engine)."""
        rows = self.rows()
        if not rows:
            return ""
        width = max(6, *(len(r["engine"]) for r in rows))

        def f(x, fmt):
            return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt % x

        head = (f"{'Engine':<{width}} {'depth':>6} {'seld':>6} {'knps':>8} {'t/move':>8} "
                f"{'p95':>8} {'left':>8} {'tloss':>6} {'crash':>6} {'stall':>6} {'illeg':>6}")
        lines = [head]
        for r in rows:
            lines.append(
                f"{r['engine']:<{width}} {f(r['depth'], '%.1f'):>6} {f(r['seldepth'], '%.1f'):>6} "
                f"{f(r['nps'] / 1000 if r['nps'] == r['nps'] else math.nan, '%.1f'):>8} "
                f"{f(r['time_median'], '%.3fs'):>8} {f(r['time_p95'], '%.3fs'):>8} "
                f"{f(r['left'], '%.2fs'):>8} {r['time_losses']:>6} {r['crashes']:>6} "
                f"{r['stalls']:>6} {r['illegal_moves']:>6}")
        return "\n".join(lines)
