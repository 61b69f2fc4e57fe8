"""The KPK bitbase against python-chess move generation and known positions."""

import random

import chess
import numpy as np
import pytest

from wasp import kpk


def _wins(board, strong):
    """Bitbase verdict for a python-chess KPK board (strong = colour with the pawn)."""
    s = chess.WHITE if strong == 0 else chess.BLACK
    sk = board.king(s)
    dk = board.king(not s)
    psq = next(iter(board.pieces(chess.PAWN, s)))
    stm = 0 if board.turn == chess.WHITE else 1
    return kpk.probe(sk, psq, dk, strong, stm)


def _successor_value(board, strong):
    """Value of a position reached by a move: True won, False drawn (exact for 3-4 men)."""
    if board.is_checkmate():
        return True  # only the strong side can mate
    if board.is_stalemate() or board.is_insufficient_material():
        return False
    s = chess.WHITE if strong == 0 else chess.BLACK
    if not board.pieces(chess.PAWN, s):
        # a promotion to a queen or rook: won unless the lone king captures it at once
        piece_sq = next(iter(chess.SquareSet(board.occupied_co[s] & ~board.kings)))
        return not any(m.to_square == piece_sq for m in board.legal_moves)
    return _wins(board, strong)


def _random_kpk(rng):
    while True:
        sq = rng.sample(range(64), 3)
        if not 8 <= sq[2] < 56:
            continue
        b = chess.Board(None)
        b.set_piece_at(sq[0], chess.Piece(chess.KING, chess.WHITE))
        b.set_piece_at(sq[1], chess.Piece(chess.KING, chess.BLACK))
        b.set_piece_at(sq[2], chess.Piece(chess.PAWN, chess.WHITE))
        b.turn = rng.choice([chess.WHITE, chess.BLACK])
        if b.is_valid():
            return b


def test_a_fresh_build_equals_the_bitbase_in_use():
    # build() may load a stored file; building again from scratch must give the same words
    v = np.zeros(kpk.N_POSITIONS, dtype=np.uint8)
    w = np.zeros(kpk.N_WORDS, dtype=np.int64)
    kpk._build(v, w)
    assert (w == kpk.build()).all()


def test_bitbase_is_kept_in_the_cache_directory_and_a_bad_file_is_rebuilt(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kpk, "_BITBASE", None)
    built = kpk.build().copy()
    files = list(tmp_path.glob("wasp-kpk-*.npy"))
    assert len(files) == 1
    monkeypatch.setattr(kpk, "_BITBASE", None)
    assert (kpk.build() == built).all()  # loaded from the file
    files[0].write_bytes(b"not an array")
    monkeypatch.setattr(kpk, "_BITBASE", None)
    assert (kpk.build() == built).all()  # rebuilt
    assert (np.load(files[0]) == built).all()


@pytest.mark.parametrize("fen, win", [
    ("4k3/8/4K3/4P3/8/8/8/8 w - - 0 1", True),  # king in front on the 6th
    ("4k3/8/4K3/4P3/8/8/8/8 b - - 0 1", True),
    ("k7/8/1K6/P7/8/8/8/8 w - - 0 1", False),  # rook pawn, defender in the corner
    ("7k/8/8/8/8/8/P7/K7 w - - 0 1", True),  # outside the square
    ("7k/8/8/8/8/8/P7/K7 b - - 0 1", True),
    ("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", False),  # inside the square
    ("8/8/8/8/8/1k6/p7/4K3 w - - 0 1", True),  # black pawn about to queen
    ("4k3/4P3/4K3/8/8/8/8/8 b - - 0 1", False),  # stalemate
])
def test_known_positions(fen, win):
    b = chess.Board(fen)
    strong = 0 if b.pieces(chess.PAWN, chess.WHITE) else 1
    assert _wins(b, strong) == win
    assert _wins(b.mirror(), 1 - strong) == win


def test_agrees_with_one_ply_minimax_over_python_chess_moves():
    """Every sampled position's verdict equals the minimax of its successors' verdicts."""
    rng = random.Random(44)
    for _ in range(3000):
        b = _random_kpk(rng)
        strong = rng.choice([0, 1])
        if strong == 1:
            b = b.mirror()
        values = []
        for m in b.legal_moves:
            b.push(m)
            values.append(_successor_value(b, strong))
            b.pop()
        stm_strong = (b.turn == chess.WHITE) == (strong == 0)
        if not values:
            expect = b.is_checkmate() and not stm_strong
        else:
            expect = any(values) if stm_strong else all(values)
        assert _wins(b, strong) == expect, b.fen()
