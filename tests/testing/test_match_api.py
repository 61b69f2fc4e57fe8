"""The match runner's public API: `testing.MatchConfig` checks itself, `testing.run_match` plays
a match in-process into a run directory and returns its result."""

import io
import sys

import pytest

import testing
from testing.config import OpeningsConfig, SprtConfig
from testing.engine import EngineConfig

from .conftest import EPD, FAKE, fake_engine


def two_engines(**limits) -> list[EngineConfig]:
    return [EngineConfig(cmd=sys.executable, name=name, args=[FAKE, *style], **limits)
            for name, style in (("greedy", []), ("random", ["--style", "random"]))]


def test_a_two_game_match_through_the_public_api(tmp_path):
    rundir = tmp_path / "new" / "run"  # created, parents too
    config = testing.MatchConfig(engines=two_engines(nodes=1), games=2, repeat=True, srand=3,
                                 maxmoves=30, progress=False)
    out = io.StringIO()
    r = testing.run_match(config, rundir, out=out)
    assert r.ok and r.status == 0 and r.error is None
    assert r.games == 2 == r.wins + r.draws + r.losses
    assert r.score == (r.wins + r.draws / 2) / 2
    assert sum(r.pentanomial) == 1  # one colour-swapped pair
    assert r.engines == ["greedy", "random"]
    assert "Games: 2, Wins: " in out.getvalue()
    df = testing.results(rundir)
    assert sorted(df["game_in_pair"]) == [0, 1]
    assert r.summary["games_total"] == 2 and (rundir / "summary.json").exists()


def test_run_match_takes_wasp_matchs_arguments_and_reports_the_sprt(tmp_path):
    argv = fake_engine("greedy") + fake_engine("random", "--style", "random") + [
        "-each", "nodes=1", "-games", "20", "-repeat", "-sprt", "elo0=0", "elo1=200",
        "-openings", f"file={EPD}", "order=random", "-srand", "2", "-maxmoves", "40",
        "-ratinginterval", "0", "-progress", "off"]
    r = testing.run_match(argv, tmp_path / "s", out=io.StringIO())
    assert r.ok and r.sprt is not None
    assert r.sprt["bounds"][0] < 0 < r.sprt["bounds"][1]
    assert r.sprt["decision"] in ("H0", "H1", None)
    assert r.sprt["decision"] == (r.summary["sprt_decision"] or {}).get("decision")
    assert r.elo is not None and r.elo_error is not None
    assert "games" in repr(r) and "LLR" in repr(r)


def test_an_sprt_stopped_inside_its_first_pair_says_how_to_resume(tmp_path):
    # One game of the first pair stored, then SIGTERM: no pentanomial count exists yet, so the
    # result's LLR is 0 (no traceback after the resume line, exit 130 as for any stop).
    import os
    import signal
    import subprocess
    import time

    from .conftest import ROOT

    rundir = tmp_path / "half"
    # The second engine hangs at the first ply it plays as White: only in the pair's second
    # game, which then waits out its 300 s clock, so the signal always finds it under way.
    argv = fake_engine("greedy") + fake_engine("hangs", "--fail", "hang", "--ply", "1") + [
        "-each", "tc=300+1", "-games", "2", "-repeat", "-sprt", "elo0=0", "elo1=10",
        "-openings", f"file={EPD}", "-maxmoves", "15", "-concurrency", "1", "-progress", "off",
        "-dir", str(rundir)]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "testing.cli", *argv], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while stored < 1 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
            stored = games_in(rundir)
        assert stored == 1
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert "Traceback" not in err and f"resume with -resume {rundir}" in err
    assert games_in(rundir) == 1


def games_in(rundir) -> int:
    import sqlite3
    from contextlib import closing

    if not (rundir / "games.sqlite").exists():
        return 0
    with closing(sqlite3.connect(rundir / "games.sqlite", timeout=1)) as con:
        try:
            return con.execute("select count(*) from games").fetchone()[0]
        except sqlite3.OperationalError:  # not made yet
            return 0


