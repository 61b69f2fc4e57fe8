"""Compile (or load from numba's cache) every kernel the engine uses, so `readyok` is fast."""

import time

_DONE = False

WARMUP_FEN = "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1"  # promotions both ways


def warmup(verbose: bool = False) -> int:
    """Run each kernel once (search, qsearch, evaluation, SEE, TT, perft). Returns 0."""
    global _DONE
    if _DONE:
        return 0
    t0 = time.perf_counter()
    from wasp.board import Position
    from wasp.perft import perft
    from wasp.position import copy_state
    from wasp.search import Limits, Searcher
    from wasp.see import see

    if verbose:
        print("loading or compiling kernels (a few minutes the first time) ...", flush=True)
    # Numba loads a kernel once per type signature, whatever path runs: one position
    # (with promotions both ways, so every branch types) loads them all.
    searcher = Searcher(1)
    pos = Position(WARMUP_FEN)
    searcher.search(pos, Limits(depth=2), on_info=lambda line: line.uci())
    first = pos.legal_move_codes()[0]
    searcher._tt_reply(copy_state(pos.S), first)
    searcher.qsearch(pos)
    see(pos.T, pos.S, first)
    perft(pos, 1)
    _DONE = True
    if verbose:
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0
