"""Start-up: seconds from launching `wasp` to `uciok` and to `readyok`, beside the goal.

    python benchmarks/startup.py            # warm numba cache (the usual case), 11 runs
    python benchmarks/startup.py --cold     # also once with an empty cache (compiles all)

The goal (a GUI's patience): `readyok` within 1 s once the cache is warm. Wall times
depend on the machine's load; the CPU time (user + sys) of the engine process, from
launch to exit after `quit`, depends on it less. Run from the checkout to measure (the
engine is `python -m wasp.cli`).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(env):
    """(uciok s, readyok s, CPU s of the whole process)."""
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
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stdin.close()
    return uciok, readyok, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            u, r, _ = measure(dict(os.environ, NUMBA_CACHE_DIR=cache))
        print(f"cold cache: uciok {u:.2f} s, readyok {r:.1f} s (compiles every kernel)")
    measure(dict(os.environ))  # make sure the cache is warm
    runs = [measure(dict(os.environ)) for _ in range(args.runs)]
    u = statistics.median(x for x, _, _ in runs)
    r = sorted(y for _, y, _ in runs)
    cpu = statistics.median(z for _, _, z in runs)
    print(f"warm cache (median of {args.runs}): uciok {u:.2f} s, "
          f"readyok {statistics.median(r):.2f} s (goal: <= 1 s; fastest {r[0]:.2f} s, "
          f"slowest {r[-1]:.2f} s), CPU user+sys {cpu:.2f} s")


if __name__ == "__main__":
    main()
