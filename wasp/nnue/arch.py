"""The nets of bullet's progression (examples 1 to 4) as one description, `Arch`, that the
trainer, the file reader and the engine share; the net file each one is written as (`save`,
`load`) and the `NET.json` beside it that names the architecture.

An architecture: inputs Chess768 or king buckets with horizontal mirroring
(`wasp.nnue.inputs`), a hidden layer of N a perspective with SCReLU or CReLU, K output buckets
chosen by material, and either one output layer (examples 1 to 3) or example 4's pairwise
product of the accumulator's halves, then L1 (16 a bucket), L2 (32 a bucket) and the output.

Tensors are named and shaped as in bullet's graph: a layer from `i` inputs to `o` outputs has
weights `(o, i)` and biases `(o,)`; `l0f`, the factoriser `(N, 768)` shared by every king
bucket, exists in training only and is added into each bucket's columns of `l0w` when saved.
The file is `save_format`'s: each tensor in turn, written column-major (bullet's order) or
transposed (row-major), quantised (rounded half away from zero, i16 or i8) or left as f32,
little-endian, then zeros up to a multiple of 64 bytes. docs/formats/nets.md lists each layout
tensor by tensor.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from wasp.atomicfile import replacing, write_text
from wasp.nnue.inputs import FEATURES, LAYOUT_SIZE, bucket_count

__all__ = ["Arch", "QuantisedNet", "Saved", "INPUTS", "ACTIVATIONS", "MULTI_LAYERS", "QA", "QB",
           "SCALE", "ALIGN", "ARCH_KEY", "output_bucket", "output_bucket_divisor", "meta_path",
           "read_meta", "arch_of", "read_arch_file", "write_meta", "save", "load", "dequantise",
           "write_tensors", "write_simple", "read_simple", "simple_hidden", "simple_file_size",
           "file_shape"]

INPUTS = ("chess768", "buckets-mirrored")
ACTIVATIONS = ("screlu", "crelu")
ACTIVATION_NAMES = {"screlu": "SCReLU", "crelu": "CReLU"}
MULTI_LAYERS = (16, 32)  # example 4's L1 and L2 widths a bucket
HIDDEN_MIN, HIDDEN_MAX = 16, 2048
MAX_OUTPUT_BUCKETS = 32  # one a piece count from 2 to 32 at most
MAX_BUCKET = LAYOUT_SIZE - 1  # a layout names at most 32 king buckets
Q_MAX = 32767  # qa, qb and scale are i16 (bullet's quantisation multipliers)
QA = 255  # the accumulator's scale (l0w, l0b)
QB = 64  # the first layer after the accumulator (l1w)
SCALE = 400  # centipawns = the net's output * SCALE
ALIGN = 64  # a file is padded with zeros to a multiple of this many bytes
ARCH_KEY = "arch"  # NET.json's key for the architecture
FIELDS = ("inputs", "layout", "hidden", "activation", "output_buckets", "layers", "qa", "qb",
          "scale")
_LIMITS = {"i16": (-32768, 32767), "i8": (-128, 127)}
_DTYPES = {"i16": "<i2", "i8": "i1", "f32": "<f4"}


def _integer(name, value):
    """`value` as an int (an integral float is taken); ValueError naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer)):
        raise ValueError(f"arch: {name} must be an integer, not {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"arch: {name} must be an integer, not {value!r}")
        value = int(value)
    return int(value)


@dataclass(frozen=True)
class Arch:
    """A net's architecture, as NET.json's `"arch"` object holds it; ValueError names the
    first bad field."""

    inputs: str = "chess768"  # "chess768" or "buckets-mirrored"
    layout: tuple = (0,) * LAYOUT_SIZE  # the king bucket of each of 32 squares (files a-d)
    hidden: int = 128  # N, neurons a perspective
    activation: str = "screlu"  # of the accumulator: "screlu" or "crelu"
    output_buckets: int = 1  # K, chosen by material (output_bucket)
    layers: tuple = ()  # () or (16, 32): example 4's layers after the accumulator
    qa: int = QA
    qb: int = QB
    scale: int = SCALE

    def __post_init__(self):
        if self.inputs not in INPUTS:
            raise ValueError(f"arch: inputs must be one of {', '.join(INPUTS)}, not "
                             f"{self.inputs!r}")
        layout = self.layout
        if isinstance(layout, (str, bytes)) or not hasattr(layout, "__len__") \
                or len(layout) != LAYOUT_SIZE:
            raise ValueError(f"arch: layout must be {LAYOUT_SIZE} bucket numbers, not "
                             f"{layout!r}")
        layout = tuple(_integer("layout", b) for b in layout)
        if min(layout) < 0 or max(layout) > MAX_BUCKET:
            raise ValueError(f"arch: layout's bucket numbers must be 0 to {MAX_BUCKET}, not "
                             f"{list(layout)}")
        if self.inputs == "chess768" and any(layout):
            raise ValueError(f"arch: layout must be {LAYOUT_SIZE} zeros for chess768 inputs "
                             f"(no king buckets), not {list(layout)}")
        object.__setattr__(self, "layout", layout)
        hidden = _integer("hidden", self.hidden)
        if not HIDDEN_MIN <= hidden <= HIDDEN_MAX:
            raise ValueError(f"arch: hidden must be from {HIDDEN_MIN} to {HIDDEN_MAX}, not "
                             f"{hidden}")
        object.__setattr__(self, "hidden", hidden)
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"arch: activation must be one of {', '.join(ACTIVATIONS)}, not "
                             f"{self.activation!r}")
        k = _integer("output_buckets", self.output_buckets)
        if not 1 <= k <= MAX_OUTPUT_BUCKETS:
            raise ValueError(f"arch: output_buckets must be from 1 to {MAX_OUTPUT_BUCKETS}, "
                             f"not {k}")
        object.__setattr__(self, "output_buckets", k)
        layers = self.layers
        if isinstance(layers, (str, bytes)) or not hasattr(layers, "__len__"):
            raise ValueError(f"arch: layers must be [] or {list(MULTI_LAYERS)}, not {layers!r}")
        layers = tuple(_integer("layers", w) for w in layers)
        if layers not in ((), MULTI_LAYERS):
            raise ValueError(f"arch: layers must be [] or {list(MULTI_LAYERS)}, not "
                             f"{list(layers)}")
        object.__setattr__(self, "layers", layers)
        if layers:
            if self.activation != "crelu":
                raise ValueError("arch: activation must be crelu with layers "
                                 f"{list(MULTI_LAYERS)} (example 4 multiplies the CReLU "
                                 "halves of the accumulator)")
            if hidden % 2:
                raise ValueError(f"arch: hidden must be even with layers {list(MULTI_LAYERS)} "
                                 f"(its halves are multiplied pairwise), not {hidden}")
        for name in ("qa", "qb", "scale"):
            value = _integer(name, getattr(self, name))
            if not 1 <= value <= Q_MAX:
                raise ValueError(f"arch: {name} must be from 1 to {Q_MAX}, not {value}")
            object.__setattr__(self, name, value)
        if not layers and self.qa * self.qb > Q_MAX:
            raise ValueError(f"arch: qa * qb must be at most {Q_MAX} (l1b is i16 at qa * qb), "
                             f"not {self.qa} * {self.qb} = {self.qa * self.qb}")

    # ---- what follows from the fields

    @property
    def input_buckets(self) -> int:
        """King buckets: 1 for chess768, the layout's largest number plus one otherwise."""
        return 1 if self.inputs == "chess768" else bucket_count(self.layout)

    @property
    def mirrored(self) -> bool:
        return self.inputs == "buckets-mirrored"

    @property
    def features(self) -> int:
        """Inputs a perspective: 768 a king bucket."""
        return FEATURES * self.input_buckets

    @property
    def multi_layer(self) -> bool:
        return bool(self.layers)

    @property
    def simple(self) -> bool:
        """Example 1's net: (768 -> N)x2 -> 1, SCReLU, QA 255, QB 64, scale 400."""
        return (self.inputs == "chess768" and self.output_buckets == 1 and not self.layers
                and self.activation == "screlu"
                and (self.qa, self.qb, self.scale) == (QA, QB, SCALE))

    def describe(self) -> str:
        """bullet's shorthand and the activation: `(768x10hm -> 512)x2 -> 1x8, SCReLU`."""
        inputs = "768" if self.inputs == "chess768" else f"768x{self.input_buckets}hm"
        head = f"({inputs} -> {self.hidden})x2"
        k = "" if self.output_buckets == 1 else f"x{self.output_buckets}"
        if self.layers:
            l1, l2 = self.layers
            return f"{head} -> pairwise -> {l1}{k} -> {l2}{k} -> 1{k}, CReLU then SCReLU"
        return f"{head} -> 1{k}, {ACTIVATION_NAMES[self.activation]}"

    def __repr__(self):
        return f"<Arch {self.describe()}>"

    # ---- JSON (NET.json's "arch")

    def to_json(self) -> dict:
        """NET.json's `"arch"` object."""
        return {"inputs": self.inputs, "layout": list(self.layout), "hidden": self.hidden,
                "activation": self.activation, "output_buckets": self.output_buckets,
                "layers": list(self.layers), "qa": self.qa, "qb": self.qb, "scale": self.scale}

    @classmethod
    def from_json(cls, obj) -> Arch:
        """An Arch from NET.json's `"arch"` object: every field present, no others."""
        if not isinstance(obj, dict):
            raise ValueError(f"arch must be a JSON object with the fields {', '.join(FIELDS)}")
        unknown = sorted(set(obj) - set(FIELDS))
        if unknown:
            raise ValueError(f"arch: unknown field {unknown[0]!r} (the fields: "
                             f"{', '.join(FIELDS)})")
        for name in FIELDS:
            if name not in obj:
                raise ValueError(f"arch: missing field {name!r}")
        return cls(**obj)

    # ---- tensors and the file

    def shapes(self, factoriser: bool = False) -> dict:
        """Each tensor's shape in bullet's graph convention, in the file's order (`l0f`, the
        factoriser, after `l0w` when asked for)."""
        shapes = {s.name: shape for s, shape in self._format()}
        if factoriser:
            shapes = {"l0w": shapes.pop("l0w"), "l0f": (self.hidden, FEATURES), **shapes}
        return shapes

    def saved_format(self) -> list[Saved]:
        """The file's tensors as the example's `save_format` list writes them."""
        return [s for s, _ in self._format()]

    def file_shapes(self) -> dict:
        """Each saved tensor's shape as the file holds it (`file_shape`)."""
        return {s.name: file_shape(s, shape) for s, shape in self._format()}

    def file_size(self) -> int:
        """Bytes of the net file, padding included."""
        return _file_size(self._format())

    def _format(self):
        return _format(self.hidden, self.features, self.output_buckets, self.layers, self.qa,
                       self.qb)


