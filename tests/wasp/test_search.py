"""The search (wasp.search): mates, draws, limits, switches, MultiPV, stop, the bench signature."""

import contextlib
import io
import threading
import time

import chess
import pytest

from tests.wasp.helpers import Charge
from wasp.board import Position
from wasp.driver import MATE, MATE_BOUND, Limits, Searcher
from wasp.searchparams import LATER_TECHNIQUES, TECHNIQUES

MATES = [
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, "d1d8"),
    ("1k6/ppp5/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, "d1d8"),
    ("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, "d5f6"),
    ("6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1", 2, "g2g1"),
    ("2r3k1/p4p2/3Rp2p/1p2P1pK/8/1P4P1/P3Q2P/1q6 b - - 0 1", 3, "b1g6"),
]


@pytest.fixture(scope="module")
def searcher():
    return Searcher(8)


def _mate_moves(score):
    return (MATE - abs(score) + 1) // 2


@pytest.mark.parametrize("fen, n, move", MATES)
def test_mates_in_one_to_three_are_found(searcher, fen, n, move):
    searcher.clear()
    r = searcher.search(Position(fen), Limits(depth=2 * n + 3))
    assert r.score >= MATE_BOUND and _mate_moves(r.score) == n
    assert r.best == move
    # The PV is a mating line.
    board = chess.Board(fen)
    for m in r.pv:
        board.push_uci(m)
    assert board.is_checkmate()


@pytest.mark.parametrize("fen, n, move", MATES[2:])
def test_mates_found_with_every_technique_off(fen, n, move):
    s = Searcher(4)
    for name in TECHNIQUES:
        s.set_technique(name, False)
    r = s.search(Position(fen), Limits(depth=2 * n + 1))
    assert r.score >= MATE_BOUND and r.best == move


def test_no_legal_move_gives_null_bestmove(searcher):
    r = searcher.search(Position("7k/5KQ1/8/8/8/8/8/8 b - - 0 1"), Limits(depth=3))
    assert r.best == "0000"


def test_insufficient_material_and_fifty_moves_score_zero(searcher):
    r = searcher.search(Position("8/8/4k3/8/8/3NK3/8/8 w - - 0 1"), Limits(depth=6))
    assert r.score == 0
    r = searcher.search(Position("8/8/4k3/8/8/3QK3/8/8 w - - 99 80"), Limits(depth=4))
    assert abs(r.score) < MATE_BOUND


def test_repetition_is_scored_as_a_draw():
    s = Searcher(8)
    pos = Position("7k/8/8/8/8/8/8/R6K w - - 0 1")
    for m in ["a1a2", "h8g8", "a2a1", "g8h8", "a1a2", "h8g8", "a2a1"]:
        pos.push_uci(m)
    # Black to move: g8h8 repeats the position; every other move loses slowly.
    r = s.search(pos, Limits(depth=4, searchmoves=["g8h8"]))
    assert r.best == "g8h8" and r.score == 0
    r = s.search(pos, Limits(depth=4, searchmoves=["g8f8"]))
    assert r.score < -300


def test_node_limit_is_respected(searcher):
    searcher.clear()
    r = searcher.search(Position(), Limits(nodes=3000))
    assert r.nodes <= 3001
    assert r.best in Position().legal_moves()


def test_searchmoves_restricts_the_root(searcher):
    r = searcher.search(Position(), Limits(depth=4, searchmoves=["a2a3", "h2h3"]))
    assert r.best in ("a2a3", "h2h3")


def test_multipv_gives_distinct_lines():
    s = Searcher(8)
    s.multipv = 3
    lines = []
    s.search(Position(), Limits(depth=5), on_info=lines.append)
    last = [ln for ln in lines if ln.depth == 5 and not ln.bound]
    assert sorted(ln.multipv for ln in last) == [1, 2, 3]
    assert len({ln.pv[0] for ln in last}) == 3
    scores = [ln.score for ln in sorted(last, key=lambda ln: ln.multipv)]
    assert scores == sorted(scores, reverse=True)


def test_stop_is_met_quickly():
    s = Searcher(8)
    done = threading.Event()
    out = {}

    def run():
        out["r"] = s.search(Position(), Limits(infinite=True))
        done.set()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.5)
    # the referee's seconds: wall time less what a busy or stalled host withheld, never less
    # than this process's CPU time (the search thread's until it stopped)
    with Charge(own=True) as charge:
        s.stop()
        assert done.wait(30.0)
    assert charge.seconds < 0.1, (charge.wall, charge.cpu)
    t.join()
    assert out["r"].best in Position().legal_moves()


