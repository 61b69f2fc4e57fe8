"""The engine layer (wasp.engine): options, search parameters, EvalFile and SearchFile."""

import pytest

from tests.conftest import ROOT
from wasp.engine import OPTIONS, Engine, score_uci, score_white, score_xboard
from wasp.searchparams import ENABLES, OFF_AT_ZERO, PARAMS, TECHNIQUES, format_search_params

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# A bench middlegame whose depth-10 search fails its aspiration window (the start position and
# Kiwipete do not, nor need IID at a PV node at depth 9).
FAILS_HIGH = "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 20"
ORIGINAL = ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt"


def _nodes(settings=(), fen=None, depth=10) -> int:
    """The node count of `go depth` with these options, from a fresh engine."""
    engine = Engine()
    engine.configure(settings)
    engine.set_position(fen)
    done = []
    engine.go(depth=depth, on_done=lambda best, ponder, result: done.append(result))
    engine.wait()
    return done[0].nodes


def test_every_search_parameter_is_a_spin_option_with_its_default_and_range():
    spins = {o.name: o for o in OPTIONS if o.kind == "spin"}
    for p in PARAMS:
        o = spins[p.name]
        assert (o.default, o.lo, o.hi) == (p.default, p.lo, p.hi)
        if p.name in OFF_AT_ZERO:  # a technique on trial: 0 (its minimum) keeps Wasp's search
            assert p.default == p.lo == 0, p.name
        else:
            assert p.lo < p.default < p.hi, f"{p.name}: the default must lie inside its range"
        assert o.uci() == (f"option name {p.name} type spin default {p.default} min {p.lo} "
                           f"max {p.hi}")
        assert o.xboard() == f'option="{p.name} -spin {p.default} {p.lo} {p.hi}"'
    checks = [o.name for o in OPTIONS if o.kind == "check" and o.name in TECHNIQUES]
    assert checks == list(TECHNIQUES)


@pytest.mark.slow
def test_each_search_parameter_at_its_minimum_and_maximum_changes_the_search():
    """`go depth 10` from the start position (or Kiwipete, or FAILS_HIGH, where the start
    position does not reach the rule) counts other nodes at each end of every parameter's range.

    One exception, checked rather than assumed: HistoryMax above its default cannot matter in
    searches this size, as no history score comes near the default (they grow by depth^2 a
    cutoff); its minimum must matter. A technique off by default (OFF_AT_ZERO) has its minimum
    as its default, and its parameters (ENABLES) are tried with it switched on."""
    from wasp.movepick import SD_HISTORY

    base, history_peak = {}, 0
    for fen in (None, KIWIPETE, FAILS_HIGH):
        engine = Engine()
        engine.set_position(fen)
        done = []
        engine.go(depth=10, on_done=lambda best, ponder, result, out=done: out.append(result))
        engine.wait()
        base[fen] = done[0].nodes
        history = engine.searcher.SD[SD_HISTORY:SD_HISTORY + 12 * 64]
        history_peak = max(history_peak, int(abs(history).max()))
    unchanged = []
    for p in PARAMS:
        # a parameter of a technique that is off by default is tried with it on
        on = [(name, str(v)) for name, v in ENABLES.get(p.name, ())]
        ref = {fen: _nodes(on, fen) for fen in base} if on else base
        for value in (p.lo, p.hi):
            if value == p.default:  # an OFF_AT_ZERO parameter's minimum: the default
                continue
            if p.name == "HistoryMax" and value == p.hi:
                assert history_peak < p.default
                continue
            if not any(_nodes([*on, (p.name, str(value))], fen) != n for fen, n in ref.items()):
                unchanged.append(f"{p.name}={value}")
    assert not unchanged, f"no effect at depth 10: {unchanged}"


def test_bad_values_are_refused_by_name_and_change_nothing():
    engine = Engine()
    before = list(engine.search_values)
    with pytest.raises(ValueError, match="RazorMargin1: 5000 is outside its range 0..1000"):
        engine.set_option("RazorMargin1", "5000")
    with pytest.raises(ValueError, match="NullMoveR: not a whole number"):
        engine.set_option("nullmover", "two")
    with pytest.raises(ValueError, match="unknown option: RazorMargin9"):
        engine.set_option("RazorMargin9", "1")
    assert engine.search_values == before
    engine.set_option("razormargin1", "150")  # option names are case-insensitive
    assert engine.search_values[0] == 150


def test_search_file_loads_and_a_bad_one_changes_nothing(tmp_path):
    good = tmp_path / "search.txt"
    good.write_text("# tuned\nRazorMargin1 = 120\nnullmover = 2\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("RazorMargin2 = 300\nLmrDepth = 99\n")
    engine = Engine()
    assert "loaded" in engine.set_option("SearchFile", str(good))
    values = dict(zip([p.name for p in PARAMS], engine.search_values, strict=True))
    assert values["RazorMargin1"] == 120 and values["NullMoveR"] == 2
    with pytest.raises(ValueError, match=r"bad.txt: line 2: LmrDepth: 99 is outside"):
        engine.set_option("SearchFile", str(bad))
    assert dict(zip([p.name for p in PARAMS], engine.search_values, strict=True)) == values
    # A file written by format_search_params reads back the same.
    again = tmp_path / "again.txt"
    again.write_text(format_search_params(engine.search_values))
    other = Engine()
    other.set_option("SearchFile", str(again))
    assert other.search_values == engine.search_values


def test_bench_signature_with_wasp_original_weights_is_the_old_one():
    """The node count `wasp bench` had before the tuned values became the defaults."""
    from wasp.benchmark import BENCH_FENS

    engine = Engine()
    engine.configure([("EvalFile", str(ORIGINAL))])
    engine.load()
    total = 0
    from wasp.board import Position
    from wasp.driver import Limits

    for fen in BENCH_FENS:
        engine.searcher.clear()
        total += engine.searcher.search(Position(fen), Limits(depth=9)).nodes
    assert total == 4_394_022


def test_score_texts():
    from wasp.search import MATE

    assert score_uci(35) == "cp 35" and score_uci(MATE - 5) == "mate 3"
    assert score_uci(-(MATE - 4)) == "mate -2"
    assert score_xboard(-120) == -120 and score_xboard(MATE - 5) == 100003
    assert score_xboard(-(MATE - 4)) == -100002
    assert score_white(35, 0) == "+0.35" and score_white(35, 1) == "-0.35"
    assert score_white(MATE - 5, 1) == "#-3"


def test_game_over_and_fallback_when_there_is_no_legal_move():
    engine = Engine()
    engine.set_position("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # stalemate
    assert engine.game_over() == ("1/2-1/2", "stalemate")
    done = []
    engine.go(depth=3, on_done=lambda best, ponder, result: done.append(best))
    engine.wait()
    assert done == ["0000"]


def test_illegal_move_in_a_position_command_is_reported_and_the_rest_kept():
    engine = Engine()
    warning = engine.set_position(None, ["e2e4", "e7e5", "e1e3", "d7d5"])
    assert "illegal move e1e3" in warning
    assert engine.position.move_stack() == ["e2e4", "e7e5"]
    with pytest.raises(ValueError):
        engine.set_position("not a fen")
    assert engine.position.move_stack() == ["e2e4", "e7e5"]
