"""testing.runlock: one process per run directory, and a lock that dies with its process."""

import os
import signal
import subprocess
import sys

import pytest

from testing.runlock import LOCK_NAME, RunBusy, RunLock, is_running
from tests.testing.conftest import EPD, fake_engine

HOLD = ("import sys, time; sys.path.insert(0, sys.argv[2]); from testing.runlock import RunLock;"
        "lock = RunLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)")


def _holder(path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), root],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path):
    proc = _holder(tmp_path)
    try:
        assert is_running(str(tmp_path))
        with pytest.raises(RunBusy, match=f"pid {proc.pid}"):
            RunLock(str(tmp_path)).acquire()
    finally:
        proc.kill()
        proc.wait()


def test_sigkill_releases_the_lock(tmp_path):
    proc = _holder(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert os.path.exists(tmp_path / LOCK_NAME)  # the file stays; the lock does not
    assert not is_running(str(tmp_path))
    with RunLock(str(tmp_path)):
        assert is_running(str(tmp_path))
    assert not is_running(str(tmp_path))


def test_a_directory_never_locked_is_not_running(tmp_path):
    assert not is_running(str(tmp_path))
    assert not os.path.exists(tmp_path / LOCK_NAME)  # the probe writes nothing


def test_wasp_match_refuses_to_resume_a_run_still_playing(tmp_path, capsys):
    """A second `-resume` of a live run exits 1 and names the holder; no game is touched."""
    from testing import cli

    run = tmp_path / "r"
    argv = [*fake_engine("a"), *fake_engine("b", "--style", "random"), "-each", "nodes=1",
            "-games", "2", "-openings", f"file={EPD}", "-rundir", str(run)]
    assert cli.main(argv) == 0
    capsys.readouterr()
    proc = _holder(run)
    try:
        assert cli.main(["-resume", str(run)]) == 1
        assert f"pid {proc.pid}" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait()
    assert cli.main(["-resume", str(run)]) == 0  # once it is gone, resuming works
