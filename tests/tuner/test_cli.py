"""`wasp-tune`'s command-line convention: every flag of every subcommand, whichever room's
command line parses it, takes one or two dashes, a run directory is -dir DIR or -rundir DIR,
-resume DIR goes on with a run, and a bad flag is one line on stderr with exit code 2."""

import argparse
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import DATA, ROOT
from tuner import cli
from tuner.loop import cli as loop_cli
from tuner.sets import cli as sets_cli
from tuner.sets import frc
from tuner.texel import cli as texel_cli

EPD = str(DATA / "tuner_quiet_200.epd")


# (name, parser, the arguments every command line of it needs)
PARSERS = [
    ("run", lambda: texel_cli.parser("run"), []),
    ("k", lambda: texel_cli.parser("k"), []),
    ("error", lambda: texel_cli.parser("error"), []),
    ("data", sets_cli.data_parser, ["games.pgn", "-o", "set"]),
    ("data dfrc", frc.parser, ["-o", "dfrc.epd"]),
    ("loop", loop_cli.loop_parser, ["-dir", "loop"]),
]


def _value(action):
    """Command-line words that set `action` to something other than its default."""
    if action.nargs == 0:
        return []
    if action.choices:
        return [next(c for c in action.choices if c != action.default)]
    if action.type is int:
        return ["7"]
    if action.type is float:
        return ["0.25"]
    return ["x"]


def _flags(parser):
    return [a for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)]


@pytest.mark.parametrize("name, make, base", PARSERS, ids=[p[0] for p in PARSERS])
def test_every_flag_takes_one_or_two_dashes(name, make, base):
    parser = make()
    flags = _flags(parser)
    assert len(flags) >= 3
    for action in flags:
        for spelling in action.option_strings:
            bare = spelling.lstrip("-")
            one = parser.parse_args([*base, f"-{bare}", *_value(action)])
            two = parser.parse_args([*base, f"--{bare}", *_value(action)])
            assert vars(one) == vars(two), (name, spelling)
            default = parser.parse_args(base)
            assert getattr(one, action.dest) != getattr(default, action.dest), (name, spelling)


@pytest.mark.parametrize("name", ["run", "loop"])
def test_a_run_directory_is_dir_or_rundir_and_resume_names_one(name):
    parser = dict((p[0], p[1]) for p in PARSERS)[name]()
    from wasp.cliargs import run_dir

    for argv in (["-dir", "d"], ["--rundir", "d"], ["-rundir", "d"], ["--dir", "d"]):
        assert run_dir(parser.parse_args(argv)) == ("d", False)
    for argv in (["-resume", "d"], ["--resume", "d"], ["-dir", "d", "--resume"],
                 ["--resume", "-rundir", "d"], ["-dir", "d", "-resume", "d"]):
        assert run_dir(parser.parse_args(argv)) == ("d", True), argv


def test_run_resume_dir_goes_on_with_a_run_as_dir_resume_does(tmp_path, capsys):
    import numpy as np

    from wasp import params as P

    argv = [EPD, "-method", "binary", "-params", "tempo", "-k", "1.2", "-quiet"]
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert cli.main(["run", *argv, "-rundir", str(d), "-max-passes", "1"]) == 0
    for d in (a, b):  # one more pass each: the two spellings of resuming
        cfg = json.loads((d / "run.json").read_text())
        cfg["max_passes"] = 2
        (d / "run.json").write_text(json.dumps(cfg))
    assert cli.main(["run", "-resume", str(a), "-quiet"]) == 0
    assert cli.main(["run", "-dir", str(b), "--resume", "-quiet"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert np.array_equal(P.load(a / "params.txt"), P.load(b / "params.txt"))


@pytest.mark.parametrize("argv, code, needle", [
    (["run", "-resume", "a", "-dir", "b"], 2, "-resume a and -dir b name two directories"),
    (["run", EPD], 2, "-dir DIR is required (or -resume DIR)"),
    (["run", "--resume"], 2, "-resume: which run? give -resume DIR"),
    (["run", "-resume", "{tmp}/none"], 1, "none: no run to resume (no state.json)"),
    (["loop", "-resume", "{tmp}/none"], 1, "none: no loop to resume (no loop.json)"),
])
def test_run_directory_mistakes_are_one_line(tmp_path, capsys, argv, code, needle):
    assert cli.main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


COMMANDS = [["run", "-dir", "d"], ["k", EPD], ["error", EPD], ["data", "g.pgn", "-o", "s"],
            ["data", "dfrc", "-o", "f.epd"],
            ["loop", "-dir", "d"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
@pytest.mark.parametrize("bad", [["--no-such-flag"], ["-max-passes", "many"]],
                         ids=["unknown", "bad-value"])
def test_a_bad_flag_exits_2_with_one_line(capsys, argv, bad):
    if bad[0] == "-max-passes" and argv[0] not in ("run", "loop"):
        bad = ["-threads", "many"] if argv[:2] != ["data", "dfrc"] else ["-n", "many"]
    with pytest.raises(SystemExit) as e:
        cli.main([*argv, *bad])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("wasp-tune") and ": error: " in err[0], err
    assert ("unknown flag '--no-such-flag'" if bad[0] == "--no-such-flag" else "'many'") in err[0]


def test_the_installed_command_says_a_bad_flag_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "tuner.cli", "run", "--bogus", "-dir", "x"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "wasp-tune run: error: unknown flag '--bogus' (see wasp-tune run --help)"]

