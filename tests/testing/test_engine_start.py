"""Engine start failures say what to try: `wasp warmup` and startup= for a Wasp-Py engine with
a cold cache, proto=xboard for an xboard engine started as UCI, and the time limit."""

import os
import subprocess
import sys

import pytest

from testing.engine import EngineConfig, make_engine
from testing.process import EngineCrashed, EngineTimeout
from testing.timecontrol import TimeControl

from .conftest import ROOT, fake_engine

TC = TimeControl.parse("1+0")


def _start_error(cfg):
    e = make_engine(cfg)
    try:
        with pytest.raises((EngineCrashed, EngineTimeout)) as info:
            e.start()
    finally:
        e.kill()
    return str(info.value)


def test_an_engine_that_never_answers_names_the_limit_and_what_to_try():
    msg = _start_error(EngineConfig(cmd="/bin/sleep", name="sleeper", args=["100"], tc=TC,
                                    startup=0.3))
    assert "sleeper: no `uciok` after `uci` within 0.3 s (startup=0.3)" in msg
    assert "startup=SECONDS" in msg and "proto=xboard" in msg


def test_an_xboard_engine_started_as_uci_is_told_to_use_proto_xboard():
    script = "import sys; print('tellics say Fake-Max', flush=True); sys.stdin.readline()"
    msg = _start_error(EngineConfig(cmd=sys.executable, name="fm", args=["-c", script], tc=TC,
                                    startup=5))
    assert "closed its output" in msg
    assert "'tellics say Fake-Max') looks like an xboard engine: give proto=xboard" in msg


def test_fairymax_as_uci_gets_the_xboard_hint(fairymax):
    msg = _start_error(EngineConfig(cmd=fairymax, name="fairymax", tc=TC, startup=1))
    assert "give proto=xboard" in msg


def test_wasp_match_with_a_wasp_engine_slow_to_start_hints_at_warmup_and_startup(tmp_path):
    """A Wasp-Py engine that does not answer in time (one that compiles before it answers):
    with startup=1 the run stops at once, and the error names `wasp warmup`, startup= and the
    limit. (Today's engine answers at once while it compiles: tests/wasp/test_uci.py.)"""
    slow = tmp_path / "wasp"
    slow.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    slow.chmod(0o755)
    argv = [sys.executable, "-m", "testing.cli", "-engine", f"cmd={slow}", "name=cold",
            "startup=1", *fake_engine("fake"), "-each", "nodes=100",
            "-rundir", str(tmp_path / "run")]
    r = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "engine 'cold' failed to start" in r.stderr
    assert "within 1 s (startup=1)" in r.stderr
    assert "wasp warmup" in r.stderr and "startup=300" in r.stderr
