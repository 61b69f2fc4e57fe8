"""Compile (or load from numba's cache) every kernel the engine uses, so `readyok` is fast."""

import time

_DONE = False

WARMUP_FENS = (
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "8/8/4k3/8/2P5/8/4K3/8 w - - 0 1",
    "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1",  # promotions both ways
)


def warmup(verbose: bool = False) -> int:
    """Run each kernel once (search, qsearch, evaluation, SEE, TT, perft). Returns 0."""
    global _DONE
    if _DONE:
        return 0
    t0 = time.perf_counter()
    from wasp.board import Position
    from wasp.perft import perft
    from wasp.search import Limits, Searcher
    from wasp.see import see

    if verbose:
        print("loading or compiling kernels (a few minutes the first time) ...", flush=True)
    searcher = Searcher(1)
    for fen in WARMUP_FENS:
        pos = Position(fen)
        searcher.search(pos, Limits(depth=3), on_info=lambda line: line.uci())
        searcher._tt_reply(pos.S.__class__(pos.S.bb.copy(), pos.S.st.copy()),
                           pos.legal_move_codes()[0])
        searcher.qsearch(pos)
        for m in pos.legal_move_codes():
            see(pos.T, pos.S, m)
        perft(pos, 1)
    _DONE = True
    if verbose:
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0
