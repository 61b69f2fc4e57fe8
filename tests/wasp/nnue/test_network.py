"""The net's integer output against a plain numpy forward pass over the file's bytes, with the
features taken from python-chess (nothing of the engine's board, inputs or file reader)."""

import random

import chess
import numpy as np
import pytest

from wasp.board import Position
from wasp.nnue import netfile
from wasp.nnue.accumulator import nn_array
from wasp.nnue.network import output

QA, QB, SCALE = 255, 64, 400


def _trunc(a: int, b: int) -> int:
    """Rust's integer division (toward zero), in Python ints."""
    q = abs(a) // b
    return q if a >= 0 else -q


def bullet_bytes(l0w, l0b, l1w, l1b) -> bytes:
    """A test-only writer of bullet's simple layout from float weights: each tensor scaled,
    rounded, little-endian i16, in the order l0w [768][N], l0b, l1w [2N], l1b, then zeros to
    a multiple of 64 bytes."""
    parts = [np.round(np.asarray(l0w) * QA), np.round(np.asarray(l0b) * QA),
             np.round(np.asarray(l1w) * QB), np.round(np.asarray([l1b]) * QA * QB)]
    data = b"".join(np.asarray(p, dtype=np.float64).astype("<i2").tobytes() for p in parts)
    return data + bytes(-len(data) % 64)


