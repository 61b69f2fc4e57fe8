"""Benchmark of the match runner against fastchess and cutechess-cli.

Stockfish against Stockfish, 40 games at tc=1+0.01, concurrency 2, -repeat,
openings UHO_4060_v2.epd in sequential order from a fixed start; the median
of 3 runs. Prints our figures beside the anchor figures measured on these
machines with fastchess and cutechess-cli.

    python benchmarks/match.py [--runs 3] [--games 40] [--openings PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_OPENINGS = os.path.join(ROOT, "..", "shared", "data", "openings", "UHO_4060_v2.epd")

# Measured on these machines (2 cores), same match settings.
ANCHORS = {
    "fastchess": {"wall_s": 64.6, "time_losses": 0, "cpu_per_game_s": 0.04},
    "cutechess-cli": {"wall_s": 63.6, "time_losses": 0, "cpu_per_game_s": 0.19},
}


def find_engine(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/games")
    if path is None:
        sys.exit(f"{name} not found (apt-get install {name})")
    return path


def one_run(stockfish: str, openings: str, games: int, start: int, rundir: str) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "testing.cli",
        "-engine",
        f"cmd={stockfish}",
        "name=sf1",
        "-engine",
        f"cmd={stockfish}",
        "name=sf2",
        "-each",
        "proto=uci",
        "tc=1+0.01",
        "-concurrency",
        "2",
        "-rounds",
        str(games // 2),
        "-repeat",
        "-openings",
        f"file={openings}",
        "format=epd",
        "order=sequential",
        f"start={start}",
        "-ratinginterval",
        "0",
        "-progress",
        "off",
        "-rundir",
        rundir,
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"run failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    with open(os.path.join(rundir, "summary.json")) as f:
        s = json.load(f)
    s["process_wall_s"] = wall
    return s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--start", type=int, default=1, help="first opening (1-based)")
    ap.add_argument("--openings", default=DEFAULT_OPENINGS)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    stockfish = find_engine("stockfish")
    openings = os.path.abspath(args.openings)
    if not os.path.isfile(openings):
        sys.exit(f"openings file not found: {openings}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="wasp-match-bench-") as tmp:
        for i in range(args.runs):
            s = one_run(stockfish, openings, args.games, args.start, os.path.join(tmp, f"r{i}"))
            runs.append(s)
            print(
                f"run {i + 1}: wall {s['process_wall_s']:.1f} s, "
                f"time losses {s['time_losses_this_session']}, "
                f"runner CPU {s['runner_cpu_per_game_s']:.3f} s/game playing "
                f"({s.get('process_cpu_per_game_s', float('nan')):.3f} with start-up), "
                f"latency median {s['latency_median_ms']:.2f} ms "
                f"p99 {s['latency_p99_ms']:.2f} ms max {s['latency_max_ms']:.2f} ms",
                flush=True,
            )
    med = {
        "wall_s": statistics.median(r["process_wall_s"] for r in runs),
        "time_losses": statistics.median(r["time_losses_this_session"] for r in runs),
        "cpu_per_game_s": statistics.median(r["runner_cpu_per_game_s"] for r in runs),
        "process_cpu_per_game_s": statistics.median(r["process_cpu_per_game_s"] for r in runs),
        "latency_median_ms": statistics.median(r["latency_median_ms"] for r in runs),
        "latency_p99_ms": statistics.median(r["latency_p99_ms"] for r in runs),
    }
    print()
    print(
        f"Stockfish vs Stockfish, {args.games} games, tc=1+0.01, concurrency 2, -repeat, "
        f"median of {args.runs} runs"
    )
    print(f"{'runner':<16} {'wall s':>8} {'time losses':>12} {'runner CPU s/game':>18}")
    for name, a in ANCHORS.items():
        print(f"{name:<16} {a['wall_s']:>8.1f} {a['time_losses']:>12} {a['cpu_per_game_s']:>18.3f}")
    print(
        f"{'wasp-match':<16} {med['wall_s']:>8.1f} {med['time_losses']:>12g} "
        f"{med['cpu_per_game_s']:>18.3f}"
    )
    best = min(a["wall_s"] for a in ANCHORS.values())
    print(
        f"\nwasp-match wall / best anchor: {med['wall_s'] / best:.3f}; per-move latency "
        f"median {med['latency_median_ms']:.2f} ms, p99 {med['latency_p99_ms']:.2f} ms; "
        f"runner CPU with interpreter start-up and imports "
        f"{med['process_cpu_per_game_s']:.3f} s/game (one-off numpy/scipy import for the "
        f"statistics: {statistics.median(r['statistics_import_cpu_s'] for r in runs):.2f} s)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"median": med, "runs": runs, "anchors": ANCHORS}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
