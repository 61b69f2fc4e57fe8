"""The float net of any `wasp.nnue.arch.Arch` (bullet's progression, examples 1 to 4), its sparse
forward/backward and AdamW, as numba kernels.

The accumulator of a perspective is acc = l0b + the l0w rows of its active inputs (<= 32:
Chess768, or king-bucketed and mirrored, `wasp.nnue.inputs`); with a factoriser the rows are
l0w's plus l0f's (of the input modulo 768), added once a batch. Then, for the output bucket b
of the position's piece count:
- examples 1 to 3: o = l1w[b] . [act(acc_stm), act(acc_other)] + l1b[b], act SCReLU
  clamp(x, 0, 1)^2 or CReLU clamp(x, 0, 1);
- example 4: x = [crelu(acc[:N/2]) * crelu(acc[N/2:]) of each side], h1 = screlu(l1w[b] x +
  l1b[b]) (16), h2 = screlu(l2w[b] h1 + l2b[b]) (32), o = l3w[b] . h2 + l3b[b].
The engine's score is 400 o. Loss: (sigmoid(o) - target)^2 with target = wdl * result + (1 -
wdl) * sigmoid(score / 400), both from the side to move (bullet's SigmoidMSE at eval scale 400).

A batch runs in fixed work items, so every sum has one order whatever the thread count and a
run repeats bit for bit. A Chess768 first layer small enough to stay in cache (`fits_cache`)
takes one fused pass, a chunk of positions a thread: each position's accumulators built in
small buffers, used by the later layers, their gradient added at once into the chunk's copy of
the first layer's gradient. A bigger one (king buckets) takes passes over column blocks of up
to 512 columns, a block a thread, the batch's perspectives grouped by king bucket so that one
bucket's block of weights or of gradient (768 rows of 512 columns: 1.5 MB) stays in a core's
L2: the accumulators summed into a batch array kept in that order (written and read in
sequence), the later layers a chunk of positions a thread (each accumulator's gradient written
over it), the gradient scattered into its rows; the batch array costs less than first-layer
rows read from beyond the cache. AdamW stays dense, as bullet's (a row that no position of the
batch touched still has its moments decay and its weight decay): the first layer's is one
pass over its rows that adds the factoriser's gradient (the buckets' rows of an input),
updates l0w and l0f, zeroes the gradient for the next batch and writes the column blocks of
the weights (l0w + l0f) that the next batch reads. The same kernels run in float32
(training) and float64 (tests).

Parameters are held in the kernels' layout: l0w [inputs][N] (a row an input), l0f [768][N],
l0b [N], l1w [K][2N] or [K][16][N], l1b [K] or [K][16], l2w [K][32][16], l2b [K][32],
l3w [K][32], l3b [K]; `FloatNet.graph` gives bullet's graph shapes for `wasp.nnue.arch.save`.
"""

import math
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from wasp.nnue import arch as A
from wasp.nnue.arch import Arch, output_bucket
from wasp.nnue.inputs import FEATURES, MAX_ACTIVE, bucket_table

from .data import OFF_RESULT, OFF_SCORE, board_features, gather

SCATTER_BLOCK = 256  # perspectives whose accumulator gradients are scattered together
SCATTER_MIN_WIDTH = 256  # the fused pass scatters each position's gradient at once below this N
CHUNKS = 16  # the later layers' gradient buffers a batch: fixed, so sums do not depend on
# the threads
FUSED_PARTS = 4  # the fused pass's copies of the first layer's gradient, CHUNKS / 4 chunks
# each: fixed (sums independent of the threads), few (each copy is 1.5 MB of memory traffic
# a batch at N = 512), at the cost of using at most 4 threads
BLOCK = 512  # the first layer's columns a block, at most (measured: 512 beats 256 and 128;
# a king bucket's block of 768 rows, 1.5 MB, still fits a core's L2)
MIN_BLOCKS = 2  # a block a thread: at least this many blocks when N allows
FUSED_BYTES = 2 << 20  # a Chess768 first layer this big or smaller: the fused pass
SCALE = float(A.SCALE)  # centipawns = SCALE * o; the score's sigmoid is of score/SCALE
WEIGHT_CLIP = 1.98  # bullet's default clip keeps QA * w in i16 and the output in i32
FACTORISER_CLIP = 0.99  # example 3's l0w and l0f clip: their sum stays within WEIGHT_CLIP


def set_threads(threads=None) -> int:
    """Fix numba's thread count (default: every core numba sees); returns it."""
    threads = int(threads or numba.config.NUMBA_NUM_THREADS)
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    return threads


def param_names(arch: Arch, factoriser=False) -> tuple:
    """The trainable tensors of an architecture, in the file's order (l0f after l0w)."""
    return tuple(arch.shapes(factoriser))


def kernel_shapes(arch: Arch, factoriser=False) -> dict:
    """Each tensor's shape in the kernels' layout (see the module's docstring)."""
    n, k, f = arch.hidden, arch.output_buckets, arch.features
    shapes = {"l0w": (f, n)}
    if factoriser:
        shapes["l0f"] = (FEATURES, n)
    shapes["l0b"] = (n,)
    if not arch.layers:
        shapes.update(l1w=(k, 2 * n), l1b=(k,))
    else:
        l1, l2 = arch.layers
        shapes.update(l1w=(k, l1, n), l1b=(k, l1), l2w=(k, l2, l1), l2b=(k, l2), l3w=(k, l2),
                      l3b=(k,))
    return shapes


@njit(cache=True, nogil=True)
def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@njit(cache=True, nogil=True, inline="always")
def _target(boards, r, wdl):
    """Record r's target: wdl parts its game's result, the rest its score as a win chance."""
    score = np.int16(boards[r, OFF_SCORE] | (np.int32(boards[r, OFF_SCORE + 1]) << 8))
    return wdl * (boards[r, OFF_RESULT] / 2.0) + (1.0 - wdl) * _sigmoid(score / SCALE)


