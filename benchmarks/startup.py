"""Start-up: seconds from launching `wasp` to `uciok` and to `readyok`, beside the goal.

    python benchmarks/startup.py            # warm numba cache (the usual case), 5 runs
    python benchmarks/startup.py --cold     # also once with an empty cache (compiles all)

The goal (a GUI's patience): `readyok` within 1 s once the cache is warm.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(env):
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "wasp.cli"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
    proc.stdin.write("uci\n")
    proc.stdin.flush()
    uciok = readyok = None
    for line in proc.stdout:
        if line.startswith("uciok"):
            uciok = time.perf_counter() - t0
            proc.stdin.write("isready\n")
            proc.stdin.flush()
        elif line.startswith("readyok"):
            readyok = time.perf_counter() - t0
            break
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    proc.wait(timeout=30)
    return uciok, readyok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            u, r = measure(dict(os.environ, NUMBA_CACHE_DIR=cache))
        print(f"cold cache: uciok {u:.2f} s, readyok {r:.1f} s (compiles every kernel)")
    measure(dict(os.environ))  # make sure the cache is warm
    runs = [measure(dict(os.environ)) for _ in range(args.runs)]
    u = statistics.median(x for x, _ in runs)
    r = statistics.median(y for _, y in runs)
    print(f"warm cache (median of {args.runs}): uciok {u:.2f} s, readyok {r:.2f} s "
          f"(goal: readyok <= 1 s)")


if __name__ == "__main__":
    main()
