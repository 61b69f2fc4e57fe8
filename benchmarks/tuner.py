"""Tuner speed per million positions: leaf-path E, full-qsearch E, a gradient epoch, and the
estimated time of one binary-search pass over all parameters on the leaf path.

    python benchmarks/tuner.py             # 1 M positions (sf-uho-train.epd repeated), 2 threads
    python benchmarks/tuner.py --n 200000 --threads 1

Data: ../shared/data/labelled/sf-uho-train.epd (loaded once, then from the binary cache).
Kernels are compiled or loaded before timing; each figure is the best of --repeat runs.
"""

import argparse
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "labelled" / "sf-uho-train.epd"


def best_of(repeat, fn):
    """(best wall time, process CPU time of that run, result)."""
    best = None
    out = None
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        out = fn()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if best is None or wall < best[0]:
            best = (wall, cpu)
    return best[0], best[1], out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--n", type=int, default=1_000_000, help="positions (the set is repeated)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--probe-params", type=int, default=24,
                    help="parameters binary-searched to count E evaluations per parameter")
    args = ap.parse_args(argv)

    from tuner.texel import Scorer, error, fit_k, load, sparse_traces
    from tuner.texel import methods as M
    from wasp import params as P

    t = time.perf_counter()
    ps = load(args.data, skip_bad=True)
    print(f"load {args.data}: {ps.summary()} in {time.perf_counter() - t:.1f} s")
    reps = -(-args.n // len(ps))
    rows = np.tile(ps.rows, (reps, 1))[:args.n]
    results = np.tile(ps.results, reps)[:args.n]
    n = len(rows)
    per_m = 1e6 / n
    W = P.default_weights()
    sc = Scorer(args.threads)
    sc.qsearch_scores(W, rows[:1000])  # compile or load outside the timing
    sc.leaf_scores(W, rows[:1000])

    mask = np.zeros(P.N_WEIGHTS, dtype=bool)
    mask[M.select_weights(linear_only=True)] = True
    small = sparse_traces(W, rows[:1000], args.threads)  # compile or load these too
    M.gradient_epoch(M.GradientState(W, M.ADAM), small, results[:1000], 1.0, mask, 500)
    print(f"load average before timing: {os.getloadavg()[0]:.2f} "
          f"(other processes share the cores: CPU seconds are the steadier figure)")

    tq, cq, (q, leaves) = best_of(args.repeat, lambda: sc.qsearch_scores(W, rows))
    K = fit_k(q, results)
    e_q = error(q, results, K)
    tl, cl, e_l = best_of(args.repeat, lambda: sc.leaf_error(W, leaves, results, K))
    assert e_l == e_q
    print(f"{n} positions, {args.threads} threads, K = {K:.4f}, E = {e_q:.6f}")
    print(f"full-qsearch E: {tq * per_m:.3f} s wall, {cq * per_m:.3f} s CPU per 1M positions "
          f"(goal <= 5 s)")
    print(f"leaf-path E:    {tl * per_m:.3f} s wall, {cl * per_m:.3f} s CPU per 1M positions "
          f"(goal <= 0.5 s)")

    tt, ct, traces = best_of(1, lambda: sparse_traces(W, leaves, args.threads))
    print(f"sparse traces:  {tt * per_m:.2f} s wall, {ct * per_m:.2f} s CPU per 1M positions "
          f"({len(traces[0]) / n:.1f} terms per position)")
    st = M.GradientState(W, M.ADAM)
    tg, cg, _ = best_of(1, lambda: M.gradient_epoch(st, traces, results, K, mask, 16384, 0))
    print(f"gradient epoch: {tg * per_m:.2f} s wall, {cg * per_m:.2f} s CPU per 1M positions "
          f"(Adam, batches of 16384)")

    # E evaluations per parameter of Wasp's binary search, on a 100k subset
    sub = slice(0, min(n, 100_000))
    calls = [0]

    def f(Wx):
        calls[0] += 1
        return error(sc.leaf_scores(Wx, leaves[sub]), results[sub], K)

    rng = np.random.default_rng(0)
    probe = rng.choice(P.N_WEIGHTS, size=min(args.probe_params, P.N_WEIGHTS), replace=False)
    Wb = W.copy()
    e = f(Wb)
    calls[0] = 0
    for i in probe:
        _, _, e = M.tune_parameter(M.BINARY, f, Wb, int(i), e)
    per_param = calls[0] / len(probe)
    est = per_param * P.N_WEIGHTS * tl * per_m * 1.1  # +10% for the validation E
    print(f"binary search:  {per_param:.1f} E evaluations per parameter (sample of "
          f"{len(probe)}); one pass over all {P.N_WEIGHTS} weights on 1M positions "
          f"~ {est / 3600:.2f} h")


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    main()
