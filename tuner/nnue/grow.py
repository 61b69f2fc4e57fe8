"""The next net from the last one: a net file, dequantised, mapped into the architecture being
trained so that before any step the new net computes the old one's function (up to
quantisation), for `wasp-tune nnue train -init NET`.

What maps: the same architecture as it is; K output buckets into K' when each new bucket's
piece counts lie in one old bucket (1 -> K: the old output layer copied into every bucket);
Chess768 into king buckets, or a layout into a finer one, each new bucket taking the first
layer of the old bucket its king squares lie in (with a factoriser, l0f takes the buckets'
shared part, all of Chess768's first layer, and l0w the rest: the merged net is the old one; a king
on files e-h mirrors the board, so a Chess768 net not symmetric left to right is kept for
kings on files a-d only); a hidden layer of N into M > N, the old neurons kept and the new
ones with the trainer's random first-layer weights and zero weights after them. Anything else
(fewer neurons, example 4's layers from a net without them, another activation or scale, king
buckets into Chess768) is a GrowError naming what cannot be mapped.
"""

import hashlib
from dataclasses import dataclass

import numpy as np

from wasp.nnue import arch as A
from wasp.nnue.arch import Arch, output_bucket
from wasp.nnue.inputs import FEATURES, MIRROR, bucket_table

from .model import FloatNet

PIECE_COUNTS = range(2, 33)  # the pieces a board can hold, kings included


class GrowError(ValueError):
    """An old net that cannot be mapped into the new architecture."""


@dataclass
class Start:
    """A run's first net from an old one: the net, run.json's record of the old one and notes
    for the user (what the mapping cannot keep exactly)."""

    net: FloatNet
    record: dict
    notes: list