def test_hard_deadline_is_met():
    s = Searcher(8)
    with Charge(own=True) as charge:
        r = s.search(Position(), Limits(soft_ms=200, hard_ms=200))
    assert charge.seconds < 0.35, (charge.wall, charge.cpu)
    assert r.best in Position().legal_moves()


def test_deadlines_count_from_when_the_clock_started():
    # the GUI's command came 5 s ago: 5.1 s from then leaves about 0.1 s, not 5.1 s
    s = Searcher(8)
    with Charge(own=True) as charge:
        r = s.search(Position(), Limits(soft_ms=5100, hard_ms=5100, start=charge.t0 - 5.0))
    assert charge.seconds < 1.0, (charge.wall, charge.cpu)
    assert r.best in Position().legal_moves()


def test_bench_signature_is_stable():
    from wasp import benchmark

    def run():
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            benchmark.bench(depth=4)
        return [ln for ln in buf.getvalue().splitlines() if ln.startswith("Nodes searched")]

    first = run()
    assert first and first == run()
    assert int(first[0].split(":")[1]) > 1000


def _bench_nodes(depth, settings=()):
    from wasp import benchmark

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        benchmark.bench(depth=depth, verbose=False, settings=settings)
    return int(buf.getvalue().split("Nodes searched  :")[1].split()[0])


def test_later_techniques_switched_off_give_wasp_search_node_counts():
    """Every technique after Wasp 1.02 switched off: the bench counts at depth 5 of the search
    before them (with the default net and with the hand-written evaluation); each one
    switched on alone searches another tree (SingularExt from the lowest depth it allows:
    its default, 6 plies, is deeper than these searches' nodes)."""
    off = [(name, "false") for name in LATER_TECHNIQUES]
    assert _bench_nodes(5, off) == 121_822
    assert _bench_nodes(5, [*off, ("EvalFile", "")]) == 137_048
    reach = {"SingularExt": [("SingularDepth", "3")]}
    for name in LATER_TECHNIQUES:
        on = [(n, "true" if n == name else "false") for n in LATER_TECHNIQUES]
        assert _bench_nodes(5, on + reach.get(name, [])) != 121_822, name
    assert _bench_nodes(5, off + reach["SingularExt"]) == 121_822


def _bench_lines(**kwargs):
    from wasp import benchmark

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        benchmark.bench(depth=3, **kwargs)
    lines = buf.getvalue().splitlines()
    assert lines[-3].startswith("Total time") and lines[-1].startswith("Nodes/second")
    return lines


def test_bench_prints_the_pawn_hash_and_eval_cache_hit_rates_of_the_hand_written_evaluation():
    import re

    lines = _bench_lines(settings=[("EvalFile", "")])
    for label, entries in (("Pawn hash", 8192), ("Eval cache", 1 << 18)):
        line = next(ln for ln in lines if ln.startswith(label))
        m = re.search(r": ([\d.]+) % hits of (\d+) probes \((\d+) entries\)", line)
        assert m, line
        assert 0 < float(m.group(1)) < 100 and int(m.group(2)) > 1000
        assert int(m.group(3)) == entries
    # the default net uses neither cache: no lines of zero probes
    assert not any(ln.startswith(("Pawn hash", "Eval cache")) for ln in _bench_lines())


def test_qsearch_sees_a_hanging_queen():
    s = Searcher(1)
    # Material says -8 pawns; after exd5 white is a pawn up.
    assert 50 < s.qsearch(Position("4k3/pp6/8/3q4/4P3/8/PP6/4K3 w - - 0 1")) < 300
    # Alone, the pawn left after exd5 cannot win (KPK): the full evaluation knows it.
    assert s.qsearch(Position("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")) == 0


@pytest.mark.slow
def test_cached_kernels_reload_in_a_fresh_process():
    """Fill the run's shared cache (a no-op once `wasp warmup` ran), then load from it in
    a new process: the recursive kernels must link from the cache (numba issue #6713)
    and give the same node counts."""
    import subprocess
    import sys

    code = ("from wasp.warmup import warmup; warmup()\n"
            "from wasp.benchmark import bench; bench(3)\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True,
                           text=True, timeout=1200) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    sig = [[ln for ln in r.stdout.splitlines() if ln.startswith("Nodes searched")] for r in runs]
    assert sig[0] and sig[0] == sig[1]