@dataclass(frozen=True)
class Saved:
    """One entry of a `save_format` list: a tensor, written transposed (row-major) or not
    (column-major), as `dtype` ("i16", "i8" or "f32") at `scale` (None: f32 as it is)."""

    name: str
    transpose: bool
    dtype: str
    scale: int | None


def _format(hidden, features, k, layers, qa, qb) -> list:
    """[(Saved, graph shape)] of a net in the file's order: examples 1 to 3 (no layers) or
    example 4. The one table of the layouts; `Arch` and `read_simple` read it."""
    n = hidden
    head = [(Saved("l0w", False, "i16", qa), (n, features)),
            (Saved("l0b", False, "i16", qa), (n,))]
    if not layers:
        return head + [(Saved("l1w", k > 1, "i16", qb), (k, 2 * n)),
                       (Saved("l1b", False, "i16", qa * qb), (k,))]
    l1, l2 = layers
    return head + [(Saved("l1w", True, "i8", qb), (l1 * k, n)),
                   (Saved("l1b", False, "f32", None), (l1 * k,)),
                   (Saved("l2w", True, "f32", None), (l2 * k, l1)),
                   (Saved("l2b", False, "f32", None), (l2 * k,)),
                   (Saved("l3w", True, "f32", None), (k, l2)),
                   (Saved("l3b", False, "f32", None), (k,))]


