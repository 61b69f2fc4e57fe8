"""wasp.background: an engine's kernels loaded from the cache, or compiled in a child process
while the engine plays on, with news of how far."""

import os
import signal
import subprocess
import sys
import time

import pytest

from wasp import background, warmup

CHILD = """
import sys, time
from pathlib import Path
here = Path(sys.argv[1])
print("wasp-warmup compiling 0 bitboards._steps", flush=True)
print("wasp-warmup compiling 7 search._search", flush=True)
while not (here / "go").exists():
    time.sleep(0.01)
"""


@pytest.fixture
def fresh(monkeypatch):
    """The module's state as in a new engine process."""
    for name, value in (("_state", {}), ("_queue", []), ("_progress", {}), ("_thread", None),
                        ("_said", 0.0), ("_guessed", set())):
        monkeypatch.setattr(background, name, value)


def _until(condition):
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_cold_group_compiles_in_a_child_and_then_loads_here(fresh, monkeypatch, tmp_path,
                                                              capsys):
    loads = []

    def load(kernels, progress=None):
        loads.append((kernels, getattr(warmup._local, "only_cached", False)))
        if len(loads) == 1:
            raise warmup.NotCached("search._search")

    (tmp_path / "child.py").write_text(CHILD)
    monkeypatch.setattr(warmup, "warmup", load)
    monkeypatch.setattr(warmup, "child_command", lambda group, report=False: [
        sys.executable, str(tmp_path / "child.py"), str(tmp_path)])
    background.request("net")
    _until(lambda: "7 of about 55" in (background.status("net") or ""))
    assert background.state("net") == "compiling"
    assert background.status("net").startswith(
        "kernels compiling (net search: 7 of about 55 compiled, now search._search, ")
    assert background.wait_loaded("net") is False  # a compile is not waited for
    (tmp_path / "go").touch()
    _until(lambda: background.ready("net"))
    assert background.status("net") is None
    assert loads == [("net", True), ("net", False)]  # only from the cache, then what it saved
    err = capsys.readouterr().err
    assert "wasp: compiling the net search's kernels in the background" in err
    assert "wasp: the net search's kernels are ready after" in err


def test_a_warm_group_loads_here_and_is_waited_for(fresh, monkeypatch):
    loads = []
    monkeypatch.setattr(warmup, "warmup", lambda kernels, progress=None: loads.append(kernels))
    monkeypatch.setattr(warmup, "child_command", lambda group, report=False: pytest.fail(
        "no child for a warm cache"))
    background.request("hand")
    assert background.wait_loaded("hand") is True
    assert loads == ["hand"] and background.status("hand") is None


def test_a_name_that_is_no_group_is_refused(fresh):
    with pytest.raises(ValueError, match="kernels must be one of"):
        background.request("everything")


def test_a_guessed_group_is_loaded_if_cached_but_compiled_only_when_asked_for(fresh, monkeypatch,
                                                                            tmp_path):
    def load(kernels, progress=None):
        if getattr(warmup._local, "only_cached", False):
            raise warmup.NotCached("search._search")

    children = []
    (tmp_path / "child.py").write_text("")
    monkeypatch.setattr(warmup, "warmup", load)
    monkeypatch.setattr(warmup, "child_command", lambda group, report=False: children.append(
        group) or [sys.executable, str(tmp_path / "child.py")])
    background.request("net", guess=True)  # the process starts: the default evaluation
    _until(lambda: background.state("net") == "cold")
    background.request("hand")  # the engine plays with the hand-written evaluation
    _until(lambda: background.ready("hand"))
    assert children == ["hand"] and background.state("net") == "cold"
    background.request("net")  # now it needs the net
    _until(lambda: background.ready("net"))
    assert children == ["hand", "net"]


def test_wait_ready_waits_through_a_compile_and_says_whether_it_ended_ready(fresh):
    import threading

    background._state["net"] = "compiling"
    assert background.wait_loaded("net") is False  # a compile is not waited for here
    threading.Timer(0.2, background._set, ("net", "ready")).start()
    assert background.wait_ready("net") is True
    background._state["hand"] = "compiling"
    threading.Timer(0.2, background._set, ("hand", "failed")).start()
    assert background.wait_ready("hand") is False


def _children(pid):
    """The pids of the live processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] not in "ZX":
                found.append(int(entry))
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("end", ["quit", "SIGKILL"])
def test_the_compile_child_ends_with_its_engine(tmp_path, end):
    """An engine on an empty cache starts its compile child; the engine quits (or is killed)
    mid-compile, and the child is gone soon after, not compiling on for no one."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    engine = subprocess.Popen([sys.executable, "-m", "wasp.cli"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=env)
    try:
        engine.stdin.write("uci\nposition startpos\ngo wtime 600000 btime 600000\n")
        engine.stdin.flush()
        for line in engine.stderr:  # the engine's word that its child compiles
            if "kernels in the background" in line:
                break
        _until(lambda: _children(engine.pid))
        child = _children(engine.pid)[0]
        assert _alive(child)
        if end == "quit":
            engine.stdin.write("stop\nquit\n")
            engine.stdin.flush()
        else:
            engine.send_signal(signal.SIGKILL)
        engine.wait(timeout=120)
        _until(lambda: not _alive(child))
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
