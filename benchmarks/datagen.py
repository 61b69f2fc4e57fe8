"""Positions an hour of `wasp-tune datagen` at N nodes a move, beside the bound the engine's own
speed sets and beside the same games of the same engine played over UCI (`datagen -engine`).

The bound: nodes/s (the engine's searches of `wasp bench`'s positions, N * 20 nodes each, in
this process, before and after the games) x processes / nodes searched per recorded position
(the run's own count). A datagen process does nothing but search, so it should come close
(goal: at least 85 %). The UCI figure is Wasp-Py as a UCI engine through the match runner's
executor, the path every other engine takes: what playing in-process saves.
The in-process figures are given per CPU second too (time.process_time): on a shared machine
the wall clock also counts the time other programs took the core.

With --engine (wasp-match's KEY=VALUE items) another UCI engine is measured instead: its speed
over UCI on the same positions, its datagen rate and the bound that speed sets.

    python benchmarks/datagen.py [--games 10] [--nodes 5000] [--concurrency 1] [--uci-games 4]
    python benchmarks/datagen.py --games 20 --engine cmd=/usr/games/stockfish option.Threads=1
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def engine_speed(nodes: int) -> tuple[float, float]:
    """(nodes per wall second, nodes per CPU second) of one Searcher over bench's positions."""
    from tuner.datagen import DatagenConfig
    from wasp.benchmark import BENCH_FENS
    from wasp.board import Position
    from wasp.driver import Limits, Searcher

    s = Searcher(DatagenConfig.hash_mb)  # the hash datagen's searchers use
    s.search(Position(), Limits(nodes=1000))  # load the kernels
    total = 0
    w0, c0 = time.perf_counter(), time.process_time()
    for fen in BENCH_FENS:
        s.clear()
        total += s.search(Position(fen), Limits(nodes=nodes * 20)).nodes
    return total / (time.perf_counter() - w0), total / (time.process_time() - c0)


