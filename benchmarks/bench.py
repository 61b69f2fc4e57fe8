"""`wasp bench` speed over repeated runs, each beside Stockfish's `bench` and with the CPU
time the hypervisor stole during it.

On a shared virtual machine one bench run says little: the host takes the CPU away in bursts
(/proc/stat's "steal"; 10-60 % for minutes at a time on this project's machines), and a run
caught in one is slow for no fault of the engine. So this runs bench several times, each
followed by Stockfish's bench as the anchor, reads the steal share over every run, and reports
the medians of all runs and of the quiet ones (steal at most --max-steal %).

    python benchmarks/bench.py [--runs 7] [--depth 9] [--max-steal 2]
    python benchmarks/bench.py --eval-file ''                # the hand-written evaluation
    python benchmarks/bench.py --compare ../other-checkout   # A/B, alternating, same runs

The node count is the search's signature (`wasp bench`); --compare checks out nothing, it runs
the kernels of the other directory as they are.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish"
                                          if os.path.exists("/usr/games/stockfish") else None)


def timed(cmd, cwd, env=None) -> tuple[str, float]:
    """Output (stdout and stderr) of a command, and the steal share (%) while it ran (0 where
    the system keeps no steal count)."""
    from testing.tournament import host_steal, steal_share

    before = host_steal()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return out.stdout + out.stderr, steal_share(before, host_steal()) or 0.0


def wasp_bench(root: pathlib.Path, depth, eval_file=None) -> tuple[int, int, float]:
    """(nodes, nodes/second, steal %) of one `wasp bench` of the checkout at `root`, with its
    default evaluation or `eval_file` ("": the hand-written evaluation)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("NUMBA_CACHE_DIR", None)  # each checkout its own keyed cache (wasp.kernelcache)
    cmd = [sys.executable, "-m", "wasp.cli", "bench"] + ([str(depth)] if depth else [])
    if eval_file is not None:
        cmd += ["--eval-file", eval_file]
    text, steal = timed(cmd, root, env)
    nodes = re.search(r"Nodes searched\s*:\s*(\d+)", text)
    nps = re.search(r"Nodes/second\s*:\s*(\d+)", text)
    if not (nodes and nps):
        raise SystemExit(f"wasp bench in {root} failed:\n{text[-2000:]}")
    return int(nodes.group(1)), int(nps.group(1)), steal


def stockfish_bench() -> tuple[int, float]:
    text, steal = timed([STOCKFISH, "bench"], None)
    m = re.search(r"Nodes/second\s*:\s*(\d+)", text)
    return (int(m.group(1)) if m else 0), steal


def summary(label: str, runs: list[tuple[int, float]], max_steal: float) -> str:
    if not runs:
        return f"{label}: no runs"
    quiet = [nps for nps, steal in runs if steal <= max_steal]
    text = (f"{label}: median {statistics.median(n for n, _ in runs) / 1e6:.3f} M nodes/s "
            f"over {len(runs)} runs (range {min(n for n, _ in runs) / 1e6:.3f}-"
            f"{max(n for n, _ in runs) / 1e6:.3f})")
    if quiet:
        text += (f"; {statistics.median(quiet) / 1e6:.3f} M over the {len(quiet)} with steal "
                 f"<= {max_steal:g} %")
    else:
        text += f"; no run had steal <= {max_steal:g} %"
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--max-steal", type=float, default=2.0,
                    help="runs with more stolen CPU (%%) are left out of the quiet median")
    ap.add_argument("--compare", default=None, metavar="DIR",
                    help="another checkout whose bench alternates with this one's")
    ap.add_argument("--no-stockfish", action="store_true", help="skip the anchor runs")
    ap.add_argument("--eval-file", default=None, metavar="FILE",
                    help="wasp bench's --eval-file: a net or parameter file, '' for the "
                         "hand-written evaluation (default: the engine's, Wasp-Py's net)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    roots = [ROOT] + ([pathlib.Path(args.compare).resolve()] if args.compare else [])
    for root in roots:  # load (or compile) the kernels before any run is timed
        subprocess.run([sys.executable, "-m", "wasp.cli", "warmup"], cwd=root, check=True,
                       env={**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"},
                            "PYTHONPATH": str(root)}, capture_output=True)
    results: dict[str, list[tuple[int, float]]] = {str(r): [] for r in roots}
    anchor: list[tuple[int, float]] = []
    signature = {}
    for k in range(1, args.runs + 1):
        parts = [f"run {k}:"]
        for root in roots:
            nodes, nps, steal = wasp_bench(root, args.depth, args.eval_file)
            signature.setdefault(str(root), nodes)
            if signature[str(root)] != nodes:
                raise SystemExit(f"{root}: bench nodes changed between runs "
                                 f"({signature[str(root)]} then {nodes})")
            results[str(root)].append((nps, steal))
            parts.append(f"{root.name} {nps / 1e6:.3f} M (steal {steal:.1f} %)")
        if STOCKFISH and not args.no_stockfish:
            nps, steal = stockfish_bench()
            anchor.append((nps, steal))
            parts.append(f"stockfish {nps / 1e6:.3f} M (steal {steal:.1f} %)")
        print("  ".join(parts), flush=True)
    print()
    for root in roots:
        print(f"{root.name}: bench {signature[str(root)]:,} nodes")
        print("  " + summary("Wasp-Py", results[str(root)], args.max_steal))
    if anchor:
        print("  " + summary("Stockfish bench (anchor)", anchor, args.max_steal))
    else:
        why = "--no-stockfish" if args.no_stockfish else "Stockfish is not installed"
        print(f"  {why}: no anchor (the issue quotes Stockfish 15.1's bench at 1.39 M)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