def numpy_forward(data: bytes, fen: str) -> int:
    """The quantised net's output for `fen`, side to move's view, from the file's bytes."""
    values = np.frombuffer(data, dtype="<i2").astype(np.int64)
    n = (len(data) // 2 - 1) // 771
    while 2 * (771 * n + 1) > len(data):
        n -= 1
    l0w = values[:768 * n].reshape(768, n)
    l0b = values[768 * n:769 * n]
    l1w = values[769 * n:771 * n]
    l1b = int(values[771 * n])
    board = chess.Board(fen)
    stm = 0 if board.turn == chess.WHITE else 1
    accs = []
    for perspective in (stm, 1 - stm):
        acc = l0b.copy()
        for sq, piece in board.piece_map().items():
            colour = 0 if piece.color == chess.WHITE else 1
            rel = sq if perspective == 0 else sq ^ 56
            acc += l0w[384 * (colour != perspective) + 64 * (piece.piece_type - 1) + rel]
        accs.append(acc)
    total = 0
    for half, acc in enumerate(accs):
        x = np.clip(acc, 0, QA)
        total += int(np.sum(x * x * l1w[half * n:(half + 1) * n]))
    return _trunc((_trunc(total, QA) + l1b) * SCALE, QA * QB)


def random_fens(count, seed):
    """Positions from random games (both sides to move, captures, promotions, castling)."""
    rng = random.Random(seed)
    fens = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(rng.randint(0, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over():
            fens.append(board.fen())
    return fens


def random_floats(hidden, seed, scale=0.4):
    rng = np.random.default_rng(seed)
    return (rng.normal(0, scale, (768, hidden)).clip(-1.98, 1.98),
            rng.normal(0, scale, hidden).clip(-1.98, 1.98),
            rng.normal(0, scale, 2 * hidden).clip(-1.98, 1.98), float(rng.normal(0, 0.5)))


@pytest.mark.parametrize("hidden", [1, 8, 32, 128])
def test_output_equals_a_numpy_forward_pass_over_a_bullet_layout_file(tmp_path, hidden):
    data = bullet_bytes(*random_floats(hidden, hidden))
    path = tmp_path / "net.nnue"
    path.write_bytes(data)
    assert len(data) == netfile.file_size(hidden)
    assert netfile.looks_like_net(path)
    NN = nn_array(netfile.read(path))
    for fen in random_fens(40, hidden) + ["4k3/8/8/8/8/8/8/4K3 w - - 0 1",
                                          "8/P6k/8/8/8/8/7p/K7 b - - 0 1"]:
        assert output(NN, Position(fen).S) == numpy_forward(data, fen), fen


def test_large_weights_use_the_whole_range_and_truncate_toward_zero(tmp_path):
    """Weights near the clip make big sums of both signs: the divisions must truncate."""
    l0w, l0b, l1w, l1b = random_floats(16, 7, scale=1.5)
    data = bullet_bytes(l0w, l0b, l1w, l1b)
    path = tmp_path / "big.nnue"
    path.write_bytes(data)
    NN = nn_array(netfile.read(path))
    outputs = []
    for fen in random_fens(60, 3):
        expected = numpy_forward(data, fen)
        assert output(NN, Position(fen).S) == expected, fen
        outputs.append(expected)
    assert min(outputs) < 0 < max(outputs)


def test_netfile_write_and_the_test_writer_agree(tmp_path):
    floats = random_floats(32, 11)
    ours = tmp_path / "ours.nnue"
    netfile.write(netfile.quantise(*floats), ours)
    assert ours.read_bytes() == bullet_bytes(*floats)


def test_a_known_tiny_net_gives_its_hand_computed_output(tmp_path):
    """N = 1: one neuron that counts White's pawns from White's view (weight 1.0 = 255), bias 0;
    output weight 1.0 (64) on the side to move's half. Start position, White to move:
    acc_us = 8 * 255 clamps to 255; 255^2 * 64 / 255 = 16320; * 400 / (255 * 64) = 400."""
    l0w = np.zeros((768, 1))
    l0w[8:16, 0] = 1.0  # White pawns on rank 2 as White sees them
    path = tmp_path / "tiny.nnue"
    path.write_bytes(bullet_bytes(l0w, np.zeros(1), np.array([1.0, 0.0]), 0.0))
    NN = nn_array(netfile.read(path))
    assert output(NN, Position().S) == 400
    # Black to move: Black's own pawns (rank 7, seen from Black as rank 2) count the same.
    black = Position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1")
    assert output(NN, black.S) == 400
    # Black without pawns, to move: its own half is zero.
    assert output(NN, Position("4k3/8/8/8/8/8/PPPPPPPP/4K3 b - - 0 1").S) == 0


# ---- every architecture: a numpy forward pass over the file's bytes and its NET.json "arch",
# the features from python-chess, written apart from wasp.nnue (arch, inputs, accumulator)

LAYOUT_FILE = [0, 1, 2, 3, 3, 2, 1, 0]
EXAMPLE_LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
                  8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]


def read_bytes(data: bytes, arch: dict) -> dict:
    """The tensors of a net file as bullet's save_format lists write them (checking that only
    zeros pad it to 64 bytes): l0w [768 B][N], l0b [N]; then l1w [K][2N] and l1b [K] (i16),
    or example 4's l1w [16K][N] (i8), l1b [16K], l2w [32K][16], l2b [32K], l3w [K][32],
    l3b [K] (f32)."""
    n, k = arch["hidden"], arch["output_buckets"]
    buckets = max(arch["layout"]) + 1 if arch["inputs"] == "buckets-mirrored" else 1
    at = 0

    def take(count, dtype, shape):
        nonlocal at
        values = np.frombuffer(data, dtype=dtype, count=count, offset=at)
        at += count * np.dtype(dtype).itemsize
        return values.reshape(shape)

    t = {"l0w": take(768 * buckets * n, "<i2", (768 * buckets, n)),
         "l0b": take(n, "<i2", (n,))}
    if not arch["layers"]:
        t["l1w"] = take(k * 2 * n, "<i2", (k, 2 * n))
        t["l1b"] = take(k, "<i2", (k,))
    else:
        t["l1w"] = take(16 * k * n, "i1", (16 * k, n))
        t["l1b"] = take(16 * k, "<f4", (16 * k,))
        t["l2w"] = take(32 * k * 16, "<f4", (32 * k, 16))
        t["l2b"] = take(32 * k, "<f4", (32 * k,))
        t["l3w"] = take(k * 32, "<f4", (k, 32))
        t["l3b"] = take(k, "<f4", (k,))
    assert len(data) == -(-at // 64) * 64 and not any(data[at:])
    return t


def features(board: chess.Board, perspective: bool, arch: dict) -> list[int]:
    """bullet's Chess768, or ChessBucketsMirrored: the king's square from its own side picks
    the layout's bucket (files e-h as their mirror image), and then a king on files e-h mirrors
    every square."""
    def own(sq):
        return sq if perspective == chess.WHITE else sq ^ 56

    base, flip = 0, 0
    if arch["inputs"] == "buckets-mirrored":
        king = own(board.king(perspective))
        base = 768 * arch["layout"][4 * (king // 8) + LAYOUT_FILE[king % 8]]
        flip = 7 if king % 8 > 3 else 0
    return [base + 384 * (piece.color != perspective) + 64 * (piece.piece_type - 1)
            + (own(sq) ^ flip) for sq, piece in board.piece_map().items()]


def numpy_forward_arch(data: bytes, arch: dict, fen: str, chess960=False) -> int:
    """The net's output for `fen` (side to move's view): examples 1-3 in bullet's quantised
    integers; example 4 with L1's sums exact and the rest in float64 (docs/nnue.md)."""
    t = read_bytes(data, arch)
    qa, qb, scale = arch["qa"], arch["qb"], arch["scale"]
    board = chess.Board(fen, chess960=chess960)
    k = arch["output_buckets"]
    bucket = (len(board.piece_map()) - 2) // -(-32 // k)
    l0w, l0b = t["l0w"].astype(np.int64), t["l0b"].astype(np.int64)
    accs = [l0b + l0w[features(board, side, arch)].sum(axis=0)
            for side in (board.turn, not board.turn)]
    if not arch["layers"]:
        w = t["l1w"][bucket].astype(np.int64)
        n = arch["hidden"]
        total = 0
        for half, acc in enumerate(accs):
            x = np.clip(acc, 0, qa)
            act = x if arch["activation"] == "crelu" else x * x
            total += int(np.sum(act * w[half * n:(half + 1) * n]))
        if arch["activation"] == "screlu":
            total = _trunc(total, qa)
        return _trunc((total + int(t["l1b"][bucket])) * scale, qa * qb)
    half = arch["hidden"] // 2
    pairs = np.concatenate([np.clip(a[:half], 0, qa) * np.clip(a[half:], 0, qa) for a in accs])
    l1 = t["l1w"][16 * bucket:16 * (bucket + 1)].astype(np.int64) @ pairs
    h1 = np.clip(l1 / (qa * qa * qb) + t["l1b"][16 * bucket:16 * (bucket + 1)], 0, 1) ** 2
    h2 = np.clip(t["l2w"][32 * bucket:32 * (bucket + 1)].astype(np.float64) @ h1
                 + t["l2b"][32 * bucket:32 * (bucket + 1)], 0, 1) ** 2
    out = float(t["l3w"][bucket].astype(np.float64) @ h2 + t["l3b"][bucket])
    return int(out * scale)


def float_forward(tensors: dict, arch: dict, fen: str) -> float:
    """bullet's float graph of the examples over the unquantised tensors (factoriser added),
    in centipawns."""
    board = chess.Board(fen)
    k, n = arch["output_buckets"], arch["hidden"]
    bucket = (len(board.piece_map()) - 2) // -(-32 // k)
    l0w = tensors["l0w"].astype(np.float64)
    if "l0f" in tensors:
        l0w = l0w + np.tile(tensors["l0f"], (1, l0w.shape[1] // 768))
    accs = [tensors["l0b"] + l0w[:, features(board, side, arch)].sum(axis=1)
            for side in (board.turn, not board.turn)]
    if not arch["layers"]:
        act = [np.clip(a, 0, 1) ** (2 if arch["activation"] == "screlu" else 1) for a in accs]
        out = tensors["l1w"][bucket] @ np.concatenate(act) + tensors["l1b"][bucket]
        return float(out) * arch["scale"]
    half = n // 2
    hl1 = np.concatenate([np.clip(a[:half], 0, 1) * np.clip(a[half:], 0, 1) for a in accs])
    l1 = np.clip((tensors["l1w"] @ hl1 + tensors["l1b"])[16 * bucket:16 * (bucket + 1)], 0, 1)
    l2 = np.clip((tensors["l2w"] @ l1 ** 2 + tensors["l2b"])[32 * bucket:32 * (bucket + 1)],
                 0, 1)
    return float((tensors["l3w"] @ l2 ** 2 + tensors["l3b"])[bucket]) * arch["scale"]


def arch_json(step, hidden=32, k=8, activation=None):
    """NET.json's "arch" of bullet's progression example `step` (1 to 4), narrower."""
    layout = EXAMPLE_LAYOUT if step >= 3 else [0] * 32
    return {"inputs": "buckets-mirrored" if step >= 3 else "chess768", "layout": layout,
            "hidden": hidden, "activation": activation or ("crelu" if step == 4 else "screlu"),
            "output_buckets": 1 if step == 1 else k, "layers": [16, 32] if step == 4 else [],
            "qa": 255, "qb": 64, "scale": 400}


def random_net(path, arch: dict, seed, scale=0.3):
    """A random-weight net of `arch` written by wasp.nnue.arch.save, its NET.json beside it;
    the float tensors (factoriser included for king buckets)."""
    from wasp.nnue import arch as A

    a = A.Arch.from_json(arch)
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in a.shapes(factoriser=a.mirrored).items():
        # example 3's stricter clipping for l0w and l0f: their sum stays within i16 at 255
        clip = 0.99 if name in ("l0w", "l0f") else 1.98
        spread = 0.5 if name == "l1w" and a.layers else scale
        values = rng.normal(0.3 if name == "l0b" else 0.0, spread, shape)
        tensors[name] = values.clip(-clip, clip).astype(np.float32)
    A.save(path, a, tensors)
    A.write_meta(path, a)
    return tensors


ARCHS = [(1, None), (1, "crelu"), (2, None), (2, "crelu"), (3, None), (3, "crelu"), (4, None)]


@pytest.mark.parametrize("step,activation", ARCHS)
def test_every_architectures_output_equals_the_numpy_forward_pass_over_its_file(
        tmp_path, step, activation):
    from wasp.nnue import netfile

    arch = arch_json(step, hidden=32, k=8, activation=activation)
    path = tmp_path / "net.nnue"
    random_net(path, arch, seed=step)
    NN = nn_array(netfile.read_net(path))
    data = path.read_bytes()
    outputs = set()
    for fen in random_fens(60, 20 + step) + ["4k3/8/8/8/8/8/8/4K3 w - - 0 1",
                                             "7k/8/8/8/8/8/8/K7 b - - 0 1"]:
        expected = numpy_forward_arch(data, arch, fen)
        got = output(NN, Position(fen).S)
        if step == 4:  # float64 sums in another order: an ulp may cross a whole centipawn
            assert abs(got - expected) <= 1, fen
        else:
            assert got == expected, fen
        outputs.add(expected)
    assert len(outputs) > 20


def dequantised(data: bytes, arch: dict) -> dict:
    """The file's tensors as floats in bullet's graph shapes: the integers over their scales."""
    t = read_bytes(data, arch)
    qa, qb = arch["qa"], arch["qb"]
    floats = {"l0w": t["l0w"].T / qa, "l0b": t["l0b"] / qa, "l1w": t["l1w"] / qb}
    if not arch["layers"]:
        floats["l1b"] = t["l1b"] / (qa * qb)
    else:
        floats.update({name: t[name].astype(np.float64) for name in
                       ("l1b", "l2w", "l2b", "l3w", "l3b")})
    return floats


@pytest.mark.parametrize("step,activation", ARCHS)
def test_the_output_is_the_float_graph_of_the_files_values_within_a_centipawn(
        tmp_path, step, activation):
    """The integer arithmetic (and example 4's rounding) costs at most a centipawn or so
    against bullet's float graph run over the values the file holds."""
    from wasp.nnue import netfile

    arch = arch_json(step, hidden=32, k=8, activation=activation)
    path = tmp_path / "net.nnue"
    random_net(path, arch, seed=60 + step)
    floats = dequantised(path.read_bytes(), arch)
    NN = nn_array(netfile.read_net(path))
    for fen in random_fens(40, 70 + step):
        assert abs(output(NN, Position(fen).S) - float_forward(floats, arch, fen)) < 2, fen


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
@pytest.mark.parametrize("l1w_range,mode", [(60, "whole"), (127, "chunks"), (20000, "int64")])
def test_the_output_layer_sums_are_exact_whatever_the_weights(tmp_path, activation, l1w_range,
                                                               mode):
    """Bullet-sized output weights sum in int32 over a whole perspective; near the clip at
    N = 512, in chunks that int32 holds; beyond int16 products, in int64: all exact."""
    import json

    from wasp.nnue import netfile
    from wasp.nnue.accumulator import NN_CHUNK

    n, k = 512, 2
    arch = {**arch_json(2, hidden=n, k=k, activation=activation)}
    rng = np.random.default_rng(l1w_range)
    l1w = rng.integers(-l1w_range, l1w_range + 1, (k, 2 * n))
    if mode == "chunks":
        l1w = np.where(rng.random((k, 2 * n)) < 0.97, l1w_range, l1w)  # sums beyond int32
    data = np.concatenate([rng.integers(-60, 60, 768 * n), rng.integers(0, 300, n),
                           l1w.ravel(), rng.integers(-3000, 3000, k)]).astype("<i2").tobytes()
    data += bytes(-len(data) % 64)
    path = tmp_path / "net.nnue"
    path.write_bytes(data)
    (tmp_path / "net.nnue.json").write_text(json.dumps({"arch": arch}))
    NN = nn_array(netfile.read_net(path))
    chunk = int(NN[NN_CHUNK])
    expected_chunk = {"whole": n, "chunks": 256 if activation == "screlu" else n,
                      "int64": 0}[mode]
    assert chunk == expected_chunk
    for fen in random_fens(20, 5):
        assert output(NN, Position(fen).S) == numpy_forward_arch(data, arch, fen), fen


@pytest.mark.parametrize("activation", ["screlu", "crelu"])
def test_the_output_layer_sums_the_neurons_beyond_the_last_whole_vector_step(tmp_path,
                                                                             activation):
    """N = 56: the vector sums take 32 neurons a perspective, the scalar loop the other 24."""
    from wasp.nnue import netfile
    from wasp.nnue.accumulator import NN_CHUNK

    arch = arch_json(3, hidden=56, k=8, activation=activation)
    path = tmp_path / "net.nnue"
    random_net(path, arch, seed=90)
    NN = nn_array(netfile.read_net(path))
    assert int(NN[NN_CHUNK]) == 56
    data = path.read_bytes()
    for fen in random_fens(30, 91):
        assert output(NN, Position(fen).S) == numpy_forward_arch(data, arch, fen), fen


MADD_SCRIPT = """
import sys
import numpy as np
from numba import njit
from wasp.nnue.network import _madd_dot

@njit
def dot(NN, acc, weights, m, qa, crelu):
    return _madd_dot(NN, acc, weights, m, qa, crelu)

rng = np.random.default_rng(7)
NN = np.concatenate([rng.integers(-400, 400, 256), rng.integers(-128, 128, 256)]).astype(np.int16)
for crelu in (False, True):
    for m in (0, 32, 64, 224):
        print(dot(NN, 16, 256, m, 255, crelu))
"""


def test_the_output_layers_vector_sums_are_the_same_with_and_without_avx2(tmp_path):
    """`_madd_dot` (pmaddwd with AVX2, generic vector code without) gives the exact sums of
    int16(x * w) * x (SCReLU) and int16(x * w) (CReLU), x = clamp(a, 0, 255)."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(7)
    values = np.concatenate([rng.integers(-400, 400, 256), rng.integers(-128, 128, 256)])
    expected = []
    for crelu in (False, True):
        for m in (0, 32, 64, 224):
            x = np.clip(values[16:16 + m], 0, 255)
            p = (x * values[256:256 + m]).astype(np.int16).astype(np.int64)
            expected.append(int(np.sum(p if crelu else p * x)))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    for cpu in (None, "generic"):  # this CPU's features, then none (no AVX2)
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / f"cache-{cpu}"),
               "PYTHONPATH": root}
        env.pop("NUMBA_CPU_NAME", None)
        env.pop("NUMBA_CPU_FEATURES", None)
        if cpu:
            env["NUMBA_CPU_NAME"] = cpu
        out = subprocess.run([sys.executable, "-c", MADD_SCRIPT], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        assert [int(v) for v in out] == expected, cpu
