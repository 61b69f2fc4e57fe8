"""The game-pair executor: the one player, per-pair engine options, local processes, and the
lost-scheduler handling (Dask clusters of separate processes: test_dask_cluster.py)."""

import sys
from concurrent.futures import CancelledError
from types import SimpleNamespace

import pytest

from testing.config import MatchConfig
from testing.engine import EngineConfig
from testing.executor import DaskExecutor, LocalExecutor, PairTask, SchedulerLost
from testing.openings import OpeningSequence
from testing.schedule import make_schedule

from .conftest import HERE

SPSA_FAKE = f"{HERE}/fake_engines/spsa_uci.py"


def knob_config(**kw) -> MatchConfig:
    engines = [EngineConfig(cmd=sys.executable, name=n, args=[SPSA_FAKE], nodes=1)
               for n in ("plus", "minus")]
    return MatchConfig(engines=engines, games=2, repeat=True, maxmoves=40, **kw).validate()


def tasks(cfg, n, options=None):
    openings = OpeningSequence(None, "sequential", 1, 0)
    pairs = make_schedule(2, "roundrobin", n, 2, True)
    return [PairTask(p, openings[p.opening_k], frozenset(), options) for p in pairs]


def play_all(ex, todo):
    for t in todo:
        ex.submit(t)
    done = []
    while ex.in_flight():
        done += ex.wait()
    ex.close()
    return done


def test_local_workers_play_every_pair_once_with_the_options_each_pair_gives():
    cfg = knob_config()
    far = ({"Knob": "42"}, {"Knob": "100"})  # plus plays well, minus at random
    done = play_all(LocalExecutor(cfg, 2), tasks(cfg, 3, far))
    rows = [r for d in done for r in d.rows]
    assert sorted((r["pair_id"], r["game_in_pair"]) for r in rows) == [
        (p, g) for p in range(3) for g in range(2)]
    assert all(d.error is None for d in done)
    same = play_all(LocalExecutor(cfg, 1), tasks(cfg, 3, far))
    key = sorted((r["pair_id"], r["game_in_pair"], r["moves"]) for d in same for r in d.rows)
    assert key == sorted((r["pair_id"], r["game_in_pair"], r["moves"]) for r in rows)
    other = play_all(LocalExecutor(cfg, 1), tasks(cfg, 3, ({"Knob": "100"},) * 2))
    assert [r["moves"] for d in other for r in d.rows] != [r["moves"] for r in rows]


def test_an_option_the_engine_lacks_fails_the_pair_with_its_name():
    cfg = knob_config()
    done = play_all(LocalExecutor(cfg, 1), tasks(cfg, 1, ({"Nope": "1"}, {"Nope": "1"})))
    assert done[0].rows == [] and "has no option 'Nope'" in done[0].error


def test_a_skipped_game_is_not_played_again():
    cfg = knob_config()
    t = tasks(cfg, 1)[0]
    done = play_all(LocalExecutor(cfg, 1), [PairTask(t.pair, t.opening, frozenset({0}))])
    assert [r["game_in_pair"] for r in done[0].rows] == [1]


class CancelledTask:
    def result(self):
        raise CancelledError("scheduler-connection-lost")


def test_a_task_cancelled_by_a_lost_scheduler_after_wait_ends_the_run_as_a_lost_scheduler():
    """The race CI met: wait() saw the pair done, then the connection went and Dask cancelled
    the finished task; reading it must say 'lost the scheduler', not fail as a pair."""
    ex = DaskExecutor.__new__(DaskExecutor)
    ex.address, ex.resume_command = "tcp://127.0.0.1:1", "-resume RUNDIR"
    ex.client = SimpleNamespace(status="connecting")
    ex.queue, ex.workers_seen = [], {}
    fut = CancelledTask()
    ex.active = {fut: (None, None)}
    with pytest.raises(SchedulerLost, match="lost the scheduler.*-resume RUNDIR"):
        ex._result(fut)
    with pytest.raises(SchedulerLost, match="lost the scheduler"):
        ex.submit(None)
    ex.client = SimpleNamespace(status="running")  # a connected client: the pair failed
    ex.active = {fut: (None, None)}
    done = ex._result(fut)
    assert done.rows == [] and "dask task failed" in done.error