def datagen_speed(tmp, games: int, nodes: int, concurrency: int):
    """(positions, wall s, CPU s of this process, nodes a position) of a datagen run."""
    from tuner.datagen import DatagenConfig, DatagenRun, SelfPlay, generate

    config = DatagenConfig(games=games, nodes=nodes)
    SelfPlay(config).warm()  # the kernels loaded from the cache before the clock starts
    run = DatagenRun.create(os.path.join(tmp, "dg"), config)
    w0, c0 = time.perf_counter(), time.process_time()
    stats = generate(run, concurrency, progress=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return stats["positions"], wall, cpu, stats["nodes"] / max(stats["positions"], 1)


def wasp_uci_engine() -> list[str]:
    """`-engine` items for Wasp-Py run as a UCI engine by this Python, with datagen's hash and
    its default evaluation (the hand-written one, not the engine's default net)."""
    from tuner.datagen import DatagenConfig

    return [f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", "name=wasp-py",
            f"option.Hash={DatagenConfig.hash_mb}", "option.EvalFile=<empty>", "startup=300"]


def uci_engine_speed(engine: dict, nodes: int) -> float:
    """Nodes per wall second of a UCI engine over bench's positions (N * 20 nodes each), from
    its own node counts and the runner's clock."""
    from testing.driver import Limits
    from testing.engine import EngineConfig, make_engine
    from wasp.benchmark import BENCH_FENS

    e = make_engine(EngineConfig.from_dict(engine))
    e.start()
    try:
        e.go(None, [], Limits(nodes=1000))  # load whatever it loads on its first search
        total, wall = 0, 0.0
        for fen in BENCH_FENS:
            e.new_game(fen, True)
            res = e.go(fen, [], Limits(nodes=nodes * 20))
            total += res.nodes or 0
            wall += res.elapsed
    finally:
        e.quit()
    return total / wall


def uci_datagen_speed(tmp, name: str, tokens: list[str], games: int, nodes: int,
                      concurrency: int):
    """(positions, wall s, nodes a position) of a datagen run of a UCI engine."""
    from tuner.datagen import DatagenConfig, DatagenRun, generate, uci_engine

    config = DatagenConfig(games=games, nodes=nodes, uci=uci_engine(tokens, nodes))
    run = DatagenRun.create(os.path.join(tmp, name), config)
    w0 = time.perf_counter()
    stats = generate(run, concurrency, progress=False)
    wall = time.perf_counter() - w0  # includes starting the engines (each worker's two)
    return stats["positions"], wall, stats["nodes"] / max(stats["positions"], 1)


def other_engine(args) -> int:
    """--engine: a UCI engine's datagen rate beside the bound its speed over UCI sets."""
    from tuner.datagen import uci_engine

    c = args.concurrency
    engine = uci_engine(args.engine, args.nodes)
    before = uci_engine_speed(engine, args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        pos, wall, per_pos = uci_datagen_speed(tmp, "uci", args.engine, args.games, args.nodes,
                                               c)
    nps = (before + uci_engine_speed(engine, args.nodes)) / 2
    bound = nps * c / per_pos * 3600
    rate = pos / wall * 3600
    print(f"engine {engine['name']}: {nps:,.0f} nodes/s over UCI (bench positions, "
          f"{args.nodes * 20:,} nodes each)")
    print(f"datagen: {args.games} games, {pos} positions, {per_pos:,.0f} nodes a position, "
          f"{c} process(es), two engine processes each")
    print(f"  positions/hour: {rate:,.0f}   bound {bound:,.0f}   {100 * rate / bound:.1f} % "
          f"(wall clock, engine start-up included)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--uci-games", type=int, default=4,
                    help="games of Wasp-Py over UCI for the comparison (0: skip it)")
    ap.add_argument("--engine", nargs="+", metavar="KEY=VALUE", default=None,
                    help="measure this UCI engine instead (cmd=... option.X=...)")
    args = ap.parse_args(argv)
    if args.engine:
        return other_engine(args)
    from testing.tournament import host_steal, steal_share

    c = args.concurrency
    steal0 = host_steal()
    before = engine_speed(args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        pos, wall, cpu, per_pos = datagen_speed(tmp, args.games, args.nodes, c)
        after = engine_speed(args.nodes)  # the mean of before and after: the load drifts
        nps_wall, nps_cpu = ((a + b) / 2 for a, b in zip(before, after, strict=True))
        sp = uci_datagen_speed(tmp, "uci", wasp_uci_engine(), args.uci_games, args.nodes, c) \
            if args.uci_games else None
    steal = steal_share(steal0, host_steal())
    bound = nps_wall * c / per_pos * 3600
    rate = pos / wall * 3600
    print(f"engine: {nps_wall:,.0f} nodes/s wall, {nps_cpu:,.0f} per CPU second "
          f"(bench positions, {args.nodes * 20:,} nodes each)")
    print(f"datagen: {args.games} games, {pos} positions, {per_pos:,.0f} nodes a position, "
          f"{c} process(es)")
    print(f"  positions/hour: {rate:,.0f}   bound {bound:,.0f}   {100 * rate / bound:.1f} % "
          f"(wall clock)")
    if c == 1:
        cpu_rate = pos / cpu * 3600
        cpu_bound = nps_cpu / per_pos * 3600
        print(f"  per CPU hour:   {cpu_rate:,.0f}   bound {cpu_bound:,.0f}   "
              f"{100 * cpu_rate / cpu_bound:.1f} %")
    if sp:
        print(f"over UCI (datagen -engine wasp-py): {args.uci_games} games, {sp[0]} positions, "
              f"{sp[0] / sp[1] * 3600:,.0f} positions/hour (wall clock, engine start-up "
              f"included, {c} process(es))")
    if steal is not None:
        print(f"steal: {steal:.1f} % of the CPU time while this ran (os.cpu_count() "
              f"{os.cpu_count()})")
    return 0


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    sys.exit(main())
