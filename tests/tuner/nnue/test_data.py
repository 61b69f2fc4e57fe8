"""Training data: bullet text and .bf records, Chess768 features (the engine's accumulator's),
bad lines, cache, game record."""

import random

import chess
import numpy as np
import pytest

from tuner.nnue import data as D
from wasp.nnue.inputs import BLACK, FEATURES, MAX_ACTIVE, WHITE, feature

LINES = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 12, "0.5"),
    ("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2", -35, "1.0"),
    ("8/8/4k3/8/2Q5/8/5K2/8 b - - 0 60", -900, "0.0"),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 250, "[1.0]"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0, "1/2"),
]


def _expected(fen):
    """The Chess768 lists of both perspectives from python-chess and wasp.nnue.inputs."""
    board = chess.Board(fen)
    us = WHITE if board.turn == chess.WHITE else BLACK
    pieces = [(WHITE if p.color else BLACK, p.piece_type - 1, sq)
              for sq, p in board.piece_map().items()]
    return (sorted(feature(us, *x) for x in pieces), sorted(feature(1 - us, *x) for x in pieces))


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("".join(f"{fen} | {score} | {result}\n" for fen, score, result in LINES))
    return path


def test_text_records_give_bullets_chess768_features_scores_and_results(text_file):
    boards = D.parse_text(text_file)
    stm, ntm, counts = D.features(boards)
    for j, (fen, score, result) in enumerate(LINES):
        want_stm, want_ntm = _expected(fen)
        assert sorted(stm[j, :counts[j]]) == want_stm
        assert sorted(ntm[j, :counts[j]]) == want_ntm
        assert (stm[j, counts[j]:] == D.NO_FEATURE).all()
        white = " w " in fen
        value = float(result.strip("[]").replace("1/2", "0.5"))
        assert D.scores(boards)[j] == (score if white else -score)
        assert D.results(boards)[j] == (value if white else 1 - value)


def _random_game_fens(seed, plies=160, every=5):
    """Positions of a random game (seeded), every `every` plies: castling, promotions and
    captures come up, and both sides to move."""
    rng = random.Random(seed)
    board = chess.Board()
    fens = []
    for ply in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
        if ply % every == 0:
            fens.append(board.fen())
    return fens


def test_the_trainers_features_are_the_engines_accumulator_features(tmp_path):
    """Through their faces: the records' feature lists (tuner.nnue.data.features) and the
    features an engine accumulator sums (acc_refresh on a net whose l0w is the identity, so
    each accumulator counts its features), side to move's and other side's, are the same sets."""
    from wasp.board import Position
    from wasp.nnue import netfile
    from wasp.nnue.accumulator import acc_offset, acc_refresh, nn_array
    from wasp.types import ST_PLY, ST_SIDE

    identity = netfile.Net(np.eye(FEATURES, dtype=np.int16), np.zeros(FEATURES, np.int16),
                           np.zeros(2 * FEATURES, np.int16), 0)
    NN = nn_array(identity)
    fens = [fen for fen, _, _ in LINES] + [f for seed in range(4) for f in _random_game_fens(seed)]
    assert any(" b " in fen for fen in fens) and any(" w " in fen for fen in fens)
    path = tmp_path / "positions.txt"
    path.write_text("".join(f"{fen} | 0 | 0.5\n" for fen in fens))
    stm, ntm, counts = D.features(D.parse_text(path))
    for j, fen in enumerate(fens):
        S = Position(fen).S
        acc_refresh(S, NN)
        a = acc_offset(NN, S.st[ST_PLY])
        side = int(S.st[ST_SIDE])
        accumulators = NN[a:a + FEATURES], NN[a + FEATURES:a + 2 * FEATURES]  # White, Black
        for ours, perspective in ((stm, side), (ntm, 1 - side)):
            engine = accumulators[perspective]
            assert set(engine) <= {0, 1}, fen
            assert sorted(ours[j, :counts[j]]) == np.flatnonzero(engine).tolist(), fen


def test_a_records_pieces_fit_the_feature_lists():
    assert D.MAX_PIECES <= MAX_ACTIVE
    _, _, counts = D.features(D.random_records(50, seed=2, pieces=(32, 32)))
    assert (counts == 32).all()


def test_records_follow_bulletformat_layout(text_file):
    boards = D.parse_text(text_file)
    # black to move after 1. e4 e5 2. Nf3: the board flipped, Black's pieces "ours" (no bit 3)
    rec = boards[1]
    occ = int.from_bytes(rec[:8].tobytes(), "little")
    board = chess.Board(LINES[1][0]).transform(chess.flip_vertical)
    assert occ == int(board.occupied)
    assert rec[D.OFF_KSQ] == chess.E1  # black king on e8, seen from Black: e1
    assert rec[D.OFF_OPP_KSQ] == chess.E1  # white king e1 -> e8 flipped, then ^56 as bullet does
    first = rec[D.OFF_PCS] & 15  # lowest occupied square a1 (Black's a8 rook): ours, rook
    assert first == 3


