"""tuner.formats.bulletformat, tuner.formats.bullettext, tuner.formats.labelled_epd and `wasp-tune
data convert`: the 32-byte ChessBoard checked by a decoder written here apart from the project's,
text -> .bf -> text, EPD, the filters and the shuffle."""

import struct

import chess
import numpy as np
import pytest

from tuner import cli
from tuner.formats.bulletformat import RECORD_SIZE, encode
from tuner.formats.bullettext import read_text
from tuner.texel.positions import load_epd

# White's view throughout; a mix of sides to move, castling, en passant, a promotion (3), a mate
# score (4), a check (5), a repeated position (6 repeats 0).
LINES = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5",
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1 | 25 | 0.5",
    "r3k2r/pp1n1ppp/2p1pn2/q7/1bPP4/2N1PN2/PP1B1PPP/R2QKB1R b KQkq - 4 9 | -40 | 0.0",
    "4k3/1P6/8/8/8/8/6K1/8 w - - 0 60 | 900 | 1.0",
    "4k3/8/8/8/8/8/1q6/7K w - - 3 70 | -32000 | 0.0",
    "rnbqkbnr/ppp2ppp/8/1B1pp3/4P3/8/PPPP1PPP/RNBQK1NR b KQkq - 1 3 | -20 | 0.5",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 29 | 0.5",
    "6k1/5ppp/8/8/8/8/2r2PPP/3R2K1 b - - 0 30 | 150 | 1.0",
]
MOVES = ["e2e4", "e7e5", "e8g8", "b7b8q", "h1g1", "c7c6", "d2d4", "c2c1"]


def _write_text(tmp_path, lines=LINES, moves=MOVES):
    path = tmp_path / "data.txt"
    path.write_text("".join(line + "\n" for line in lines))
    if moves is not None:
        (tmp_path / "data.moves").write_text(
            "".join(f"0 {chess.Board(line.split('|')[0]).ply()} {m}\n"
                    for line, m in zip(lines, moves, strict=True)))
    return path