@njit(cache=True, nogil=True, inline="always")
def _activated_dot(a, w, crelu, zero, one):
    """The output's share from accumulator values a: sum of act(a) * w, act CReLU or SCReLU."""
    dot = zero
    if crelu:
        for k in range(a.shape[0]):
            dot += min(max(a[k], zero), one) * w[k]
    else:
        for k in range(a.shape[0]):
            x = min(max(a[k], zero), one)
            dot += x * x * w[k]
    return dot


@njit(cache=True, nogil=True, inline="always")
def _activated_backward(dout, a, w, gw, da, crelu, zero, one):
    """From d loss / d output `dout`: gw += dout * act(a) (the output weights' gradient) and
    da = dout * act'(a) * w (the accumulator values' gradient)."""
    if crelu:
        for k in range(a.shape[0]):
            x = a[k]
            gw[k] += dout * min(max(x, zero), one)
            da[k] = dout * w[k] if zero < x < one else zero
    else:
        two_d = dout + dout
        for k in range(a.shape[0]):
            x = a[k]
            y = min(max(x, zero), one)
            gw[k] += dout * y * y
            da[k] = two_d * w[k] * x if zero < x < one else zero


@njit(cache=True, nogil=True, parallel=True)
def decode_kernel(boards, idx, table, mirrored, buckets, feats, counts, outb):
    """The inputs of the positions boards[idx] (an index ~r: record r mirrored left to right):
    the side to move's of position j in feats[2j], the other side's in feats[2j + 1], their
    count in counts; the output bucket of j (K `buckets`) in outb."""
    for j in prange(idx.shape[0]):
        r = idx[j]
        files = 0
        if r < 0:
            r = ~r
            files = 7
        count = board_features(boards, r, feats[2 * j], feats[2 * j + 1], files, table,
                               mirrored)
        counts[2 * j] = count
        counts[2 * j + 1] = count
        outb[j] = output_bucket(count, buckets)


