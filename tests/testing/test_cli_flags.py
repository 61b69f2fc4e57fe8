"""Every flag `wasp-match --help` lists (and every key of the key=value flags) has an effect on
the run's settings, or is refused with a message: nothing accepted is silently ignored."""

import json
import re
import sys

import pytest

from testing import args, cli
from testing.cli import USAGE, UsageError
from testing.plan import plan_match

from .conftest import DATA, EPD, HERE, fake_engine

TB = f"{DATA}/syzygy"

BROKEN = f"{HERE}/fake_engines/broken_uci.py"


def help_flags() -> set[str]:
    return set(re.findall(r"(?:^|\s)(-[a-z][a-z0-9-]*)", USAGE))


def prepare(argv):
    """The plan `wasp-match ARGV` plays."""
    return plan_match(argv, new=True)


def settings(argv):
    plan = prepare(argv)
    return {"cfg": plan.config.to_dict(), "rundir": plan.rundir, "resume": plan.resume}


@pytest.fixture
def base(tmp_path):
    return fake_engine("a") + fake_engine("b") + [
        "-each", "tc=10+0.1", "-srand", "1", "-rundir", str(tmp_path / "run")]


def stored_run(tmp_path, base) -> str:
    argv = fake_engine("a") + fake_engine("b") + [
        "-each", "nodes=1", "-maxmoves", "2", "-ratinginterval", "0",
        "-rundir", str(tmp_path / "done")]
    assert cli.main(argv) == 0
    return str(tmp_path / "done")


# flag -> the words that follow it; a callable gets (tmp_path, base)
EFFECTS = {
    "-engine": ["cmd=" + sys.executable, f"arg={BROKEN}", "name=c"],
    "-each": ["timemargin=50"],
    "-config": lambda tmp, base: [_json(tmp, {"concurrency": 3})],
    "-tournament": ["gauntlet"],
    "-rounds": ["7"],
    "-games": ["4"],
    "-repeat": [],
    "-concurrency": ["2"],
    "-openings": [f"file={EPD}"],
    "-srand": ["2"],
    "-event": ["Test"],
    "-site": ["Here"],
    "-draw": ["movenumber=40"],
    "-resign": ["score=600"],
    "-maxmoves": ["80"],
    "-sprt": ["elo0=0", "elo1=5"],
    "-ratinginterval": ["3"],
    "-pgnout": lambda tmp, base: [str(tmp / "g.pgn")],
    "-epdout": lambda tmp, base: [str(tmp / "g.epd")],
    "-log": lambda tmp, base: [str(tmp / "io.log")],
    "-rundir": lambda tmp, base: [str(tmp / "other")],
    "-dir": lambda tmp, base: [str(tmp / "other")],  # -rundir's other name
    "-recover": [],
    "-ponder": [],
    "-use-affinity": [],
    "-dask": ["tcp://127.0.0.1:8786"],
    "-progress": ["on"],
    "-tb": [TB],
    "-tbpieces": lambda tmp, base: ["3", "-tb", TB],  # compared with -tb alone below
    "-tbignore50": lambda tmp, base: ["-tb", TB],
    "-tbadjudicate": lambda tmp, base: ["DRAW", "-tb", TB],
    "-variant": ["fischerandom"],
}
NEEDS = {"-tbpieces": ["-tb", TB], "-tbignore50": ["-tb", TB], "-tbadjudicate": ["-tb", TB]}
REFUSED = {  # accepted only with another flag: alone it is refused with the reason
    "-scale-tc": (["nps=1000"], "needs -dask"),
    "-tbpieces": (["3"], "needs -tb"),
    "-tbignore50": ([], "needs -tb"),
    "-tbadjudicate": (["DRAW"], "needs -tb"),
}
SPECIAL = {"-resume", "-compliance"}  # tested below: they replace the whole command line


def _json(tmp, data) -> str:
    path = tmp / "conf.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_walk_covers_every_flag_in_help_and_every_flag_the_parser_takes():
    listed = help_flags()
    walked = set(EFFECTS) | set(REFUSED) | SPECIAL
    assert listed == walked, (listed - walked, walked - listed)
    parsed = args.KV_FLAGS | args.VALUE_FLAGS | args.BOOL_FLAGS | args.OPTIONAL_VALUE_FLAGS
    assert parsed | {"-compliance"} == listed


@pytest.mark.parametrize("flag", sorted(EFFECTS))
def test_each_flag_changes_the_settings(tmp_path, base, flag):
    words = EFFECTS[flag]
    words = words(tmp_path, base) if callable(words) else words
    assert settings(base + [flag, *words]) != settings(base + NEEDS.get(flag, []))


@pytest.mark.parametrize("flag", sorted(REFUSED))
def test_flags_that_need_another_are_refused_alone(base, flag):
    words, needle = REFUSED[flag]
    with pytest.raises(UsageError, match=needle):
        prepare(base + [flag, *words])


# every key of the key=value flags: flag -> {key: value that differs from the default}
KEYS = {
    "-engine": {"cmd": "/bin/true", "name": "x", "proto": "xboard", "dir": "/",
                "arg": "--x", "option.Hash": "8", "tc": "5+0", "st": "2", "nodes": "100",
                "depth": "4", "timemargin": "20", "restart": "on", "startup": "30"},
    "-openings": {"order": "random", "plies": "4", "start": "2",
                  "policy": "round"},
    "-draw": {"movenumber": "30", "movecount": "4", "score": "8"},
    "-resign": {"movecount": "3", "score": "700", "twosided": "true"},
    "-sprt": {"alpha": "0.1", "beta": "0.1", "model": "logistic"},
    "-scale-tc": {"nodes": "4662986", "engine": "b", "maxfactor": "2", "bench": "bench 8"},
}
REQUIRED = {  # the keys each flag needs besides the one under test
    "-engine": ["cmd=" + sys.executable, "tc=1"],
    "-openings": [f"file={EPD}"],
    "-draw": [],
    "-resign": [],
    "-sprt": ["elo0=0", "elo1=5"],
    "-scale-tc": ["nps=1000"],
}


@pytest.mark.parametrize("flag,key", [(f, k) for f, ks in KEYS.items() for k in ks])
def test_each_key_changes_the_settings(tmp_path, base, flag, key):
    extra = ["-dask", "tcp://127.0.0.1:8786"] if flag == "-scale-tc" else []
    req = [w for w in REQUIRED[flag] if key == "cmd" or not w.startswith(key + "=")]
    if flag == "-engine" and key == "st":  # st= and tc= exclude each other
        base = [w if w != "tc=10+0.1" else "st=1" for w in base]
        req = ["cmd=" + sys.executable]
    without = base + extra + [flag, *req]
    with_key = base + extra + [flag, *req, f"{key}={KEYS[flag][key]}"]
    assert settings(with_key) != settings(without)


def test_openings_format_is_used(tmp_path, base):  # format=pgn reads the EPD file as PGN
    with pytest.raises(UsageError) as e:
        prepare(base + ["-openings", f"file={EPD}", "format=pgn"])
    assert "-openings" in str(e.value)


def test_resume_reads_a_stored_run(tmp_path, base):
    done = stored_run(tmp_path, base)
    plan = prepare(["-resume", done])
    assert plan.resume and plan.rundir == done and plan.config.engines[0].nodes == 1


def test_compliance_runs_the_check(capsys):
    code = cli.main(["-compliance", sys.executable, f"arg={BROKEN}", "arg=--fault=nouciok",
                     "startup=0.5"])
    out = capsys.readouterr().out
    assert code == 1 and "FAIL step  1" in out
