"""Kernels between packed rows (`tuner.texel.rows`) and the core's `State`.

`unpack_row` writes row j of a packed array into a scratch State (history length 0); with
``with_key`` false the key is left 0, which makes the evaluation cache miss (its entries are
only trusted for a nonzero key), so no stale score can ever be read from it.
"""

import numpy as np
from numba import njit

from wasp import types
from wasp.bitboards import ONE, U64, ZERO, tables
from wasp.position import compute_key, in_check, new_state

from .rows import R_CASTLE, R_EP, R_SIDE, ROW_WIDTH


@njit(cache=True, nogil=True, _nrt=False)
def unpack_row(T, S, rows, j, with_key):
    """Set S to packed row j of rows (uint8 [n, ROW_WIDTH])."""
    bb = S.bb
    st = S.st
    for i in range(types.KEYS):
        bb[i] = ZERO
    for sq in range(64):
        b = np.int64(rows[j, sq >> 1])
        p = (b >> 4) if sq & 1 else (b & 15)
        st[types.MAILBOX + sq] = p
        if p != types.EMPTY:
            bit = ONE << U64(sq)
            bb[p] |= bit
            bb[types.OCC_WHITE + p // 6] |= bit
            bb[types.OCC_ALL] |= bit
    st[types.ST_SIDE] = np.int64(rows[j, R_SIDE])
    st[types.ST_CASTLE] = np.int64(rows[j, R_CASTLE])
    st[types.ST_EP] = np.int64(rows[j, R_EP])
    st[types.ST_HALFMOVE] = 0
    st[types.ST_FULLMOVE] = 1
    st[types.ST_PLY] = 0
    if with_key:
        bb[types.KEYS] = compute_key(T, S)
    else:
        bb[types.KEYS] = ZERO


@njit(cache=True, nogil=True, _nrt=False)
def pack_state(S, rows, j):
    """Write S as packed row j of rows."""
    st = S.st
    for i in range(32):
        lo = st[types.MAILBOX + 2 * i]
        hi = st[types.MAILBOX + 2 * i + 1]
        rows[j, i] = np.uint8(lo | (hi << 4))
    rows[j, R_SIDE] = np.uint8(st[types.ST_SIDE])
    rows[j, R_CASTLE] = np.uint8(st[types.ST_CASTLE])
    rows[j, R_EP] = np.uint8(st[types.ST_EP])


@njit(cache=True, nogil=True, _nrt=False)
def _illegal(T, S, rows, flags):
    for j in range(rows.shape[0]):
        unpack_row(T, S, rows, np.int64(j), False)
        us = S.st[types.ST_SIDE]
        S.st[types.ST_SIDE] = 1 - us
        flags[j] = 1 if in_check(T, S) else 0
        S.st[types.ST_SIDE] = us


def illegal_rows(rows) -> np.ndarray:
    """Boolean mask of rows whose side not to move is in check (impossible positions)."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    flags = np.zeros(len(rows), dtype=np.int64)
    if len(rows):
        _illegal(tables(), new_state(), rows, flags)
    return flags.astype(bool)


def state_of_row(row, with_key=True):
    """A fresh State of one packed row (tests, debugging)."""
    rows = np.ascontiguousarray(row, dtype=np.uint8).reshape(1, ROW_WIDTH)
    S = new_state()
    unpack_row(tables(), S, rows, np.int64(0), with_key)
    return S
