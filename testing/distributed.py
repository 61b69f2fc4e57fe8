"""Scale-out: game pairs played as tasks on a Dask distributed cluster.

Each worker thread keeps its own engine processes between tasks. The client
commits every returned game to the run store before counting it, exactly as
local workers do; a pair lost with a worker is simply played again on resume.
"""

from __future__ import annotations

import json
import os
import threading
import traceback

from .config import MatchConfig
from .worker import EngineSet, play_pair

_local = threading.local()
PASSED_ENV = ("NUMBA_CACHE_DIR",)


def _engine_set(cfg: MatchConfig, key: str, env: dict) -> EngineSet:
    sets = getattr(_local, "sets", None)
    if sets is None:
        sets = _local.sets = {}
    full_key = key + json.dumps(env, sort_keys=True)
    es = sets.get(full_key)
    if es is None:
        es = sets[full_key] = EngineSet(cfg, env=env)
    return es


def play_pair_task(cfg_dict: dict, pair, opening, skip, env: dict) -> dict:
    """Dask task: play the games of ``pair`` not in ``skip``; returns the store rows."""
    cfg = MatchConfig.from_dict(cfg_dict)
    key = json.dumps([cfg_dict["engines"], cfg.ponder, cfg.recover, cfg.variant], sort_keys=True)
    es = _engine_set(cfg, key, env)
    rows = play_pair(cfg, pair, opening, es, skip=set(skip))
    try:
        from distributed import get_worker

        where = get_worker().address
    except Exception:  # pragma: no cover - run outside a worker
        where = "local"
    return {"rows": rows, "worker": where, "pid": os.getpid()}


def run_pairs(runner) -> None:
    """Play ``runner.pending`` on the scheduler at ``runner.cfg.dask``."""
    from distributed import Client, as_completed

    cfg = runner.cfg
    cfg_dict = cfg.to_dict()
    cfg_dict["dask"] = None
    cfg_dict["log"] = None  # the log file is the client's
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    client = Client(cfg.dask, timeout="20s")
    try:
        threads = sum(client.nthreads().values()) or 1
        slots = max(cfg.concurrency, threads) if cfg.concurrency > 1 else threads
        pending = iter(runner.pending)
        ac = as_completed()
        inflight = 0

        def submit() -> bool:
            if runner.stop.is_set():
                return False
            pair = next(pending, None)
            if pair is None:
                return False
            fut = client.submit(
                play_pair_task,
                cfg_dict,
                pair,
                runner.openings[pair.opening_k],
                sorted(runner.done.get(pair.pair_id, ())),
                env,
                pure=False,
                key=f"wasp-pair-{pair.pair_id}-{os.getpid()}-{id(runner)}",
            )
            ac.add(fut)
            return True

        for _ in range(slots):
            if submit():
                inflight += 1
        runner.workers_seen = set()
        for fut in ac:
            inflight -= 1
            try:
                res = fut.result()
            except Exception:
                runner._fail("dask task failed:\n" + traceback.format_exc())
                continue
            runner.workers_seen.add(res["worker"])
            for row in res["rows"]:
                runner.commit(row)
            if submit():
                inflight += 1
    finally:
        client.close()
