"""The dataset builder on PGN files whose games are known move by move."""

import json

import chess
import chess.pgn
import numpy as np
import pytest

from tests.conftest import DATA
from tuner.cli import main as wasp_tune
from tuner.sets import builder as B
from tuner.texel.objective import Scorer
from tuner.texel.positions import load
from wasp import params as P

KNOWN = DATA / "datasets_known.pgn"
BAD = DATA / "datasets_bad.pgn"
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def _expected(path, skip_plies, skip_book=True):
    """(epd, result, game) of every candidate, walked independently with python-chess."""
    out = []
    with open(path) as f:
        g = -1
        while (game := chess.pgn.read_game(f)) is not None:
            g += 1
            r = RESULTS.get(game.headers["Result"])
            if game.errors or r is None:
                continue
            board = game.board()
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                c = node.comment.strip()
                if ply <= skip_plies or (skip_book and c == "book") or board.is_check() \
                        or "M" in c.split("/")[0]:
                    continue
                out.append((board.epd(), r, g))
    return out


def _config(**kw):
    base = dict(skip_plies=2, quiet=False, dedupe=False, valid=0.0, threads=1)
    base.update(kw)
    return B.BuildConfig(**base)


def test_candidates_are_the_positions_after_the_opening_not_in_check_without_mate_scores():
    ds = B.build(KNOWN, _config())
    want = _expected(KNOWN, 2)
    got = [(f, float(r), int(g)) for f, r, g in zip(ds.fens(), ds.results, ds.game, strict=True)]
    assert got == want
    assert ds.counts["check"] == 2  # 6.Bb5+ and 2...Qh4#
    assert ds.counts["mate_score"] == 2  # 8.Qf3 {+M7} and 8...Rb8 {-M6}
    assert len(ds) == 21


def test_book_moves_are_skipped_unless_asked_to_keep_them():
    ds = B.build(KNOWN, _config(skip_plies=0))
    assert ds.counts["book"] == 2
    after_book = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -"  # 1.e4 e5
    assert after_book not in ds.fens()
    kept = B.build(KNOWN, _config(skip_plies=0, skip_book=False))
    assert after_book in kept.fens()
    assert len(kept) == len(ds) + 2


def test_labels_are_the_game_results_and_unfinished_games_are_skipped():
    ds = B.build(KNOWN, _config())
    by_game = {int(g): float(r) for g, r in zip(ds.game, ds.results, strict=True)}
    assert by_game == {0: 1.0, 1: 0.0, 2: 0.5, 3: 1.0, 5: 0.0}  # game 5 is '*'
    assert ds.summary()["games_unfinished"] == 1


def test_engine_scores_are_read_from_comments_in_whites_view():
    ds = B.build(KNOWN, _config())
    first = ds.fens().index("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq -")
    assert ds.score[first] == 25  # 2...Nc6 {-0.25/10}: black's view
    assert np.isnan(ds.score[ds.game == 2]).all()  # no comments


def test_duplicates_by_zobrist_key_keep_the_first_occurrence():
    ds = B.build(KNOWN, _config(dedupe=True))
    fens = ds.fens()
    same = "r1bqkb1r/pppppppp/2n2n2/8/8/2N2N2/PPPPPPPP/R1BQKB1R w KQkq -"
    assert fens.count(same) == 1
    assert ds.game[fens.index(same)] == 2 and ds.results[fens.index(same)] == 0.5
    assert ds.counts["duplicate"] == 1
    keys = B.zobrist_keys(ds.rows)
    assert len(set(keys.tolist())) == len(ds)


def test_quiet_positions_have_qsearch_equal_to_static_eval():
    every = B.build(KNOWN, _config())
    ds = B.build(KNOWN, _config(quiet=True))
    sc = Scorer(1)
    W = P.default_weights()
    q, _ = sc.qsearch_scores(W, every.rows)
    quiet = q == sc.leaf_scores(W, every.rows)
    assert ds.fens() == [f for f, k in zip(every.fens(), quiet, strict=True) if k]
    assert 0 < len(ds) < len(every)
    assert ds.counts["not_quiet"] == len(every) - len(ds)
    # 2.Qg4: black to move takes the queen, so not quiet
    assert "rnbqkbnr/ppp1pppp/8/3p4/4P1Q1/8/PPPP1PPP/RNB1KBNR b KQkq -" in every.fens()
    assert "rnbqkbnr/ppp1pppp/8/3p4/4P1Q1/8/PPPP1PPP/RNB1KBNR b KQkq -" not in ds.fens()
    # 3.e3 of game 3: nothing to take
    assert "r1bqkb1r/pppppppp/2n2n2/8/8/2N1PN2/PPPP1PPP/R1BQKB1R b KQkq -" in ds.fens()


def test_cap_per_game_is_a_seeded_choice_within_each_game():
    full = B.build(KNOWN, _config())
    ds = B.build(KNOWN, _config(max_per_game=2, seed=3))
    counts = np.bincount(ds.game)
    assert counts.max() == 2
    assert all(counts[g] == min(2, n) for g, n in enumerate(np.bincount(full.game)))
    assert set(ds.fens()) <= set(full.fens())
    again = B.build(KNOWN, _config(max_per_game=2, seed=3))
    assert again.fens() == ds.fens()