def decode_apart(blob: bytes):
    """bulletformat's ChessBoard read from its layout alone: (pieces {square: letter, the side
    to move upper case}, score, result, ksq, opp_ksq, extra)."""
    occ, = struct.unpack_from("<Q", blob, 0)
    pcs = blob[8:24]
    score, result, ksq, opp_ksq = struct.unpack_from("<hBBB", blob, 24)
    pieces = {}
    idx = 0
    for sq in range(64):
        if occ >> sq & 1:
            nib = pcs[idx // 2] >> (4 * (idx % 2)) & 0xF
            letter = "PNBRQK"[nib & 7]
            pieces[sq] = letter.lower() if nib & 8 else letter
            idx += 1
    return pieces, score, result, ksq, opp_ksq, blob[29:32]


def expected(line):
    """What a ChessBoard must hold for a text line, from python-chess: the board as the side to
    move sees it (mirrored and colours swapped for Black), score and result for that side."""
    fen, score, result = (x.strip() for x in line.split("|"))
    board = chess.Board(fen)
    white = board.turn == chess.WHITE
    seen = board if white else board.mirror()
    pieces = {sq: p.symbol() for sq, p in seen.piece_map().items()}
    res = {"1.0": 2, "0.5": 1, "0.0": 0}[result]
    return (pieces, int(score) if white else -int(score), res if white else 2 - res,
            seen.king(chess.WHITE), seen.king(chess.BLACK) ^ 56)


def _convert(*args):
    return cli.main(["data", "convert", *map(str, args), "-quiet"])


def test_start_position_bytes_match_the_layout():
    rec = encode(chess.STARTING_FEN, 0, 1.0).tobytes()
    assert len(rec) == RECORD_SIZE
    assert rec[:8] == struct.pack("<Q", 0xFFFF00000000FFFF)
    # R N B Q K B N R, eight pawns, eight black pawns, r n b q k b n r: low nibble first
    assert rec[8:24] == bytes([0x13, 0x42, 0x25, 0x31, 0, 0, 0, 0,
                               0x88, 0x88, 0x88, 0x88, 0x9B, 0xCA, 0xAD, 0xB9])
    assert rec[24:] == bytes([0, 0, 2, 4, 4, 0, 0, 0])


def test_bf_records_decode_apart_to_the_positions(tmp_path):
    txt = _write_text(tmp_path)
    assert _convert(txt, tmp_path / "out.bf") == 0
    blob = (tmp_path / "out.bf").read_bytes()
    assert len(blob) == RECORD_SIZE * len(LINES)
    for i, line in enumerate(LINES):
        pieces, score, result, ksq, opp_ksq, extra = decode_apart(
            blob[i * RECORD_SIZE:(i + 1) * RECORD_SIZE])
        assert (pieces, score, result, ksq, opp_ksq) == expected(line), line
        assert extra == b"\0\0\0"


def test_text_to_bf_to_text_keeps_what_bulletformat_keeps(tmp_path):
    txt = _write_text(tmp_path)
    assert _convert(txt, tmp_path / "a.bf") == 0
    assert _convert(tmp_path / "a.bf", tmp_path / "back.txt") == 0
    back = list(read_text(tmp_path / "back.txt"))
    assert len(back) == len(LINES)
    for r, line in zip(back, LINES, strict=True):
        pieces, score, result, _, _ = expected(line)
        board = chess.Board(r.fen)
        assert board.turn == chess.WHITE  # the side to move, seen as White
        assert {sq: p.symbol() for sq, p in board.piece_map().items()} == pieces
        assert r.score == score and 2 * r.result == result
    # and a second round trip changes nothing
    assert _convert(tmp_path / "back.txt", tmp_path / "b.bf") == 0
    assert (tmp_path / "b.bf").read_bytes() == (tmp_path / "a.bf").read_bytes()


def test_convert_without_flags_keeps_every_record_in_order(tmp_path):
    txt = _write_text(tmp_path)
    out = tmp_path / "out" / "copy.txt"
    out.parent.mkdir()
    assert _convert(txt, out) == 0
    assert out.read_text() == txt.read_text()
    assert (out.parent / "copy.moves").read_text() == (tmp_path / "data.moves").read_text()


def test_epd_round_trip_and_the_tuner_reads_it(tmp_path):
    txt = _write_text(tmp_path)
    assert _convert(txt, tmp_path / "a.epd") == 0
    lines = (tmp_path / "a.epd").read_text().splitlines()
    # ce is the side to move's score, c9 the result
    assert lines[2].endswith('ce 40; c9 "0-1";')
    assert _convert(tmp_path / "a.epd", tmp_path / "back.txt") == 0
    assert (tmp_path / "back.txt").read_text().splitlines() == LINES
    ps = load_epd(str(tmp_path / "a.epd"), validate=False)
    assert list(ps.results) == [0.5, 0.5, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0]


@pytest.mark.parametrize("args,dropped", [
    (["-no-check"], [5]),
    (["-no-mate"], [4]),
    (["-no-capture"], [3]),  # b7b8q: a promotion
    (["-min-ply", "2"], [0, 1, 6]),
    (["-dedupe"], [6]),
    (["-no-check", "-no-mate", "-dedupe"], [4, 5, 6]),
])
def test_filters_drop_what_they_name(tmp_path, args, dropped):
    txt = _write_text(tmp_path)
    assert cli.main(["data", "convert", str(txt), str(tmp_path / "f.txt"), *args,
                     "-quiet"]) == 0
    kept = (tmp_path / "f.txt").read_text().splitlines()
    assert kept == [line for i, line in enumerate(LINES) if i not in dropped]
    moves = (tmp_path / "f.moves").read_text().split("\n")[:-1]
    assert [m.split()[2] for m in moves] == [m for i, m in enumerate(MOVES) if i not in dropped]


def test_capture_filter_sees_captures_and_en_passant(tmp_path):
    lines = ["6k1/5ppp/8/8/8/8/2r2PPP/2R3K1 w - - 0 30 | 150 | 1.0",
             "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2 | 100 | 1.0"]
    txt = _write_text(tmp_path, lines, ["c1c2", "e5d6"])
    assert cli.main(["data", "convert", str(txt), str(tmp_path / "h.txt"), "-no-capture",
                     "-quiet"]) == 0
    assert (tmp_path / "h.txt").read_text() == ""


def test_shuffle_is_a_permutation_fixed_by_the_seed(tmp_path):
    lines = [f"{line.rsplit('|', 2)[0]}| {i} | 0.5" for i, line in enumerate(LINES * 8)]
    txt = _write_text(tmp_path, lines, None)
    outs = []
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        assert cli.main(["data", "convert", str(txt), str(tmp_path / f"{name}.txt"),
                         "-shuffle", "-seed", str(seed), "-quiet"]) == 0
        outs.append((tmp_path / f"{name}.txt").read_text().splitlines())
    assert sorted(outs[0]) == sorted(lines)
    assert outs[0] == outs[1]
    assert outs[0] != lines and outs[0] != outs[2]


def test_bad_inputs_fail_with_one_line(tmp_path, capsys):
    (tmp_path / "bad.bf").write_bytes(b"\0" * 33)
    assert _convert(tmp_path / "bad.bf", tmp_path / "x.txt") == 1
    assert "not a whole number of 32-byte records" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_text(LINES[0] + "\nnot a line\n")
    assert _convert(tmp_path / "bad.txt", tmp_path / "x.bf") == 1
    err = capsys.readouterr().err
    assert "bad.txt:2:" in err and "Traceback" not in err
    assert not (tmp_path / "x.bf").exists()
    assert _convert(tmp_path / "bad.txt", tmp_path / "x.csv") == 2
    (tmp_path / "big.txt").write_text(LINES[0].replace("| 31 |", "| 40000 |") + "\n")
    assert _convert(tmp_path / "big.txt", tmp_path / "x.bf") == 1
    assert "i16" in capsys.readouterr().err
    bf = tmp_path / "ok.bf"
    assert _convert(_write_text(tmp_path), bf) == 0
    assert cli.main(["data", "convert", str(bf), str(tmp_path / "y.txt"), "-min-ply", "4",
                     "-quiet"]) == 1
    assert "ply" in capsys.readouterr().err


def test_the_kernel_and_the_python_encoder_agree(tmp_path):
    import numpy as np

    from tuner.formats.bulletformat import encode_text

    extra = ["8/8/8/8/8/8/k7/K7 b - - 0 1 | -7 | 1",
             "8/8/8/8/8/8/k7/K7 w - - 0 1 |  +12  |  [0.5]  ",
             "8/8/8/8/8/8/k7/K7 b - - 0 1|32767|1/2",
             "8/8/8/8/8/8/k7/K7 w - - 0 1 | -32768 | [0.0]",
             "8/8/8/8/8/8/k7/K7 b - - 0 1\t| 5 | 1-0",
             "8/8/8/8/8/8/k7/K7 w - - 0 1 | 5 | [0-1]",
             "8/8/8/8/8/8/k7/K7 b - - 0 1 | 5 | 1/2-1/2"]
    lines = LINES + extra
    path = tmp_path / "k.txt"
    path.write_text("\n".join(lines[:5]) + "\n\n  # a comment\n" + "\n".join(lines[5:]))
    # a blank line, a comment; no final newline
    got = np.concatenate(list(encode_text(path, chunk_bytes=50)))
    from tuner.formats.bullettext import parse_line

    want = [encode(*parse_line(line)).tobytes() for line in lines]
    assert [r.tobytes() for r in got] == want


@pytest.mark.parametrize("line,why", [
    ("8/8/8/8/8/8/k7/K7 w - - 0 1 | 40000 | 1.0", "bad score"),
    ("8/8/8/8/8/8/k7/K7 w - - 0 1 | 1 | 2.0", "bad result"),
    ("8/8/8/8/8/8/k7/K6 w - - 0 1 | 1 | 1.0", "bad FEN"),
    ("8/8/8/8/8/8/k7/8 w - - 0 1 | 1 | 1.0", "king missing"),
    ("8/8/8/8/8/8/k7/KK6 w - - 0 1 | 1 | 1.0", "doubled"),
    ("8/8/8/8/8/8/k7/K7 w - - 0 1 | 1 | 1.0 | 2", "not 'FEN | score | result'"),
    ("8/8/8/8/8/8/k7/K7 x - - 0 1 | 1 | 1.0", "side to move"),
    ("8/8/8/8/8/8/k7/K7 w - - 0 1 | 1", "not 'FEN | score | result'"),
])
def test_the_kernel_names_the_bad_line(tmp_path, capsys, line, why):
    path = tmp_path / "bad.txt"
    path.write_text(LINES[0] + "\n" + line + "\n")
    assert _convert(path, tmp_path / "x.bf") == 1
    err = capsys.readouterr().err
    assert "bad.txt:2:" in err and why in err
    assert not (tmp_path / "x.bf").exists()


def test_mate_filter_and_shuffle_on_the_kernel_path(tmp_path):
    import numpy as np

    from tuner.formats.bulletformat import DTYPE

    txt = _write_text(tmp_path, [f"{line.rsplit('|', 2)[0]}| {i} | 0.5"
                                 for i, line in enumerate(LINES * 8)] + [LINES[4]], None)
    assert cli.main(["data", "convert", str(txt), str(tmp_path / "a.bf"), "-no-mate",
                     "-quiet"]) == 0
    plain = np.fromfile(tmp_path / "a.bf", dtype=DTYPE)
    assert len(plain) == 64  # the mate line dropped
    outs = []
    for name, seed in (("s1", 1), ("s2", 1), ("s3", 2)):
        assert cli.main(["data", "convert", str(txt), str(tmp_path / f"{name}.bf"), "-shuffle",
                         "-no-mate", "-seed", str(seed), "-quiet"]) == 0
        outs.append(np.fromfile(tmp_path / f"{name}.bf", dtype=DTYPE))
    assert sorted(r.tobytes() for r in outs[0]) == sorted(r.tobytes() for r in plain)
    assert outs[0].tobytes() == outs[1].tobytes() != outs[2].tobytes()
    assert outs[0].tobytes() != plain.tobytes()


def test_key_set_keeps_each_key_once_through_growth():
    from tuner.formats.convert import KeySet

    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, size=5000, dtype=np.int64).astype(np.uint64)
    keys[1::11] = keys[:4999:11][: len(keys[1::11])]  # planted repeats
    keys[3] = 0
    seen = KeySet(capacity=16)
    fresh = [seen.add(int(k)) for k in keys]
    expected, first = [], set()
    for k in keys.tolist():
        expected.append(k not in first)
        first.add(k)
    assert fresh == expected
    assert len(seen) == len(first)
    assert len(seen.table) >= 2 * seen.size  # grown, at most half full
