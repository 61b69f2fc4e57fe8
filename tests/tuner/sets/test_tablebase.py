"""`wasp-tune data -tb`: the endgame positions of a small PGN are labelled as python-chess's
probe of tests/data/syzygy says (relabel), or left out where their game says otherwise (drop)."""

import json
import random

import chess
import chess.pgn
import chess.syzygy
import numpy as np
import pytest

from tests.conftest import DATA
from tuner.cli import main as wasp_tune
from tuner.sets.tablebase import piece_counts
from tuner.texel.positions import load, pack_fen

TABLES = str(DATA / "syzygy")
# (start, the result the game is scored with): a drawn KRvKR scored 1-0 and 0-1, a won KRvK
# scored as a draw, a KQvKQ, and a 5-piece KRPvKR whose pawn falls in the game (positions
# before the capture keep the game's result).
GAMES = [("8/8/3k4/8/r7/8/3K4/7R b - - 0 1", "1-0"),
         ("8/8/3k4/8/r7/8/3K4/7R w - - 0 1", "0-1"),
         ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1", "1/2-1/2"),
         ("8/8/2q1k3/8/8/3QK3/8/8 w - - 0 1", "1-0"),
         ("8/8/3k4/3p4/r7/8/3K4/3R4 w - - 0 1", "1/2-1/2")]


def _pgn(path, seed=7):
    """The games: random legal moves (no captures but of the KRPvKR pawn) from each start."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for number, (fen, result) in enumerate(GAMES, 1):
            board = chess.Board(fen)
            game = chess.pgn.Game()
            game.setup(board)
            game.headers["Result"] = result
            game.headers["Round"] = str(number)
            node = game
            for ply in range(16):
                moves = [m for m in board.legal_moves if not board.is_capture(m)]
                if number == 5 and ply == 4:  # the rook takes the pawn: KRvKR from here
                    moves = [m for m in board.legal_moves if board.is_capture(m)] or moves
                if not moves:
                    break
                move = rng.choice(moves)
                board.push(move)
                node = node.add_variation(move)
                if board.is_game_over():
                    break
            print(game, file=f, end="\n\n")


def _oracle(fen, game_result):
    """White's result by the tables, None where the test tables do not hold the position."""
    with chess.syzygy.open_tablebase(TABLES) as tables:
        board = chess.Board(fen)
        if chess.popcount(board.occupied) > 4:
            return None
        try:
            wdl = tables.probe_wdl(board)
        except chess.syzygy.MissingTableError:  # not among the test tables: the game's label
            return None
    mover = 1.0 if wdl == 2 else 0.0 if wdl == -2 else 0.5
    return mover if board.turn == chess.WHITE else 1.0 - mover


def _game_results(pgn):
    """Every position's game result (White's view), by its 4-field FEN."""
    out = {}
    with open(pgn) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            value = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.headers["Result"]]
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                out.setdefault(board.epd(), value)
    return out


def _positions(out):
    ps = [load(str(out / "train.epd")), load(str(out / "valid.epd"))]
    rows = np.concatenate([p.rows for p in ps])
    results = np.concatenate([p.results for p in ps])
    from tuner.texel.positions import row_to_fen

    return [(" ".join(row_to_fen(r).split()[:4]), float(v)) for r, v in
            zip(rows, results, strict=True)]


def _tb_set(tmp_path, *flags):
    """The set built from the endings with the tables and `flags`: (its directory, the game's
    result of each FEN)."""
    pgn = tmp_path / "endings.pgn"
    _pgn(pgn)
    out = tmp_path / "set"
    assert wasp_tune(["data", str(pgn), "-o", str(out), "-skip-plies", "0", "-no-quiet",
                      "-tb", TABLES, *flags]) == 0
    return out, _game_results(pgn)


def test_relabel_gives_every_endgame_the_tables_result(tmp_path):
    out, game = _tb_set(tmp_path)
    positions = _positions(out)
    relabelled = 0
    for fen, label in positions:
        expected = _oracle(fen, game[fen])
        if expected is None:
            assert label == game[fen], fen  # 5 pieces: the game's result
        else:
            assert label == expected, fen
            relabelled += expected != game[fen]
    assert relabelled > 20  # the drawn KRvKR games scored as wins, the KRvK win as a draw
    summary = json.loads((out / "summary.json").read_text())
    tb = summary["tablebase"]
    assert tb["mode"] == "relabel" and tb["relabelled"] == relabelled
    assert tb["probed"] == sum(_oracle(f, 0) is not None for f, _ in positions)
    assert summary["config"]["tb"] == TABLES


def test_drop_keeps_only_endgames_whose_game_agrees_with_the_tables(tmp_path):
    out, game = _tb_set(tmp_path, "-tb-mode", "drop")
    positions = _positions(out)
    for fen, label in positions:
        assert label == game[fen]
        expected = _oracle(fen, label)
        assert expected is None or expected == label, fen
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tablebase"]["dropped"] == summary["dropped"]["tablebase"] > 20
    assert summary["positions"] == len(positions)
    assert len(positions) + summary["tablebase"]["dropped"] <= len(game)


def test_tb_pieces_limits_the_probes(tmp_path):
    out, game = _tb_set(tmp_path, "-tb-pieces", "3")
    for fen, label in _positions(out):
        board = chess.Board(fen)
        if chess.popcount(board.occupied) > 3:
            assert label == game[fen]
        else:
            assert label == _oracle(fen, label)


@pytest.mark.parametrize("extra,code,needle", [
    (["-tb", "/nonexistent"], 1, "-tb: /nonexistent: no such directory"),
    (["-tb-mode", "drop"], 2, "-tb-mode needs -tb"),
    (["-tb-pieces", "3"], 2, "-tb-pieces needs -tb"),
])
def test_bad_tb_flags(tmp_path, capsys, extra, code, needle):
    pgn = tmp_path / "endings.pgn"
    _pgn(pgn)
    assert wasp_tune(["data", str(pgn), "-o", str(tmp_path / "x"), *extra]) == code
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_piece_counts_of_packed_rows():
    fens = ["8/8/3k4/8/r7/8/3K4/7R b - - 0 1", chess.STARTING_FEN]
    assert piece_counts(np.array([pack_fen(f) for f in fens])).tolist() == [4, 32]
