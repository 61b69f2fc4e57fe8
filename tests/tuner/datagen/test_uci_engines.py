"""`wasp-tune datagen -engine ...`: any UCI engine plays itself through the match runner's
executor. Stockfish at a few hundred nodes (skipped when absent): legal FENs, White's-view
scores, results that agree with how each game ended, SIGKILL then -resume; the project's fake
and broken engines: a crash, an illegal move or a missing score skips that game only."""

import os
import subprocess
import sys

import chess
import pytest

from tests.conftest import ROOT
from tests.tuner.datagen.test_run import (
    LINE,
    assert_games_agree,
    assert_scores_agree_with_material,
    kill_after_first_game,
)
from tuner import cli
from tuner.datagen.run import (
    DATA_FILE,
    GAMES_FILE,
    SIDE_FILE,
    DatagenConfig,
    DatagenRun,
    generate,
    read_games,
    read_records,
)
from tuner.formats.records import MATE_SCORE

STOCKFISH = "/usr/games/stockfish"
needs_stockfish = pytest.mark.skipif(not os.access(STOCKFISH, os.X_OK),
                                     reason="Stockfish is not installed")
FAKES = ROOT / "tests" / "testing" / "fake_engines"
SF_FLAGS = ["-games", "3", "-nodes", "300", "-start-nodes", "200", "-seed", "5",
            "-engine", f"cmd={STOCKFISH}", "option.Threads=1", "option.Hash=8"]


@pytest.fixture(scope="module")
def sf_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("dgsf") / "run"
    assert cli.main(["datagen", "-dir", str(path), "-quiet", *SF_FLAGS]) == 0
    return DatagenRun.open(str(path))


@needs_stockfish
def test_stockfish_games_are_legal_bullet_text_whose_results_agree_with_the_ends(sf_run):
    lines = open(sf_run.file(DATA_FILE)).read().splitlines()
    assert len(lines) == sf_run.state["stats"]["positions"] > 0
    for line in lines:
        m = LINE.match(line)
        assert m, line
        assert chess.Board(m.group(1)).is_valid(), line
        assert abs(int(m.group(2))) <= MATE_SCORE
    assert sf_run.state["games"] == sf_run.state["stats"]["games"] == 3
    assert sf_run.config.uci["cmd"] == STOCKFISH and "Stockfish" in sf_run.config.engine
    assert_games_agree(sf_run)


@needs_stockfish
def test_stockfish_scores_are_whites_and_agree_with_material(sf_run):
    assert_scores_agree_with_material(sf_run)


@needs_stockfish
@pytest.mark.parametrize("fen", ["3qk3/8/8/8/8/8/8/4K3 w - - 0 1",
                                 "3qk3/8/8/8/8/8/8/4K3 b - - 0 1"])
def test_a_won_position_for_black_scores_negative_whichever_side_is_to_move(tmp_path, fen):
    from tuner.datagen import uci_engine

    book = tmp_path / "book.epd"
    book.write_text(fen + "\n")
    run = DatagenRun.create(str(tmp_path / "r"), DatagenConfig(
        games=1, nodes=300, random_plies=0, openings=str(book), start_bound=100000,
        win_score=500, win_plies=2, uci=uci_engine([f"cmd={STOCKFISH}", "option.Threads=1"],
                                                    300)))
    generate(run, progress=False)
    recs = list(read_records(run.path))
    assert recs and recs[0].fen == fen and all(r.score <= -500 for r in recs)
    assert read_games(run.path)[0]["result"] == "0-1"


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@needs_stockfish
def test_sigkill_then_resume_gives_stockfishs_uninterrupted_run(tmp_path, sf_run):
    rundir = tmp_path / "killed"
    done = kill_after_first_game([sys.executable, "-m", "tuner.cli", "datagen", "-dir",
                                  str(rundir), "-quiet", *SF_FLAGS], rundir, timeout=120)
    assert 1 <= done < 3
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "datagen", "-resume", str(rundir),
                        "-quiet"], env=_env(), cwd=str(ROOT), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in (DATA_FILE, SIDE_FILE, GAMES_FILE):
        assert (rundir / name).read_bytes() == open(sf_run.file(name), "rb").read(), name


