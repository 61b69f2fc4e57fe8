import json
import os
import sys

import pytest

from testing.cli import main

from .conftest import EPD, FAKE, fake_engine


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


TWO = fake_engine("a") + fake_engine("b") + ["-each", "tc=10+0.1"]


def test_help_shows_example(capsys):
    code, out, _ = run(capsys, ["--help"])
    assert code == 0 and "Example:" in out and "-engine" in out and "-sprt" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["-engine", "cmd=/nonexistent/engine", "tc=1", "-engine", "cmd=/bin/true", "tc=1"],
         "not found"),
        (fake_engine("a") + fake_engine("b"), "no time control"),
        (TWO + ["-concurrency", "0"], "-concurrency: must be at least 1"),
        (TWO + ["-rounds", "x"], "-rounds: expected an integer"),
        (TWO + ["-tournament", "swiss"], "-tournament"),
        (TWO + ["-sprt", "elo0=5", "elo1=0"], "elo0"),
        (TWO + ["-sprt", "elo0=0"], "elo1= are required"),
        (TWO + ["-sprt", "elo0=0", "elo1=5", "model=bayes"], "model"),
        (TWO + ["-openings", f"file={EPD}", "order=shuffle"], "order"),
        (TWO + ["-openings", f"file={EPD}", "start=51"], "start=51"),
        (TWO + ["-draw", "movenumber=10", "movecount=0", "score=10"], "-draw: movecount"),
        (TWO + ["-resign", "movecount=3", "score=500", "twosided=maybe"], "twosided"),
        (TWO + ["-bogus", "1"], "unknown flag '-bogus'"),
        (TWO + ["-engine", "cmd=/bin/true", "tc=1", "colour=red"], "unknown key 'colour'"),
        (TWO + ["-engine", "cmd=/bin/true", "tc=1+x"], "tc: bad time control"),
        (TWO + ["-engine", "cmd=/bin/true", "tc=1", "proto=cecp"], "proto"),
        (TWO + ["-engine", "cmd=/bin/true", "tc=1", "startup=soon"], "startup"),
        (TWO + ["-pgnout", "/nonexistent-dir/x.pgn"], "-pgnout: directory"),
        (TWO + ["-maxmoves"], "-maxmoves: missing value"),
        (["-engine", f"cmd={sys.executable}", "tc=1"], "at least two engines"),
    ],
)
def test_bad_flags_are_named(capsys, tmp_path, argv, needle):
    extra = [] if "-resume" in argv else ["-rundir", str(tmp_path / "run")]
    code, out, err = run(capsys, argv + extra)
    assert code == 2
    assert needle in err, err
    assert not (tmp_path / "run").exists()  # nothing started


@pytest.mark.parametrize(
    "argv,needle",
    [
        (TWO + ["-openings", "file=/nonexistent.epd"], "/nonexistent.epd: no such file"),
        (["-resume", "/nonexistent-run"], "holds no run"),
        (["-config", "/nonexistent.json"], "-config: /nonexistent.json: no such file"),
    ],
)
def test_files_that_cannot_be_used_exit_1(capsys, tmp_path, argv, needle):
    extra = [] if "-resume" in argv else ["-rundir", str(tmp_path / "run")]
    code, out, err = run(capsys, argv + extra)
    assert code == 1
    assert needle in err, err
    assert not (tmp_path / "run").exists()


def test_unknown_keys_in_a_config_file_are_refused_by_name(capsys, tmp_path):
    engine = {"cmd": sys.executable, "args": [FAKE], "tc": "10+0.1"}
    for conf, needle in (
        ({"engines": [engine, engine], "concurency": 4}, "unknown key 'concurency'"),
        ({"engines": [engine, {**engine, "hash": 16}]}, "engines[1]: unknown key 'hash'"),
        ({"engines": [engine, engine], "each": {"tc": "1", "nodez": 5}}, "unknown key 'nodez'"),
        ({"engines": [engine, engine], "openings": {"file": EPD, "ordr": "random"}},
         "-openings: unknown key 'ordr'"),
        ({"engines": [engine, engine], "sprt": {"elo0": 0, "elo1": 5, "alfa": 0.1}},
         "-sprt: unknown key 'alfa'"),
        ({"engines": [engine, engine], "draw": {"movenumbr": 40}}, "unknown key 'movenumbr'"),
        ({"engines": [engine, {**engine, "options": 5}]}, "options must be an object"),
        ({"engines": [engine, {**engine, "args": 5}]}, "args must be a list"),
    ):
        path = tmp_path / "match.json"
        path.write_text(json.dumps(conf))
        code, _, err = run(capsys, ["-config", str(path), "-rundir", str(tmp_path / "run")])
        assert code == 2 and needle in err, err
    assert not (tmp_path / "run").exists()


def test_openings_epd_accepts_comment_lines_and_names_a_bad_line(capsys, tmp_path):
    from testing.openings import OpeningBook

    good = tmp_path / "ok.epd"
    good.write_text("# openings\n\n" + open(EPD).read())
    book = OpeningBook(str(good))
    assert len(book) == 50 and book.get(0).fen is not None
    bad = tmp_path / "bad.epd"
    lines = open(EPD).read().splitlines()
    bad.write_text("# a comment\n" + lines[0] + "\nnot a position at all\n")
    code, _, err = run(capsys, TWO + ["-openings", f"file={bad}", "-rounds", "2",
                                      "-rundir", str(tmp_path / "run")])
    assert code == 1 and f"{bad}:3:" in err, err


def test_sprt_needs_two_engines(capsys, tmp_path):
    argv = TWO + fake_engine("c") + ["-sprt", "elo0=0", "elo1=5", "-rundir", str(tmp_path)]
    code, _, err = run(capsys, argv)
    assert code == 2 and "exactly two engines, got 3" in err


def test_config_file(capsys, tmp_path):
    conf = {
        "engines": [
            {"cmd": sys.executable, "name": "a", "args": [FAKE]},
            {"cmd": sys.executable, "name": "b", "args": [FAKE, "--style", "random"]},
        ],
        "each": {"tc": "10+0.1", "options": {"Hash": 1}},
        "rounds": 1,
        "games": 2,
        "repeat": True,
        "maxmoves": 20,
        "openings": {"file": EPD, "format": "epd", "order": "sequential"},
        "ratinginterval": 0,
    }
    path = tmp_path / "conf.json"
    path.write_text(json.dumps(conf))
    rundir = tmp_path / "run"
    code, out, err = run(capsys, ["-config", f"file={path}", "-rundir", str(rundir)])
    assert code == 0, err
    assert out.count("Finished game") == 2
    saved = json.loads((rundir / "config.json").read_text())
    assert saved["engines"][0]["options"] == {"Hash": "1"}
    assert os.path.exists(rundir / "games.sqlite")


def test_resume_refuses_new_settings(capsys, tmp_path):
    rundir = tmp_path / "run"
    code, _, err = run(capsys, TWO + ["-maxmoves", "5", "-rundir", str(rundir)])
    assert code == 0, err
    code, _, err = run(capsys, ["-resume", str(rundir), "-rounds", "9"])
    assert code == 2 and "-rounds cannot be given" in err
    code, _, err = run(capsys, TWO + ["-rundir", str(rundir)])
    assert code == 2 and "already holds a run" in err
