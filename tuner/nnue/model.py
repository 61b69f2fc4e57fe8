"""The float net of any `wasp.nnue.arch.Arch` (bullet's progression, examples 1 to 4), its sparse
forward/backward and AdamW, as numba kernels.

The accumulator of a perspective is acc = l0b + the l0w rows of its active inputs (<= 32:
Chess768, or king-bucketed and mirrored, `wasp.nnue.inputs`); with a factoriser the rows are
l0w's plus l0f's (of the input modulo 768), merged once a batch. Then, for the output bucket b
of the position's piece count:
- examples 1 to 3: o = l1w[b] . [act(acc_stm), act(acc_other)] + l1b[b], act SCReLU
  clamp(x, 0, 1)^2 or CReLU clamp(x, 0, 1);
- example 4: x = [crelu(acc[:N/2]) * crelu(acc[N/2:]) of each side], h1 = screlu(l1w[b] x +
  l1b[b]) (16), h2 = screlu(l2w[b] h1 + l2b[b]) (32), o = l3w[b] . h2 + l3b[b].
The engine's score is 400 o. Loss: (sigmoid(o) - target)^2 with target = wdl * result + (1 -
wdl) * sigmoid(score / 400), both from the side to move (bullet's SigmoidMSE at eval scale 400).

A batch is cut into a fixed number of chunks, each with its own gradient buffers (l0w's only in
the rows the chunk touched), added in chunk order, so gradients, losses and so the whole run
repeat bit for bit whatever the thread count. The same kernels run in float32 (training) and
float64 (tests).

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

CHUNKS = 16  # gradient buffers a batch: fixed, so sums do not depend on the threads
CHUNK_BYTES = 64 << 20  # fewer chunks when 16 copies of l0w's gradient would pass this
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
def _clear_rows(g, touched, c):
    """Zero the rows of chunk c's l0w gradient that the last batch touched."""
    for r in range(touched.shape[1]):
        if touched[c, r]:
            g[c, r, :] = 0
            touched[c, r] = 0


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def batch_kernel(boards, idx, wdl, table, mirrored, crelu, buckets, l0w, l0b, l1w, l1b, l2w,
                 l2b, l3w, l3b, g0w, touched, g0b, g1w, g1b, g2w, g2b, g3w, g3b, losses,
                 outputs, train):
    """Loss of the positions boards[idx] (summed a chunk into `losses`), their outputs o, and
    when `train` the gradients of the batch's mean loss, chunk c into g*[c] (g0w only in the
    rows touched[c] marks). An index ~r (negative) stands for record r mirrored left to right.
    l1w .. l3b are flat (the kernels' layout); l2w is empty for examples 1 to 3, which
    `buckets` K output buckets and `crelu` (else SCReLU) describe."""
    n = idx.shape[0]
    chunks = losses.shape[0]
    hidden = l0b.shape[0]
    layers = l2w.shape[0] > 0
    width1 = l1b.shape[0] // buckets  # example 4's L1 and L2 widths (1 otherwise)
    width2 = l2b.shape[0] // buckets if layers else 1
    size = (n + chunks - 1) // chunks
    for c in prange(chunks):
        stm = np.empty(MAX_ACTIVE, dtype=np.int64)
        ntm = np.empty(MAX_ACTIVE, dtype=np.int64)
        acc_s = np.empty_like(l0b)
        acc_n = np.empty_like(l0b)
        h_s = np.empty_like(l0b)
        h_n = np.empty_like(l0b)
        d_s = np.empty_like(l0b)
        d_n = np.empty_like(l0b)
        x = np.empty_like(l0b)  # example 4: L1's inputs, and their gradient
        dx = np.empty_like(l0b)
        z1 = np.empty(width1, dtype=l0b.dtype)
        z2 = np.empty(width2, dtype=l0b.dtype)
        h1 = np.empty(width1, dtype=l0b.dtype)
        h2 = np.empty(width2, dtype=l0b.dtype)
        dz1 = np.empty(width1, dtype=l0b.dtype)
        typed = np.zeros(3, dtype=l0b.dtype)  # scalars in the net's type (float32 loops)
        typed[1] = 1.0
        zero = typed[0]
        one = typed[1]
        if train:
            _clear_rows(g0w, touched, c)
            g0b[c, :] = 0
            g1w[c, :] = 0
            g1b[c, :] = 0
            g2w[c, :] = 0
            g2b[c, :] = 0
            g3w[c, :] = 0
            g3b[c, :] = 0
        loss = 0.0
        for j in range(c * size, min(n, (c + 1) * size)):
            r = idx[j]
            files = 0
            if r < 0:
                r = ~r
                files = 7
            count = board_features(boards, r, stm, ntm, files, table, mirrored)
            b = output_bucket(count, buckets)
            acc_s[:] = l0b
            acc_n[:] = l0b
            for i in range(count):
                ws = l0w[stm[i]]
                wn = l0w[ntm[i]]
                for k in range(hidden):
                    acc_s[k] += ws[k]
                    acc_n[k] += wn[k]
            if layers:
                out = _layers_forward(acc_s, acc_n, x, z1, h1, z2, h2, b, l1w, l1b, l2w, l2b,
                                      l3w, l3b, zero, one)
            else:
                w1 = l1w[b * 2 * hidden:(b + 1) * 2 * hidden]
                dot = zero
                if crelu:
                    for k in range(hidden):
                        h_s[k] = min(max(acc_s[k], zero), one)
                        h_n[k] = min(max(acc_n[k], zero), one)
                        dot += h_s[k] * w1[k] + h_n[k] * w1[hidden + k]
                else:
                    for k in range(hidden):
                        xs = min(max(acc_s[k], zero), one)
                        xn = min(max(acc_n[k], zero), one)
                        h_s[k] = xs * xs
                        h_n[k] = xn * xn
                        dot += h_s[k] * w1[k] + h_n[k] * w1[hidden + k]
                out = dot + l1b[b]
            outputs[j] = out
            score = np.int16(boards[r, OFF_SCORE] | (np.int32(boards[r, OFF_SCORE + 1]) << 8))
            result = boards[r, OFF_RESULT] / 2.0
            target = wdl * result + (1.0 - wdl) * _sigmoid(score / SCALE)
            pred = _sigmoid(out)
            err = pred - target
            loss += err * err
            if not train:
                continue
            typed[2] = 2.0 * err * pred * (1.0 - pred) / n  # d(mean loss) / d out
            d = typed[2]
            if layers:
                _layers_backward(c, d, acc_s, acc_n, d_s, d_n, x, dx, z1, h1, z2, h2, dz1, b,
                                 l1w, l2w, l3w, g1w, g1b, g2w, g2b, g3w, g3b, zero, one)
                for k in range(hidden):
                    g0b[c, k] += d_s[k] + d_n[k]
            else:
                w1 = l1w[b * 2 * hidden:(b + 1) * 2 * hidden]
                gw = g1w[c, b * 2 * hidden:(b + 1) * 2 * hidden]
                g1b[c, b] += d
                if crelu:
                    for k in range(hidden):
                        gw[k] += d * h_s[k]
                        gw[hidden + k] += d * h_n[k]
                        a = acc_s[k]
                        d_s[k] = d * w1[k] if zero < a < one else zero
                        a = acc_n[k]
                        d_n[k] = d * w1[hidden + k] if zero < a < one else zero
                        g0b[c, k] += d_s[k] + d_n[k]
                else:
                    two_d = d + d
                    for k in range(hidden):
                        gw[k] += d * h_s[k]
                        gw[hidden + k] += d * h_n[k]
                        a = acc_s[k]
                        d_s[k] = two_d * w1[k] * a if zero < a < one else zero
                        a = acc_n[k]
                        d_n[k] = two_d * w1[hidden + k] * a if zero < a < one else zero
                        g0b[c, k] += d_s[k] + d_n[k]
            for i in range(count):
                touched[c, stm[i]] = 1
                touched[c, ntm[i]] = 1
                gs = g0w[c, stm[i]]
                gn = g0w[c, ntm[i]]
                for k in range(hidden):
                    gs[k] += d_s[k]
                    gn[k] += d_n[k]
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
def merge_factoriser(l0w, l0f, out):
    """out = l0w + l0f repeated for every king bucket (the weights the inputs see)."""
    features = l0f.shape[0]
    for r in prange(l0w.shape[0]):
        f = r % features
        for k in range(l0w.shape[1]):
            out[r, k] = l0w[r, k] + l0f[f, k]