def test_a_run_directory_holding_the_match_resumes_it_and_another_is_refused(tmp_path):
    config = testing.MatchConfig(engines=two_engines(nodes=1), games=2, srand=1, maxmoves=20,
                                 progress=False)
    first = testing.run_match(config, tmp_path, out=io.StringIO())
    config.concurrency = 2  # how it is played may change
    again = testing.run_match(config, tmp_path, out=io.StringIO())
    assert again.games == first.games == 2 and again.summary["games_this_session"] == 0
    config.games = 4
    with pytest.raises(testing.UsageError, match="other settings"):
        testing.run_match(config, tmp_path)


@pytest.mark.parametrize("change,message", [
    (dict(rounds=0), "-rounds: must be at least 1, got 0"),
    (dict(engines=two_engines(nodes=1)[:1]), "at least two engines"),
    (dict(engines=two_engines()), "no time control"),
    (dict(engines=two_engines(nodes=0)), "nodes: must be at least 1, got 0"),
    (dict(tournament="swiss"), "-tournament: 'swiss'"),
    (dict(sprt=SprtConfig(elo0=5, elo1=0)), "elo0 (5) must be below elo1 (0)"),
    (dict(scale_tc={"nps": 1}), "needs -dask"),
    (dict(pgnout="/no/such/dir/g.pgn"), "-pgnout: directory '/no/such/dir' does not exist"),
])
def test_a_config_built_in_python_is_checked_as_the_command_line_is(change, message):
    config = testing.MatchConfig(**{"engines": two_engines(nodes=1), **change})
    with pytest.raises(testing.UsageError) as e:
        config.validate()
    assert message in str(e.value)
    assert isinstance(e.value, ValueError) and e.value.code == 2


def test_a_missing_openings_file_is_an_input_error(tmp_path):
    config = testing.MatchConfig(engines=two_engines(nodes=1),
                                 openings=OpeningsConfig(str(tmp_path / "x.epd")))
    with pytest.raises(testing.UsageError, match="no such file") as e:
        config.validate()
    assert e.value.code == 1


def test_the_same_arguments_again_resume_the_match_in_their_directory(tmp_path):
    argv = fake_engine("greedy") + fake_engine("random", "--style", "random") + [
        "-each", "nodes=1", "-games", "3", "-maxmoves", "20", "-progress", "off"]
    first = testing.run_match(argv, tmp_path / "r", out=io.StringIO())
    again = testing.run_match(argv, tmp_path / "r", out=io.StringIO())  # its seed is kept
    assert first.games == again.games == 3 and again.summary["games_this_session"] == 0
    with pytest.raises(testing.UsageError, match="other settings"):
        testing.run_match([*argv, "-games", "4"], tmp_path / "r")
    resumed = testing.run_match(["-resume", str(tmp_path / "r")], out=io.StringIO())
    assert resumed.games == 3 and resumed.ok


def test_a_two_game_match_in_a_fresh_python_session(tmp_path):
    """What a user types in `python` or a notebook, from a directory of their own."""
    import json
    import os
    import subprocess

    from tests.conftest import ROOT

    session = f"""
import testing
r = testing.run_match(["-engine", "cmd={sys.executable}", "arg={FAKE}", "name=a",
                       "-engine", "cmd={sys.executable}", "arg={FAKE}", "name=b",
                       "arg=--style", "arg=random", "-each", "nodes=1", "-games", "2",
                       "-maxmoves", "20", "-progress", "off"], "two")
print(repr(r))
print(__import__("json").dumps([r.games, r.wins + r.draws + r.losses, r.ok]))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", session], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == [2, 2, True]
    assert p.stdout.splitlines()[-2].startswith("MatchResult('two', 2 games")
    assert (tmp_path / "two" / "games.sqlite").exists()