def test_search_module_holds_kernels_only():
    """wasp/search.py: numbered steps and the root search as numba kernels; the driver (classes,
    threads, the clock) is wasp.driver's."""
    import ast

    from tests.conftest import ROOT

    tree = ast.parse((ROOT / "wasp" / "search.py").read_text())
    assert not [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            assert any(d.startswith("njit") for d in decorators), node.name


def test_scaled_reductions_search_fewer_nodes_and_keep_finding_mates():
    """LmrLogScale reduces deep nodes and late moves more than Wasp 1.02's fixed plies: the
    bench positions take fewer nodes to the same depth, and the mates are still found."""
    from wasp import benchmark

    def nodes(*settings):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            benchmark.bench(depth=8, verbose=False, settings=settings)
        return int(buf.getvalue().split("Nodes searched  :")[1].split()[0])

    plain, scaled = nodes(), nodes(("LmrLogScale", "356"))
    assert scaled < 0.9 * plain, (plain, scaled)
    s = Searcher(8)
    s.set_search_param("LmrLogScale", 356)
    for fen, n, move in MATES:
        s.clear()
        r = s.search(Position(fen), Limits(depth=2 * n + 3))
        assert r.best == move and _mate_moves(r.score) == n, (fen, r.best, r.score)


def _singular_searcher(depth=3):
    """A searcher with singular extensions on from `depth` plies, so that they occur often."""
    s = Searcher(8)
    s.set_technique("SingularExt", True)
    s.set_search_param("SingularDepth", depth)
    return s


@pytest.mark.parametrize("fen, n, move", MATES)
def test_singular_extensions_keep_finding_the_mates(fen, n, move):
    s = _singular_searcher()
    r = s.search(Position(fen), Limits(depth=2 * n + 3))
    assert r.score >= MATE_BOUND and _mate_moves(r.score) == n
    assert r.best == move


def test_singular_extensions_extend_the_tree_and_play_legal_lines():
    """On, the same depth searches more nodes (the extended hash moves) and every PV is a
    legal line; off, the searcher's node count is the plain search's."""
    fen = "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 20"
    plain = Searcher(8).search(Position(fen), Limits(depth=8))
    off = _singular_searcher()
    off.set_technique("SingularExt", False)
    assert off.search(Position(fen), Limits(depth=8)).nodes == plain.nodes
    on = _singular_searcher()
    lines = []
    r = on.search(Position(fen), Limits(depth=8), on_info=lines.append)
    assert r.nodes > plain.nodes
    for line in lines:
        board = chess.Board(fen)
        for m in line.pv:
            board.push_uci(m)  # raises on an illegal move


def test_a_singular_search_leaves_its_move_out_and_stores_nothing():
    """A search of a position with its best move excluded (SD_EXCLUDED at its ply), as the
    singular search runs: its best move is another legal one, and the position's TT entry,
    stored by the search with every move, is left as it was."""
    import numpy as np

    from wasp.driver import INF, ONE_PLY
    from wasp.movepick import SD_EXCLUDED, SD_NODE_LIMIT, SD_PV, SD_STOP
    from wasp.position import copy_state
    from wasp.search import NODE_PV, _search
    from wasp.tt import tt_probe
    from wasp.types import MAX_PLY

    s = Searcher(8)
    W, NN = s.evaluation()  # a Searcher evaluates by hand until a net is loaded
    pos = Position("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    pos.push_uci("e5f7")  # the search's stacks read the move before its first ply
    ply = 1
    s.SD[SD_STOP] = s.SD[SD_NODE_LIMIT] = 0

    def search(excluded):
        s.SD[SD_EXCLUDED + ply] = excluded
        v = _search(s.T, copy_state(pos.S), W, s.E, NN, s.TT, s.SD, s.MB, np.int64(-INF),
                    np.int64(INF), np.int64(5 * ONE_PLY), np.int64(ply), np.int64(NODE_PV),
                    np.int64(-1))
        s.SD[SD_EXCLUDED + ply] = 0
        return int(v), int(s.SD[SD_PV + ply * MAX_PLY + ply])

    score, best = search(0)
    entry = int(tt_probe(s.TT, np.uint64(pos.key)))
    assert entry != -1 and best != 0
    v, other = search(best)
    assert abs(v) < MATE_BOUND and v <= score
    assert other != best and pos.uci(other) in pos.legal_moves()
    assert int(tt_probe(s.TT, np.uint64(pos.key))) == entry
