"""`wasp-match reproduce`: a stored game replayed against fresh engines."""

import os
import sys

import pytest

import testing
from testing.cli import main
from testing.config import MatchConfig
from testing.reproduce import parse_transcript, reproduce
from testing.store import RunStore

from .conftest import EPD, ROOT, fake_engine


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def play(capsys, rundir, *argv):
    code, out, err = run(capsys, [*argv, "-ratinginterval", "0", "-rundir", rundir])
    assert code == 0, err
    return testing.results(rundir)


@pytest.mark.parametrize("fail, kind, termination, limits", [
    ("crash", "crash", "crash", ["nodes=100"]),
    ("illegal", "illegal", "illegal-move", ["nodes=100"]),
    # the runner waits st + margin, then 1 s for `stop`: a stalled connection
    ("hang", "hang", "stall", ["st=0.3", "timemargin=50"]),
])
def test_reproduce_finds_the_failure_at_its_ply(capsys, tmp_path, fail, kind, termination,
                                                limits):
    rd = str(tmp_path / "r")
    bad = fake_engine("bad", "--fail", fail, "--ply", "6", "--stderr")
    df = play(capsys, rd, *fake_engine("good"), *limits, *bad, *limits, "-recover")
    row = df.iloc[0]
    assert row["termination"] == termination and row["black"] == "bad"
    assert len(row["opening_moves"]) == 0 and row["plies"] == 5  # it failed at ply 6
    code, out, err = run(capsys, ["reproduce", rd, "1", "--timeout", "1"])
    assert code == 1, err
    lines = out.splitlines()
    assert lines[1] == "white good: replayed identically (3 searches)"
    assert lines[2].startswith(f"black bad: {kind} at ply 6: ")
    assert f"as in the game ({kind})" in lines[2]
    if fail == "crash":
        assert "exited (code 1)" in lines[2] and "fake: crashing at ply 6" in lines[2]
    # --side and --ply: only Black, stopped before the failure
    code, out, err = run(capsys, ["reproduce", rd, "1", "--side", "black", "--ply", "4"])
    lines = out.splitlines()
    move = df_moves(rd)[3]
    assert code == 0 and lines[1] == "black bad: replayed identically (2 searches)"
    assert lines[2].startswith("  info depth 1 ") and lines[2].endswith(f" pv {move}")
    assert lines[3:] == [f"  ply 4: the game's move {move}, the replay's {move}"]


def df_moves(rd):
    store = RunStore(rd)
    try:
        return store.game((0, 0))["moves"].split()
    finally:
        store.close()


def test_reproduce_a_node_limited_stockfish_game_identically(capsys, tmp_path, stockfish):
    rd = str(tmp_path / "r")
    play(capsys, rd, "-engine", f"cmd={stockfish}", "name=sf1", "-engine", f"cmd={stockfish}",
         "name=sf2", "-each", "nodes=2000", "option.Hash=8", "-rounds", "1", "-repeat",
         "-maxmoves", "30", "-openings", f"file={EPD}")
    for game in ("1", "2"):  # game 2: engines reused, the transcript starts at ucinewgame
        code, out, err = run(capsys, ["reproduce", rd, game])
        assert code == 0, out + err
        assert out.count("replayed identically") == 2, out
    # the same game against another engine under the first one's name: a different move
    store = RunStore(rd)
    cfg = MatchConfig.from_dict(store.get_meta("config"))
    cfg.engines[0].nodes = None
    cfg.engines[0].cmd = sys.executable
    cfg.engines[0].args = [fake_engine("x")[3][4:], "--style", "random"]
    store.set_meta("config", cfg.to_dict())
    store.close()
    findings = reproduce(rd, 1, sides=("white",))
    f = findings[0]
    assert f.kind == "different" and f.ply == 1 and "fixed search" in f.text


def test_reproduce_a_wasp_game_identically(capsys, tmp_path, stockfish):
    rd = str(tmp_path / "r")
    wasp = ["-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", "name=wasp",
            f"dir={ROOT}", "startup=300", "nodes=1500"]
    play(capsys, rd, *wasp, "-engine", f"cmd={stockfish}", "name=sf", "nodes=1500",
         "-maxmoves", "20", "-openings", f"file={EPD}")
    code, out, err = run(capsys, ["reproduce", rd, "1"])
    assert code == 0, out + err
    assert "white wasp: replayed identically (20 searches)" in out


def test_reproduce_an_xboard_game_identically(capsys, tmp_path, fairymax):
    rd = str(tmp_path / "r")
    play(capsys, rd, "-engine", f"cmd={fairymax}", "proto=xboard", "name=fm1", "depth=3",
         "-engine", f"cmd={fairymax}", "proto=xboard", "name=fm2", "depth=3", "-maxmoves",
         "12", "-rounds", "1", "-repeat", "-openings", f"file={EPD}")
    code, out, err = run(capsys, ["reproduce", rd, "2"])
    assert code == 0, out + err
    assert out.count("replayed identically (12 searches)") == 2


@pytest.mark.parametrize("argv, code, msg", [
    (["reproduce"], 0, "usage: wasp-match reproduce"),
    (["reproduce", "DIR"], 2, "expected DIR GAME"),
    (["reproduce", "DIR", "1", "--ply", "0"], 2, "--ply: expected a ply number"),
    (["reproduce", "DIR", "1", "--side", "red"], 2, "--side: expected white or black"),
    (["reproduce", "DIR", "1", "--speed", "2"], 2, "unknown flag '--speed'"),
    (["reproduce", "/nonexistent", "1"], 1, "holds no run"),
    (["reproduce", "DIR", "x"], 2, "GAME 'x': expected a game number"),
    (["reproduce", "DIR", "1.2.3"], 2, "or PAIR.G"),
])
def test_reproduce_command_line_errors(capsys, argv, code, msg):
    got, out, err = run(capsys, argv)
    assert got == code and msg in out + err


def test_reproduce_names_a_game_that_is_not_stored(capsys, tmp_path):
    rd = str(tmp_path / "r")
    play(capsys, rd, *fake_engine("a"), "nodes=10", *fake_engine("b"), "nodes=10",
         "-maxmoves", "3")
    code, out, err = run(capsys, ["reproduce", rd, "9"])
    assert code == 1 and "game 9: not in the run store" in err
    code, out, err = run(capsys, ["reproduce", rd, "1", "--ply", "999"])
    assert code == 1 and "--ply 999: game 1 ends at ply" in err
    assert os.path.isfile(os.path.join(rd, "games.sqlite"))


def test_parse_transcript_keeps_direction_and_text():
    text = "0.000000 > uci\n0.1 < id name X Y\n# transcript cut at 32 MB\n0.2 < \n"
    assert parse_transcript(text) == [(">", "uci"), ("<", "id name X Y"), ("<", "")]