@njit(cache=True, nogil=True)
def sum_rows(g0w, touched, out):
    """out = the chunks' l0w gradients added in chunk order (rows no chunk touched: 0)."""
    for r in range(out.shape[0]):
        first = True
        for c in range(g0w.shape[0]):
            if touched[c, r]:
                if first:
                    out[r, :] = g0w[c, r, :]
                    first = False
                else:
                    for k in range(out.shape[1]):
                        out[r, k] += g0w[c, r, k]
        if first:
            out[r, :] = 0


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


@njit(cache=True, nogil=True)
def adamw_kernel(param, g, m, v, lr, beta1, beta2, eps, decay, step, clip):
    """One AdamW step (decoupled decay, bias-corrected moments) on a flat parameter array from
    its gradient g; then clip to +-clip. One thread: a few percent of a batch's time, where a
    parallel loop's start-up cost more."""
    size = param.shape[0]
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    for i in range(size):
        m[i] = beta1 * m[i] + (1.0 - beta1) * g[i]
        v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i]
        p = param[i] * (1.0 - lr * decay) - lr * (m[i] / c1) / (math.sqrt(v[i] / c2) + eps)
        param[i] = min(clip, max(-clip, p))


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

    def save(self, path):
        """Write the net file (`wasp.nnue.arch.save`: the factoriser merged, quantised)."""
        return A.save(path, self.arch, self.graph())

    def __repr__(self):
        f = " + factoriser" if self.factoriser else ""
        return f"<FloatNet {self.arch.describe()}{f} {self.dtype}>"


