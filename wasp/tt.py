"""Transposition table: one flat int64 array of 4-entry buckets, depth-preferred with aging.

An entry is two words: the position key (as int64) and a packed data word (move, bound,
depth, age, score, static eval). The table is kept between moves; the age (one per `go`) lets
new searches replace entries of old ones first. Sized in MB by the `Hash` option.
"""

import numpy as np
from numba import njit

from wasp.bitboards import U64, prefetch

BUCKET_ENTRIES = 4
ENTRY_WORDS = 2
BUCKET_WORDS = BUCKET_ENTRIES * ENTRY_WORDS  # 64 bytes: one cache line

BOUND_NONE, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT = 0, 1, 2, 3
DEPTH_OFFSET = 16  # depths from -16 plies are storable
EVAL_OFFSET = 8192
SCORE_OFFSET = 32768


def new_table(mb: int) -> np.ndarray:
    """A cleared table of about `mb` megabytes (a power-of-two number of buckets)."""
    mb = max(1, int(mb))
    buckets = 1
    while buckets * 2 * BUCKET_WORDS * 8 <= mb * 1024 * 1024:
        buckets *= 2
    return np.zeros(buckets * BUCKET_WORDS, dtype=np.int64)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def pack(move, score, ev, depth, bound, age):
    if ev > EVAL_OFFSET - 1:
        ev = EVAL_OFFSET - 1
    elif ev < -EVAL_OFFSET:
        ev = -EVAL_OFFSET
    return (
        (move & 0x3FFFF)
        | (bound << 18)
        | (((depth + DEPTH_OFFSET) & 0xFF) << 20)
        | ((age & 0x3F) << 28)
        | (((score + SCORE_OFFSET) & 0xFFFF) << 34)
        | (((ev + EVAL_OFFSET) & 0x3FFF) << 50)
    )


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_move(d):
    return d & 0x3FFFF


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_bound(d):
    return (d >> 18) & 3


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_depth(d):
    return ((d >> 20) & 0xFF) - DEPTH_OFFSET


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_age(d):
    return (d >> 28) & 0x3F


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_score(d):
    return ((d >> 34) & 0xFFFF) - SCORE_OFFSET


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def data_eval(d):
    return ((d >> 50) & 0x3FFF) - EVAL_OFFSET


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _bucket(TT, key):
    nb = TT.shape[0] // BUCKET_WORDS
    return np.int64(key & U64(nb - 1)) * BUCKET_WORDS


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def tt_prefetch(TT, key):
    """Start loading the bucket of `key` (right after a move, before the child probes)."""
    prefetch(TT, _bucket(TT, key))


@njit(cache=True, nogil=True, _nrt=False)
def tt_probe(TT, key):
    """The data word stored for `key`, or -1 when absent (no valid data word is -1)."""
    b = _bucket(TT, key)
    k = np.int64(key)
    for i in range(BUCKET_ENTRIES):
        j = b + i * ENTRY_WORDS
        if TT[j] == k and TT[j + 1] != 0:
            return TT[j + 1]
    return np.int64(-1)


@njit(cache=True, nogil=True, _nrt=False)
def tt_store(TT, key, move, score, ev, depth, bound, age):
    """Store an entry: same key first (keeping its move when we have none), else the entry
    of the oldest search, shallowest first."""
    b = _bucket(TT, key)
    k = np.int64(key)
    slot = -1
    worst = 1 << 30
    for i in range(BUCKET_ENTRIES):
        j = b + i * ENTRY_WORDS
        if TT[j] == k:
            old = TT[j + 1]
            if move == 0:
                move = data_move(old)
            # Depth preferred: keep a deeper entry of this search unless we bring an exact score.
            if (bound != BOUND_EXACT and data_age(old) == (age & 0x3F)
                    and data_depth(old) > depth + 2):
                TT[j + 1] = (old & ~np.int64(0x3FFFF)) | (move & 0x3FFFF)
                return
            slot = j
            break
        d = TT[j + 1]
        value = data_depth(d) - 8 * ((age - data_age(d)) & 0x3F) if d != 0 else -(1 << 20)
        if value < worst:
            worst = value
            slot = j
    TT[slot] = k
    TT[slot + 1] = pack(move, score, ev, depth, bound, age)


@njit(cache=True, nogil=True, _nrt=False)
def tt_hashfull(TT, age):
    """Permille of the first 1000 entries used by the current search."""
    n = min(1000, TT.shape[0] // ENTRY_WORDS)
    used = 0
    for i in range(n):
        d = TT[2 * i + 1]
        if d != 0 and data_age(d) == (age & 0x3F):
            used += 1
    return used * 1000 // n
