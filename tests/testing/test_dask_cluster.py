"""Dask as users run it: ``dask scheduler`` and ``dask worker`` started as processes of their
own, the workers from another working directory (they import the project from PYTHONPATH, as
from an install), one of them killed mid-run. Every pair is played once, none is lost."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import testing
from testing.cli import main as match_main
from tests.conftest import ROOT

from .conftest import EPD, fake_engine

distributed = pytest.importorskip("distributed")

DASK = [sys.executable, "-m", "dask"]  # the `dask` command of this Python
SPSA_FAKE = os.path.join(ROOT, "tests", "testing", "fake_engines", "spsa_uci.py")
SPSA_KNOB = os.path.join(ROOT, "tests", "data", "spsa_knob.txt")


class Cluster:
    """A scheduler and its workers, each a process started as a user starts it."""

    def __init__(self, where):
        self.where = where
        old = os.environ.get("PYTHONPATH")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + old if old else "")}
        info = where / "scheduler.json"
        self.scheduler = self._start("scheduler", [
            *DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
            "--dashboard-address", ":0", "--scheduler-file", str(info)])
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            assert self.scheduler.poll() is None, self.log("scheduler")
            time.sleep(0.1)
        self.address = json.loads(info.read_text())["address"]
        self.workers: dict[str, subprocess.Popen] = {}

    def _start(self, name, argv):
        cwd = self.where / name  # each process in a working directory of its own
        cwd.mkdir()
        log = open(self.where / f"{name}.log", "w")
        return subprocess.Popen(argv, cwd=cwd, env=self.env, stdout=log, stderr=log,
                                start_new_session=True)

    def log(self, name) -> str:
        return (self.where / f"{name}.log").read_text()

    def add_workers(self, *names):
        for name in names:
            self.workers[name] = self._start(name, [
                *DASK, "worker", self.address, "--name", name, "--nthreads", "1",
                "--no-nanny", "--no-dashboard", "--death-timeout", "60"])
        with distributed.Client(self.address, timeout="30s") as client:
            client.wait_for_workers(len(self.workers), timeout=60)

    def kill(self, name):
        """SIGKILL a worker: no goodbye to the scheduler, its task in mid-game."""
        os.killpg(self.workers[name].pid, signal.SIGKILL)
        self.workers.pop(name).wait()

    def close(self):
        for p in [*self.workers.values(), self.scheduler]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in [*self.workers.values(), self.scheduler]:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.fixture
def cluster(tmp_path):
    where = tmp_path / "cluster"
    where.mkdir()
    c = Cluster(where)
    try:
        c.add_workers("w1", "w2")
        yield c
    finally:
        c.close()


def kill_when(cluster, name, ready):
    """Kill worker `name` from another thread once `ready()` (the run goes on meanwhile)."""
    def watch():
        deadline = time.monotonic() + 120
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        cluster.kill(name)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def stored(rundir) -> int:
    try:
        return len(testing.results(rundir))
    except Exception:  # the store is not there yet
        return 0


@pytest.mark.timeout(300)
def test_a_match_on_separate_scheduler_and_worker_processes_survives_a_killed_worker(
        cluster, tmp_path, capsys):
    rd = str(tmp_path / "m")
    slow = ["--movetime", "0.05"]  # a killed worker has a game in its hands
    argv = fake_engine("good", *slow) + fake_engine("random", "--style", "random", *slow) + [
        "-each", "tc=30+1", "-maxmoves", "16", "-ratinginterval", "0", "-rounds", "8",
        "-repeat", "-openings", f"file={EPD}", "order=random", "-srand", "3", "-progress",
        "off", "-dask", cluster.address, "-dir", rd]
    watcher = kill_when(cluster, "w1", lambda: stored(rd) >= 4)
    assert match_main(argv) == 0, capsys.readouterr().err
    watcher.join(10)
    assert "w1" not in cluster.workers  # it was killed mid-run, the run went on without it
    df = testing.results(rd)
    games = sorted(zip(df["pair_id"], df["game_in_pair"], strict=True))
    assert games == [(p, g) for p in range(8) for g in range(2)]  # each once, none lost
    with open(os.path.join(rd, "summary.json")) as f:
        summary = json.load(f)
    assert sum(summary["workers"].values()) == 8 and summary["games_total"] == 16


@pytest.mark.timeout(300)
def test_an_spsa_run_on_the_cluster_keeps_the_local_path_through_a_killed_worker(
        cluster, tmp_path):
    from tuner.cli import main as tune_main

    args = [SPSA_KNOB, "-iterations", 16, "-pairs", 2, "-in-flight", 2,
            "-engine", f"cmd={sys.executable}", f"arg={SPSA_FAKE}", "name=fake",
            "-each", "nodes=1", "-resign", "movecount=1", "score=300", "-maxmoves", 60,
            "-openings", f"file={EPD}", "order=random", "-progress", "off", "-srand", 6]
    args = [str(a) for a in args]
    csv = tmp_path / "d" / "params.csv"
    kill_when(cluster, "w2", lambda: csv.exists() and len(csv.read_text().splitlines()) >= 4)
    assert tune_main(["spsa", *args, "-dask", cluster.address, "-dir", str(tmp_path / "d")]) == 0
    assert "w2" not in cluster.workers
    df = testing.results(str(tmp_path / "d"))
    games = sorted(zip(df["pair_id"], df["game_in_pair"], strict=True))
    assert games == [(p, g) for p in range(32) for g in range(2)]  # each once, none lost
    assert tune_main(["spsa", *args, "-concurrency", "2", "-dir", str(tmp_path / "l")]) == 0
    assert csv.read_text() == (tmp_path / "l" / "params.csv").read_text()
