"""tuner.texel.positions: EPD result forms, FEN forms, PGN labels and skips, bad lines, the
cache."""

import numpy as np
import pytest

from tests.conftest import DATA
from tuner.texel import positions as Ps

START = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
START4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"


@pytest.mark.parametrize("tail, result", [
    ('c9 "1-0";', 1.0), ('c9 "1/2-1/2";', 0.5), ('c9 "0-1";', 0.0), ("[1.0]", 1.0),
    ("[0.5]", 0.5), ("[0.0]", 0.0), ("1-0", 1.0), ("1/2-1/2", 0.5), ("0-1", 0.0),
    ('id "x"; c9 "0-1";', 0.0),
])
def test_epd_result_forms_are_read(tail, result):
    row, r = Ps.parse_epd_line(f"{START4} {tail}")
    assert r == result
    assert Ps.row_to_fen(row).split()[:3] == START.split()[:3]


def test_six_field_fen_with_a_trailing_result():
    row, r = Ps.parse_epd_line(f"{START} 1-0")
    assert r == 1.0
    row4, _ = Ps.parse_epd_line(f"{START4} [1.0]")
    assert np.array_equal(row, row4)


def test_pack_round_trip_keeps_side_castling_and_en_passant():
    fen = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
    assert Ps.row_to_fen(Ps.pack_fen(fen)) == fen.replace(" 0 3", " 0 1")


