"""The engine's speed with the nets of bullet's progression beside Wasp-Py's own N = 128 net:
`wasp bench`'s searches with each net in one process, the nets alternating run by run; the
medians of nodes a second of CPU time (on a machine shared with other work the wall clock
mostly measures the others) and of wall time, and their ratios to the N = 128 net.

The issue's bar: a (768x10hm -> 512)x2 -> 1x8 net at 0.8x or more of the N = 128 net's nodes/s.
The wider nets are Wasp-Py's own net grown (`grown_net`), so that the search meets the same
kind of evaluations and its tree stays alike: neurons 128 .. N-1 of zero weights, every king
bucket and output bucket a copy of the shipped net's (a king on files e-h then sees the mirror
image of the board, as ChessBucketsMirrored does). Every neuron is computed whatever its
weights, so the cost is that of a trained net of the same shape.

    python benchmarks/nnue_engine.py                    # 5 alternating runs, bench depth
    python benchmarks/nnue_engine.py --runs 9 --depth 9 --nets 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib
import re
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

SHIPPED = ROOT / "wasp" / "evalfiles" / "wasp-py-3.nnue"
EXAMPLE_LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
                  8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]
# (label, inputs, hidden, output buckets)
NETS = [("(768x10hm -> 512)x2 -> 1x8", "buckets-mirrored", 512, 8),
        ("(768 -> 512)x2 -> 1x8", "chess768", 512, 8),
        ("(768x10hm -> 1024)x2 -> 1x8", "buckets-mirrored", 1024, 8)]


def grown_net(directory, inputs, hidden, k) -> pathlib.Path:
    """Wasp-Py's net grown to `hidden` neurons, the layout of example 3 (or Chess768), K
    output buckets; written with its NET.json."""
    import numpy as np

    from wasp.nnue import arch as A
    from wasp.nnue import netfile

    net = netfile.read(SHIPPED)
    n0 = net.hidden
    a = A.Arch(inputs=inputs, layout=EXAMPLE_LAYOUT if inputs != "chess768" else [0] * 32,
               hidden=hidden, output_buckets=k)
    l0w = np.zeros((a.features, hidden), np.int16)
    for b in range(a.input_buckets):
        l0w[768 * b:768 * (b + 1), :n0] = net.l0w
    l0b = np.zeros(hidden, np.int16)
    l0b[:n0] = net.l0b
    l1w = np.zeros((k, 2 * hidden), np.int16)
    l1w[:, :n0] = net.l1w[:n0]
    l1w[:, hidden:hidden + n0] = net.l1w[n0:]
    path = pathlib.Path(directory) / f"{inputs}-{hidden}x{k}.nnue"
    A.write_tensors(path, a, {"l0w": l0w, "l0b": l0b, "l1w": l1w, "l1b": np.full(k, net.l1b)})
    A.write_meta(path, a)
    return path


def bench_run(depth, path) -> tuple[int, float, float]:
    """(nodes, CPU seconds, wall seconds) of `wasp bench`'s searches with the net at `path`."""
    from wasp.benchmark import bench

    out = io.StringIO()
    cpu, wall = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(out):
        if bench(depth, settings=[("EvalFile", path)]) != 0:
            raise SystemExit(f"wasp bench failed with {path}")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return int(re.search(r"Nodes searched\s*:\s*(\d+)", out.getvalue()).group(1)), cpu, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--nets", type=int, default=1,
                    help="how many of the grown nets to run beside the N = 128 one (1-3; "
                         "default 1: the issue's 768x10hm -> 512 x8)")
    args = ap.parse_args()
    from wasp import kernelcache

    kernelcache.setup(("wasp",))
    with tempfile.TemporaryDirectory() as tmp:
        nets = [("(768 -> 128)x2 -> 1, wasp-py-3.nnue", str(SHIPPED))]
        nets += [(label, str(grown_net(tmp, inputs, n, k)))
                 for label, inputs, n, k in NETS[:max(1, min(3, args.nets))]]
        for _, path in nets:  # load (or compile) the kernels before timing
            bench_run(1, path)
        rates = {label: ([], []) for label, _ in nets}
        for run in range(1, args.runs + 1):
            parts = [f"run {run}:"]
            for label, path in (nets if run % 2 else nets[::-1]):
                nodes, cpu, wall = bench_run(args.depth, path)
                rates[label][0].append(nodes / cpu)
                rates[label][1].append(nodes / wall)
                parts.append(f"{label} {nodes / cpu / 1e3:.0f} k/s CPU, {nodes / wall / 1e3:.0f} "
                             f"k/s wall ({nodes:,} nodes)")
            print("  ".join(parts), flush=True)
    base = [statistics.median(r) for r in rates[nets[0][0]]]
    print()
    for label, _ in nets:
        cpu, wall = (statistics.median(r) for r in rates[label])
        print(f"{label}: median {cpu / 1e3:.0f} k nodes a CPU second ({cpu / base[0]:.2f}x the "
              f"N = 128 net), {wall / 1e3:.0f} k a wall second ({wall / base[1]:.2f}x) over "
              f"{args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
