"""Trace tuner speed: a full-batch epoch (E and the gradient of every term) over 1 M positions,
and reading a 10 M-line text trace (then its binary cache).

    python benchmarks/trace.py                      # 1 M positions x 30 terms; 10 M lines
    python benchmarks/trace.py --lines 2000000 --threads 1
    python benchmarks/trace.py --skip-read          # the epoch only

Synthetic data: positions with --coefs non-zero coefficients over --terms tapered terms, random
phases and scales. The text trace is written once to --dir (a block of 100,000 lines repeated)
and kept for the next run. Each figure is the median of --repeat runs (wall and CPU seconds);
the kernels are compiled or loaded before timing.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(repeat, fn):
    """(median wall seconds, median CPU seconds) of `repeat` runs of fn."""
    walls, cpus = [], []
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def synthetic(n, terms, coefs, seed=1):
    """A LinearSet of n positions with `coefs` coefficients each, and results."""
    from tuner.texel import LinearSet, weight_layout

    rng = np.random.default_rng(seed)
    offsets = np.arange(n + 1, dtype=np.int64) * coefs
    idx = rng.integers(0, terms, size=n * coefs).astype(np.int16)
    coef = rng.integers(-3, 4, size=n * coefs).astype(np.float32)
    phase = rng.random(n)
    mg_scale = np.ones(n)
    eg_scale = np.where(rng.random(n) < 0.2, 0.5, 1.0)
    fixed = rng.normal(0, 20, n)
    mg_of, eg_of, nw = weight_layout([True] * terms)
    ls = LinearSet(offsets, idx, coef, phase, mg_scale, eg_scale, fixed, mg_of, eg_of, nw)
    results = rng.choice([0.0, 0.5, 1.0], size=n)
    W = rng.normal(0, 30, nw)
    return ls, results, W


def bench_epoch(args):
    from tuner.texel import ADAM, GradientState, gradient, gradient_epoch, set_threads

    set_threads(args.threads)
    ls, results, W = synthetic(args.n, args.terms, args.coefs)
    small = ls.subset(np.arange(1000))
    gradient(W, small, results[:1000], 1.0)  # compile or load outside the timing
    st = GradientState(W, ADAM, 1.0)
    mask = np.ones(ls.n_weights, dtype=bool)
    gradient_epoch(st, small, results[:1000], 1.0, mask, 0)
    print(f"{args.n} positions x {args.coefs} coefficients over {args.terms} tapered terms "
          f"({ls.n_weights} weights), {args.threads} threads; load average "
          f"{os.getloadavg()[0]:.2f}")
    wall, cpu = timed(args.repeat, lambda: gradient(W, ls, results, 1.0))
    print(f"E and gradient: {wall:.3f} s wall (median of {args.repeat}), {cpu:.3f} s CPU")
    wall, cpu = timed(args.repeat, lambda: gradient_epoch(st, ls, results, 1.0, mask, 0))
    print(f"Adam epoch (full batch, with the step): {wall:.3f} s wall, {cpu:.3f} s CPU")


def write_text_trace(path, lines, terms, coefs, block=100_000):
    """A text trace of `lines` position lines (one block repeated)."""
    from tuner.traces import TraceWriter

    rng = np.random.default_rng(2)
    tmp = f"{path}.block"
    with TraceWriter(tmp, [(f"t{i}", 10, 20) for i in range(terms)]) as w:
        for _ in range(min(block, lines)):
            idx = rng.choice(terms, size=coefs, replace=False)
            c = rng.integers(1, 4, size=coefs) * rng.choice([-1, 1], size=coefs)
            w.position(rng.choice([0.0, 0.5, 1.0]), dict(zip(idx.tolist(), c.tolist(),
                                                              strict=True)),
                       round(rng.random(), 4), 1, 1, 0, 0)
    with open(tmp, "rb") as f:
        data = f.read()
    cut = data.index(b"positions\n") + len(b"positions\n")
    head, body = data[:cut], data[cut:]
    with open(path, "wb") as f:
        f.write(head)
        done = 0
        while done < lines:
            k = min(block, lines - done)
            f.write(body if k == block else b"".join(body.splitlines(True)[:k]))
            done += k
    os.remove(tmp)


def bench_read(args):
    from tuner.texel import set_threads
    from tuner.traces import CACHE_SUFFIX, read_trace

    set_threads(args.threads)
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"bench-{args.lines}x{args.read_coefs}.trace")
    if not os.path.exists(path):
        t = time.perf_counter()
        write_text_trace(path, args.lines, args.terms, args.read_coefs)
        print(f"wrote {path} in {time.perf_counter() - t:.1f} s")
    small = os.path.join(args.dir, "bench-small.trace")
    if not os.path.exists(small):
        write_text_trace(small, 1000, args.terms, args.read_coefs)
    read_trace(small, use_cache=False)  # compile or load outside the timing
    size = os.path.getsize(path)
    print(f"{path}: {args.lines} lines x {args.read_coefs} coefficients, "
          f"{size / 1e9:.2f} GB; load average {os.getloadavg()[0]:.2f}")
    reps = max(1, args.repeat // 2)
    wall, cpu = timed(reps, lambda: read_trace(path, use_cache=False))
    print(f"text: {wall:.2f} s wall (median of {reps}), {cpu:.2f} s CPU: "
          f"{args.lines / wall / 1e6:.2f} M lines/s, {size / wall / 1e6:.0f} MB/s; "
          f"{args.lines / cpu / 1e6:.2f} M lines a CPU second (a shared machine's wall "
          f"time is not the reader's)")
    read_trace(path)  # writes the cache
    wall, cpu = timed(reps, lambda: read_trace(path))
    print(f"binary cache ({os.path.getsize(path + CACHE_SUFFIX) / 1e9:.2f} GB): {wall:.2f} s "
          f"wall, {cpu:.2f} s CPU: {args.lines / wall / 1e6:.2f} M lines/s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="positions of the epoch")
    ap.add_argument("--coefs", type=int, default=30, help="coefficients a position (epoch)")
    ap.add_argument("--terms", type=int, default=800, help="tapered terms")
    ap.add_argument("--lines", type=int, default=10_000_000, help="lines of the text trace")
    ap.add_argument("--read-coefs", type=int, default=30, help="coefficients a line (read)")
    ap.add_argument("--dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                  "wasp-trace-bench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--skip-read", action="store_true")
    ap.add_argument("--skip-epoch", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_epoch:
        bench_epoch(args)
    if not args.skip_read:
        bench_read(args)


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    main()
