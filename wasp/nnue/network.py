"""The net's forward pass over the accumulators, in integers as bullet's simple example does:

    ((sum screlu(us[i]) * l1w[i] + sum screlu(them[i]) * l1w[N + i]) / QA + l1b) * SCALE
    / (QA * QB),   screlu(x) = clamp(x, 0, QA)^2,

every division truncating toward zero as Rust's does (numba's // floors). Each product fits
in int32 (255^2 * 32768 < 2^31); the sums are int64, so no net of any N overflows here.
With output buckets l1w and l1b are those of the position's bucket (`output_bucket` of its
piece count); with CReLU the sum of clamp(x, 0, QA) * l1w is already at QA * QB and is not
divided by QA. Example 4's net (`_layers`): the products of the clamped halves of each
accumulator, L1 in integers over the non-zero ones, then L1's output, L2 and the output in
float64 (docs/nnue.md says how it rounds).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from wasp.bitboards import popcount
from wasp.nnue.accumulator import (
    KIND_SIMPLE,
    NN_CHUNK,
    NN_CRELU,
    NN_HEADER,
    NN_HIDDEN,
    NN_KIND,
    NN_L1,
    NN_L1B,
    NN_L2,
    NN_LAYERS,
    NN_OUTPUT_TABLE,
    NN_OUTPUTS,
    NN_QA,
    NN_QB,
    NN_SCALE,
    OFF_ACC,
    OFF_L1B,
    OFF_L1W,
    OFF_L2B,
    OFF_L2W,
    OFF_L3B,
    OFF_L3W,
    OFF_PLIES,
    OFF_SCRATCH,
    PLY_COMPUTED,
    PLY_SLOTS,
    acc_offset,
    acc_refresh,
    acc_update,
    nn_offsets,
)
from wasp.nnue.inputs import FEATURES
from wasp.nnue.netfile import QA, QB, SCALE
from wasp.types import OCC_ALL, ST_PLY, ST_SIDE


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def tdiv(a, b):
    """a / b truncated toward zero (b > 0), as Rust's integer division."""
    q = abs(a) // b
    return q if a >= 0 else -q


LANES = 16  # int16 values a vector of _madd_dot (256 bits)
MADD_STEP = 2 * LANES  # values a step of _madd_dot: two vectors, two sums


