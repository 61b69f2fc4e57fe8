"""The float (768 -> N)x2 -> 1 net, its sparse forward/backward and AdamW, as numba kernels.

Output o = l1w . [screlu(acc_stm), screlu(acc_other)] + l1b with acc = l0b + the l0w rows of
the active Chess768 inputs (<= 32 a position) and screlu(x) = clamp(x, 0, 1)^2; the engine's
score is 400 o. Loss: (sigmoid(o) - target)^2 with target = wdl * result + (1 - wdl) *
sigmoid(score / 400), both from the side to move (bullet's SigmoidMSE at eval scale 400).

A batch is cut into a fixed number of chunks, each with its own gradient buffer, and the
buffers are added in chunk order, so gradients, losses and so the whole run repeat bit for bit
whatever the thread count. The same kernels run in float32 (training) and float64 (tests).
"""

import math
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from wasp.nnue import netfile
from wasp.nnue.inputs import FEATURES, MAX_ACTIVE

from .data import OFF_RESULT, OFF_SCORE, board_features

CHUNKS = 16  # gradient buffers a batch: fixed, so sums do not depend on the threads
SCALE = float(netfile.SCALE)  # centipawns = SCALE * o; the score's sigmoid is of score/SCALE
PARAMS = ("l0w", "l0b", "l1w", "l1b")


def set_threads(threads=None) -> int:
    """Fix numba's thread count (default: every core numba sees); returns it."""
    threads = int(threads or numba.config.NUMBA_NUM_THREADS)
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(threads)
    return threads


@njit(cache=True, nogil=True)
def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def batch_kernel(boards, idx, wdl, l0w, l0b, l1w, l1b, g0w, g0b, g1w, g1b, losses, outputs,
                 train):
    """Loss of the positions boards[idx] (summed a chunk into `losses`), their outputs o, and
    when `train` the gradients of the batch's mean loss, chunk c into g*[c]. An index ~r
    (negative) stands for record r mirrored left to right."""
    n = idx.shape[0]
    chunks = losses.shape[0]
    hidden = l0b.shape[0]
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
        typed = np.zeros(3, dtype=l0b.dtype)  # scalars in the net's type (float32 loops)
        typed[1] = 1.0
        zero = typed[0]
        one = typed[1]
        if train:
            g0w[c, :, :] = 0
            g0b[c, :] = 0
            g1w[c, :] = 0
            g1b[c] = 0
        loss = 0.0
        for j in range(c * size, min(n, (c + 1) * size)):
            r = idx[j]
            files = 0
            if r < 0:
                r = ~r
                files = 7
            count = board_features(boards, r, stm, ntm, files)
            acc_s[:] = l0b
            acc_n[:] = l0b
            for i in range(count):
                ws = l0w[stm[i]]
                wn = l0w[ntm[i]]
                for k in range(hidden):
                    acc_s[k] += ws[k]
                    acc_n[k] += wn[k]
            dot = zero
            for k in range(hidden):
                xs = min(max(acc_s[k], zero), one)
                xn = min(max(acc_n[k], zero), one)
                h_s[k] = xs * xs
                h_n[k] = xn * xn
                dot += h_s[k] * l1w[k] + h_n[k] * l1w[hidden + k]
            out = dot + l1b[0]
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
            g1b[c] += d
            two_d = d + d
            for k in range(hidden):
                g1w[c, k] += d * h_s[k]
                g1w[c, hidden + k] += d * h_n[k]
                a = acc_s[k]
                d_s[k] = two_d * l1w[k] * a if zero < a < one else zero
                a = acc_n[k]
                d_n[k] = two_d * l1w[hidden + k] * a if zero < a < one else zero
                g0b[c, k] += d_s[k] + d_n[k]
            for i in range(count):
                gs = g0w[c, stm[i]]
                gn = g0w[c, ntm[i]]
                for k in range(hidden):
                    gs[k] += d_s[k]
                    gn[k] += d_n[k]
        losses[c] = loss


@njit(cache=True, nogil=True)
def adamw_kernel(param, grads, m, v, lr, beta1, beta2, eps, decay, step, clip):
    """One AdamW step (decoupled decay, bias-corrected moments) on a flat parameter array from
    its chunk gradients grads [chunks, size] (added in chunk order); then clip to +-clip.
    One thread: a few percent of a batch's time, where a parallel loop's start-up cost more."""
    size = param.shape[0]
    chunks = grads.shape[0]
    c1 = 1.0 - beta1 ** step
    c2 = 1.0 - beta2 ** step
    for i in range(size):
        g = grads[0, i]
        for c in range(1, chunks):
            g += grads[c, i]
        m[i] = beta1 * m[i] + (1.0 - beta1) * g
        v[i] = beta2 * v[i] + (1.0 - beta2) * g * g
        p = param[i] * (1.0 - lr * decay) - lr * (m[i] / c1) / (math.sqrt(v[i] / c2) + eps)
        param[i] = min(clip, max(-clip, p))


