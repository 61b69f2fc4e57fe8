"""Start-up, cold and warm, beside the goals (issue 48):

    python benchmarks/startup.py               # cold readyok, full speed cold, warm readyok
    python benchmarks/startup.py --main-job    # also the README's main job on a fresh clone

- cold `readyok`: seconds from launching `wasp` with an empty kernel cache to `readyok`
  (goal 5 s; the engine answers at once and plays with its fallback search meanwhile);
- full speed cold: seconds from that launch until the engine says on stderr that its search's
  kernels are ready (goal 30 s; they compile in a child process);
- warm `readyok`: the same with the cache that run filled, median of --runs (goal 0.5 s);
- the main job (`--main-job`): `wasp-tune loop --quick` in a fresh clone of this checkout with
  an empty cache, from its start to its summary (goal 2.5 min; the `pip install -e .` before
  it is not counted).

Run from the checkout (the engine is `python -m wasp.cli` of this checkout). Wall times depend
on the machine's load: the load average is printed beside them, and the CPU seconds of the
warm engine process (user + sys, launch to exit after `quit`), which depend on it less.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READY = "kernels are ready"  # wasp.background's line on stderr


def engine_start(env, follow_compile=False):
    """(readyok s, full-speed s or None, CPU s of the engine process from launch to exit) of
    one engine start: `uci`, `isready`, and with `follow_compile` the wait for the stderr line
    that says the kernels are ready."""
    env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "wasp.cli"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env=env, cwd=ROOT)
    full = threading.Event()
    stamp = []

    def watch():
        for line in proc.stderr:
            if READY in line and not stamp:
                stamp.append(time.perf_counter() - t0)
                full.set()

    threading.Thread(target=watch, daemon=True).start()
    proc.stdin.write("uci\nisready\n")
    proc.stdin.flush()
    readyok = None
    for line in proc.stdout:
        if line.startswith("readyok"):
            readyok = time.perf_counter() - t0
            break
    if follow_compile:
        full.wait()
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return readyok, stamp[0] if stamp else None, usage.ru_utime + usage.ru_stime


def main_job(cache):
    """Seconds of `wasp-tune loop --quick` in a fresh clone with an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "clone")
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        env = dict(os.environ, WASP_CACHE_DIR=cache, PYTHONPATH=clone)
        env.pop("NUMBA_CACHE_DIR", None)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tuner.cli", "loop", "--quick", "-dir",
                        os.path.join(tmp, "loops", "quick")], cwd=clone, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=11, help="warm starts to time (default 11)")
    ap.add_argument("--main-job", action="store_true", help="also time the README's main job")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        readyok, full, _ = engine_start(env, follow_compile=True)
        print(f"cold: readyok {readyok:.2f} s (goal 5 s), full-speed search ready "
              f"{full:.0f} s (goal 30 s)", flush=True)
        runs = [engine_start(env) for _ in range(args.runs)]
        warm = sorted(r[0] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        print(f"warm: readyok {statistics.median(warm):.2f} s (goal 0.5 s; median of "
              f"{args.runs}, {warm[0]:.2f}-{warm[-1]:.2f} s), CPU of the whole process "
              f"{cpu:.2f} s", flush=True)
    if args.main_job:
        with tempfile.TemporaryDirectory() as cache:
            seconds = main_job(cache)
        print(f"main job on a fresh clone: {seconds / 60:.1f} min (goal 2.5 min)")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
