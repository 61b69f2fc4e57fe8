"""Benchmark of the search: bench speed, effective branching factor, WAC at a fixed time.

Prints our figures beside the anchors: Stockfish 15.1's `bench` speed on these machines
(1.39 M nodes/s), Wasp 1.02's effective branching factor (about 2, from its notes) and the
WAC goal (270/300 at 1 s a position).

    python benchmarks/search.py [--depth 9] [--wac-every 10] [--time 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

ANCHORS = {"stockfish_15_1_bench_nps": 1_390_000, "wasp_ebf": 2.0, "wac_goal": "270/300"}
WAC = os.path.join(ROOT, "tests", "data", "wac.epd")


def bench_figures(depth):
    from wasp.benchmark import bench

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        bench(depth)
    out = {}
    for line in buf.getvalue().splitlines():
        if line.startswith("Nodes searched"):
            out["nodes"] = int(line.split(":")[1])
        elif line.startswith("Nodes/second"):
            out["nps"] = int(line.split(":")[1])
    return out


def ebf(depth):
    """Geometric mean over the bench positions of nodes(d) / nodes(d-1), last 3 iterations."""
    from wasp.benchmark import BENCH_FENS
    from wasp.board import Position
    from wasp.driver import Limits, Searcher

    s = Searcher(16)
    logs = []
    for fen in BENCH_FENS:
        s.clear()
        r = s.search(Position(fen), Limits(depth=depth))
        dn = r.depth_nodes
        for a, b in zip(dn[-4:-1], dn[-3:], strict=True):
            if a > 50 and b > 0:
                logs.append(math.log(b / a))
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def wac(every, time_ms):
    from wasp.board import Position
    from wasp.driver import Limits, Searcher
    from wasp.testsuite import read_suite

    records = read_suite(WAC)[::every]
    s = Searcher(64)
    solved = 0
    for rec in records:
        s.clear()
        r = s.search(Position(rec.fen), Limits(soft_ms=time_ms, hard_ms=time_ms))
        solved += r.best in rec.best if rec.best else r.best not in rec.avoid
    return solved, len(records)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--ebf-depth", type=int, default=9)
    ap.add_argument("--wac-every", type=int, default=10, help="every n-th WAC position")
    ap.add_argument("--time", type=int, default=1000, help="ms per WAC position")
    args = ap.parse_args(argv)

    from wasp.warmup import warmup

    warmup()
    t0 = time.perf_counter()
    b = bench_figures(args.depth)
    e = ebf(args.ebf_depth)
    s, t = wac(args.wac_every, args.time)
    print(f"{'figure':28s} {'Wasp-Py':>14s} {'anchor':>14s}")
    print(f"{'bench nodes':28s} {b['nodes']:>14d} {'-':>14s}")
    print(f"{'bench nodes/second':28s} {b['nps']:>14d} "
          f"{ANCHORS['stockfish_15_1_bench_nps']:>14d}  (Stockfish 15.1 bench)")
    print(f"{'effective branching factor':28s} {e:>14.2f} {ANCHORS['wasp_ebf']:>14.2f}"
          "  (Wasp 1.02)")
    print(f"{f'WAC 1/{args.wac_every} at {args.time} ms':28s} {f'{s}/{t}':>14s} "
          f"{ANCHORS['wac_goal']:>14s}  (goal, full suite)")
    print(f"(benchmark took {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp",))
    sys.exit(main())