@dataclass
class AdamW:
    """AdamW's settings (bullet's defaults) and the weight clip."""

    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    decay: float = 0.01
    clip: float = netfile.WEIGHT_CLIP


class FloatNet:
    """The trainable net: float arrays l0w [768, N], l0b [N], l1w [2N], l1b [1]."""

    def __init__(self, l0w, l0b, l1w, l1b):
        self.l0w, self.l0b, self.l1w, self.l1b = (np.ascontiguousarray(a) for a in
                                                  (l0w, l0b, l1w, np.ravel(l1b)))

    @classmethod
    def random(cls, hidden, seed=0, dtype=np.float32):
        """PyTorch's default init: uniform within +-1/sqrt(fan-in) for each layer."""
        rng = np.random.default_rng(seed)
        a0 = 1.0 / math.sqrt(FEATURES)
        a1 = 1.0 / math.sqrt(2 * hidden)
        return cls(rng.uniform(-a0, a0, (FEATURES, hidden)).astype(dtype),
                   rng.uniform(-a0, a0, hidden).astype(dtype),
                   rng.uniform(-a1, a1, 2 * hidden).astype(dtype),
                   rng.uniform(-a1, a1, 1).astype(dtype))

    @property
    def hidden(self):
        return self.l0b.shape[0]

    @property
    def dtype(self):
        return self.l0w.dtype

    def arrays(self):
        return {name: getattr(self, name) for name in PARAMS}

    def copy(self, dtype=None):
        return FloatNet(*(a.astype(dtype or a.dtype, copy=True) for a in self.arrays().values()))

    def quantised(self) -> netfile.Net:
        return netfile.quantise(self.l0w, self.l0b, self.l1w, self.l1b[0])

    def __repr__(self):
        return f"<FloatNet 768->{self.hidden}x2->1 {self.dtype}>"


class Kernels:
    """The chunk gradient buffers of a net, and the calls of the batch and AdamW kernels."""

    def __init__(self, net: FloatNet, chunks=CHUNKS, train=True):
        n, dt = net.hidden, net.dtype
        self.net = net
        shapes = {"l0w": (FEATURES, n), "l0b": (n,), "l1w": (2 * n,), "l1b": ()}
        # evaluation only: dummy one-element buffers the kernel never touches
        self.grads = {k: np.zeros((chunks, *s) if train else (1,) * (len(s) + 1), dt)
                      for k, s in shapes.items()}
        self.train = train
        self.losses = np.zeros(chunks)

    def run(self, boards, idx, wdl, train, outputs=None):
        """Sum of the losses of boards[idx]; fills the chunk gradients when `train`."""
        net = self.net
        g = self.grads
        train = bool(train) and self.train
        if outputs is None:
            outputs = np.empty(len(idx))
        batch_kernel(boards, idx, float(wdl), net.l0w, net.l0b, net.l1w, net.l1b, g["l0w"],
                     g["l0b"], g["l1w"], g["l1b"], self.losses, outputs, train)
        return float(self.losses.sum())

    def gradients(self):
        """The batch gradients (the chunk buffers added in order), per parameter."""
        out = {}
        for name, g in self.grads.items():
            total = g[0].copy()
            for c in range(1, len(g)):
                total += g[c]
            out[name] = total
        return out

    def step(self, moments, lr, step, opt: AdamW):
        """AdamW on every parameter from the chunk gradients of the last `run(train=True)`."""
        for name, param in self.net.arrays().items():
            g = self.grads[name]
            m, v = moments[name]
            adamw_kernel(param.reshape(-1), g.reshape(len(g), -1), m.reshape(-1), v.reshape(-1),
                         float(lr), opt.beta1, opt.beta2, opt.eps, opt.decay, float(step),
                         opt.clip)


def evaluate(net: FloatNet, boards, wdl=0.0, idx=None, batch=1 << 16):
    """(mean loss, outputs o float64 [n]) of a net over records (all, or boards[idx])."""
    boards = np.ascontiguousarray(boards, dtype=np.uint8)
    idx = np.arange(len(boards), dtype=np.int64) if idx is None else np.asarray(idx, np.int64)
    k = Kernels(net, train=False)
    outputs = np.empty(len(idx))
    total = 0.0
    for a in range(0, len(idx), batch):
        total += k.run(boards, idx[a:a + batch], wdl, False, outputs[a:a + batch])
    return total / max(1, len(idx)), outputs