@njit(cache=True, nogil=True)
def bucket_order(feats, counts, rows, order, slot):
    """order = the perspectives sorted by the `rows`-row bucket of their inputs (stable), and
    slot[p] = perspective p's place in it: a king bucket's weights stay in cache while its
    perspectives are added up, and the batch array of accumulators, kept in that order, is
    written and read in sequence. Chess768 (one bucket): the perspectives in order."""
    n = counts.shape[0]
    buckets = 1
    for p in range(n):
        buckets = max(buckets, feats[p, 0] // rows + 1)
    starts = np.zeros(buckets + 1, dtype=np.int64)
    for p in range(n):
        starts[feats[p, 0] // rows + 1] += 1
    for b in range(buckets):
        starts[b + 1] += starts[b]
    for p in range(n):
        b = feats[p, 0] // rows
        order[starts[b]] = p
        slot[p] = starts[b]
        starts[b] += 1


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def accumulate_kernel(wb, l0b, feats, counts, order, acc, l1w, outb, crelu, partial):
    """acc[s][q] = column block s of the accumulator of perspective p = order[q]: l0b plus the
    rows of its inputs, from the first layer's weights in column blocks wb [blocks][rows][width].
    A block a thread, its perspectives in `order`: each block's weights of one king bucket (768
    rows) stay in cache while they are read, and acc[s] is written in sequence. With `partial`
    [blocks][2n] (examples 1 to 3: one output layer l1w, flat, K output buckets, outb the
    positions'), partial[s, p] = block s's share of the output's dot product, taken while the
    accumulator is in cache (`output_kernel` adds the shares up)."""
    blocks, _, width = wb.shape
    hidden = blocks * width
    typed = np.zeros(2, dtype=wb.dtype)
    typed[1] = 1.0
    zero = typed[0]
    one = typed[1]
    for s in prange(blocks):
        w = wb[s]
        a = acc[s]
        bias = np.empty(width, dtype=wb.dtype)
        for k in range(width):
            bias[k] = l0b[s * width + k]
        for q in range(order.shape[0]):
            p = order[q]
            out = a[q]
            _set_rows(out, bias, w, feats[p], counts[p])
            if partial.shape[1] == 0:
                continue
            start = (outb[p // 2] * 2 + p % 2) * hidden + s * width
            partial[s, p] = _activated_dot(out, l1w[start:start + width], crelu, zero, one)


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def scatter_kernel(gb, g0b, acc, feats, counts, order, l1w, outb, crelu, dout, g1w):
    """The first layer's gradient from the accumulators' (acc [blocks][q], perspective order[q],
    as `heads_kernel` leaves it): gb [blocks][rows][width] = each perspective's block added into
    the rows of its inputs (gb zero before), g0b = their sum. A block a thread, the perspectives
    in `order`: every sum in one order whatever the threads. With dout (examples 1 to 3, after
    `output_kernel`: d loss / d output of each position), acc holds the accumulators
    themselves: their gradient is made here a block of perspectives at a time, while they are
    in cache, and the output layer's (g1w, zero before) added up a block of columns a
    thread."""
    blocks, _, width = gb.shape
    hidden = blocks * width
    n = order.shape[0]
    typed = np.zeros(2, dtype=gb.dtype)
    typed[1] = 1.0
    zero = typed[0]
    one = typed[1]
    for s in prange(blocks):
        g = gb[s]
        bias = np.zeros(width, dtype=gb.dtype)
        starts = np.empty(g.shape[0] + 1, dtype=np.int64)
        members = np.empty(SCATTER_BLOCK * MAX_ACTIVE, dtype=np.int64)
        made = np.empty((SCATTER_BLOCK if dout.shape[0] > 0 else 0, width), dtype=gb.dtype)
        for q0 in range(0, n, SCATTER_BLOCK):
            q1 = min(q0 + SCATTER_BLOCK, n)
            d = acc[s, q0:q1]
            if dout.shape[0] > 0:
                for q in range(q0, q1):
                    p = order[q]
                    start = (outb[p // 2] * 2 + p % 2) * hidden + s * width
                    _activated_backward(zero + dout[p // 2], d[q - q0],
                                        l1w[start:start + width], g1w[start:start + width],
                                        made[q - q0], crelu, zero, one)
                d = made
            for q in range(q0, q1):
                d_q = d[q - q0]
                for k in range(width):
                    bias[k] += d_q[k]
            _scatter_block(g, d, feats, counts, order, q0, q1, starts, members)
        for k in range(width):
            g0b[s * width + k] = bias[k]


@njit(cache=True, nogil=True, parallel=True)
def output_kernel(boards, idx, outb, wdl, partial, l1b, g1b, dout, losses, outputs, train):
    """Examples 1 to 3 from `accumulate_kernel`'s shares: the output of the positions
    boards[idx] (K = len(l1b) buckets, outb theirs), their losses summed a chunk into `losses`;
    when `train` d(mean loss)/d output in dout and the output bias's gradient in g1b[0]."""
    n = idx.shape[0]
    chunks = losses.shape[0]
    size = (n + chunks - 1) // chunks
    for c in prange(chunks):
        loss = 0.0
        for j in range(c * size, min(n, (c + 1) * size)):
            r = idx[j]
            if r < 0:
                r = ~r
            b = outb[j]
            out = l1b[b]
            for s in range(partial.shape[0]):
                out += partial[s, 2 * j] + partial[s, 2 * j + 1]
            outputs[j] = out
            pred = _sigmoid(out)
            err = pred - _target(boards, r, wdl)
            loss += err * err
            if train:
                dout[j] = 2.0 * err * pred * (1.0 - pred) / n
        losses[c] = loss
    if train:
        g1b[:, :] = 0
        for j in range(n):  # in order: the sum does not depend on the threads
            g1b[0, outb[j]] += dout[j]


@njit(cache=True, nogil=True, inline="always")
def _add_rows(acc, w, rows, count):
    """acc += the rows w[rows[:count]], eight a pass over acc, then four, then one."""
    i = 0
    while i + 8 <= count:
        r0 = w[rows[i]]
        r1 = w[rows[i + 1]]
        r2 = w[rows[i + 2]]
        r3 = w[rows[i + 3]]
        r4 = w[rows[i + 4]]
        r5 = w[rows[i + 5]]
        r6 = w[rows[i + 6]]
        r7 = w[rows[i + 7]]
        for k in range(acc.shape[0]):
            acc[k] += ((r0[k] + r1[k]) + (r2[k] + r3[k])) + ((r4[k] + r5[k]) + (r6[k] + r7[k]))
        i += 8
    while i + 4 <= count:
        r0 = w[rows[i]]
        r1 = w[rows[i + 1]]
        r2 = w[rows[i + 2]]
        r3 = w[rows[i + 3]]
        for k in range(acc.shape[0]):
            acc[k] += (r0[k] + r1[k]) + (r2[k] + r3[k])
        i += 4
    while i < count:
        r = w[rows[i]]
        for k in range(acc.shape[0]):
            acc[k] += r[k]
        i += 1


@njit(cache=True, nogil=True, inline="always")
def _set_rows(acc, bias, w, rows, count):
    """acc = bias + the rows w[rows[:count]], the first eight added in the pass that writes
    acc."""
    if count < 8:
        acc[:] = bias
        _add_rows(acc, w, rows, count)
        return
    r0 = w[rows[0]]
    r1 = w[rows[1]]
    r2 = w[rows[2]]
    r3 = w[rows[3]]
    r4 = w[rows[4]]
    r5 = w[rows[5]]
    r6 = w[rows[6]]
    r7 = w[rows[7]]
    for k in range(acc.shape[0]):
        acc[k] = bias[k] + (((r0[k] + r1[k]) + (r2[k] + r3[k]))
                            + ((r4[k] + r5[k]) + (r6[k] + r7[k])))
    _add_rows(acc, w, rows[8:], count - 8)


@njit(cache=True, nogil=True, inline="always")
def _scatter_rows(g, rows, count, d):
    """g[rows[i]] += d for the first `count` rows, two a pass over d: an accumulator's
    gradient into the rows of its inputs."""
    i = 0
    while i + 2 <= count:
        r0 = g[rows[i]]
        r1 = g[rows[i + 1]]
        for k in range(d.shape[0]):
            x = d[k]
            r0[k] += x
            r1[k] += x
        i += 2
    while i < count:
        r = g[rows[i]]
        for k in range(d.shape[0]):
            r[k] += d[k]
        i += 1


@njit(cache=True, nogil=True, fastmath=True)
def _scatter_block(g, d, feats, counts, order, q0, q1, starts, members):
    """g[f] += d[q - q0] for every input f of the perspectives p = order[q], q0 <= q < q1 (their
    inputs feats[p, :counts[p]]), a row at a time: a row of g is read and written once however
    many of the block's perspectives share it, and the block's d stays in cache. starts
    (g's rows + 1) and members (the block's inputs) are scratch."""
    lo = g.shape[0]
    hi = -1
    for q in range(q0, q1):
        p = order[q]
        for i in range(counts[p]):
            lo = min(lo, feats[p, i])
            hi = max(hi, feats[p, i])
    if hi < lo:
        return
    starts[lo:hi + 2] = 0
    for q in range(q0, q1):
        p = order[q]
        for i in range(counts[p]):
            starts[feats[p, i] + 1] += 1
    for f in range(lo, hi + 1):
        starts[f + 1] += starts[f]
    for q in range(q0, q1):  # members[starts[f]:starts[f + 1]] = the q with input f
        p = order[q]
        for i in range(counts[p]):
            f = feats[p, i]
            members[starts[f]] = q - q0
            starts[f] += 1
    end = 0
    for f in range(lo, hi + 1):
        i, end = end, starts[f]
        if i < end:
            _add_rows(g[f], d, members[i:end], end - i)


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def heads_kernel(boards, idx, outb, wdl, crelu, buckets, acc, slot, fused, blocked, table,
                 mirrored,
                 l0w, l0b, g0w, g0b, l1w, l1b, l2w, l2b, l3w, l3b, g1w, g1b, g2w, g2b, g3w, g3b,
                 losses, outputs, train):
    """Loss of the positions boards[idx], summed a chunk into `losses`, and their outputs o;
    when `train` the gradients of the batch's mean loss, chunk c into g*[c]. The accumulators:
    with `fused`, each position's built from its inputs (`table`, `mirrored`) and l0w [rows][N],
    l0b, and its gradient added into its part of g0w [parts][rows][N] (zero before; with
    `blocked` a block of positions at a time, `_scatter_block`) and g0b [chunks][N], no batch
    array written (a first layer small enough to stay in cache);
    otherwise read from acc [blocks][2n][width] (`accumulate_kernel`; perspective p at
    slot[p], output buckets outb) and each one's gradient written over it (for
    `scatter_kernel`). l1w .. l3b are flat (the kernels' layout); l2w is empty for examples 1
    to 3, which `buckets` K output buckets and `crelu` (else SCReLU) describe."""
    n = idx.shape[0]
    chunks = losses.shape[0]
    hidden = l0b.shape[0]
    blocks, _, width = acc.shape
    layers = l2w.shape[0] > 0
    width1 = l1b.shape[0] // buckets  # example 4's L1 and L2 widths (1 otherwise)
    width2 = l2b.shape[0] // buckets if layers else 1
    size = (n + chunks - 1) // chunks
    # fused: the first layer's gradient a part (g0w [parts]), each part's chunks on one thread
    groups = g0w.shape[0] if fused and train else chunks
    scattered = blocked and fused and train  # a block of positions' gradients at once
    per = chunks // groups
    for group in prange(groups):
        for c in range(group * per, (group + 1) * per):
            # fused: a block of positions' inputs and accumulator gradients, scattered together
            block = SCATTER_BLOCK // 2 if scattered else 1
            feats = np.empty((2 * block, MAX_ACTIVE), dtype=np.int64)
            grads = np.empty((2 * block, hidden), dtype=acc.dtype)
            counts = np.empty(2 * block, dtype=np.int64)
            places = np.arange(2 * block)
            starts = np.empty(g0w.shape[1] + 1, dtype=np.int64)
            members = np.empty(2 * block * MAX_ACTIVE, dtype=np.int64)
            i = 0  # the position's place in its block
            acc_s = np.empty(hidden, dtype=acc.dtype)
            acc_n = np.empty(hidden, dtype=acc.dtype)
            x = np.empty_like(acc_s)  # example 4: L1's inputs, and their gradient
            dx = np.empty_like(acc_s)
            z1 = np.empty(width1, dtype=acc.dtype)
            z2 = np.empty(width2, dtype=acc.dtype)
            h1 = np.empty(width1, dtype=acc.dtype)
            h2 = np.empty(width2, dtype=acc.dtype)
            dz1 = np.empty(width1, dtype=acc.dtype)
            typed = np.zeros(3, dtype=acc.dtype)  # scalars in the net's type (float32 loops)
            typed[1] = 1.0
            zero = typed[0]
            one = typed[1]
            if train:
                g1w[c, :] = 0
                g1b[c, :] = 0
                g2w[c, :] = 0
                g2b[c, :] = 0
                g3w[c, :] = 0
                g3b[c, :] = 0
                if fused:
                    g0b[c, :] = 0
            g0 = g0w[group % g0w.shape[0]]  # fused: the part's (one unused buffer otherwise)
            count = 0
            loss = 0.0
            for j in range(c * size, min(n, (c + 1) * size)):
                r = idx[j]
                files = 0
                if r < 0:
                    r = ~r
                    files = 7
                stm = feats[2 * i]
                ntm = feats[2 * i + 1]
                d_s = grads[2 * i]
                d_n = grads[2 * i + 1]
                if fused:
                    count = board_features(boards, r, stm, ntm, files, table, mirrored)
                    b = output_bucket(count, buckets)
                    _set_rows(acc_s, l0b, l0w, stm, count)
                    _set_rows(acc_n, l0b, l0w, ntm, count)
                else:
                    b = outb[j]
                    for s in range(blocks):
                        a_s = acc[s, slot[2 * j]]
                        a_n = acc[s, slot[2 * j + 1]]
                        for k in range(width):
                            acc_s[s * width + k] = a_s[k]
                            acc_n[s * width + k] = a_n[k]
                if layers:
                    out = _layers_forward(acc_s, acc_n, x, z1, h1, z2, h2, b, l1w, l1b, l2w, l2b,
                                          l3w, l3b, zero, one)
                else:
                    w1 = l1w[b * 2 * hidden:(b + 1) * 2 * hidden]
                    out = (_activated_dot(acc_s, w1[:hidden], crelu, zero, one)
                           + _activated_dot(acc_n, w1[hidden:], crelu, zero, one) + l1b[b])
                outputs[j] = out
                pred = _sigmoid(out)
                err = pred - _target(boards, r, wdl)
                loss += err * err
                if not train:
                    continue
                typed[2] = 2.0 * err * pred * (1.0 - pred) / n  # d(mean loss) / d out
                d = typed[2]
                if layers:
                    _layers_backward(c, d, acc_s, acc_n, d_s, d_n, x, dx, z1, h1, z2, h2, dz1, b,
                                     l1w, l2w, l3w, g1w, g1b, g2w, g2b, g3w, g3b, zero, one)
                else:
                    w1 = l1w[b * 2 * hidden:(b + 1) * 2 * hidden]
                    gw = g1w[c, b * 2 * hidden:(b + 1) * 2 * hidden]
                    g1b[c, b] += d
                    _activated_backward(d, acc_s, w1[:hidden], gw[:hidden], d_s, crelu, zero,
                                        one)
                    _activated_backward(d, acc_n, w1[hidden:], gw[hidden:], d_n, crelu, zero,
                                        one)
                if fused:
                    for k in range(hidden):
                        g0b[c, k] += d_s[k] + d_n[k]
                    if not scattered:
                        _scatter_rows(g0, stm, count, d_s)
                        _scatter_rows(g0, ntm, count, d_n)
                        continue
                    counts[2 * i] = count
                    counts[2 * i + 1] = count
                    i += 1
                    if i == block or j == min(n, (c + 1) * size) - 1:
                        _scatter_block(g0, grads, feats, counts, places, 0, 2 * i, starts, members)
                        i = 0
                    continue
                for s in range(blocks):
                    a_s = acc[s, slot[2 * j]]
                    a_n = acc[s, slot[2 * j + 1]]
                    for k in range(width):
                        a_s[k] = d_s[s * width + k]
                        a_n[k] = d_n[s * width + k]
            losses[c] = loss


@njit(cache=True, nogil=True)
def _layers_forward(acc_s, acc_n, x, z1, h1, z2, h2, b, l1w, l1b, l2w, l2b, l3w, l3b, zero,
                    one):
    """Example 4's output for output bucket b; fills x (the pairwise products), z1, h1, z2,
    h2 for the backward pass."""
    hidden = acc_s.shape[0]
    half = hidden // 2
    width1 = z1.shape[0]
    width2 = z2.shape[0]
    for side in range(2):
        acc = acc_s if side == 0 else acc_n
        for i in range(half):
            p = min(max(acc[i], zero), one)
            q = min(max(acc[half + i], zero), one)
            x[side * half + i] = p * q
    for j in range(width1):
        row = (b * width1 + j) * hidden
        v = zero
        for i in range(hidden):
            v += l1w[row + i] * x[i]
        v += l1b[b * width1 + j]
        z1[j] = v
        t = min(max(v, zero), one)
        h1[j] = t * t
    for k in range(width2):
        row = (b * width2 + k) * width1
        v = l2b[b * width2 + k]
        for j in range(width1):
            v += l2w[row + j] * h1[j]
        z2[k] = v
        t = min(max(v, zero), one)
        h2[k] = t * t
    out = l3b[b]
    for k in range(width2):
        out += l3w[b * width2 + k] * h2[k]
    return out


@njit(cache=True, nogil=True)
def _layers_backward(c, d, acc_s, acc_n, d_s, d_n, x, dx, z1, h1, z2, h2, dz1, b, l1w, l2w,
                     l3w, g1w, g1b, g2w, g2b, g3w, g3b, zero, one):
    """Example 4's gradients from d = d(loss)/d(output): into chunk c's g1w .. g3b, and the
    accumulators' into d_s, d_n."""
    hidden = acc_s.shape[0]
    half = hidden // 2
    width1 = z1.shape[0]
    width2 = z2.shape[0]
    g3b[c, b] += d
    dz1[:] = zero
    for k in range(width2):
        g3w[c, b * width2 + k] += d * h2[k]
        v = z2[k]
        if zero < v < one:
            dz2 = d * l3w[b * width2 + k] * (v + v)
            g2b[c, b * width2 + k] += dz2
            row = (b * width2 + k) * width1
            for j in range(width1):
                g2w[c, row + j] += dz2 * h1[j]
                dz1[j] += dz2 * l2w[row + j]
    dx[:] = zero
    for j in range(width1):
        v = z1[j]
        if zero < v < one and dz1[j] != zero:
            g = dz1[j] * (v + v)
            g1b[c, b * width1 + j] += g
            row = (b * width1 + j) * hidden
            for i in range(hidden):
                g1w[c, row + i] += g * x[i]
                dx[i] += g * l1w[row + i]
    for side in range(2):
        acc = acc_s if side == 0 else acc_n
        da = d_s if side == 0 else d_n
        for i in range(half):
            a = acc[i]
            e = acc[half + i]
            p = min(max(a, zero), one)
            q = min(max(e, zero), one)
            g = dx[side * half + i]
            da[i] = g * q if zero < a < one else zero
            da[half + i] = g * p if zero < e < one else zero


@njit(cache=True, nogil=True, parallel=True)
def block_weights(l0w, l0f, out):
    """out [blocks][rows][width] = l0w in column blocks, plus with a factoriser (l0f with
    rows) l0f repeated for every king bucket: the weights the inputs see."""
    for r in prange(out.shape[1]):
        _block_row(l0w, l0f, r, out)


@njit(cache=True, nogil=True)
def _block_row(l0w, l0f, r, out):
    """Row r of `block_weights`: out[s][r] = l0w[r]'s block s, plus l0f's row of its input."""
    blocks, _, width = out.shape
    features = l0f.shape[0]
    for s in range(blocks):
        o = out[s, r]
        w = l0w[r, s * width:(s + 1) * width]
        for k in range(width):
            o[k] = w[k]
        if features:
            f = l0f[r % features, s * width:(s + 1) * width]
            for k in range(width):
                o[k] += f[k]


@njit(cache=True, nogil=True)
def unblock(gb, out):
    """out [rows][N] = gb [parts][blocks][rows][width]: the parts added in order, the blocks
    side by side."""
    parts, blocks, rows, width = gb.shape
    for r in range(rows):
        for s in range(blocks):
            o = out[r, s * width:(s + 1) * width]
            o[:] = gb[0, s, r]
            for q in range(1, parts):
                o += gb[q, s, r]


@njit(cache=True, nogil=True)
def sum_chunks(grads, out):
    """out = grads [chunks, size] added in chunk order."""
    for i in range(out.shape[0]):
        g = grads[0, i]
        for c in range(1, grads.shape[0]):
            g += grads[c, i]
        out[i] = g


@njit(cache=True, nogil=True)
def sum_buckets(g0w, out):
    """out [768][N] = the l0w gradient of each input added over the king buckets in order:
    the factoriser's gradient, as it is added into every bucket."""
    features = out.shape[0]
    out[:, :] = g0w[:features]
    for b in range(1, g0w.shape[0] // features):
        out += g0w[b * features:(b + 1) * features]


@njit(cache=True, nogil=True, error_model="numpy")
def _adamw(param, g, m, v, lr, beta1, beta2, c1, c2, eps, decay, clip):
    """AdamW on the elements of `param` from their gradient g (decoupled decay, moments
    bias-corrected by c1 = 1 - beta1^step, c2 = 1 - beta2^step); then clip to +-clip. Numpy's
    error model: no zero-divisor check, so the loop is vectorised."""
    t = np.empty(10, dtype=param.dtype)  # the parameters' type: float32 as bullet's AdamW
    t[0] = beta1
    t[1] = 1.0 - beta1
    t[2] = beta2
    t[3] = 1.0 - beta2
    t[4] = 1.0 - lr * decay
    t[5] = lr / c1
    t[6] = 1.0 / c2
    t[7] = eps
    t[8] = clip
    t[9] = -clip
    hi = t[8]
    lo = t[9]
    for i in range(param.shape[0]):
        gi = g[i]
        mi = t[0] * m[i] + t[1] * gi
        vi = t[2] * v[i] + t[3] * gi * gi
        m[i] = mi
        v[i] = vi
        p = param[i] * t[4] - t[5] * mi / (np.sqrt(vi * t[6]) + t[7])
        param[i] = min(hi, max(lo, p))


@njit(cache=True, nogil=True, error_model="numpy")
def adamw_kernel(param, g, m, v, lr, beta1, beta2, eps, decay, step, clip):
    """One AdamW step on a flat parameter array from its gradient g (`_adamw`). One thread:
    the layers after the first are small."""
    _adamw(param, g, m, v, lr, beta1, beta2, 1.0 - beta1 ** step, 1.0 - beta2 ** step, eps,
           decay, clip)


ROW_BLOCKS = 64  # adamw_rows' work items: the inputs in blocks, each with its buffers


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def adamw_rows(l0w, gb, m, v, l0f, mf, vf, lr, beta1, beta2, eps, decay, step, clip, wb):
    """One AdamW step on the first layer, in one pass over its rows: l0w's gradient is gb
    [parts][blocks][rows][width] (the parts added in order, the blocks side by side), and with
    a factoriser (l0f with rows) l0f's is the l0w gradients of its input added over the king
    buckets in bucket order. Every row is updated (dense, as bullet's AdamW), and gb is left
    zero for the next batch. Unless wb is empty, the updated weights go into its column
    blocks as `block_weights` writes them, while their rows are in cache."""
    factorised = l0f.shape[0] > 0
    features = l0f.shape[0] if factorised else l0w.shape[0]
    buckets = l0w.shape[0] // features
    hidden = l0w.shape[1]
    parts, blocks, _, width = gb.shape
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    items = min(features, ROW_BLOCKS)
    per = (features + items - 1) // items
    for item in prange(items):
        g = np.empty(hidden, dtype=l0w.dtype)
        gf = np.zeros(hidden, dtype=l0w.dtype)
        for f in range(item * per, min(features, (item + 1) * per)):
            for b in range(buckets):
                r = b * features + f
                for s in range(blocks):
                    row = gb[0, s, r]
                    for k in range(width):
                        g[s * width + k] = row[k]
                        row[k] = 0
                    for q in range(1, parts):
                        row = gb[q, s, r]
                        for k in range(width):
                            g[s * width + k] += row[k]
                            row[k] = 0
                if factorised:
                    for k in range(hidden):
                        gf[k] = g[k] if b == 0 else gf[k] + g[k]
                _adamw(l0w[r], g, m[r], v[r], lr, beta1, beta2, c1, c2, eps, decay, clip)
            if factorised:
                _adamw(l0f[f], gf, mf[f], vf[f], lr, beta1, beta2, c1, c2, eps, decay, clip)
            if wb.shape[0]:
                for b in range(buckets):
                    _block_row(l0w, l0f, b * features + f, wb)


@dataclass
class AdamW:
    """AdamW's settings (bullet's defaults), the weight clip and the first layer's (l0w, l0f;
    0: the same as the others')."""

    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    decay: float = 0.01
    clip: float = WEIGHT_CLIP
    l0_clip: float = 0.0

    def clip_of(self, name) -> float:
        return self.l0_clip if self.l0_clip and name in ("l0w", "l0f") else self.clip


class FloatNet:
    """The trainable net of an architecture: float arrays in the kernels' layout
    (`kernel_shapes`), with the factoriser l0f when `factoriser`."""

    def __init__(self, arch: Arch, params: dict, factoriser=False):
        self.arch = arch
        self.factoriser = bool(factoriser)
        shapes = kernel_shapes(arch, self.factoriser)
        missing = set(shapes) - set(params)
        if missing:
            raise ValueError(f"{arch.describe()}: no {sorted(missing)[0]} tensor")
        self.params = {name: np.ascontiguousarray(np.asarray(params[name]).reshape(shape))
                       for name, shape in shapes.items()}

    @classmethod
    def random(cls, arch, seed=0, dtype=np.float32, factoriser=False):
        """Example 1's net (an Arch or N): PyTorch's default init, uniform within
        +-1/sqrt(fan-in) for each layer. Every other net: bullet's, normal with sd
        sqrt(2 / fan-in) and zero biases (example 4's first layer as if of 32 inputs), the
        factoriser zero."""
        if not isinstance(arch, Arch):
            arch = Arch(hidden=arch)
        rng = np.random.default_rng(seed)
        n = arch.hidden
        if arch.simple and not factoriser:
            a0 = 1.0 / math.sqrt(FEATURES)
            a1 = 1.0 / math.sqrt(2 * n)
            params = {"l0w": rng.uniform(-a0, a0, (FEATURES, n)),
                      "l0b": rng.uniform(-a0, a0, n), "l1w": rng.uniform(-a1, a1, 2 * n),
                      "l1b": rng.uniform(-a1, a1, 1)}
        else:
            fans = {"l0w": 32 if arch.layers else arch.features, "l1w": n if arch.layers
                    else 2 * n}
            if arch.layers:
                fans.update(l2w=arch.layers[0], l3w=arch.layers[1])
            params = {}
            for name, shape in kernel_shapes(arch, factoriser).items():
                if name in fans:
                    params[name] = rng.normal(0.0, math.sqrt(2.0 / fans[name]), shape)
                else:
                    params[name] = np.zeros(shape)
        return cls(arch, {k: a.astype(dtype) for k, a in params.items()}, factoriser)

    @property
    def hidden(self):
        return self.arch.hidden

    @property
    def dtype(self):
        return self.params["l0w"].dtype

    def arrays(self):
        return dict(self.params)

    def copy(self, dtype=None):
        return FloatNet(self.arch, {k: a.astype(dtype or a.dtype, copy=True)
                                    for k, a in self.params.items()}, self.factoriser)

    def graph(self) -> dict:
        """The tensors in bullet's graph shapes (`Arch.shapes`), for `wasp.nnue.arch.save`."""
        shapes = self.arch.shapes(self.factoriser)
        out = {}
        for name, a in self.params.items():
            out[name] = a.T if name in ("l0w", "l0f") else a.reshape(shapes[name])
        return out

    @classmethod
    def from_graph(cls, arch: Arch, tensors: dict, factoriser=False, dtype=np.float32):
        """The net of tensors in bullet's graph shapes (`graph`'s inverse)."""
        return cls(arch, {name: (a.T if name in ("l0w", "l0f") else a).astype(dtype)
                          for name, a in tensors.items()}, factoriser)

    def save(self, path):
        """Write the net file (`wasp.nnue.arch.save`: the factoriser merged, quantised)."""
        return A.save(path, self.arch, self.graph())

    def __repr__(self):
        f = " + factoriser" if self.factoriser else ""
        return f"<FloatNet {self.arch.describe()}{f} {self.dtype}>"


def block_width(hidden) -> int:
    """The width of the first layer's column blocks: the largest power of two up to BLOCK
    that divides N into MIN_BLOCKS blocks or more (down to 16)."""
    width = BLOCK
    while width > 16 and (hidden % width or hidden // width < MIN_BLOCKS):
        width //= 2
    return width


def fits_cache(arch: Arch) -> bool:
    """Is the first layer small enough (Chess768, FUSED_BYTES or less in float32) for the fused
    pass, each position's accumulators built and their gradient added back at once?"""
    return not arch.mirrored and arch.features * arch.hidden * 4 <= FUSED_BYTES


class Kernels:
    """A net's batch buffers and gradients, and the calls of its kernels. A first layer that
    stays in cache (`fits_cache`; or `fused` given): one pass a chunk of positions
    (`heads_kernel` fused), the first layer's gradient in FUSED_PARTS copies (`blocked`: a
    block of positions scattered at once). Otherwise a batch's inputs decoded
    (`decode_kernel`) and ordered by king bucket (`bucket_order`), the accumulators summed a
    column block a thread (`accumulate_kernel`, with the output's dot product for examples 1
    to 3, then `output_kernel`; example 4's layers a chunk of positions a thread,
    `heads_kernel`), the first layer's gradient a column block a thread (`scatter_kernel`).
    Then AdamW (`step`)."""

    def __init__(self, net: FloatNet, chunks=CHUNKS, train=True, fused=None, blocked=None):
        arch = net.arch
        self.net = net
        self.train = train
        self.fused = fits_cache(arch) if fused is None else bool(fused)
        self.blocked = arch.hidden >= SCATTER_MIN_WIDTH if blocked is None else bool(blocked)
        dt = net.dtype
        self.table = bucket_table(arch.layout)
        self.mirrored = arch.mirrored
        self.crelu = arch.activation == "crelu"
        self.buckets = arch.output_buckets
        heads = {k: a.size for k, a in net.params.items() if k not in ("l0w", "l0f", "l0b")}
        for name in ("l2w", "l2b", "l3w", "l3b"):
            heads.setdefault(name, 0)
        rows, hidden = net.params["l0w"].shape
        width = hidden if self.fused else block_width(hidden)
        # the first layer's gradient [parts][blocks][rows][width]: FUSED_PARTS when fused
        parts = math.gcd(FUSED_PARTS, chunks) if self.fused else 1
        shape = (parts, hidden // width, rows, width)
        c = chunks if train else 1
        # l0w (+ l0f) in column blocks (fused: l0w itself)
        self.weights = np.empty((1, 1, 1) if self.fused else shape[1:], dt)
        # evaluation only: one-row buffers the kernels never touch
        self.g0w = np.zeros(shape if train else (1, 1, 1, 1), dt)
        self.g0b = np.zeros((chunks if self.fused else 1, hidden), dt)
        self._pending = False  # g0w holds a batch's gradient that no step has consumed
        self._fresh = False  # weights holds l0w (+ l0f) as the last step left them
        self.grads = {k: np.zeros((c, size) if train else (1, max(size, 1)), dt)
                      for k, size in heads.items()}
        self.losses = np.zeros(chunks)
        self._batch = None  # (positions, the batch buffers of that many)
        self._none = np.zeros((0, hidden), dt)
        self._unused = np.zeros((1, 1, 1), dt)
        self._no_buckets = np.zeros(1, np.int64)
        self._shares = None  # examples 1 to 3 unfused: see _partial
        self._no_partial = np.zeros((0, 0), dt)
        self._no_dout = np.zeros(0, dt)

    def _flat(self, name):
        p = self.net.params.get(name)
        return p.reshape(-1) if p is not None else np.zeros(0, self.net.dtype)

    def _buffers(self, n):
        """(feats, counts, output buckets, order, slots, accumulators) for a batch of n positions,
        kept while the batch size stays."""
        if self._batch is None or self._batch[0] != n:
            blocks, _, width = self.weights.shape
            self._batch = (n, np.empty((2 * n, MAX_ACTIVE), np.int64),
                           np.empty(2 * n, np.int64), np.empty(n, np.int64),
                           np.empty(2 * n, np.int64), np.empty(2 * n, np.int64),
                           np.empty((blocks, 2 * n, width), self.weights.dtype))
        return self._batch[1:]

    def _partial(self, n):
        """(the output's dot product in shares a column block [blocks][2n], d loss / d output
        [n]) for n positions, kept while the batch size stays."""
        if self._shares is None or self._shares[1].shape[0] != n:
            self._shares = (np.empty((self.weights.shape[0], 2 * n), self.weights.dtype),
                            np.empty(n, self.weights.dtype))
        return self._shares

    def run(self, boards, idx, wdl, train, outputs=None):
        """Sum of the losses of boards[idx]; the batch's gradients when `train`."""
        net = self.net
        g = self.grads
        train = bool(train) and self.train
        if train and self._pending:
            self.g0w.fill(0)
        if outputs is None:
            outputs = np.empty(len(idx))
        if self.fused:  # Chess768: no factoriser, l0w as it is
            l0w, acc, outb = net.params["l0w"], self._unused, self._no_buckets
            slot = outb
            g0w = self.g0w.reshape(self.g0w.shape[0], *self.g0w.shape[2:])
        else:
            if not self._fresh:
                block_weights(net.params["l0w"],
                              net.params["l0f"] if net.factoriser else self._none, self.weights)
            self._fresh = False  # a step writes them again; anything else may change l0w
            l0w, g0w = self.weights[0], self.g0w[0]
            feats, counts, outb, order, slot, acc = self._buffers(len(idx))
            decode_kernel(boards, idx, self.table, self.mirrored, self.buckets, feats, counts,
                          outb)
            bucket_order(feats, counts, FEATURES, order, slot)
            split = not net.arch.layers  # one output layer: its dot product a block at a time
            partial, dout = self._partial(len(idx)) if split else (self._no_partial, None)
            accumulate_kernel(self.weights, net.params["l0b"], feats, counts, order, acc,
                              self._flat("l1w"), outb, self.crelu, partial)
            if split:
                dout = dout if train else self._no_dout
                output_kernel(boards, idx, outb, float(wdl), partial, self._flat("l1b"),
                              g["l1b"], dout, self.losses, outputs, train)
                if train:
                    g["l1w"].fill(0)
                    scatter_kernel(g0w, self.g0b[0], acc, feats, counts, order,
                                   self._flat("l1w"), outb, self.crelu, dout, g["l1w"][0])
                self._pending = self._pending or train
                return float(self.losses.sum())
        heads_kernel(boards, idx, outb, float(wdl), self.crelu, self.buckets, acc, slot,
                     self.fused, self.blocked, self.table, self.mirrored, l0w, net.params["l0b"],
                     g0w if self.fused else self._unused, self.g0b, self._flat("l1w"),
                     self._flat("l1b"), self._flat("l2w"), self._flat("l2b"), self._flat("l3w"),
                     self._flat("l3b"), g["l1w"], g["l1b"], g["l2w"], g["l2b"], g["l3w"],
                     g["l3b"], self.losses, outputs, train)
        if train and not self.fused:
            scatter_kernel(g0w, self.g0b[0], acc, feats, counts, order, self._flat("l1w"),
                           outb, self.crelu, self._no_dout, g["l1w"][0])
        self._pending = self._pending or train
        return float(self.losses.sum())

    def gradients(self):
        """The batch gradients per parameter, in the kernels' layout."""
        net = self.net
        g0w = np.empty_like(net.params["l0w"])
        unblock(self.g0w, g0w)
        out = {"l0w": g0w}
        if net.factoriser:
            g0f = np.empty_like(net.params["l0f"])
            sum_buckets(g0w, g0f)
            out["l0f"] = g0f
        out["l0b"] = np.empty(self.net.hidden, self.g0b.dtype)
        sum_chunks(self.g0b, out["l0b"])
        out.update(self._head_gradients())
        return out

    def _head_gradients(self):
        """The gradients of the parameters after the first layer (chunks added in order)."""
        out = {}
        for name, g in self.grads.items():
            if name in self.net.params:
                total = np.empty(g.shape[1], g.dtype)
                sum_chunks(g, total)
                out[name] = total.reshape(self.net.params[name].shape)
        return out

    def step(self, moments, lr, step, opt: AdamW):
        """AdamW on every parameter from the gradients of the last `run(train=True)`: l0w and
        l0f in one pass over their rows (`adamw_rows`, which zeroes g0w and writes the column
        blocks of the weights that the next `run` reads), the others from their chunks
        added."""
        params = self.net.params
        lr, step = float(lr), float(step)
        m, v = moments["l0w"]
        if self.net.factoriser:
            f, (mf, vf) = params["l0f"], moments["l0f"]
        else:
            f = mf = vf = self._none
        adamw_rows(params["l0w"], self.g0w, m, v, f, mf, vf, lr, opt.beta1, opt.beta2,
                   opt.eps, opt.decay, step, opt.clip_of("l0w"),
                   self._unused[:0] if self.fused else self.weights)
        self._pending = False
        self._fresh = not self.fused
        grads = self._head_gradients()
        grads["l0b"] = np.empty(self.net.hidden, self.g0b.dtype)
        sum_chunks(self.g0b, grads["l0b"])
        for name, g in grads.items():
            m, v = moments[name]
            adamw_kernel(params[name].reshape(-1), g.reshape(-1), m.reshape(-1),
                         v.reshape(-1), lr, opt.beta1, opt.beta2, opt.eps, opt.decay, step,
                         opt.clip_of(name))


def evaluate(net: FloatNet, boards, wdl=0.0, idx=None, batch=1 << 14):
    """(mean loss, outputs o float64 [n]) of a net over records (all, or boards[idx]; an
    array, or `MappedRecords` read a batch at a time)."""
    if isinstance(boards, np.ndarray):
        boards = np.ascontiguousarray(boards, dtype=np.uint8)
    idx = np.arange(len(boards), dtype=np.int64) if idx is None else np.asarray(idx, np.int64)
    k = Kernels(net, train=False)
    outputs = np.empty(len(idx))
    total = 0.0
    for a in range(0, len(idx), batch):
        total += k.run(*gather(boards, idx[a:a + batch]), wdl, False, outputs[a:a + batch])
    return total / max(1, len(idx)), outputs