def _write(tmp_path, lines, name="x.epd"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_bad_line_is_reported_with_file_and_line_number(tmp_path):
    p = _write(tmp_path, [f"{START4} [1.0]", "", f"{START4} no result here",
                          f"{START4} [0.5]"])
    with pytest.raises(Ps.DataError, match=r"x\.epd:3: no result"):
        Ps.load_epd(p)


def test_bad_fen_is_reported_with_its_line_number(tmp_path):
    p = _write(tmp_path, [f"{START4} [1.0]", "rnbqkbnr/ppppppp/8 w - - [0.5]"])
    with pytest.raises(Ps.DataError, match=r"x\.epd:2: expected 8 rows"):
        Ps.load_epd(p)


def test_illegal_position_is_reported_with_its_line_number(tmp_path):
    # white to move but black is in check: impossible
    p = _write(tmp_path, [f"{START4} [1.0]", f"{START4} [1.0]", "4k3/8/8/8/8/8/8/K3R3 w - - 1-0"])
    with pytest.raises(Ps.DataError, match=r"x\.epd:3: the side not to move is in check"):
        Ps.load_epd(p)


def test_skip_bad_counts_and_summarises(tmp_path):
    p = _write(tmp_path, [f"{START4} [1.0]", "garbage", f"{START4} [0.5]", "8/8 w - - 1-0"])
    ps = Ps.load_epd(p, skip_bad=True)
    assert len(ps) == 2 and ps.bad == 2
    assert "2 bad lines skipped" in ps.summary()
    assert "x.epd:2" in ps.summary()


def _parquet(tmp_path, fens, results):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    p = tmp_path / "x.parquet"
    pd.DataFrame({"fen": fens, "result": results, "ply": range(len(fens))}).to_parquet(p)
    return p


def test_parquet_set_loads_like_the_same_epd(tmp_path):
    p = _parquet(tmp_path, [START, START4, "4k3/8/8/8/8/8/8/K3R3 b - -"], [1.0, 0.5, 0.0])
    ps = Ps.load(p, use_cache=False)
    epd = Ps.load_epd(_write(tmp_path, [f"{START} 1-0", f"{START4} [0.5]",
                                        "4k3/8/8/8/8/8/8/K3R3 b - - 0-1"]))
    assert np.array_equal(ps.rows, epd.rows) and np.array_equal(ps.results, epd.results)


@pytest.mark.parametrize("fens, results, message", [
    ([START4, "rnbqkbnr/ppppppp/8 w - -"], [1.0, 0.5], r"x\.parquet:2: expected 8 rows"),
    ([START4, START4], [1.0, 0.7], r"x\.parquet:2: result 0\.7 is not 1, 0\.5 or 0"),
    ([START4, "4k3/8/8/8/8/8/8/K3R3 w - -"], [1.0, 1.0],
     r"x\.parquet:2: the side not to move is in check"),
])
def test_bad_parquet_rows_are_reported_by_row_number(tmp_path, fens, results, message):
    p = _parquet(tmp_path, fens, results)
    with pytest.raises(Ps.DataError, match=message):
        Ps.load_parquet(p)
    ps = Ps.load_parquet(p, skip_bad=True)
    assert len(ps) == 1 and ps.bad == 1


def test_parquet_without_its_columns_or_not_parquet_at_all_is_refused(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    p = tmp_path / "y.parquet"
    pd.DataFrame({"fen": [START4]}).to_parquet(p)
    with pytest.raises(Ps.DataError, match="no column result"):
        Ps.load_parquet(p)
    q = _write(tmp_path, [f"{START4} [1.0]"], name="z.parquet")
    with pytest.raises(Ps.DataError, match="not a readable parquet file"):
        Ps.load_parquet(q)


def test_pgn_positions_take_the_game_result_and_skip_openings_checks_and_mates():
    import chess
    import chess.pgn

    ps = Ps.load_pgn(DATA / "tuner_games_5.pgn", skip_plies=8)
    with open(DATA / "tuner_games_5.pgn") as f:
        expected = []
        while (game := chess.pgn.read_game(f)) is not None:
            r = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.headers["Result"]]
            board = game.board()
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                mate = "M" in node.comment.split("/")[0]
                if ply > 8 and not board.is_check() and not mate:
                    expected.append((board.fen(), r))
    assert len(ps) == len(expected) > 100
    for k in (0, len(ps) // 2, len(ps) - 1):
        assert Ps.row_to_fen(ps.rows[k]).split()[:2] == expected[k][0].split()[:2]
        assert ps.results[k] == expected[k][1]
    assert Ps.has_mate_score("+M9/21 0.003s") and Ps.has_mate_score("#-3")
    assert not Ps.has_mate_score("+0.80/8 0.018s") and not Ps.has_mate_score("book")


def test_cached_load_equals_the_parse_and_notices_changes(tmp_path):
    p = _write(tmp_path, [f"{START4} [1.0]", f"{START4} [0.5]"])
    cache = tmp_path / "cache"
    a = Ps.load(p, cache_dir=str(cache))
    assert len(list(cache.iterdir())) == 1
    b = Ps.load(p, cache_dir=str(cache))
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.results, b.results)
    _write(tmp_path, [f"{START4} [1.0]", f"{START4} [0.5]", f"{START4} [0.0]"])
    assert len(Ps.load(p, cache_dir=str(cache))) == 3


def test_the_quiet_sample_loads():
    ps = Ps.load(DATA / "tuner_quiet_200.epd", use_cache=False)
    assert len(ps) == 200 and ps.bad == 0
    assert set(np.unique(ps.results)) <= {0.0, 0.5, 1.0}


@pytest.mark.parametrize("fen, same_as", [
    # Shredder-FEN names the rook files: h and a are the standard rights
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
    # Chess960 rights the row cannot hold (king off e1, inner rooks) read as standard chess
    ("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1",
     "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w - - 0 1"),
    ("rr1qkbnr/pppppppp/8/8/8/8/PPPPPPPP/RR1QKBNR w KBkb - 0 1",
     "rr1qkbnr/pppppppp/8/8/8/8/PPPPPPPP/RR1QKBNR w Kk - 0 1"),
])
def test_chess960_castling_fields_pack_as_standard_chess_reads_them(fen, same_as):
    import chess

    assert np.array_equal(Ps.pack_fen(fen), Ps.pack_fen(same_as))
    assert Ps.row_to_fen(Ps.pack_fen(fen)).split()[2] == chess.Board(fen).castling_xfen()


def test_chess960_pgn_games_load_with_standard_chess_castling_rights():
    import chess
    import chess.pgn

    path = DATA / "chess960_games.pgn"
    ps = Ps.load_pgn(path, skip_plies=8)
    expected, letters = [], 0
    with open(path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            r = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.headers["Result"]]
            board = game.board()
            assert board.chess960  # [Variant "Chess960"]
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                mate = "M" in node.comment.split("/")[0]
                if ply > 8 and not board.is_check() and not mate:
                    letters += any(c not in "KQkq-" for c in board.fen().split()[2])
                    expected.append((chess.Board(board.fen()).epd(), r))
    assert letters > 0  # X-FEN file letters were read, not only KQkq
    assert len(ps) == len(expected) > 100
    for row, result, (epd, r) in zip(ps.rows, ps.results, expected, strict=True):
        assert Ps.row_to_fen(row).split()[:4] == epd.split()[:4]
        assert result == r