def file_shape(saved: Saved, shape: tuple) -> tuple:
    """A tensor's shape as the file holds it, row-major: a transposed weight keeps bullet's
    (out, in), one written column-major is (in, out); a single row is the same bytes either
    way and stays (1, in)."""
    if len(shape) == 2 and not saved.transpose and shape[0] != 1:
        return shape[1], shape[0]
    return shape


def _file_size(fmt) -> int:
    raw = sum(math.prod(shape) * np.dtype(_DTYPES[s.dtype]).itemsize for s, shape in fmt)
    return -(-raw // ALIGN) * ALIGN


@dataclass
class QuantisedNet:
    """A net file read: its architecture and its tensors as the file holds them (int16, int8
    or float32 arrays in `Arch.file_shapes`)."""

    arch: Arch
    tensors: dict

    @property
    def hidden(self) -> int:
        return self.arch.hidden

    def __repr__(self):
        return f"<QuantisedNet {self.arch.describe()}>"


# ---------------------------------------------------------------------------
# Output buckets


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def output_bucket_divisor(buckets):
    """ceil(32 / K): the piece counts an output bucket spans."""
    return (32 + buckets - 1) // buckets


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def output_bucket(pieces, buckets):
    """bullet's MaterialCount<K>: (pieces - 2) / ceil(32 / K), `pieces` counting the kings;
    kept within 0 .. K - 1 for boards beyond 32 pieces."""
    b = (pieces - 2) // output_bucket_divisor(buckets)
    return min(max(b, 0), buckets - 1)


# ---------------------------------------------------------------------------
# NET.json


def meta_path(net) -> Path:
    """NET.json: the file beside a net, its name the net's own plus `.json`."""
    return Path(f"{net}.json")


def read_meta(net) -> dict:
    """The net's NET.json as a dict ({} when there is none); ValueError names a file that is
    not a JSON object."""
    path = meta_path(net)
    if not path.exists():
        return {}
    try:
        meta = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: not a JSON object")
    return meta


def arch_of(net) -> Arch | None:
    """The architecture NET.json gives a net, or None (no NET.json, or no "arch" in it)."""
    meta = read_meta(net)
    if ARCH_KEY not in meta:
        return None
    try:
        return Arch.from_json(meta[ARCH_KEY])
    except ValueError as exc:
        raise ValueError(f"{meta_path(net)}: {exc}") from None


def read_arch_file(path) -> Arch:
    """The architecture of a JSON file holding an "arch" object as NET.json does."""
    try:
        meta = json.loads(Path(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(meta, dict) or ARCH_KEY not in meta:
        raise ValueError(f"{path}: no \"{ARCH_KEY}\" object")
    try:
        return Arch.from_json(meta[ARCH_KEY])
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def write_meta(net, arch: Arch, extra: dict | None = None) -> Path:
    """Write the net's NET.json with `arch` under "arch" and the keys of `extra`, keeping the
    other keys a NET.json already there holds."""
    meta = read_meta(net)
    meta.update(extra or {})
    meta[ARCH_KEY] = arch.to_json()
    path = meta_path(net)
    write_text(path, json.dumps(meta, indent=1) + "\n")
    return path


# ---------------------------------------------------------------------------
# The net file


def _quantise(name, values, saved: Saved) -> bytes:
    """bullet's QuantTarget: f32 as it is, or round(value * scale) (half away from zero, in
    f64) as i16 or i8, refusing a value the type cannot hold."""
    values = np.asarray(values, dtype=np.float32)
    if saved.dtype == "f32":
        return values.astype("<f4").tobytes()
    x = values.astype(np.float64) * float(saved.scale)
    q = np.copysign(np.floor(np.abs(x) + 0.5), x)
    lo, hi = _LIMITS[saved.dtype]
    bad = ~np.isfinite(q) | (q < lo) | (q > hi)
    if bad.any():
        v = float(values.ravel()[np.flatnonzero(bad.ravel())[0]])
        raise ValueError(f"{name}: {v} * {saved.scale} does not fit in {saved.dtype}")
    return q.astype(_DTYPES[saved.dtype]).tobytes()


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % ALIGN)


def _write(path, data: bytes) -> Path:
    path = Path(path)
    with replacing(path) as tmp:
        Path(tmp).write_bytes(data)
    return path


def save(path, arch: Arch, tensors: dict) -> Path:
    """Write float tensors (bullet's graph shapes, `Arch.shapes`; `l0f` optional) as the
    example's `save_format` list does: the factoriser added into every bucket of `l0w` (in
    f32), each tensor transposed or not, quantised or f32, then zeros to 64 bytes. ValueError
    names a missing, unknown or misshapen tensor and a value its type cannot hold."""
    expected = arch.shapes(factoriser="l0f" in tensors)
    for name in tensors:
        if name not in expected:
            raise ValueError(f"{name}: no such tensor in {arch.describe()} (its tensors: "
                             f"{', '.join(expected)})")
    floats = {}
    for name, shape in expected.items():
        if name not in tensors:
            raise ValueError(f"{name}: missing ({arch.describe()} has {', '.join(expected)})")
        a = np.asarray(tensors[name], dtype=np.float32)
        if a.shape != shape and not (len(shape) == 1 and a.shape == (shape[0], 1)):
            raise ValueError(f"{name}: shape {a.shape}, expected {shape}")
        floats[name] = a.reshape(shape)
    if "l0f" in floats:
        floats["l0w"] = floats["l0w"] + np.tile(floats["l0f"], (1, arch.input_buckets))
    parts = []
    for s in arch.saved_format():
        a = floats[s.name]
        parts.append(_quantise(s.name, a.ravel(order="C" if s.transpose else "F"), s))
    return _write(path, _padded(b"".join(parts)))


def _write_quantised(path, fmt, tensors: dict) -> Path:
    parts = []
    for s, shape in fmt:
        a = np.asarray(tensors[s.name])
        if a.size != math.prod(shape):
            raise ValueError(f"{s.name}: {a.size} values, expected {file_shape(s, shape)}")
        parts.append(a.astype(_DTYPES[s.dtype]).tobytes())
    return _write(path, _padded(b"".join(parts)))


def write_tensors(path, arch: Arch, tensors: dict) -> Path:
    """Write tensors already quantised, as the file holds them (`Arch.file_shapes`, each of
    its saved type), then zeros to 64 bytes."""
    return _write_quantised(path, arch._format(), tensors)


def write_simple(path, tensors: dict) -> Path:
    """`write_tensors` for example 1's net of any N (l0w, l0b, l1w, l1b as `read_simple`
    gives them)."""
    return _write_quantised(path, _simple_format(np.asarray(tensors["l0b"]).shape[0]), tensors)


def _simple_format(hidden):
    return _format(hidden, FEATURES, 1, (), QA, QB)


def simple_file_size(hidden: int) -> int:
    """Bytes of example 1's net of N = `hidden` (any N from 1)."""
    return _file_size(_simple_format(hidden))


def simple_hidden(size: int) -> int:
    """N of example 1's net from its file's size; ValueError when no N gives that size."""
    per = 2 * (FEATURES + 3)  # bytes a neuron: its l0w column, its l0b and two l1w
    n = max(1, (size - ALIGN) // per)
    for hidden in (n, n + 1):
        if simple_file_size(hidden) == size:
            return hidden
    raise ValueError(f"{size} bytes is no ({FEATURES} -> N)x2 -> 1 net in bullet's layout "
                     f"(N = 128 would be {simple_file_size(128)} bytes); a net of "
                     "another architecture needs its NET.json")


def _parse(fmt, data: bytes) -> dict:
    tensors, offset = {}, 0
    for s, shape in fmt:
        dtype = np.dtype(_DTYPES[s.dtype])
        shape = file_shape(s, shape)
        count = math.prod(shape)
        values = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
        tensors[s.name] = values.astype(dtype.newbyteorder("=")).reshape(shape)
        offset += count * dtype.itemsize
    return tensors


def read_simple(path) -> dict:
    """The tensors of example 1's net of any N (told by the file's size), as the file holds
    them: l0w (768, N), l0b (N,), l1w (1, 2N), l1b (1,), int16."""
    data = Path(path).read_bytes()
    try:
        hidden = simple_hidden(len(data))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return _parse(_simple_format(hidden), data)


def load(path, arch: Arch | None = None) -> QuantisedNet:
    """Read a net: its architecture from `arch`, else its NET.json, else example 1's with N
    told by the file's size. ValueError names the file whose size the architecture does not
    give."""
    if arch is None:
        arch = arch_of(path)
    if arch is None:
        tensors = read_simple(path)
        try:
            return QuantisedNet(Arch(hidden=tensors["l0b"].shape[0]), tensors)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    data = Path(path).read_bytes()
    if len(data) != arch.file_size():
        raise ValueError(f"{path}: {len(data)} bytes, but {arch.describe()} is "
                         f"{arch.file_size()} bytes")
    return QuantisedNet(arch, _parse(arch._format(), data))


def dequantise(net: QuantisedNet) -> dict:
    """The float tensors a net file holds, in bullet's graph shapes (`Arch.shapes`, no
    factoriser): each integer over its scale, f32 as it is; `save` of them writes the same
    integers again."""
    out = {}
    for s, shape in net.arch._format():
        a = np.asarray(net.tensors[s.name], dtype=np.float64)
        if file_shape(s, shape) != shape:
            a = a.T
        a = a.reshape(shape)
        out[s.name] = a if s.scale is None else a / s.scale
    return out
