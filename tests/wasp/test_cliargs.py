"""wasp.cliargs, the tools' command-line convention, and `wasp`'s flags under it: one or two
dashes, help that shows one spelling, one-line errors with exit code 2."""

import argparse
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from wasp.cli import _parser
from wasp.cliargs import ArgumentParser, add_output, add_resume, add_run_dir, run_dir, spellings
from wasp.exitcodes import EXIT_USAGE, CliError


def _commands(parser, prefix=()):
    """(command words, parser) of `parser` and of every subcommand under it."""
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*prefix, name))


def _value(action):
    if action.nargs == 0:
        return []
    if action.choices:
        return [next(c for c in action.choices if c != action.default)]
    return {int: ["7"], float: ["0.25"]}.get(action.type, ["x=1" if "=" in str(action.metavar)
                                                           else "x"])


REQUIRED = {("epd",): ["suite.epd"], ("eval",): ["startpos"], ("book", "build"): ["g.pgn",
            "-o", "b.bin"], ("book", "probe"): ["b.bin"]}


def test_every_flag_of_every_wasp_subcommand_takes_one_or_two_dashes():
    checked = 0
    for words, parser in _commands(_parser()):
        base = [*words, *REQUIRED.get(words, [])]
        for action in parser._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            for spelling in action.option_strings:
                bare = spelling.lstrip("-")
                one = _parser().parse_args([*base, f"-{bare}", *_value(action)])
                two = _parser().parse_args([*base, f"--{bare}", *_value(action)])
                assert vars(one) == vars(two), (words, spelling)
                assert vars(one) != vars(_parser().parse_args(base)), (words, spelling)
                checked += 1
    assert checked > 40


def test_engine_options_keep_their_uci_names_with_either_spelling():
    args = _parser().parse_args(["bench", "5", "-hash", "32", "--eval-file", "e.txt",
                                 "-option", "Foo=1", "-book", "b.bin"])
    assert args.engine_settings == [("Hash", "32"), ("EvalFile", "e.txt"), ("Foo", "1"),
                                    ("BookFile", "b.bin"), ("OwnBook", "true")]


def test_spellings_add_the_other_dash_count_unless_another_flag_has_it():
    assert spellings(["-dir", "-rundir"]) == ["-dir", "--dir", "-rundir", "--rundir"]
    assert spellings(["--depth"]) == ["--depth", "-depth"]
    assert spellings(["-o", "--output"], taken={"--o"}) == ["-o", "--output", "-output"]
    assert spellings(["data"]) == ["data"]


def test_a_short_flag_beside_a_long_one_keeps_the_long_ones_name():
    p = ArgumentParser(prog="tool")
    p.add_argument("-o", "--output", default="")
    p.add_argument("-threads", "-concurrency", type=int, default=1)
    args = p.parse_args(["--o", "a.txt", "--concurrency", "2"])
    assert (args.output, args.threads) == ("a.txt", 2)


def _tool():
    p = ArgumentParser(prog="tool", epilog="example:\n  tool -dir runs/a")
    add_run_dir(p)
    add_resume(p)
    add_output(p, "the file written", required=False)
    p.add_argument("-max-passes", type=int, default=10, help="passes (default 10)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-nodes", type=int)
    g.add_argument("--tc")
    return p


def test_help_shows_one_spelling_of_each_flag(capsys):
    with pytest.raises(SystemExit) as e:
        _tool().parse_args(["-help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "-dir DIR, -rundir DIR" in out and "--dir" not in out
    assert "-o PATH, -out PATH, -output PATH" in out and "--max-passes" not in out
    assert "--tc TC" in out and "example:\n  tool -dir runs/a" in out


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "tool: error: unknown flag '--bogus' (see tool --help)"),
    (["-max-passes", "x"], "tool: error: -max-passes: invalid int value: 'x'"),
    (["-nodes", "1", "-tc", "2"], "tool: error: --tc: not allowed with argument -nodes/--nodes"),
    (["-dir"], "tool: error: -dir: expected one argument"),
    (["extra"], "tool: error: unexpected argument 'extra' (see tool --help)"),
])
def test_a_bad_command_line_is_one_line_and_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        _tool().parse_args(argv)
    assert e.value.code == EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [message]


def test_run_dir_reads_dir_rundir_and_resume():
    p = _tool()
    assert run_dir(p.parse_args(["--rundir", "a"])) == ("a", False)
    assert run_dir(p.parse_args(["-resume", "a"])) == ("a", True)
    assert run_dir(p.parse_args(["-dir", "a", "--resume"])) == ("a", True)
    assert run_dir(p.parse_args(["-dir", "a/", "-resume", "a"])) == ("a", True)
    for argv, needle in ((["-dir", "a", "-resume", "b"], "name two directories"),
                         ([], "-dir DIR is required"), (["-resume"], "which run?")):
        with pytest.raises(CliError, match=needle) as e:
            run_dir(p.parse_args(argv))
        assert e.value.code == EXIT_USAGE


def test_wasp_takes_single_dash_flags_and_says_a_bad_one_in_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ok = subprocess.run([sys.executable, "-m", "wasp.cli", "perft", "-depth", "2", "-divide"],
                        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "Nodes searched: 400" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "wasp.cli", "perft", "--depht", "2"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.splitlines() == [
        "wasp perft: error: unknown flag '--depht' (see wasp perft --help)"]