def test_records_are_the_bytes_of_datagens_encoder(text_file):
    from tuner.formats.bulletformat import encode
    from tuner.formats.bullettext import parse_line

    want = [encode(*parse_line(f"{fen} | {score} | {result}")).tobytes()
            for fen, score, result in LINES]
    assert [rec.tobytes() for rec in D.parse_text(text_file)] == want


def test_bf_round_trip_and_cache(tmp_path, text_file, monkeypatch):
    boards = D.parse_text(text_file)
    bf = tmp_path / "data.bf"
    D.write_bf(boards, bf)
    assert bf.stat().st_size == len(LINES) * D.RECORD
    assert np.array_equal(D.load([bf]).boards, boards)
    monkeypatch.setattr(D, "CACHE_MIN_BYTES", 0)
    D.load([text_file])
    cache = tmp_path / ("data.txt" + D.CACHE_SUFFIX)
    assert cache.stat().st_size == len(LINES) * D.RECORD
    cache.write_bytes(bytes(D.RECORD))  # a cache newer than the text is what is read
    assert len(D.load([text_file])) == 1
    assert len(D.load([text_file], cache=False)) == len(LINES)


@pytest.mark.parametrize("line, why", [
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 10", "not 'FEN | score | result'"),
    ("4k3/8/8/8/8/8/8/4K3 x - - 0 1 | 10 | 0.5", "side to move"),
    ("4k3/8/8/8/8/8/4K3 w - - 0 1 | 10 | 0.5", "bad FEN board field"),
    ("4k3/9/8/8/8/8/8/4K3 w - - 0 1 | 10 | 0.5", "bad FEN board field"),
    ("8/8/8/8/8/8/8/4K3 w - - 0 1 | 10 | 0.5", "not one king of each colour"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 1e3 | 0.5", "score"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 40000 | 0.5", "score"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 10 | 2", "result"),
])
def test_a_bad_line_names_file_and_line(tmp_path, line, why):
    path = tmp_path / "bad.txt"
    path.write_text(f"{LINES[0][0]} | 1 | 0.5\n\n# a comment\n{line}\n")
    with pytest.raises(D.DataError, match=why) as err:
        D.parse_text(path)
    assert str(err.value).startswith(f"{path}:4: ")


def test_bad_bf_files_name_file_and_record(tmp_path, text_file):
    boards = D.parse_text(text_file)
    short = tmp_path / "short.bf"
    short.write_bytes(boards.tobytes()[:-1])
    with pytest.raises(D.DataError, match="not a whole number"):
        D.read_bf(short)
    bad = boards.copy()
    bad[2, D.OFF_RESULT] = 7
    path = tmp_path / "bad.bf"
    D.write_bf(bad, path)
    with pytest.raises(D.DataError, match=r"record 3 .*result byte"):
        D.read_bf(path)


def test_datagen_side_record_gives_games(tmp_path, text_file):
    assert D.load([text_file]).games is None
    (tmp_path / "data.moves").write_text("".join(f"{g} {p} e2e4\n" for g, p in
                                                 ((7, 0), (7, 1), (8, 0), (8, 1), (9, 0))))
    other = tmp_path / "more.bf"
    D.write_bf(D.parse_text(text_file)[:2], other)
    (tmp_path / "more.moves").write_text("0 0 e2e4\n1 0 d2d4\n")
    data = D.load([text_file, other])
    assert data.games.tolist() == [0, 0, 1, 1, 2, 3, 4]  # distinct across files
    (tmp_path / "data.moves").write_text("1 0 e2e4\n2 0 e2e4\n")
    with pytest.raises(D.DataError, match="2 lines for the 5 positions"):
        D.load([text_file])
    (tmp_path / "data.moves").write_text("1 0 e2e4\nx 0 e2e4\n")
    with pytest.raises(D.DataError, match="data.moves:2: not 'game ply move'"):
        D.load([text_file])


def test_random_records_are_scored_by_material():
    boards = D.random_records(200, seed=5)
    stm, _, counts = D.features(boards)
    values = np.array([100, 300, 300, 500, 900, 0])
    for j in range(len(boards)):
        f = stm[j, :counts[j]]
        sign = np.where(f >= 384, -1, 1)
        assert (sign * values[(f % 384) // 64]).sum() == D.scores(boards)[j]


def test_crlf_lines_and_a_fen_of_board_and_side_only(tmp_path):
    path = tmp_path / "dos.txt"
    path.write_bytes(b"4k3/8/8/8/8/8/8/4K3 b | -20 | 0.0\r\n"
                     b"4k3/8/8/8/8/8/8/4KQ2 w - - 0 1 | 700 | 1.0\r\n")
    boards = D.parse_text(path)
    assert D.scores(boards).tolist() == [20, 700]
    assert D.results(boards).tolist() == [1.0, 1.0]
