"""`wasp-match -compliance`: real engines pass, each broken test engine fails with its reason."""

import os
import sys

import chess
import pytest

from testing.cli import main
from testing.compliance import info_problem, option_problem

from .conftest import HERE

BROKEN = os.path.join(HERE, "fake_engines", "broken_uci.py")


def run(capsys, argv):
    code = main(["-compliance", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_correct_engine_passes_every_step(capsys):
    code, out, err = run(capsys, [sys.executable, f"arg={BROKEN}", "arg=--fault=none"])
    assert code == 0, out + err
    assert "FAIL" not in out and "0 failed" in out and out.count("PASS step") >= 20


@pytest.mark.parametrize("fault,step,reason", [
    ("nouciok", "`uci` answered by `uciok`", "no `uciok` within"),
    ("noreadyok", "`isready`", "no `readyok`"),
    ("illegal", "legal bestmove", "is not legal in"),
    ("badinfo", "valid info lines", "malformed info line: score needs cp N or mate N"),
    ("badpv", "valid info lines", "pv move 'e2e5' is not legal"),
    ("nostop", "`stop` answered", "ignores stop"),
    ("badoption", "option declarations", "spin default 64 outside min 1 .. max 16"),
])
def test_each_broken_engine_fails_with_its_reason(capsys, fault, step, reason):
    code, out, err = run(capsys, [sys.executable, f"arg={BROKEN}", f"arg=--fault={fault}",
                                  "startup=2"])
    assert code == 1
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert step in fails[0] and reason in fails[0], out
    # every failure is the engine's own fault, never a step reading an earlier step's answer
    assert all(reason in ln for ln in fails), out
    assert "Not compliant: " in err


def test_an_engine_that_drops_answers_to_piped_scripts_passes_with_warnings(capsys):
    code, out, err = run(capsys, [sys.executable, f"arg={BROKEN}", "arg=--fault=drops"])
    assert code == 0, out + err
    warns = [ln for ln in out.splitlines() if ln.startswith("WARN")]
    # `go infinite` then `stop` is answered; the other five scripts lose answers
    assert len(warns) == 5 and all("piped script" in ln for ln in warns), out
    assert "0 bestmove for 20 go" in out and "with 5 warnings" in out


def test_an_engine_that_ignores_a_limit_and_keeps_talking_fails_that_step_only(capsys):
    """The step's time counts in all, not per line: an engine that ignores `go nodes` and
    sends an info line every 0.2 s fails that step (then gets a `stop`) and the rest run."""
    code, out, err = run(capsys, [sys.executable, f"arg={BROKEN}", "arg=--fault=nonodes"])
    assert code == 1, out + err
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 1 and "`go nodes 5000`" in fails[0] and "no bestmove within" in fails[0]
    assert "1 failed, 0 skipped" in out


def test_a_failed_handshake_skips_the_rest_at_once_with_a_hint(capsys, fairymax):
    code, out, _ = run(capsys, [fairymax, "startup=1"])  # an xboard engine checked as UCI
    assert code == 1
    assert "try proto=xboard" in out and "1 failed, 27 skipped" in out


def test_the_offending_line_is_shown(capsys):
    code, out, _ = run(capsys, [sys.executable, f"arg={BROKEN}", "arg=--fault=badinfo"])
    assert code == 1
    assert "offending line: 'info depth 1 score cp 12.5 nodes 1 time 0 pv " in out


def test_info_line_syntax_against_python_chess():
    b = chess.Board()
    assert info_problem("info depth 3 seldepth 5 multipv 1 score mate -2 upperbound nodes 9 "
                        "nps 100 hashfull 0 tbhits 0 time 1 pv e2e4 e7e5 g1f3", b) is None
    assert info_problem("info string anything at all 1.5", b) is None
    assert info_problem("info depth 2 currmove e2e4 currmovenumber 1", b) is None
    assert "nps needs an integer" in info_problem("info depth 1 nps 1.5e3", b)
    assert "unknown token 'foo'" in info_problem("info depth 1 foo 3", b)
    assert "pv move 'e2e3' is not legal after e2e4" in \
        info_problem("info depth 2 pv e2e4 e2e3 e7e5", b)  # white moved twice
    assert option_problem("option name Style type combo default Risky var Solid var Risky") \
        is None
    assert "combo default" in option_problem("option name S type combo default X var A")
    assert "check default" in option_problem("option name P type check default yes")


def test_bad_compliance_command_lines_exit_2(capsys):
    assert run(capsys, [])[0] == 2
    code, _, err = run(capsys, ["/nonexistent/engine"])
    assert code == 2 and "not found" in err
    code, _, err = run(capsys, [sys.executable, "tc=10"])
    assert code == 2 and "'tc' does not apply" in err


def test_stockfish_passes(capsys, stockfish):
    code, out, err = run(capsys, [stockfish])
    assert code == 0, out + err


def test_fairymax_passes_as_xboard_engine(capsys, fairymax):
    code, out, err = run(capsys, [fairymax, "proto=xboard"])
    assert code == 0, out + err
    assert "Illegal move" in out


@pytest.mark.parametrize("proto", ["uci", "xboard"])
def test_wasp_passes(capsys, proto):
    code, out, err = run(capsys, [sys.executable, "arg=-m", "arg=wasp.cli", f"proto={proto}",
                                  "startup=300"])
    assert code == 0, out + err
    assert "SKIP" not in out


BROKEN_XBOARD = os.path.join(HERE, "fake_engines", "broken_xboard.py")


@pytest.mark.parametrize("fault,step,reason", [
    ("nodone", "`feature ... done=1`", "no `feature done=1`"),
    ("illegal", "engine plays black", "is not legal in"),
    ("badpost", "thinking output valid", "thinking output should be `ply score time nodes pv`"),
    ("deep", "`sd 3`", "thinking past depth 3"),
    ("noillegal", "answered by `Illegal move`", "no `Illegal move` for e2e5"),
])
def test_each_broken_xboard_engine_fails_with_its_reason(capsys, fault, step, reason):
    code, out, err = run(capsys, [sys.executable, f"arg={BROKEN_XBOARD}",
                                  f"arg=--fault={fault}", "proto=xboard", "startup=3"])
    assert code == 1
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert step in fails[0] and reason in fails[0], out
    assert all(reason in ln for ln in fails), out  # never an earlier step's left-overs


def test_the_sound_xboard_test_engine_passes(capsys):
    code, out, _ = run(capsys, [sys.executable, f"arg={BROKEN_XBOARD}", "arg=--fault=none",
                                "proto=xboard", "startup=3"])
    assert code == 0 and "0 failed" in out, out


def test_uci_option_lines_parse_into_their_fields():
    from testing.uci import parse_option

    o = parse_option("option name Move Overhead type spin default 10 min 0 max 5000")
    assert (o.name, o.type, o.default, o.min, o.max) == ("Move Overhead", "spin", "10", "0",
                                                         "5000")
    assert o.bounds() == (0.0, 5000.0)
    o = parse_option("Style type combo default Very Risky var Solid var Very Risky")
    assert (o.name, o.default, o.vars) == ("Style", "Very Risky", ["Solid", "Very Risky"])
    o = parse_option("option name SyzygyPath type string default <empty>")
    assert o.default == "<empty>" and o.bounds() is None and o.vars == []
    o = parse_option("option name Clear Hash type button")
    assert o.type == "button" and o.default is None
    assert parse_option("option name Broken").type == ""
    assert option_problem("option name Broken") == "no type"
    assert "outside min" in option_problem("option name X type spin default 9 min 0 max 5")
