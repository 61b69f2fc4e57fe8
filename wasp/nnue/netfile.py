"""The net file: bullet's quantised layout of its simple (768 -> N)x2 -> 1 example.

Little-endian i16 throughout, in this order: `l0w` [768][N] (the N weights of each input
feature together, scaled by QA), `l0b` [N] (QA), `l1w` [2N] (QB; the side to move's N first),
`l1b` (QA * QB); then zeros up to a multiple of 64 bytes. Nothing else is in the file, so N
is told by its size: 2 * (771 N + 1) bytes, rounded up to 64. Metadata goes in a file beside it.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wasp.nnue.inputs import FEATURES

QA = 255  # the accumulator's scale: l0w, l0b
QB = 64  # the output weights' scale: l1w
SCALE = 400  # the output in centipawns = net * SCALE
ALIGN = 64
WEIGHT_CLIP = 1.98  # bullet's default clip keeps QA * w in i16 and the output in i32


def file_size(hidden: int) -> int:
    """Bytes of a net with `hidden` neurons a perspective."""
    raw = 2 * ((FEATURES + 3) * hidden + 1)
    return -(-raw // ALIGN) * ALIGN


def hidden_size(size: int) -> int:
    """N from a file's size; ValueError when no N gives that size."""
    n = max(1, (size - ALIGN) // (2 * (FEATURES + 3)))
    for hidden in (n, n + 1):
        if file_size(hidden) == size:
            return hidden
    raise ValueError(f"{size} bytes is no ({FEATURES} -> N)x2 -> 1 net in bullet's layout "
                     f"(N = 128 would be {file_size(128)} bytes)")


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
    data = Path(path).read_bytes()
    try:
        hidden = hidden_size(len(data))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    values = np.frombuffer(data, dtype="<i2").astype(np.int16)
    n0 = FEATURES * hidden
    l0w = values[:n0].reshape(FEATURES, hidden).copy()
    l0b = values[n0:n0 + hidden].copy()
    l1w = values[n0 + hidden:n0 + 3 * hidden].copy()
    l1b = int(values[n0 + 3 * hidden])
    return Net(l0w, l0b, l1w, l1b)


def quantise(l0w, l0b, l1w, l1b) -> Net:
    """The float weights of a trained net (clipped to +-WEIGHT_CLIP) as bullet rounds them."""

    def q(values, scale):
        return np.round(np.asarray(values, dtype=np.float64) * scale).astype(np.int16)

    return Net(q(l0w, QA), q(l0b, QA), q(np.ravel(l1w), QB), int(q(l1b, QA * QB)))


def write(net: Net, path) -> None:
    """Write `net` in the layout, zero-padded to a multiple of 64 bytes."""
    hidden = net.hidden
    if net.l0w.shape != (FEATURES, hidden) or net.l1w.shape != (2 * hidden,):
        raise ValueError(f"inconsistent net shapes: l0w {net.l0w.shape}, l1w {net.l1w.shape}")
    values = np.concatenate([net.l0w.ravel(), net.l0b, net.l1w, [net.l1b]]).astype("<i2")
    data = values.tobytes()
    data += bytes(file_size(hidden) - len(data))
    Path(path).write_bytes(data)
