"""The net file of bullet's simple (768 -> N)x2 -> 1 example, any N, as integers: `Net`.

Little-endian i16 throughout, in this order: `l0w` [768][N] (the N weights of each input
feature together, scaled by QA), `l0b` [N] (QA), `l1w` [2N] (QB; the side to move's N first),
`l1b` (QA * QB); then zeros up to a multiple of 64 bytes. Nothing else is in the file, so N
is told by its size: 2 * (771 N + 1) bytes, rounded up to 64. Metadata goes in NET.json beside
it; the other architectures, and the float writer, are `wasp.nnue.arch`'s.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wasp.nnue import arch as _arch
from wasp.nnue.arch import ALIGN, QA, QB, SCALE, QuantisedNet, simple_file_size, simple_hidden
from wasp.nnue.inputs import FEATURES

__all__ = ["Net", "QA", "QB", "SCALE", "ALIGN", "WEIGHT_CLIP", "file_size", "hidden_size",
           "looks_like_net", "read", "quantise", "write", "is_net", "read_net", "describe"]

WEIGHT_CLIP = 1.98  # bullet's default clip keeps QA * w in i16 and the output in i32


def file_size(hidden: int) -> int:
    """Bytes of a net with `hidden` neurons a perspective."""
    return simple_file_size(hidden)


def hidden_size(size: int) -> int:
    """N from a file's size; ValueError when no N gives that size."""
    return simple_hidden(size)


@dataclass
class Net:
    """A quantised net: the integers the engine computes with (int16 arrays)."""

    l0w: np.ndarray  # (768, N)
    l0b: np.ndarray  # (N,)
    l1w: np.ndarray  # (2N,): side to move's accumulator, then the other's
    l1b: int

    @property
    def hidden(self) -> int:
        return self.l0b.shape[0]

    def __repr__(self):
        return f"<Net {FEATURES}->{self.hidden}x2->1 l1b={self.l1b}>"


def looks_like_net(path) -> bool:
    """A file is a net when its size fits the layout and its head is not text."""
    path = Path(path)
    try:
        size = path.stat().st_size
        hidden_size(size)
        head = path.read_bytes()[:256]
    except (OSError, ValueError):
        return False
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return True
    return not all(c.isprintable() or c in "\t\r\n" for c in text)


def read(path) -> Net:
    """Read a net; ValueError names the file when its size fits no N."""
    t = _arch.read_simple(path)
    return Net(t["l0w"], t["l0b"], t["l1w"].ravel(), int(t["l1b"][0]))


def read_net(path) -> Net | QuantisedNet:
    """A net of any architecture: the one its NET.json names (a QuantisedNet), or else
    example 1's of any N (a Net); ValueError names the file whose size does not fit."""
    arch = _arch.arch_of(path)
    return read(path) if arch is None else _arch.load(path, arch)


def is_net(obj) -> bool:
    """Is `obj` a net (of any architecture) rather than the hand-written evaluation's weights?"""
    return isinstance(obj, (Net, QuantisedNet))


def describe(net) -> str:
    """bullet's shorthand of a net: `(768 -> 128)x2 -> 1, SCReLU`."""
    if isinstance(net, QuantisedNet):
        return net.arch.describe()
    return f"({FEATURES} -> {net.hidden})x2 -> 1, SCReLU"


def quantise(l0w, l0b, l1w, l1b) -> Net:
    """The float weights of a trained net (clipped to +-WEIGHT_CLIP), each times its scale and
    rounded to the nearest integer, ties to even (`wasp.nnue.arch.save` takes the weights
    as f32 and rounds ties away from zero, as bullet does)."""

    def q(values, scale):
        return np.round(np.asarray(values, dtype=np.float64) * scale).astype(np.int16)

    return Net(q(l0w, QA), q(l0b, QA), q(np.ravel(l1w), QB), int(q(l1b, QA * QB)))


def write(net: Net, path) -> None:
    """Write `net` in the layout, zero-padded to a multiple of 64 bytes."""
    hidden = net.hidden
    if net.l0w.shape != (FEATURES, hidden) or net.l1w.shape != (2 * hidden,):
        raise ValueError(f"inconsistent net shapes: l0w {net.l0w.shape}, l1w {net.l1w.shape}")
    _arch.write_simple(path, {"l0w": net.l0w, "l0b": net.l0b, "l1w": net.l1w,
                              "l1b": [net.l1b]})
