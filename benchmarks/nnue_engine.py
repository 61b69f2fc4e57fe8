"""The engine's speed with the nets of bullet's progression beside Wasp-Py's own N = 128 net:
`wasp bench` nodes/s of each, the runs alternating, medians and their ratios to the N = 128 net.

The issue's bar: a (768x10hm -> 512)x2 -> 1x8 net at 0.8x or more of the N = 128 net's nodes/s.
The wider nets are Wasp-Py's own net grown (`grown_net`), so that the search meets the same
kind of evaluations and its tree stays alike: neurons 128 .. N-1 of zero weights, every king
bucket and output bucket a copy of the shipped net's (a king on files e-h then sees the mirror
image of the board, as ChessBucketsMirrored does). Every neuron is computed whatever its
weights, so the cost is that of a trained net of the same shape.

    python benchmarks/nnue_engine.py                    # 5 alternating runs, bench depth
    python benchmarks/nnue_engine.py --runs 9 --depth 9
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(HERE))

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


def main() -> int:
    from bench import wasp_bench

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    ap.add_argument("--nets", type=int, default=1,
                    help="how many of the grown nets to run beside the N = 128 one (1-3; "
                         "default 1: the issue's 768x10hm -> 512 x8)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        nets = [("(768 -> 128)x2 -> 1, wasp-py-3.nnue", str(SHIPPED))]
        nets += [(label, str(grown_net(tmp, inputs, n, k)))
                 for label, inputs, n, k in NETS[:max(1, min(3, args.nets))]]
        wasp_bench(ROOT, 1, nets[0][1])  # load (or compile) the kernels before timing
        rates = {label: [] for label, _ in nets}
        for run in range(1, args.runs + 1):
            parts = [f"run {run}:"]
            order = nets if run % 2 else nets[::-1]
            for label, path in order:
                nodes, nps, steal = wasp_bench(ROOT, args.depth, path)
                rates[label].append(nps)
                parts.append(f"{label} {nps / 1e3:.0f} k/s ({nodes:,} nodes, steal {steal:.0f} %)")
            print("  ".join(parts), flush=True)
    base = statistics.median(rates[nets[0][0]])
    print()
    for label, _ in nets:
        median = statistics.median(rates[label])
        print(f"{label}: median {median / 1e3:.0f} k nodes/s over {len(rates[label])} runs "
              f"(range {min(rates[label]) / 1e3:.0f}-{max(rates[label]) / 1e3:.0f}), "
              f"{median / base:.2f}x the N = 128 net")
    return 0


if __name__ == "__main__":
    sys.exit(main())
