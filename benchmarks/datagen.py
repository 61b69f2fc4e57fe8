"""Positions an hour of `wasp-tune datagen` at N nodes a move, beside the bound the engine's own
speed sets and beside `wasp-tune data selfplay` (games through the match runner and UCI).

The bound: nodes/s (the engine's searches of `wasp bench`'s positions, N * 20 nodes each, in
this process, before and after the games) x processes / nodes searched per recorded position
(the run's own count). A datagen process does nothing but search, so it should come close
(goal: at least 85 %).
The in-process figures are given per CPU second too (time.process_time): on a shared machine
the wall clock also counts the time other programs took the core.

    python benchmarks/datagen.py [--games 10] [--nodes 5000] [--concurrency 1] [--selfplay-games 4]
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


def selfplay_speed(tmp, games: int, nodes: int, concurrency: int):
    """(positions, wall s) of `wasp-tune data selfplay`'s games (every ply a position)."""
    import chess.pgn

    from tuner.data.selfplay import selfplay

    out = os.path.join(tmp, "sp")
    w0 = time.perf_counter()
    pgn = selfplay(out, games, nodes=nodes, concurrency=concurrency, quiet=True)
    wall = time.perf_counter() - w0
    plies = 0
    with open(pgn, encoding="utf-8") as f:
        while (g := chess.pgn.read_game(f)) is not None:
            plies += sum(1 for _ in g.mainline_moves())
    return plies, wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--selfplay-games", type=int, default=4, help="0: skip the runner's path")
    args = ap.parse_args(argv)
    from testing.tournament import host_steal, steal_share

    c = args.concurrency
    steal0 = host_steal()
    before = engine_speed(args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        pos, wall, cpu, per_pos = datagen_speed(tmp, args.games, args.nodes, c)
        after = engine_speed(args.nodes)  # the mean of before and after: the load drifts
        nps_wall, nps_cpu = ((a + b) / 2 for a, b in zip(before, after, strict=True))
        sp = selfplay_speed(tmp, args.selfplay_games, args.nodes, c) \
            if args.selfplay_games else None
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
        print(f"data selfplay: {args.selfplay_games} games, {sp[0]} positions, "
              f"{sp[0] / sp[1] * 3600:,.0f} positions/hour (wall clock, {c} game(s) at a time)")
    if steal is not None:
        print(f"steal: {steal:.1f} % of the CPU time while this ran (os.cpu_count() "
              f"{os.cpu_count()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
