"""Scale-out: game pairs played as tasks on a Dask distributed cluster.

Each worker thread keeps its own engine processes between tasks. With ``-scale-tc``
each worker first runs the engine's bench and plays with its clock scaled (or is
refused), its pairs pinned to it. The client
commits every returned game to the run store before counting it, exactly as
local workers do; a pair lost with a worker is simply played again on resume.
"""

from __future__ import annotations

import asyncio
import itertools
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


def play_pair_task(cfg_dict: dict, pair, opening, skip, env: dict, factor: float = 1.0) -> dict:
    """Dask task: play the games of ``pair`` not in ``skip``; returns the store rows.

    ``factor`` (``-scale-tc``) scales the engines' clocks for this worker's speed."""
    if factor != 1.0:
        from .speed import scale_engine

        cfg_dict = {**cfg_dict, "engines": [scale_engine(e, factor)
                                            for e in cfg_dict["engines"]]}
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


def bench_task(engine: dict, words: list[str], env: dict):
    """Run on a worker (``Client.run``): the engine's bench there, or why it failed."""
    from .engine import EngineConfig
    from .speed import run_bench

    try:
        return run_bench(EngineConfig.from_dict(engine), words, env)
    except RuntimeError as e:
        return str(e)


def measure_workers(runner, client, cfg_dict: dict, env: dict,
                    workers: list[str] | None = None) -> dict[str, float]:
    """-scale-tc: the clock factor of each worker in ``workers`` (all when None) that may
    play; refused workers are reported and left out."""
    from .speed import ScaleConfig, judge

    ref = ScaleConfig(**runner.cfg.scale_tc)
    engine = cfg_dict["engines"][ref.engine]
    results = client.run(bench_task, engine, ref.bench, env, workers=workers)
    factors: dict[str, float] = {}
    report = getattr(runner, "scale_report", None) or {}
    for addr in sorted(results):
        res = results[addr]
        if isinstance(res, str):
            reason, entry = res, {"refused": res}
        else:
            nodes, nps = res
            factor, reason = judge(nodes, nps, ref)
            entry = {"nodes": nodes, "nps": nps, "factor": factor}
            if reason is None:
                factors[addr] = factor
            else:
                entry["refused"] = reason
        report[addr] = entry
        if "refused" in entry:
            print(f"Worker {addr}: refused: {entry['refused']}", file=runner.out)
        else:
            print(f"Worker {addr}: bench {entry['nodes']} nodes, {entry['nps']} nps, "
                  f"time control x {entry['factor']:.2f}", file=runner.out)
    runner.scale_report = report
    runner.out.flush()
    return factors


WATCH_SECONDS = 5.0  # how often the client looks for workers that joined or left


def run_pairs(runner) -> None:
    """Play ``runner.pending`` on the scheduler at ``runner.cfg.dask``.

    The cluster may change under a run, as fishtest's and OpenBench's fleets do: every few
    seconds the client looks again, gives a worker that joined its share of pairs (after
    its bench, with ``-scale-tc``) and plays again elsewhere the pairs pinned to a worker
    that left (Dask itself moves the unpinned ones)."""
    from distributed import Client, wait

    cfg = runner.cfg
    cfg_dict = cfg.to_dict()
    cfg_dict["dask"] = None
    cfg_dict["log"] = None  # the log file is the client's
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    try:
        client = Client(cfg.dask, timeout="20s")
    except (OSError, TimeoutError) as e:
        runner._fail(f"-dask {cfg.dask}: cannot reach the scheduler: {e}")
        return
    try:
        scaled = cfg.scale_tc is not None
        factors: dict[str, float] = {}  # -scale-tc: the workers that may play
        measured: set[str] = set()  # -scale-tc: benched, whether refused or not
        pending = iter(runner.pending)
        again: list = []  # pairs whose worker left before they were played
        active: dict = {}  # future -> (pair, the worker it is pinned to or None)
        runner.workers_seen = {}  # worker address -> pairs it played

        def lost(e: Exception) -> str:
            return (f"-dask {cfg.dask}: lost the scheduler ({type(e).__name__}); the games "
                    f"played are stored: -resume {runner.rundir} plays the rest (with "
                    f"-dask ADDRESS should the scheduler come back elsewhere)")
        serial = itertools.count()  # a pair played again is a new task

        def submit(worker: str | None) -> bool:
            if runner.stop.is_set():
                return False
            pair = again.pop(0) if again else next(pending, None)
            if pair is None:
                return False
            extra = {}
            factor = 1.0
            if worker is not None:  # -scale-tc: the pair stays on the worker it was sized for
                extra = {"workers": [worker], "allow_other_workers": False}
                factor = factors[worker]
            fut = client.submit(
                play_pair_task,
                cfg_dict,
                pair,
                runner.openings[pair.opening_k],
                sorted(runner.done.get(pair.pair_id, ())),
                env,
                factor,
                pure=False,
                key=f"wasp-pair-{pair.pair_id}-{os.getpid()}-{id(runner)}-{next(serial)}",
                **extra,
            )
            active[fut] = (pair, worker)
            return True

        def top_up() -> None:
            """Fill every worker's threads; bench newcomers; requeue a leaver's pairs."""
            nthreads = client.nthreads()
            if not scaled:
                threads = sum(nthreads.values()) or 1
                slots = max(cfg.concurrency, threads) if cfg.concurrency > 1 else threads
                while len(active) < slots and submit(None):
                    pass
                return
            new = [a for a in nthreads if a not in measured]
            if new:
                measured.update(new)
                factors.update(measure_workers(runner, client, cfg_dict, env, new))
            for fut, (pair, worker) in list(active.items()):
                if worker not in nthreads:  # the worker left with this pair unplayed
                    del active[fut]
                    fut.cancel()
                    again.append(pair)
            for addr in [a for a in factors if a not in nthreads]:
                print(f"Worker {addr}: left; its pairs are played elsewhere", file=runner.out)
                del factors[addr]
                measured.discard(addr)  # benched again should it come back
            for addr in factors:
                mine = sum(1 for _, w in active.values() if w == addr)
                while mine < nthreads.get(addr, 1) and submit(addr):
                    mine += 1

        try:
            top_up()
        except Exception as e:  # the scheduler went away between Client() and now
            runner._fail(lost(e))
            return
        if scaled and not factors:
            runner._fail("-scale-tc: every worker was refused (see above)")
            return
        while active:
            try:
                done = wait(list(active), timeout=WATCH_SECONDS,
                            return_when="FIRST_COMPLETED").done
            except (TimeoutError, asyncio.TimeoutError):  # the same class from Python 3.11
                done = ()
            except Exception as e:  # the connection to the scheduler is lost
                if client.status == "running":
                    raise
                runner._fail(lost(e))
                return
            for fut in done:
                if active.pop(fut, None) is None:
                    continue
                try:
                    res = fut.result()
                except Exception as e:
                    if client.status != "running":  # lost after wait() saw the task done
                        runner._fail(lost(e))
                        return
                    runner._fail("dask task failed:\n" + traceback.format_exc())
                    continue
                seen = runner.workers_seen
                seen[res["worker"]] = seen.get(res["worker"], 0) + 1
                for row in res["rows"]:
                    runner.commit(row)
            try:
                top_up()
            except Exception as e:
                if client.status == "running":
                    raise
                runner._fail(lost(e))
                return
        if scaled and (again or next(pending, None) is not None) and not runner.stop.is_set():
            runner._fail("-scale-tc: every worker that could play has left; "
                         "run -resume when workers are back")
    finally:
        client.close()
