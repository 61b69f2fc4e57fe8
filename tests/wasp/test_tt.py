"""Transposition table (wasp.tt): packing, probing, replacement, sizing."""

import numpy as np

from wasp.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    data_bound,
    data_depth,
    data_eval,
    data_move,
    data_score,
    new_table,
    tt_hashfull,
    tt_probe,
    tt_store,
)


def test_table_size_is_power_of_two_buckets_within_budget():
    for mb in (1, 3, 16):
        t = new_table(mb)
        assert t.nbytes <= mb * 1024 * 1024
        buckets = t.size // 8
        assert buckets & (buckets - 1) == 0


def test_store_and_probe_roundtrip_with_negative_values_and_mates():
    tt = new_table(1)
    for key, move, score, ev, depth, bound in [
        (np.uint64(0xDEADBEEF12345678), 0x2ABCD, -31990, -750, 12, BOUND_EXACT),
        (np.uint64(0xFFFFFFFFFFFFFFF0), 1234, 31999, 8191, 0, BOUND_LOWER),
        (np.uint64(7), 77, 0, -8192, -1, BOUND_UPPER),
    ]:
        tt_store(tt, key, move, score, ev, depth, bound, 5)
        d = tt_probe(tt, key)
        assert d != -1
        assert (data_move(d), data_score(d), data_eval(d), data_depth(d), data_bound(d)) == (
            move, score, ev, depth, bound)
    assert tt_probe(tt, np.uint64(123456789)) == -1


def test_same_key_keeps_move_when_new_entry_has_none():
    tt = new_table(1)
    k = np.uint64(99)
    tt_store(tt, k, 555, 10, 0, 3, BOUND_LOWER, 1)
    tt_store(tt, k, 0, 20, 0, 4, BOUND_UPPER, 1)
    d = tt_probe(tt, k)
    assert data_move(d) == 555 and data_score(d) == 20


def test_replacement_prefers_old_and_shallow_entries():
    tt = new_table(1)
    buckets = tt.size // 8
    keys = [np.uint64(3 + i * buckets) for i in range(5)]  # same bucket
    for i, k in enumerate(keys[:4]):
        tt_store(tt, k, 1, 0, 0, 10 + i, BOUND_EXACT, 1)
    tt_store(tt, keys[4], 1, 0, 0, 1, BOUND_EXACT, 2)  # newer search: replaces an old entry
    assert tt_probe(tt, keys[4]) != -1
    assert tt_probe(tt, keys[0]) == -1  # the shallowest old entry went
    assert sum(tt_probe(tt, k) != -1 for k in keys) == 4


def test_hashfull_counts_current_age():
    tt = new_table(1)
    assert tt_hashfull(tt, 1) == 0
    for i in range(2000):
        tt_store(tt, np.uint64(i * 2654435761 + 1), 1, 0, 0, 1, BOUND_EXACT, 1)
    assert 0 < tt_hashfull(tt, 1) <= 1000
    assert tt_hashfull(tt, 2) == 0