def _fake_run(path, script, *args, games=3):
    engine = {"cmd": sys.executable, "name": "fake", "args": [str(FAKES / script), *args],
              "nodes": 100}
    run = DatagenRun.create(str(path), DatagenConfig(
        games=games, nodes=100, random_plies=2, max_plies=30, uci=engine))
    generate(run, progress=False)
    return run, read_games(run.path)


def test_an_engine_that_crashes_loses_that_game_only(tmp_path):
    # the engine playing White exits at its 20th search since it started: in game 1
    run, games = _fake_run(tmp_path / "r", "fake_uci.py", "--fail", "crash", "--after", "20")
    failed = [g for g in games if "error" in g]
    assert [g["game"] for g in failed] == [1]
    assert "fake" in failed[0]["error"]
    assert {r.game for r in read_records(run.path)} == {0, 2}  # new processes for game 2
    assert run.state["stats"]["errors"] == 1 and run.state["stats"]["games"] == 2
    assert_games_agree(run)


@pytest.mark.parametrize("script,args,why", [
    ("fake_uci.py", ["--fail", "illegal", "--ply", "5"], "illegal move"),
    ("broken_uci.py", ["--fault", "badinfo"], "no score")])
def test_an_illegal_move_or_a_missing_score_is_reported_and_not_recorded(tmp_path, script,
                                                                          args, why):
    run, games = _fake_run(tmp_path / "r", script, *args, games=2)
    assert [g["game"] for g in games] == [0, 1]
    assert all(why in g["error"] for g in games), games
    assert open(run.file(DATA_FILE)).read() == ""
    assert run.state["stats"]["errors"] == 2 and run.state["stats"]["positions"] == 0


def test_an_engine_that_cannot_start_or_a_bad_item_is_one_line_and_no_run(tmp_path, capsys):
    nostart = ["-engine", f"cmd={sys.executable}", f"arg={FAKES / 'fake_uci.py'}",
               "arg=--fail", "arg=nostart"]
    assert cli.main(["datagen", "-dir", str(tmp_path / "a"), *nostart]) == 1
    assert "failed to start" in capsys.readouterr().err
    assert cli.main(["datagen", "-dir", str(tmp_path / "b"), "-engine", "cmd=no-such-engine"]) == 2
    assert "not found" in capsys.readouterr().err
    assert cli.main(["datagen", "-dir", str(tmp_path / "c"), "-engine", f"cmd={sys.executable}",
                     "tc=10+0.1"]) == 2
    assert "tc=" in capsys.readouterr().err
    assert not any((tmp_path / d).exists() for d in "abc")


@needs_stockfish
@pytest.mark.timeout(180)
def test_dask_workers_play_the_games_and_the_lead_writes_the_same_run(tmp_path, sf_run):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    from tests.conftest import root_on_pythonpath

    with root_on_pythonpath(), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address=":0",
                                            silence_logs=40) as cluster:
        rundir = tmp_path / "dask"
        assert cli.main(["datagen", "-dir", str(rundir), "-quiet", *SF_FLAGS,
                         "-dask", cluster.scheduler_address]) == 0
    for name in (DATA_FILE, SIDE_FILE, GAMES_FILE):
        assert (rundir / name).read_bytes() == open(sf_run.file(name), "rb").read(), name


@pytest.mark.parametrize("score,mate,white,expected", [
    (35, None, True, 35), (35, None, False, -35), (50000, None, True, MATE_SCORE - 1),
    (-50000, None, False, MATE_SCORE - 1), (None, 3, True, MATE_SCORE),
    (None, 3, False, -MATE_SCORE), (None, -2, True, -MATE_SCORE), (None, -2, False, MATE_SCORE),
    (None, None, True, None)])
def test_a_uci_score_is_whites_with_mates_clamped(score, mate, white, expected):
    from testing.driver import SearchResult
    from tuner.datagen.run import uci_white_score

    assert uci_white_score(SearchResult("e2e4", 0.0, score=score, mate=mate), white) == expected