def chunks_for(arch: Arch) -> int:
    """Gradient chunks a batch: CHUNKS, fewer (at least 2) for a first layer so big that 16
    copies of its gradient would pass CHUNK_BYTES. A function of the architecture alone."""
    l0 = arch.features * arch.hidden * 4
    chunks = CHUNKS
    while chunks > 2 and chunks * l0 > CHUNK_BYTES:
        chunks //= 2
    return chunks


class Kernels:
    """The chunk gradient buffers of a net, and the calls of the batch and AdamW kernels."""

    def __init__(self, net: FloatNet, chunks=None, train=True):
        arch = net.arch
        self.net = net
        chunks = chunks or chunks_for(arch)
        self.train = train
        dt = net.dtype
        self.table = bucket_table(arch.layout)
        self.mirrored = arch.mirrored
        self.crelu = arch.activation == "crelu"
        self.buckets = arch.output_buckets
        heads = {k: a.size for k, a in net.params.items() if k not in ("l0w", "l0f")}
        for name in ("l2w", "l2b", "l3w", "l3b"):
            heads.setdefault(name, 0)
        rows = net.params["l0w"].shape
        c = chunks if train else 1
        # evaluation only: one-row buffers the kernel never touches
        self.g0w = np.zeros((c, *rows) if train else (1, 1, 1), dt)
        self.touched = np.zeros((c, rows[0]) if train else (1, 1), np.uint8)
        self.grads = {k: np.zeros((c, size) if train else (1, max(size, 1)), dt)
                      for k, size in heads.items()}
        self.losses = np.zeros(chunks)
        self.merged = np.empty(rows, dt) if net.factoriser else None

    def _flat(self, name):
        p = self.net.params.get(name)
        return p.reshape(-1) if p is not None else np.zeros(0, self.net.dtype)

    def run(self, boards, idx, wdl, train, outputs=None):
        """Sum of the losses of boards[idx]; fills the chunk gradients when `train`."""
        net = self.net
        g = self.grads
        train = bool(train) and self.train
        if outputs is None:
            outputs = np.empty(len(idx))
        l0w = net.params["l0w"]
        if net.factoriser:
            merge_factoriser(l0w, net.params["l0f"], self.merged)
            l0w = self.merged
        batch_kernel(boards, idx, float(wdl), self.table, self.mirrored, self.crelu,
                     self.buckets, l0w, net.params["l0b"], self._flat("l1w"), self._flat("l1b"),
                     self._flat("l2w"), self._flat("l2b"), self._flat("l3w"), self._flat("l3b"),
                     self.g0w, self.touched, g["l0b"], g["l1w"], g["l1b"], g["l2w"], g["l2b"],
                     g["l3w"], g["l3b"], self.losses, outputs, train)
        return float(self.losses.sum())

    def gradients(self):
        """The batch gradients (the chunk buffers added in order), per parameter, in the
        kernels' layout."""
        net = self.net
        out = {}
        g0w = np.empty_like(net.params["l0w"])
        sum_rows(self.g0w, self.touched, g0w)
        out["l0w"] = g0w
        if net.factoriser:
            g0f = np.empty_like(net.params["l0f"])
            sum_buckets(g0w, g0f)
            out["l0f"] = g0f
        for name, g in self.grads.items():
            if name in net.params:
                total = np.empty(g.shape[1], g.dtype)
                sum_chunks(g, total)
                out[name] = total.reshape(net.params[name].shape)
        return out

    def step(self, moments, lr, step, opt: AdamW):
        """AdamW on every parameter from the chunk gradients of the last `run(train=True)`."""
        grads = self.gradients()
        for name, param in self.net.params.items():
            m, v = moments[name]
            adamw_kernel(param.reshape(-1), grads[name].reshape(-1), m.reshape(-1),
                         v.reshape(-1), float(lr), opt.beta1, opt.beta2, opt.eps, opt.decay,
                         float(step), opt.clip_of(name))


def evaluate(net: FloatNet, boards, wdl=0.0, idx=None, batch=1 << 16):
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
