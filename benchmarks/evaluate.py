"""Evaluations per second on one core over a fixed set of positions.

    python benchmarks/evaluate.py [--passes 50] [--positions 4000]

Positions: tests/data/openings-sample.epd and tests/data/uho_sample.epd, plus positions reached
by seeded random play from them (middlegames and endgames). Reports the rate with the evaluation
cache cleared before every pass (every call computes; the pawn hash stays warm, as in a search)
and the rate when every probe hits the cache, plus hash hit rates.
"""

import argparse
import pathlib
import random
import sys
import time

import numpy as np
from numba import njit

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wasp import kernelcache  # noqa: E402

kernelcache.setup(("wasp",))  # before the kernels are imported

from wasp.evaluate import (  # noqa: E402
    E_EVAL,
    E_STATS,
    EC_WIDTH,
    EVAL_ENTRIES,
    cache_stats,
    default_weights,
    evaluate,
    new_eval_cache,
)
from wasp.position import State  # noqa: E402
from wasp.types import KEYS, N_INFO, UNDO  # noqa: E402


@njit(cache=True, nogil=True, _nrt=False)
def _run(T, BB, ST, W, E, info, passes, clear_cache):
    total = 0
    for _ in range(passes):
        if clear_cache:
            for i in range(E_EVAL, E_EVAL + EVAL_ENTRIES * EC_WIDTH):
                E[i] = 0
        for j in range(BB.shape[0]):
            total += evaluate(T, State(BB[j], ST[j]), W, E, info)
    return total


def bench_positions(n=4000, seed=7):
    import chess

    fens = []
    for name in ("openings-sample.epd", "uho_sample.epd"):
        for line in (ROOT / "tests" / "data" / name).read_text().splitlines():
            if line.strip():
                fens.append(" ".join(line.split()[:4]) + " 0 1")
    rng = random.Random(seed)
    out = list(fens[: n // 2])
    while len(out) < n:
        b = chess.Board(rng.choice(fens))
        for _ in range(rng.randint(10, 80)):
            moves = list(b.legal_moves)
            if not moves:
                break
            caps = [m for m in moves if b.is_capture(m)]
            b.push(rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(moves))
        if not b.is_game_over():
            out.append(b.fen())
    return out[:n]


def pack(fens):
    from wasp.board import Position

    BB = np.zeros((len(fens), KEYS + 1), dtype=np.uint64)
    ST = np.zeros((len(fens), UNDO), dtype=np.int64)
    T = None
    for j, fen in enumerate(fens):
        p = Position(fen)
        T = p.T
        ply = p.S.st[5]
        BB[j, :KEYS] = p.S.bb[:KEYS]
        BB[j, KEYS] = p.S.bb[KEYS + ply]
        ST[j] = p.S.st[:UNDO]
        ST[j, 5] = 0
    return T, BB, ST


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=50)
    ap.add_argument("--positions", type=int, default=4000)
    args = ap.parse_args(argv)
    fens = bench_positions(args.positions)
    T, BB, ST = pack(fens)
    W = default_weights()
    E = new_eval_cache()
    info = np.zeros(N_INFO, dtype=np.int64)
    _run(T, BB, ST, W, E, info, 1, True)  # compile / load
    E[E_STATS:E_STATS + 4] = 0
    n = len(fens) * args.passes
    t = time.perf_counter()
    _run(T, BB, ST, W, E, info, args.passes, True)
    cold = n / (time.perf_counter() - t)
    stats = cache_stats(E)
    t = time.perf_counter()
    _run(T, BB, ST, W, E, info, args.passes, False)
    hot = n / (time.perf_counter() - t)
    print(f"positions {len(fens)}, passes {args.passes}")
    print(f"evaluations/s (eval cache cleared each pass): {cold / 1e6:.2f} M")
    print(f"evaluations/s (eval cache hits):              {hot / 1e6:.2f} M")
    print(f"pawn hash hit rate {stats['pawn_hit_rate']:.1%} over the computing passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
