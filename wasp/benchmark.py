"""`wasp bench`: a fixed-depth search of fixed positions; its node count is the search's signature.

Each position is searched from a cleared TT and cleared ordering tables, so the count is the
same on every run and every machine; it changes only when the search or evaluation changes.
The positions are this project's own choice: openings, middlegames and endgames. Before the
totals, bench prints the hit rates of the pawn hash and of the evaluation cache over all the
searches (both are cleared with the TT before each position, as the count requires).
"""

import time

BENCH_DEPTH = 9

BENCH_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2P2N2/PP1P1PPP/RNBQK2R w KQkq - 1 5",
    "rnbqk2r/ppp1bppp/4pn2/3p2B1/2PP4/2N5/PP2PPPP/R2QKBNR w KQkq - 4 5",
    "r1bq1rk1/ppp1npbp/3p1np1/3Pp3/2P1P3/2N2N2/PP2BPPP/R1BQ1RK1 w - - 1 9",
    "r2q1rk1/pp1bbppp/2nppn2/8/3NP3/2N1B3/PPPQBPPP/R4RK1 w - - 4 10",
    "r1b2rk1/2q1bppp/p2p1n2/npp1p3/3PP3/2P2N1P/PPB2PP1/RNBQR1K1 w - - 2 12",
    "2rq1rk1/pb1nbppp/1p2pn2/2pp4/2PP4/1P3NP1/PB1NPPBP/2RQ1RK1 w - - 0 11",
    "r1bqr1k1/pp3pbp/2np1np1/2p1p3/2P1P3/2NP1NP1/PP3PBP/R1BQR1K1 w - - 0 10",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "3r1rk1/pp3ppp/2n1bn2/2bqp3/8/2NP1NP1/PP2PPBP/R1BQ1RK1 w - - 4 11",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "2kr3r/ppp2ppp/2n1bn2/2bqp3/8/2NP1NP1/PPQ1PPBP/R1B2RK1 b - - 5 11",
    "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 1 7",
    "6k1/pp3ppp/2p5/3r4/3P4/2P2N2/P4PPP/4R1K1 w - - 0 25",
    "2r3k1/5ppp/p3p3/1p1nP3/3P4/1P3N2/P4PPP/2R3K1 w - - 0 24",
    "8/5pk1/6p1/3R3p/7P/6P1/r4PK1/8 w - - 0 40",
    "8/8/2k5/2p5/2P5/3K4/8/8 w - - 0 50",
    "8/3k4/3p4/3P4/4K3/8/8/8 w - - 0 60",
    "8/p4k2/1p6/2p5/2P5/1P4K1/P7/8 b - - 0 45",
    "6k1/5p2/6p1/8/5P2/5BK1/8/3b4 w - - 0 50",
    "8/8/8/4k3/8/8/2KQ4/8 w - - 0 70",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "8/8/1p6/1P1k4/8/1K6/8/8 w - - 0 1",
    "5rk1/ppp2ppp/8/3q4/3P4/2Q5/PP3PPP/4R1K1 w - - 0 20",
    "r5k1/pp3ppp/2n5/3p4/3P4/2N5/PP3PPP/R5K1 b - - 0 22",
    "2r2rk1/1b2qppp/p3pn2/1p6/3N4/P1B1P3/1P2BPPP/2RQ1RK1 w - - 0 17",
    "r2qr1k1/1p3pp1/p1nbbn1p/3p4/3P4/P1NBBN1P/1PQ2PP1/R3R1K1 w - - 0 15",
    "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 20",
    "6k1/1b3ppp/p7/1p6/8/P4N2/1P3PPP/6K1 w - - 0 30",
)


def bench(depth=None, hash_mb: int = 16, verbose: bool = True, settings=()) -> int:
    """Search every bench position to `depth` (default BENCH_DEPTH); print the signature.
    `settings`: engine options as (name, value) pairs (EvalFile, SearchFile, a search
    parameter, ...), applied before Hash = `hash_mb`."""
    import sys

    from wasp.board import Position
    from wasp.driver import Limits
    from wasp.engine import Engine
    from wasp.evaluate import E_EVAL, EC_WIDTH, PAWN_ENTRIES, cache_stats

    depth = BENCH_DEPTH if depth is None else max(1, int(depth))
    engine = Engine()
    try:
        for message in engine.configure([*settings, ("Hash", hash_mb)]):
            print(message)
    except ValueError as e:
        print(f"wasp bench: error: {e}", file=sys.stderr)
        return 1
    engine.load()
    searcher = engine.searcher
    total_nodes = 0
    total_time = 0.0
    probes = {"pawn": [0, 0], "eval": [0, 0]}  # [probes, hits] summed over the positions
    for i, fen in enumerate(BENCH_FENS, 1):
        searcher.clear()
        pos = Position(fen)
        t0 = time.perf_counter()
        result = searcher.search(pos, Limits(depth=depth))
        dt = time.perf_counter() - t0
        total_nodes += result.nodes
        total_time += dt
        stats = cache_stats(searcher.E)
        for name in probes:
            n = stats[f"{name}_probes"]
            probes[name][0] += n
            probes[name][1] += round(stats[f"{name}_hit_rate"] * n)
        if verbose:
            print(f"Position {i:2d}/{len(BENCH_FENS)}: {result.best:6s} score {result.score:6d} "
                  f"nodes {result.nodes:9d}  {fen}", flush=True)
    nps = int(total_nodes / total_time) if total_time > 0 else 0
    eval_entries = (searcher.E.shape[0] - E_EVAL) // EC_WIDTH
    if not searcher.net_hidden:  # the hand-written evaluation's caches (a net has none)
        for label, name, entries in (("Pawn hash", "pawn", PAWN_ENTRIES),
                                     ("Eval cache", "eval", eval_entries)):
            n, hits = probes[name]
            print(f"{label:<16}: {100.0 * hits / max(1, n):.1f} % hits of {n} probes "
                  f"({entries} entries)")
    print("===========================")
    print(f"Total time (ms) : {int(total_time * 1000)}")
    print(f"Nodes searched  : {total_nodes}")
    print(f"Nodes/second    : {nps}")
    return 0
