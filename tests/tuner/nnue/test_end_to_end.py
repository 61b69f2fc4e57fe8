"""From self-play data to a net that plays: `wasp-tune datagen` -> `wasp-tune nnue train` ->
the engine loads the net over UCI and python-chess plays legal games against it; `wasp eval`
prints the `NNUE:` integers of a numpy forward pass written here, apart from the project's code,
from bullet's simple example (inputs: bullet's `Chess768`)."""

import os
import re
import subprocess
import sys

import chess
import chess.engine
import numpy as np
import pytest

from tests.conftest import ROOT

ENGINE = [sys.executable, "-m", "wasp.cli"]
TUNE = [sys.executable, "-m", "tuner.cli"]
HIDDEN = 16
QA, QB, SCALE = 255, 64, 400
PIECES = {chess.PAWN: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4,
          chess.KING: 5}
POSITIONS = [  # beside a sample of the run's own positions: both sides to move, castling, e.p.
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/2k5/3p4/p2P1p2/P2P1P2/8/4K3/8 b - - 0 1",
    "6k1/5ppp/8/8/8/8/1q3PPP/3R2K1 b - - 0 1",
]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=str(ROOT),
                       timeout=900)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(data.txt, net): a 4-game datagen run at 200 nodes a move and a net trained on it."""
    out = tmp_path_factory.mktemp("e2e")
    _run([*TUNE, "datagen", "-dir", str(out / "dg"), "-games", "4", "-nodes", "200",
          "-start-nodes", "100", "-seed", "11", "-quiet"])
    data = out / "dg" / "data.txt"
    net = out / "net.nnue"
    _run([*TUNE, "nnue", "train", str(data), "-o", str(net), "-hidden", str(HIDDEN),
          "-epochs", "2", "-lr", "0.01", "-batch-size", "64", "-quiet"])
    return data, net


# ---- a forward pass apart from the project's code: bullet's simple example, integer for integer


def read_net(path):
    """(l0w [768][N], l0b [N], l1w [2N], l1b) from a file in bullet's simple layout; N from the
    size 2 * (771 N + 1) rounded up to 64 bytes."""
    raw = path.read_bytes()
    n = next(n for n in range(1, 4096) if -(-2 * (771 * n + 1) // 64) * 64 == len(raw))
    v = np.frombuffer(raw, dtype="<i2").astype(np.int64)
    assert not v[771 * n + 1:].any()  # the padding is zeros
    return v[:768 * n].reshape(768, n), v[768 * n:769 * n], v[769 * n:771 * n], int(v[771 * n])


def chess768(board, perspective):
    """bullet's Chess768 features of `board` seen by `perspective` (its own pieces first, the
    board from its own side: squares mirrored vertically for Black)."""
    features = []
    for square, piece in board.piece_map().items():
        sq = square if perspective == chess.WHITE else square ^ 56
        features.append(384 * (piece.color != perspective) + 64 * PIECES[piece.piece_type] + sq)
    return features


def rust_div(a, b):
    """a / b truncated toward zero, as Rust's integer division."""
    q = abs(a) // b
    return q if a >= 0 else -q


def net_output(net, fen):
    l0w, l0b, l1w, l1b = net
    n = len(l0b)
    board = chess.Board(fen)
    us = l0b + l0w[chess768(board, board.turn)].sum(axis=0)
    them = l0b + l0w[chess768(board, not board.turn)].sum(axis=0)
    assert np.abs(np.concatenate([us, them])).max() < 2 ** 15  # the engine's int16 holds it
    screlu = lambda x: np.clip(x, 0, QA) ** 2  # noqa: E731
    total = int(screlu(us) @ l1w[:n] + screlu(them) @ l1w[n:])
    return rust_div((rust_div(total, QA) + l1b) * SCALE, QA * QB)


# ---- the tests


def test_the_trained_net_is_in_bullets_layout_with_its_metadata(trained):
    data, net = trained
    assert net.stat().st_size == -(-2 * (771 * HIDDEN + 1) // 64) * 64
    l0w, _, _, _ = read_net(net)
    assert l0w.shape == (768, HIDDEN) and np.abs(l0w).max() <= round(1.98 * QA)
    assert (net.parent / "net.nnue.json").exists()
    history = (net.parent / "net.nnue.run" / "history.csv").read_text().splitlines()
    assert len(history) == 3  # a header and two epochs
    lines = data.read_text().splitlines()
    assert len(lines) > 50


def test_wasp_eval_prints_the_nnue_integers_of_a_separate_forward_pass(trained):
    data, net_path = trained
    net = read_net(net_path)
    lines = data.read_text().splitlines()
    sample = [lines[i].split(" | ")[0] for i in np.linspace(0, len(lines) - 1, 5).astype(int)]
    expected, printed = [], []
    for fen in POSITIONS + sample:
        out = _run([*ENGINE, "eval", fen, "--eval-file", str(net_path)])
        m = re.search(r"^NNUE: (-?\d+) \(side to move\)$", out, re.M)
        assert m, out
        printed.append(int(m.group(1)))
        expected.append(net_output(net, fen))
    assert printed == expected
    assert len(set(expected)) > 3  # the net tells positions apart: the check has teeth


def _play(white, black, limit, max_plies):
    board = chess.Board()
    engines = {chess.WHITE: white, chess.BLACK: black}
    while not board.is_game_over(claim_draw=True) and board.ply() < max_plies:
        result = engines[board.turn].play(board, limit)
        assert result.move in board.legal_moves, f"illegal {result.move} in {board.fen()}"
        board.push(result.move)
    return board


def test_the_engine_loads_the_net_over_uci_and_plays_legal_games(trained):
    _, net = trained
    with chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=300, cwd=str(ROOT),
                                             env=_env()) as with_net, \
            chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=300, cwd=str(ROOT),
                                                env=_env()) as built_in:
        with_net.configure({"EvalFile": str(net)})
        # the net is in use: depth-1 scores differ from the hand-written evaluation's
        depth1 = chess.engine.Limit(depth=1)
        scores = [[e.analyse(chess.Board(fen), depth1)["score"].white() for fen in POSITIONS]
                  for e in (with_net, built_in)]
        assert scores[0] != scores[1]
        limit = chess.engine.Limit(nodes=300)
        for white, black in ((with_net, built_in), (built_in, with_net)):
            board = _play(white, black, limit, max_plies=40)
            assert board.ply() >= 20 or board.is_game_over(claim_draw=True)