def sha256(path) -> str:
    """The file's SHA-256, in hex: which net a run started from."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def start_from(path, config) -> Start:
    """The first net of a run of `config` (`tuner.nnue.train.Config`) from the net file at
    `path`, read as the engine reads nets (`wasp.nnue.arch.load`: its NET.json, or example 1
    told by the file's size). ValueError names a file that is no net; GrowError an
    architecture that cannot be mapped."""
    old = A.load(path)
    net, notes = grow(old.arch, A.dequantise(old), config.architecture(), config.factoriser,
                      config.seed, config.optimiser())
    record = {"path": str(path), "sha256": sha256(path), "architecture": old.arch.describe()}
    return Start(net, record, notes)


def _bucket_map(new_of, old_of, count, what) -> np.ndarray:
    """The old bucket of each of `count` new buckets, from pairs (new, old) of every place
    (piece count or king square) in each; GrowError when a new bucket spans two old ones. A
    bucket no place reaches takes old bucket 0."""
    mapping = np.full(count, -1, dtype=np.int64)
    for new, old in zip(new_of, old_of, strict=True):
        if mapping[new] not in (-1, old):
            raise GrowError(f"{what} {new} of the new net spans the old net's {what}s "
                            f"{mapping[new]} and {old}")
        mapping[new] = old
    return np.maximum(mapping, 0)


def _neurons(old: Arch, new: Arch) -> np.ndarray:
    """Each old neuron's place among the new ones: the same index, or for example 4's net
    (its halves multiplied pairwise) the same place in its half."""
    n = old.hidden
    if not old.layers:
        return np.arange(n)
    half = n // 2
    return np.concatenate([np.arange(half), new.hidden // 2 + np.arange(half)])


def _shared(merged, clip) -> np.ndarray:
    """The factoriser's share of the buckets' first layers merged [bucket][768][N]: the middle
    of each weight's values over the buckets (all of Chess768's one layer, the buckets' own
    l0w then zero), moved as little as it takes for it and every bucket's rest to lie within
    `clip`, so that the first step's clipping leaves each sum as it is; where no share can,
    the one nearest to that."""
    top, bottom = merged.max(axis=0), merged.min(axis=0)
    middle = (top + bottom) / 2
    lo = np.maximum(top - clip, -clip)
    hi = np.minimum(bottom + clip, clip)
    return np.where(lo <= hi, np.clip(middle, lo, hi), np.clip(middle, -clip, clip))


def _refusal(old: Arch, new: Arch) -> str | None:
    if old.layers != new.layers:
        return ("example 4's layers cannot be grown from a net without them" if new.layers
                else "example 4's layers cannot be dropped")
    if old.activation != new.activation:
        return f"activation {old.activation} cannot become {new.activation}"
    if old.scale != new.scale:
        return f"scale {old.scale} cannot become {new.scale}"
    if new.hidden < old.hidden:
        return f"hidden {old.hidden} cannot shrink to {new.hidden}"
    if old.mirrored and not new.mirrored:
        return "king buckets cannot be merged into chess768 inputs"
    return None


def grow(old: Arch, tensors: dict, new: Arch, factoriser=False, seed=1, opt=None):
    """(FloatNet of `new`, notes): the old net's float tensors (bullet's graph shapes, as
    `wasp.nnue.arch.dequantise` gives them) mapped into `new` (see the module's docstring),
    what is not the old net's from the trainer's initial weights of `seed`. `opt` (AdamW)
    gives the clips a note warns of."""
    why = _refusal(old, new)
    if why:
        raise GrowError(f"{old.describe()} cannot be mapped into {new.describe()}: {why}")
    src = FloatNet.from_graph(old, tensors, dtype=np.float64).params
    out = {k: a.astype(np.float64) for k, a in
           FloatNet.random(new, seed, factoriser=factoriser).params.items()}
    try:
        outb = _bucket_map([output_bucket(p, new.output_buckets) for p in PIECE_COUNTS],
                           [output_bucket(p, old.output_buckets) for p in PIECE_COUNTS],
                           new.output_buckets, "output bucket")
        inb = _bucket_map(bucket_table(new.layout), bucket_table(old.layout),
                          new.input_buckets, "king bucket")
    except GrowError as e:
        raise GrowError(f"{old.describe()} cannot be mapped into {new.describe()}: "
                        f"{e}") from None
    cols = _neurons(old, new)
    n, m = old.hidden, new.hidden
    first = src["l0w"]
    merged = np.stack([first[inb[b] * FEATURES:(inb[b] + 1) * FEATURES]
                       for b in range(new.input_buckets)])
    if factoriser:
        shared = _shared(merged, opt.clip_of("l0f") if opt else np.inf)
        out["l0f"][:, cols] = shared
        merged = merged - shared
    for b in range(new.input_buckets):
        out["l0w"][b * FEATURES:(b + 1) * FEATURES, cols] = merged[b]
    out["l0b"][cols] = src["l0b"]
    # new neurons: output weights 0 keep the function; l0 random, as zero l0 and l1w get no gradient
    if not new.layers:
        out["l1w"][:] = 0.0
        out["l1w"][:, cols] = src["l1w"][outb, :n]
        out["l1w"][:, m + cols] = src["l1w"][outb, n:]
        out["l1b"][:] = src["l1b"][outb]
    else:
        out["l1w"][:] = 0.0
        out["l1w"][:, :, cols] = src["l1w"][outb]
        for name in ("l1b", "l2w", "l2b", "l3w", "l3b"):
            out[name][:] = src[name][outb]
    notes = []
    if new.mirrored and not old.mirrored:
        features = np.arange(FEATURES)
        if not np.array_equal(first, first[features ^ MIRROR]):
            notes.append("king buckets mirror the board for a king on files e-h, and the old "
                         "net is not symmetric: the new net starts as the old one for kings "
                         "on files a-d only")
    if opt is not None:
        for name, a in out.items():  # the old net's values (new neurons' are the usual)
            a = a[..., cols] if name in ("l0w", "l0f", "l0b") else a
            limit = opt.clip_of(name)
            if a.size and np.abs(a).max() > limit + 0.5 / new.qa:  # beyond a rounding
                notes.append(f"{name} holds {np.abs(a).max():.4g}, beyond the clip "
                             f"+-{limit:g}: the first step clips it")
    return FloatNet(new, {k: a.astype(np.float32) for k, a in out.items()}, factoriser), notes
