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
