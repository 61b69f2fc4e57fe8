"""The net's forward pass over the accumulators, in integers as bullet's simple example does:

    ((sum screlu(us[i]) * l1w[i] + sum screlu(them[i]) * l1w[N + i]) / QA + l1b) * SCALE
    / (QA * QB),   screlu(x) = clamp(x, 0, QA)^2,

every division truncating toward zero as Rust's does (numba's // floors). Each product fits
in int32 (255^2 * 32768 < 2^31); the sums are int64, so no net of any N overflows here.
"""

import numpy as np
from numba import njit

from wasp.nnue.accumulator import NN_HEADER, NN_HIDDEN, NN_L1B, acc_offset, acc_refresh
from wasp.nnue.inputs import FEATURES
from wasp.nnue.netfile import QA, QB, SCALE
from wasp.types import ST_PLY, ST_SIDE


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def tdiv(a, b):
    """a / b truncated toward zero (b > 0), as Rust's integer division."""
    q = abs(a) // b
    return q if a >= 0 else -q


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _screlu_dot(NN, acc, weights, n):
    """sum screlu(NN[acc + i]) * NN[weights + i] (slices: the loop vectorises)."""
    a, w = NN[acc:acc + n], NN[weights:weights + n]
    total = np.int64(0)
    for i in range(n):
        x = np.int32(min(max(np.int32(a[i]), np.int32(0)), np.int32(QA)))
        total += np.int64(x * x * np.int32(w[i]))
    return total


@njit(cache=True, nogil=True, _nrt=False)
def forward(NN, ply, stm):
    """The net's output in centipawns for side `stm` to move, from the accumulators of the
    position after `ply` moves."""
    n = np.int64(NN[NN_HIDDEN])
    l1w = NN_HEADER + (FEATURES + 1) * n
    acc = acc_offset(NN, ply)
    us = acc + stm * n
    them = acc + (1 - stm) * n
    total = _screlu_dot(NN, us, l1w, n) + _screlu_dot(NN, them, l1w + n, n)
    return tdiv((tdiv(total, QA) + np.int64(NN[NN_L1B])) * SCALE, QA * QB)


def output(NN, S) -> int:
    """The net's output (side to move's view, centipawns) of position State `S`: its
    accumulators are computed afresh into NN's stack at S's ply."""
    if NN[NN_HIDDEN] == 0:
        raise ValueError("no net loaded")
    acc_refresh(S, NN)
    return int(forward(NN, S.st[ST_PLY], S.st[ST_SIDE]))