@intrinsic
def _madd_dot(typingctx, NN, acc, weights, m, qa, crelu):
    """sum int16(x * w) * (1 if crelu else x) over i < m (a multiple of MADD_STEP), x =
    clamp(NN[acc + i], 0, qa), w = NN[weights + i], summed in int32 lanes: each product
    pair of `pmaddwd` (16 int16 values a step where the loop vectoriser, its lanes set by
    the int32 sum, takes 8), the generic vector code of the same arithmetic where the CPU
    has no AVX2. Exact when every clamp(x, 0, qa) * w fits in int16 and the sum of the terms'
    magnitudes in int32 (`NN_CHUNK`'s terms): integer sums in any order are then the same."""
    sig = types.int64(NN, types.int64, types.int64, types.int64, types.int64, types.boolean)

    def codegen(context, builder, signature, args):
        avx2 = "+avx2" in getattr(context.codegen(), "_tm_features", "").split(",")
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        _, acc_, weights_, m_, qa_, crelu_ = args
        i16, i32 = ir.IntType(16), ir.IntType(32)
        v16, v8 = ir.VectorType(i16, LANES), ir.VectorType(i32, LANES // 2)
        top = builder.insert_element(ir.Constant(v16, ir.Undefined), builder.trunc(qa_, i16),
                                     i32(0))
        top = builder.shuffle_vector(top, ir.Constant(v16, ir.Undefined),
                                     ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))
        zero, ones = ir.Constant(v16, [0] * LANES), ir.Constant(v16, [1] * LANES)
        pmadd = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v8, [v16, v16]),
                                               "llvm.x86.avx2.pmadd.wd")

        def madd(p, y):  # the sums of adjacent products, int32
            if avx2:
                return builder.call(pmadd, [p, y])

            def half(u, start):
                idx = ir.Constant(v8, list(range(start, LANES, 2)))
                return builder.sext(builder.shuffle_vector(u, u, idx), v8)
            return builder.add(builder.mul(half(p, 0), half(y, 0)),
                               builder.mul(half(p, 1), half(y, 1)))

        sums = [cgutils.alloca_once_value(builder, ir.Constant(v8, [0] * (LANES // 2)))
                for _ in range(MADD_STEP // LANES)]
        steps = builder.sdiv(m_, ir.Constant(m_.type, MADD_STEP))
        with cgutils.for_range(builder, steps) as loop:
            base = builder.mul(loop.index, ir.Constant(loop.index.type, MADD_STEP))
            for k, total in enumerate(sums):
                i = builder.add(base, ir.Constant(base.type, k * LANES))
                a = builder.load(builder.bitcast(
                    builder.gep(ary.data, [builder.add(acc_, i)]), v16.as_pointer()), align=2)
                w = builder.load(builder.bitcast(
                    builder.gep(ary.data, [builder.add(weights_, i)]), v16.as_pointer()),
                    align=2)
                x = builder.select(builder.icmp_signed("<", a, zero), zero, a)
                x = builder.select(builder.icmp_signed(">", x, top), top, x)
                y = builder.select(crelu_, ones, x)
                builder.store(builder.add(builder.load(total), madd(builder.mul(x, w), y)),
                              total)
        vec = builder.load(sums[0])
        for total in sums[1:]:
            vec = builder.add(vec, builder.load(total))
        s = i32(0)
        for k in range(LANES // 2):
            s = builder.add(s, builder.extract_element(vec, i32(k)))
        return builder.sext(s, ir.IntType(64))

    return sig, codegen


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _activated_dot(NN, acc, weights, n, qa, crelu, chunk):
    """sum act(NN[acc + i]) * NN[weights + i], act clamp(x, 0, qa) (CReLU) or its square
    (SCReLU), exactly. With `chunk` (NN_CHUNK) each clamp(x, 0, qa) * w fits in int16 and
    `chunk` terms in an int32 sum: `_madd_dot`, and int16 and int32 lanes for the last few
    terms (numba widens integer arithmetic to int64 unless each step is cast back); else
    int64 products."""
    total = np.int64(0)
    if chunk == 0:
        a, w = NN[acc:acc + n], NN[weights:weights + n]
        for i in range(n):
            x = min(max(np.int64(a[i]), np.int64(0)), qa)
            total += (x if crelu else x * x) * np.int64(w[i])
        return total
    top = np.int16(qa)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        wide = m - m % MADD_STEP
        s = np.int32(_madd_dot(NN, acc + start, weights + start, wide, qa, crelu))
        a, w = NN[acc + start:acc + start + m], NN[weights + start:weights + start + m]
        if crelu:
            for i in range(wide, m):
                x = np.int16(min(max(a[i], np.int16(0)), top))
                s = np.int32(s + np.int32(np.int16(x * w[i])))
        else:
            for i in range(wide, m):
                x = np.int16(min(max(a[i], np.int16(0)), top))
                s = np.int32(s + np.int32(np.int32(np.int16(x * w[i])) * np.int32(x)))
        total += s
    return total


@njit(cache=True, nogil=True, _nrt=False)
def forward(NN, S):
    """The net's output in centipawns for the side to move of position `S`, from its
    accumulators (those of the position after S.st[ST_PLY] moves)."""
    ply = S.st[ST_PLY]
    stm = S.st[ST_SIDE]
    if NN[NN_KIND] == KIND_SIMPLE:
        return forward_simple(NN, ply, stm)
    record = nn_offsets(NN)[OFF_PLIES] + ply * PLY_SLOTS + PLY_COMPUTED
    if NN[record] == 0 or NN[record + 1] == 0:
        acc_update(S, NN)
    return _forward_general(NN, ply, stm, np.int64(popcount(S.bb[OCC_ALL])))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def forward_simple(NN, ply, stm):
    """forward of bullet's simple example (KIND_SIMPLE)."""
    n = np.int64(NN[NN_HIDDEN])
    l1w = NN_HEADER + (FEATURES + 1) * n
    acc = acc_offset(NN, ply)
    us = acc + stm * n
    them = acc + (1 - stm) * n
    chunk = np.int64(NN[NN_CHUNK])
    total = _activated_dot(NN, us, l1w, n, np.int64(QA), False, chunk) + \
        _activated_dot(NN, them, l1w + n, n, np.int64(QA), False, chunk)
    return tdiv((tdiv(total, QA) + np.int64(NN[NN_L1B])) * SCALE, QA * QB)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _scaled(total, l1b, qa, qb, scale, crelu):
    """Centipawns from the output layer's sum: ((total (/ qa with SCReLU)) + l1b) * scale /
    (qa * qb), truncating."""
    if not crelu:
        total = tdiv(total, qa)
    return tdiv((total + l1b) * scale, qa * qb)


@njit(cache=True, nogil=True, _nrt=False)
def _forward_general(NN, ply, stm, pieces):
    """forward of a KIND_GENERAL NN, `pieces` on the board choosing the output bucket."""
    n = np.int64(NN[NN_HIDDEN])
    off = nn_offsets(NN)
    bucket = np.int64(NN[NN_OUTPUT_TABLE + pieces])
    acc = off[OFF_ACC] + ply * 2 * n
    us = acc + stm * n
    them = acc + (1 - stm) * n
    qa, qb, scale = np.int64(NN[NN_QA]), np.int64(NN[NN_QB]), np.int64(NN[NN_SCALE])
    if NN[NN_LAYERS] != 0:
        return _layers(NN, off, n, us, them, bucket, qa, qb, scale)
    crelu = NN[NN_CRELU] != 0
    chunk = np.int64(NN[NN_CHUNK])
    w = off[OFF_L1W] + bucket * 2 * n
    total = _activated_dot(NN, us, w, n, qa, crelu, chunk) + \
        _activated_dot(NN, them, w + n, n, qa, crelu, chunk)
    l1b = np.int64(NN[off[OFF_L1B] + bucket])
    if qa == QA and qb == QB and scale == SCALE:  # bullet's: divisions by constants
        return _scaled(total, l1b, QA, QB, SCALE, crelu)
    return _scaled(total, l1b, qa, qb, scale, crelu)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _screlu(x):
    y = min(max(x, 0.0), 1.0)
    return y * y


@njit(cache=True, nogil=True, _nrt=False)
def _layers(NN, off, n, us, them, bucket, qa, qb, scale):
    """Example 4's layers for output bucket `bucket`: L1's inputs are, for the side to move's
    accumulator then the other's, clamp(a[i], 0, qa) * clamp(a[N/2 + i], 0, qa) (scale qa^2);
    L1's sums are exact int64 over the non-zero inputs (its weights are [K][N][L1]: each
    input's L1 weights together); from L1's output on, float64: L1 / (qa^2 qb) + l1b, SCReLU,
    L2, SCReLU, the output; centipawns = output * scale, truncated toward zero."""
    l1, l2 = np.int64(NN[NN_L1]), np.int64(NN[NN_L2])
    half = n // 2
    scratch = off[OFF_SCRATCH]
    sums = NN[scratch:scratch + 4 * l1].view(np.int64)
    h1 = NN[scratch + 64:scratch + 64 + 4 * l1].view(np.float64)
    h2 = NN[scratch + 128:scratch + 128 + 4 * l2].view(np.float64)
    for j in range(l1):
        sums[j] = 0
    weights = off[OFF_L1W] + bucket * n * l1
    for side in range(2):
        a = us if side == 0 else them
        x, y = NN[a:a + half], NN[a + half:a + n]
        for i in range(half):
            p = min(max(np.int64(x[i]), np.int64(0)), qa) * \
                min(max(np.int64(y[i]), np.int64(0)), qa)
            if p != 0:
                w0 = weights + (side * half + i) * l1
                w = NN[w0:w0 + l1]
                for j in range(l1):
                    sums[j] += p * np.int64(w[j])
    l1b = NN[off[OFF_L1B]:off[OFF_L1B] + 2 * NN[NN_OUTPUTS] * l1].view(np.float32)
    l2w = NN[off[OFF_L2W]:off[OFF_L2W] + 2 * NN[NN_OUTPUTS] * l2 * l1].view(np.float32)
    l2b = NN[off[OFF_L2B]:off[OFF_L2B] + 2 * NN[NN_OUTPUTS] * l2].view(np.float32)
    l3w = NN[off[OFF_L3W]:off[OFF_L3W] + 2 * NN[NN_OUTPUTS] * l2].view(np.float32)
    l3b = NN[off[OFF_L3B]:off[OFF_L3B] + 2 * NN[NN_OUTPUTS]].view(np.float32)
    unit = np.float64(qa * qa * qb)
    for j in range(l1):
        h1[j] = _screlu(np.float64(sums[j]) / unit + np.float64(l1b[bucket * l1 + j]))
    for k in range(l2):
        row = (bucket * l2 + k) * l1
        v = np.float64(l2b[bucket * l2 + k])
        for j in range(l1):
            v += h1[j] * np.float64(l2w[row + j])
        h2[k] = _screlu(v)
    out = np.float64(l3b[bucket])
    for k in range(l2):
        out += h2[k] * np.float64(l3w[bucket * l2 + k])
    return np.int64(out * scale)


def output(NN, S) -> int:
    """The net's output (side to move's view, centipawns) of position State `S`: its
    accumulators are computed afresh into NN's stack at S's ply."""
    if NN[NN_HIDDEN] == 0:
        raise ValueError("no net loaded")
    acc_refresh(S, NN)
    return int(forward(NN, S))
