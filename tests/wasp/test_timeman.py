"""Time allocation (wasp.timeman)."""

import pytest

from wasp.timeman import allocate


@pytest.mark.parametrize("left, inc, mtg", [
    (60000, 0, None), (1000, 0, None), (100, 0, None), (10, 0, None), (5000, 100, None),
    (300000, 2000, 40), (2000, 0, 1), (50, 1000, None), (120000, 0, 5),
])
def test_budget_never_exceeds_the_clock(left, inc, mtg):
    b = allocate(left, inc, mtg, overhead=30)
    assert 0 < b.soft <= b.hard
    assert b.hard <= max(1.0, left - 30) * 0.9 or b.hard == 1.0


def test_sudden_death_spends_a_small_share_and_increment_helps():
    b = allocate(60000, 0)
    assert 500 < b.hard < 0.35 * 60000
    assert allocate(60000, 1000).soft > b.soft


def test_movestogo_one_uses_most_of_the_clock():
    assert allocate(10000, 0, 1).hard > 5000


def test_movetime_and_infinite():
    b = allocate(movetime=1000, overhead=50)
    assert b.soft == b.hard == 950
    b = allocate(60000, infinite=True)
    assert b.soft is None and b.hard is None
    assert allocate().hard is None


@pytest.mark.parametrize("base, inc", [(3000, 30), (10000, 100), (2000, 50), (5000, 50)])
def test_a_loaded_machine_does_not_run_the_clock_out(base, inc):
    """Worst case: every move searches to its hard limit, and the machine adds 0-40 ms on top,
    more than the 30 ms Move Overhead at times (seen with two games and a compile on 2 cores).
    Over 300 moves the clock must never fall."""
    import random

    rng = random.Random(base + inc)
    clock = float(base)
    for _ in range(300):
        b = allocate(int(clock), inc, overhead=30)
        clock -= b.hard + rng.uniform(0, 40)
        assert clock > 0
        clock += inc
