"""tuner.formats.viriformat and its kernels: files written here by a writer of the spec's field
list alone (python-chess's boards, struct, nothing of the project's) read back to their games and
positions, the project's writer writing the same bytes, the kernel's bulletformat records equal
to the encoder's, text -> .vf -> text record for record over real datagen games, the filters, and
bad files named in one line."""

import random
import struct

import chess
import numpy as np
import pytest

from tuner import cli
from tuner.datagen.run import DatagenConfig, DatagenRun, generate
from tuner.formats.bulletformat import encode
from tuner.formats.bullettext import read_text
from tuner.formats.convert import Filters
from tuner.formats.viriformat import (
    ViriFormatError,
    ViriGame,
    ViriWriter,
    count_games,
    decode_boards,
    read_games,
    read_viri,
)

# ---- the spec's writer, apart from the project's: python-chess boards and the field list ----

RESULT_BYTE = {1.0: 2, 0.5: 1, 0.0: 0}  # White's result: win 2, draw 1, loss 0


def spec_header(board: chess.Board, result: float) -> bytes:
    """The 32-byte header: occupancy u64; a nibble a piece in square order, low nibble first
    (type pawn..king 0..5, 6 a rook with its castling right, bit 3 black); stm (bit 7) and ep
    square (64: none); halfmove u8; fullmove u16; score i16 0; result u8; extra u8 0."""
    rights = board.clean_castling_rights()
    pieces = bytearray(16)
    for i, sq in enumerate(chess.scan_forward(board.occupied)):
        piece = board.piece_at(sq)
        code = 6 if rights >> sq & 1 else piece.piece_type - 1
        pieces[i // 2] |= (code | 8 * (piece.color == chess.BLACK)) << 4 * (i % 2)
    ep = board.ep_square if board.ep_square is not None else 64
    return struct.pack("<Q16sBBHhBB", board.occupied, bytes(pieces),
                       128 * (board.turn == chess.BLACK) | ep, board.halfmove_clock,
                       board.fullmove_number, 0, RESULT_BYTE[result], 0)


def spec_move(board: chess.Board, move: chess.Move) -> int:
    """from | to << 6 | promotion (knight..queen 0..3) << 12 | type << 14 (1 en passant, 2
    castling as king takes rook, 3 promotion)."""
    to, promo, kind = move.to_square, 0, 0
    if board.is_castling(move):
        back = chess.BB_RANK_1 if board.turn == chess.WHITE else chess.BB_RANK_8
        king = move.from_square
        side = [sq for sq in chess.scan_forward(board.clean_castling_rights() & back)
                if (sq > king) == board.is_kingside_castling(move)]
        to, kind = side[0], 2
    elif board.is_en_passant(move):
        kind = 1
    elif move.promotion:
        promo, kind = move.promotion - chess.KNIGHT, 3
    return move.from_square | to << 6 | promo << 12 | kind << 14


def spec_game(board: chess.Board, moves, scores, result) -> bytes:
    """A game: the header, (move u16, White's score i16) a position, four zero bytes."""
    board = board.copy()
    out = spec_header(board, result)
    for move, score in zip(moves, scores, strict=True):
        out += struct.pack("<Hh", spec_move(board, move), score)
        board.push(move)
    return out + bytes(4)


# ---- games to write ----

SMALL = dict(games=4, nodes=200, start_nodes=100, seed=5)


@pytest.fixture(scope="module")
def dg(tmp_path_factory):
    """A real datagen run (text, with its .moves): its directory."""
    run = DatagenRun.create(str(tmp_path_factory.mktemp("dg") / "run"), DatagenConfig(**SMALL))
    generate(run, progress=False)
    return run


def datagen_games(run):
    """[(start board, moves, scores, result, records)] of a datagen run's text records."""
    games = {}
    for r in read_text(run.file("data.txt")):
        games.setdefault(r.game, []).append(r)
    out = []
    for records in games.values():
        board = chess.Board(records[0].fen)
        out.append((board, [chess.Move.from_uci(r.move) for r in records],
                    [r.score for r in records], records[0].result, records))
    return out


def random_games(seed=7):
    """Random legal games from starts that reach every move type: castling both ways (standard
    and Chess960, a king that does not move included), en passant, the four promotions (with and
    without a capture), Black to move first; scores across i16 with the mate scores."""
    rng = random.Random(seed)
    starts = [chess.Board(),
              chess.Board("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"),
              chess.Board("r3k2r/1P4P1/8/3pP3/8/8/1p4p1/R3K2R w KQkq d6 0 40"),
              chess.Board("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"),
              chess.Board.from_chess960_pos(0), chess.Board.from_chess960_pos(959),
              chess.Board("1r4kr/8/8/8/8/8/8/1R4KR w KQkq - 0 1", chess960=True)]
    games = []
    for i in range(60):
        board = starts[i % len(starts)].copy()
        moves = []
        while len(moves) < 60 and not board.is_game_over():
            legal = list(board.legal_moves)
            special = [m for m in legal if board.is_castling(m) or m.promotion
                       or board.is_en_passant(m)]
            move = rng.choice(special if special and rng.random() < 0.5 else legal)
            moves.append(move)
            board.push(move)
        scores = [rng.choice([-32000, 32000, -32767, 32767, rng.randint(-3000, 3000)])
                  for _ in moves]
        games.append((starts[i % len(starts)], moves, scores, rng.choice([0.0, 0.5, 1.0])))
    return games


def kinds_of(games):
    seen = set()
    for board, moves, _, _ in games:
        b = board.copy()
        for m in moves:
            if b.is_castling(m):
                seen.add(("castle", b.is_kingside_castling(m), b.chess960))
            elif b.is_en_passant(m):
                seen.add("ep")
            elif m.promotion:
                seen.add(("promo", m.promotion, b.is_capture(m)))
            b.push(m)
    return seen


def python_chess_records(board, moves, scores, result):
    """(FEN, score, result, UCI, ply) of each position of a game, by python-chess."""
    b = board.copy()
    out = []
    for move, score in zip(moves, scores, strict=True):
        uci = b.uci(move, chess960=b.chess960)
        out.append((b.fen(), score, result, uci, b.ply()))
        b.push(move)
    return out


def bf_rows(records):
    return np.stack([np.frombuffer(encode(r.fen, r.score, r.result).tobytes(), np.uint8)
                     for r in records])


def _convert(*args):
    return cli.main(["data", "convert", *map(str, args), "-quiet"])


# ---- the tests ----

def test_the_random_games_reach_every_move_type():
    seen = kinds_of(random_games())
    assert {("castle", k, c960) for k in (True, False) for c960 in (False, True)} <= seen
    assert "ep" in seen
    assert {("promo", p, cap) for p in (2, 3, 4, 5) for cap in (False, True)} <= seen


def test_files_of_the_spec_writer_read_back_to_their_positions(tmp_path):
    games = random_games()
    path = tmp_path / "spec.vf"
    path.write_bytes(b"".join(spec_game(*g) for g in games))
    records = list(read_viri(path))
    expected = [row for g in games for row in python_chess_records(*g)]
    assert [(r.fen, r.score, r.result, r.move, r.ply) for r in records] == expected
    assert [r.game for r in records] == [i for i, g in enumerate(games) for _ in g[1]]
    assert count_games(path) == (len(games), len(records))
    read = list(read_games(path))
    assert [len(g) for g in read] == [len(g[1]) for g in games]
    assert [g.result for g in read] == [g[3] for g in games]


def test_the_writer_writes_the_spec_writers_bytes(tmp_path):
    games = random_games()
    spec = b"".join(spec_game(*g) for g in games)
    for i, game in enumerate(games):
        start = python_chess_records(*game)[0][0]
        assert ViriGame(start, [(uci, s) for _, s, _, uci, _ in python_chess_records(*game)],
                        game[3]).to_bytes() == spec_game(*game), i
    with ViriWriter(tmp_path / "ours.vf") as w:
        for g in read_games(_write(tmp_path / "spec.vf", spec)):
            w.write_game(g)
    assert (tmp_path / "ours.vf").read_bytes() == spec


def _write(path, data):
    path.write_bytes(data)
    return path


def test_the_kernel_replays_the_spec_writers_games_into_the_encoders_records(tmp_path):
    games = random_games()
    path = _write(tmp_path / "spec.vf", b"".join(spec_game(*g) for g in games))
    records = list(read_viri(path))
    batches = list(decode_boards(path, chunk_bytes=4096))  # games cut across chunks
    assert len(batches) > 1
    assert np.array_equal(np.concatenate([b.boards for b in batches]), bf_rows(records))
    assert np.concatenate([b.games for b in batches]).tolist() == [r.game for r in records]
    assert sum(b.read for b in batches) == len(records)


def test_datagen_games_decode_as_python_chess_plays_them(tmp_path, dg):
    games = datagen_games(dg)
    path = _write(tmp_path / "dg.vf", b"".join(spec_game(*g[:4]) for g in games))
    got = [(r.fen, r.score, r.result, r.move, r.ply) for r in read_viri(path)]
    assert got == [row for g in games for row in python_chess_records(*g[:4])]
    text = [r for g in games for r in g[4]]
    assert got == [(r.fen, r.score, r.result, r.move, r.ply) for r in text]
    boards = np.concatenate([b.boards for b in decode_boards(path)])
    assert np.array_equal(boards, bf_rows(text))


def test_text_to_vf_to_text_gives_the_same_files(tmp_path, dg):
    vf, back = tmp_path / "data.vf", tmp_path / "back.txt"
    assert _convert(dg.file("data.txt"), vf) == 0
    assert _convert(vf, back) == 0
    assert back.read_bytes() == open(dg.file("data.txt"), "rb").read()
    assert (tmp_path / "back.moves").read_bytes() == open(dg.file("data.moves"), "rb").read()
    games = datagen_games(dg)
    assert vf.read_bytes() == b"".join(spec_game(*g[:4]) for g in games)
    n = sum(len(g[1]) for g in games)
    assert vf.stat().st_size == 36 * len(games) + 4 * n  # 32 + 4 a game, 4 a position


def test_vf_to_bf_by_the_kernel_equals_the_text_paths(tmp_path, dg):
    vf = tmp_path / "data.vf"
    assert _convert(dg.file("data.txt"), vf) == 0
    for flags in ([], ["-min-ply", "14", "-no-check", "-no-capture", "-max-score", "60"],
                  ["-no-mate", "-no-capture"]):
        a, b = tmp_path / "a.bf", tmp_path / "b.bf"
        assert _convert(vf, a, *flags) == 0
        assert _convert(dg.file("data.txt"), b, *flags) == 0
        assert a.read_bytes() == b.read_bytes(), flags
        assert a.stat().st_size > 0


def test_the_kernels_filter_is_bullets(tmp_path):
    games = random_games(11)
    path = _write(tmp_path / "spec.vf", b"".join(spec_game(*g) for g in games))
    f = Filters(min_ply=10, no_check=True, no_capture=True, max_score=2000)
    kept = np.concatenate([b.boards for b in decode_boards(path, f)])
    want = []
    for board, moves, scores, result in games:
        b = board.copy()
        for move, score in zip(moves, scores, strict=True):
            tactical = b.is_capture(move) or move.promotion is not None
            if b.ply() >= 10 and not b.is_check() and not tactical and abs(score) <= 2000:
                want.append(encode(b.fen(), score, result).tobytes())
            b.push(move)
    assert 0 < len(want) < sum(len(g[1]) for g in games)
    assert kept.tobytes() == b"".join(want)


def test_convert_refuses_what_viriformat_cannot_hold(tmp_path, dg, capsys):
    bf = tmp_path / "x.bf"
    assert _convert(dg.file("data.txt"), bf) == 0
    assert _convert(bf, tmp_path / "x.vf") == 1
    assert "moves" in capsys.readouterr().err
    assert _convert(dg.file("data.txt"), tmp_path / "y.vf", "-shuffle") == 1
    assert "games whole" in capsys.readouterr().err
    assert not (tmp_path / "y.vf").exists()


def _bad(tmp_path, good: bytes, offset: int, value: bytes):
    data = bytearray(good)
    data[offset:offset + len(value)] = value
    return _write(tmp_path / "bad.vf", bytes(data))


@pytest.mark.parametrize("offset, value, why", [
    (8, b"\x07", "piece code of 7"),  # a1's nibble
    (30, b"\x03", "result"),
    (24, b"\x41", "en-passant"),  # White to move, ep b1
    (32, struct.pack("<H", 12 | 44 << 6), "move 1"),  # e2 to e6: not a move
    (36, struct.pack("<H", 0), "move 2"),  # a null move with a score
])
def test_bad_files_are_named_in_one_line(tmp_path, capsys, offset, value, why):
    board = chess.Board()
    good = spec_game(board, [chess.Move.from_uci(m) for m in ("e2e4", "e7e5", "g1f3")],
                     [10, -20, 30], 0.5)
    bad = _bad(tmp_path, good, offset, value)
    for out in ("out.txt", "out.bf"):  # the Python reader and the kernel
        assert _convert(bad, tmp_path / out) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "game 1" in err and why in err, (out, err)
    with pytest.raises(ViriFormatError):
        list(read_viri(bad))


def test_a_file_cut_inside_a_game_is_named(tmp_path, capsys):
    good = spec_game(chess.Board(), [chess.Move.from_uci("e2e4")], [5], 1.0)
    cut = _write(tmp_path / "cut.vf", good + good[:-3])
    for out in ("out.txt", "out.bf"):
        assert _convert(cut, tmp_path / out) == 1
        err = capsys.readouterr().err.strip()
        assert "ends inside game 2" in err and "\n" not in err