def test_validation_split_is_by_game():
    ds = B.build([KNOWN, BAD], _config(valid=0.4, seed=5))
    valid_games = set(ds.game[ds.valid].tolist())
    train_games = set(ds.game[~ds.valid].tolist())
    assert valid_games and train_games and not valid_games & train_games
    assert len(valid_games) == round(0.4 * len(valid_games | train_games))


def test_bad_games_are_reported_with_file_line_and_number_and_skipped():
    ds = B.build(BAD, _config())
    assert len(ds.bad) == 4
    where = [m.split(": ")[0] + ": " + m.split(": ")[1] for m in ds.bad]
    assert where == [f"{BAD}:6: game 2", f"{BAD}:11: game 3", f"{BAD}:18: game 4",
                     f"{BAD}:23: game 5"]
    assert "illegal san: 'Ke3'" in ds.bad[0]
    assert "bad Result tag '2-0'" in ds.bad[2]
    # the two good games, around the bad ones, are read in full
    assert sorted(set(ds.game.tolist())) == [0, 5]
    assert len(ds) == 2 * (8 - 2)
    assert ds.summary()["games_bad"] == 4


def test_summary_counts_results_and_phases():
    ds = B.build(KNOWN, _config())
    s = ds.summary()
    assert s["positions"] == len(ds) == sum(s["phase_histogram"])
    assert s["white_wins"] + s["draws"] + s["black_wins"] == len(ds)
    assert s["phase_histogram"][24] > 0  # opening positions: all pieces on
    text = B.summary_text(s)
    assert "positions 21" in text and "phase" in text


@pytest.mark.parametrize("form", ["c9", "bracket"])
def test_written_epd_reads_back_with_the_same_positions_and_labels(tmp_path, form):
    ds = B.build(KNOWN, _config(valid=0.3, seed=2))
    s = B.write(ds, tmp_path, form)
    for name, mask in (("train", ~ds.valid), ("valid", ds.valid)):
        ps = load(tmp_path / f"{name}.epd", use_cache=False)
        assert np.array_equal(ps.rows, ds.rows[mask])
        assert np.array_equal(ps.results, ds.results[mask])
    line = (tmp_path / "train.epd").read_text().splitlines()[0]
    assert (' c9 "' in line) if form == "c9" else line.endswith("]")
    assert json.loads((tmp_path / "summary.json").read_text())["positions"] == s["positions"]


def test_parquet_without_pyarrow_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(B, "_have_pyarrow", lambda: False)
    ds = B.build(KNOWN, _config())
    with pytest.raises(ValueError, match="pyarrow"):
        B.write(ds, tmp_path, "parquet")
    assert wasp_tune(["data", str(KNOWN), "-o", str(tmp_path / "x"), "-format", "parquet"]) == 1
    assert "pyarrow" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_parquet_set_reads_back_in_pandas_and_the_tuner(tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    ds = B.build(KNOWN, _config(valid=0.3, seed=2))
    s = B.write(ds, tmp_path, "parquet")
    assert s["files"] == {"train": "train.parquet", "valid": "valid.parquet"}
    df = pd.read_parquet(tmp_path / "train.parquet")
    train = np.nonzero(~ds.valid)[0]
    assert list(df["fen"]) == ds.fens(train)
    assert np.array_equal(df["result"], ds.results[train])
    assert np.array_equal(df["game"], ds.game[train])
    for name, mask in (("train", ~ds.valid), ("valid", ds.valid)):
        ps = load(tmp_path / f"{name}.parquet", use_cache=False)
        assert np.array_equal(ps.rows, ds.rows[mask])
        assert np.array_equal(ps.results, ds.results[mask])


def test_cli_builds_a_set_and_reports_bad_games(tmp_path, capsys):
    out = tmp_path / "set"
    assert wasp_tune(["data", str(KNOWN), str(BAD), "-o", str(out), "-skip-plies", "2",
                      "-valid", "0.3", "-threads", "1"]) == 0
    text = capsys.readouterr().out
    assert f"bad game skipped: {BAD}:6: game 2" in text
    assert (out / "train.epd").exists() and (out / "valid.epd").exists()
    s = json.loads((out / "summary.json").read_text())
    assert s["games_bad"] == 4 and s["positions"] == s["train"] + s["valid"]


def test_cli_rejects_a_missing_file(tmp_path, capsys):
    assert wasp_tune(["data", str(tmp_path / "none.pgn"), "-o", str(tmp_path / "x")]) == 1
    assert "none.pgn: no such file" in capsys.readouterr().err


def test_chess960_games_build_like_standard_chess_reads_their_positions():
    path = DATA / "chess960_games.pgn"
    ds = B.build(path, _config())
    want = []
    with open(path) as f:
        g = -1
        while (game := chess.pgn.read_game(f)) is not None:
            g += 1
            board = game.board()
            assert board.chess960
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                if ply <= 2 or board.is_check() or "M" in node.comment.split("/")[0]:
                    continue
                # the rows hold the rights standard chess reads (the tuner never castles)
                want.append((chess.Board(board.fen()).epd(), RESULTS[game.headers["Result"]], g))
    got = [(f, float(r), int(g)) for f, r, g in zip(ds.fens(), ds.results, ds.game, strict=True)]
    assert got == want and len(got) > 100
    assert ds.games[-1]["plies"] == 24  # the constructed game: both sides castle O-O-O
