"""The game-pair executor: `PairTask`s played by local worker processes or as tasks on a Dask
cluster, each task's rows handed back as it ends for the caller to commit.

wasp-match, SPSA and self-play use it alike: the caller submits tasks (with per-pair engine
options if it tunes), waits for finished ones and stores their games; a task is only ever
counted once its rows are back, so a pair lost with a worker or a scheduler is simply played
again (by Dask, or on -resume). Lost schedulers and lost workers are handled here, once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import multiprocessing
import os
import resource
import signal
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_connections

from .config import MatchConfig
from .process import Logger
from .worker import EngineSet, EngineStartError, PairError, PairTask, play_pair

PASSED_ENV = ("NUMBA_CACHE_DIR",)  # the client's environment the engines on workers get
WATCH_SECONDS = 5.0  # how often the Dask client looks at its connection and the workers


class ExecutorError(RuntimeError):
    """The executor cannot go on (the message says why and how to resume)."""


class SchedulerLost(ExecutorError):
    """The Dask scheduler went away: the finished pairs are stored, the rest is not."""


@dataclass
class PairDone:
    """A finished task: its rows (the games played), where it ran, or why it failed."""

    task: PairTask
    rows: list[dict]
    worker: str = "local"
    error: str | None = None


def make_executor(cfg: MatchConfig, workers: int | None = None, *, out=None,
                  resume_command: str = "-resume DIR"):
    """A `DaskExecutor` when ``cfg.dask`` names a scheduler, else a `LocalExecutor` of
    `workers` processes (default ``cfg.concurrency``). `resume_command` is what the user
    runs to go on after a lost scheduler."""
    if cfg.dask:
        return DaskExecutor(cfg, out=out, resume_command=resume_command)
    return LocalExecutor(cfg, workers or cfg.concurrency)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (its workers count their own)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# -- local: forked worker processes ----------------------------------------------------------


class LocalExecutor:
    """Tasks played by `workers` forked processes, one task at a time each, every process with
    its own engines (kept between tasks).

    Processes (not threads) keep each game's reads of its engines' answers free of the GIL
    held by other games, the store or the statistics. With ``cfg.affinity`` each running
    task's engines are pinned to a core set of their own."""

    def __init__(self, cfg: MatchConfig, workers: int):
        self.cfg = cfg
        self.worker_cpu: dict[int, float] = {}  # CPU of each worker process
        self.queue: list[PairTask] = []
        ctx = multiprocessing.get_context("fork")
        self.procs = []
        for i in range(max(1, workers)):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_process_worker, args=(child, cfg, os.getpid()),
                               name=f"wasp-worker-{i}")
            proc.start()
            child.close()
            self.procs.append((proc, parent))
        self.idle = [conn for _, conn in self.procs]
        self.busy: dict = {}  # connection -> (task, its cores or None)
        self.free_cores = None  # -use-affinity: core sets not in use by a running task
        if cfg.affinity:
            from .affinity import slots

            self.free_cores = slots(cfg.affinity, len(self.procs))

    def slots(self) -> int:
        return len(self.procs)

    def in_flight(self) -> int:
        return len(self.busy) + len(self.queue)

    def submit(self, task: PairTask) -> None:
        self.queue.append(task)
        self._dispatch()

    def _dispatch(self) -> None:
        while self.queue and self.idle:
            conn = self.idle.pop(0)
            task = self.queue.pop(0)
            cores = self.free_cores.pop(0) if self.free_cores is not None else None
            conn.send((task, cores))
            self.busy[conn] = (task, cores)

    def wait(self, timeout: float | None = None) -> list[PairDone]:
        """The tasks that ended (at least one, unless `timeout` passes first)."""
        if not self.busy:
            if self.queue:  # nobody left to play them
                raise ExecutorError("every worker process died")
            return []
        done = []
        for conn in wait_connections(list(self.busy), timeout):
            task, cores = self.busy.pop(conn)
            if cores is not None:
                self.free_cores.append(cores)  # the task's cores go back to the pool
            try:
                kind, payload, cpu = conn.recv()
            except (EOFError, OSError):
                done.append(PairDone(task, [], error="a worker process died"))
                continue
            self.worker_cpu[id(conn)] = cpu
            self.idle.append(conn)
            if kind == "rows":
                done.append(PairDone(task, payload))
            else:
                done.append(PairDone(task, [], error=payload))
        self._dispatch()
        return done

    def close(self, kill: bool = False) -> None:
        """End the workers (and their engines); `kill` ends the tasks in flight, unstored."""
        self.queue.clear()
        for proc, conn in self.procs:
            if conn in self.busy:
                if kill:
                    proc.kill()
                else:  # interrupted mid-game: the game is dropped, the engines closed
                    proc.terminate()
                continue
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for proc, conn in self.procs:
            try:
                if conn not in self.busy and conn.poll(10):
                    kind, payload, cpu = conn.recv()
                    self.worker_cpu[id(conn)] = cpu
            except (EOFError, OSError):
                pass
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join(5)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """SIGTERM (kill, a batch system's time limit) stops a run as Ctrl-C does: the games in
    progress are dropped, the stored ones kept for -resume, and no engine is left running."""
    signal.signal(signal.SIGTERM, _interrupt)


def _die_with_parent(parent_pid: int) -> None:
    """A worker ends (closing its engines, which run in sessions of their own) when the
    process that started it is killed, even by SIGKILL, instead of playing on a game nobody
    will store: Linux sends it SIGTERM when its parent dies, and SIGTERM unwinds like Ctrl-C."""
    stop_on_sigterm()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the worker ends after its task
        pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        raise KeyboardInterrupt


def _process_worker(conn, cfg: MatchConfig, parent_pid: int = 0) -> None:
    """A forked worker: plays the tasks it is sent, answers (kind, rows|error, cpu)."""
    try:
        if parent_pid:
            _die_with_parent(parent_pid)
        _serve(conn, cfg)
    except KeyboardInterrupt:
        pass
    finally:
        conn.close()
        os._exit(0)


def _serve(conn, cfg: MatchConfig) -> None:
    logger = Logger(cfg.log) if cfg.log else None
    engines = EngineSet(cfg, logger)
    try:
        while True:
            try:
                item = conn.recv()
            except EOFError:
                break
            if item is None:
                conn.send(("bye", None, cpu_seconds()))
                break
            task, cores = item
            if cores is not None:  # -use-affinity: this task's cores
                engines.pin(cores)
            try:
                conn.send(("rows", play_pair(cfg, task, engines), cpu_seconds()))
            except (EngineStartError, PairError) as e:
                conn.send(("fatal", str(e), cpu_seconds()))
            except Exception:
                conn.send(("fatal", "worker error:\n" + traceback.format_exc(), cpu_seconds()))
    finally:
        engines.close()


# -- Dask: tasks on a distributed cluster ----------------------------------------------------

_local = threading.local()


def _engine_set(cfg: MatchConfig, key: str, env: dict) -> EngineSet:
    """This worker thread's engines for `key` (kept between tasks)."""
    sets = getattr(_local, "sets", None)
    if sets is None:
        sets = _local.sets = {}
    full_key = key + json.dumps(env, sort_keys=True)
    es = sets.get(full_key)
    if es is None:
        es = sets[full_key] = EngineSet(cfg, env=env)
    return es


def play_pair_task(cfg_dict: dict, task: PairTask, env: dict, factor: float = 1.0) -> dict:
    """Dask task: `play_pair` with the worker thread's engines; {"rows", "worker", "pid"} or
    {"error"} when the pair cannot be played. ``factor`` (``-scale-tc``) scales the engines'
    clocks for this worker's speed."""
    if factor != 1.0:
        from .speed import scale_engine

        cfg_dict = {**cfg_dict, "engines": [scale_engine(e, factor)
                                            for e in cfg_dict["engines"]]}
    cfg = MatchConfig.from_dict(cfg_dict)
    key = json.dumps([cfg_dict["engines"], cfg.ponder, cfg.recover, cfg.variant,
                      task.options is not None], sort_keys=True)
    try:
        from distributed import get_worker

        where = get_worker().address
    except Exception:  # pragma: no cover - run outside a worker
        where = "local"
    try:
        rows = play_pair(cfg, task, _engine_set(cfg, key, env))
    except (EngineStartError, PairError) as e:
        return {"error": str(e), "worker": where}
    return {"rows": rows, "worker": where, "pid": os.getpid()}


def bench_task(engine: dict, words: list[str], env: dict):
    """Run on a worker (``Client.run``): the engine's bench there, or why it failed."""
    from .engine import EngineConfig
    from .speed import run_bench

    try:
        return run_bench(EngineConfig.from_dict(engine), words, env)
    except RuntimeError as e:
        return str(e)


class DaskExecutor:
    """Tasks on the Dask scheduler at ``cfg.dask``; each worker thread keeps its engines.

    The cluster may change under a run, as fishtest's and OpenBench's fleets do: Dask itself
    plays again elsewhere a task whose worker died. With ``-scale-tc`` each worker first runs
    the engine's bench and plays with its clock scaled (or is refused), its tasks pinned to
    it: every few seconds the executor looks again, benches a worker that joined and hands a
    leaver's tasks to the others."""

    def __init__(self, cfg: MatchConfig, out=None, resume_command: str = "-resume DIR"):
        from distributed import Client

        self.cfg = cfg
        self.out = out
        self.address = cfg.dask
        self.resume_command = resume_command
        d = cfg.to_dict()
        d["dask"] = d["log"] = None  # the log file is the client's
        self.cfg_dict = d
        self.env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        self.queue: list[PairTask] = []
        self.active: dict = {}  # future -> (task, the worker it is pinned to or None)
        self.workers_seen: dict[str, int] = {}  # worker address -> tasks it played
        self.scale_report: dict | None = None  # -scale-tc: each worker's bench or refusal
        self.factors: dict[str, float] = {}  # -scale-tc: the workers that may play
        self.measured: set[str] = set()  # -scale-tc: benched, whether refused or not
        self.serial = itertools.count()  # a task played again is a new Dask task
        try:
            self.client = Client(cfg.dask, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise ExecutorError(f"-dask {cfg.dask}: cannot reach the scheduler: {e}") from None
        from wasp import kernelcache

        if kernelcache.packages():  # the workers' kernels get a keyed cache as this process's
            from .workercache import KernelCache

            self._guard(self.client.register_plugin, KernelCache(kernelcache.packages()))
        if cfg.scale_tc is not None:
            self._guard(self._measure)
            if not self.factors:
                raise ExecutorError("-scale-tc: every worker was refused (see above)")

    # -- the connection -----------------------------------------------------------------
    def _lost(self, e: Exception | None) -> SchedulerLost:
        why = f" ({type(e).__name__})" if e is not None else ""
        return SchedulerLost(f"-dask {self.address}: lost the scheduler{why}; the finished "
                             f"pairs are stored: {self.resume_command} plays the rest (with "
                             f"-dask ADDRESS should the scheduler come back elsewhere)")

    def _check(self, e: Exception | None = None) -> None:
        """Raise SchedulerLost when the client is no longer connected."""
        if self.client.status != "running":
            raise self._lost(e) from None

    def _guard(self, fn, *args):
        """`fn(*args)`; an exception while disconnected is a lost scheduler."""
        try:
            return fn(*args)
        except SchedulerLost:
            raise
        except Exception as e:
            self._check(e)
            raise

    # -- capacity -----------------------------------------------------------------------
    def slots(self) -> int:
        """Tasks to keep in flight: every worker thread busy (-concurrency more, if larger)."""
        nthreads = self._guard(self.client.nthreads)
        if self.cfg.scale_tc is not None:
            return max(1, sum(nthreads.get(a, 1) for a in self.factors))
        threads = sum(nthreads.values()) or 1
        return max(self.cfg.concurrency, threads) if self.cfg.concurrency > 1 else threads

    def in_flight(self) -> int:
        return len(self.active) + len(self.queue)

    def submit(self, task: PairTask) -> None:
        self._check()  # a task sent while reconnecting would wait for the timeout
        self.queue.append(task)
        self._guard(self._dispatch)

    def _send(self, task: PairTask, worker: str | None) -> None:
        extra, factor = {}, 1.0
        if worker is not None:  # -scale-tc: the task stays on the worker it was sized for
            extra = {"workers": [worker], "allow_other_workers": False}
            factor = self.factors[worker]
        fut = self.client.submit(
            play_pair_task, self.cfg_dict, task, self.env, factor, pure=False,
            key=f"wasp-{task.key}-{os.getpid()}-{id(self)}-{next(self.serial)}",
            **extra)
        self.active[fut] = (task, worker)

    def _dispatch(self) -> None:
        if self.cfg.scale_tc is None:
            while self.queue:
                self._send(self.queue.pop(0), None)
            return
        nthreads = self.client.nthreads()
        for fut, (task, worker) in list(self.active.items()):
            if worker not in nthreads:  # the worker left with this task unplayed
                del self.active[fut]
                fut.cancel()
                self.queue.insert(0, task)
        for addr in [a for a in self.factors if a not in nthreads]:
            self._say(f"Worker {addr}: left; its pairs are played elsewhere")
            del self.factors[addr]
            self.measured.discard(addr)  # benched again should it come back
        if any(a not in self.measured for a in nthreads):
            self._measure()
        for addr in self.factors:
            mine = sum(1 for _, w in self.active.values() if w == addr)
            while self.queue and mine < nthreads.get(addr, 1):
                self._send(self.queue.pop(0), addr)
                mine += 1
        if self.queue and not self.active and not self.factors:
            raise ExecutorError("-scale-tc: every worker that could play has left; run "
                                f"{self.resume_command} when workers are back")

    def _measure(self) -> None:
        """-scale-tc: bench the workers not yet measured; keep the clock factor of each one
        that may play, report the refused ones."""
        from .speed import ScaleConfig, judge

        nthreads = self.client.nthreads()
        new = [a for a in nthreads if a not in self.measured]
        if not new:
            return
        self.measured.update(new)
        ref = ScaleConfig(**self.cfg.scale_tc)
        engine = self.cfg_dict["engines"][ref.engine]
        results = self.client.run(bench_task, engine, ref.bench, self.env, workers=new)
        report = self.scale_report if self.scale_report is not None else {}
        for addr in sorted(results):
            res = results[addr]
            if isinstance(res, str):
                entry = {"refused": res}
            else:
                nodes, nps = res
                factor, reason = judge(nodes, nps, ref)
                entry = {"nodes": nodes, "nps": nps, "factor": factor}
                if reason is None:
                    self.factors[addr] = factor
                else:
                    entry["refused"] = reason
            report[addr] = entry
            if "refused" in entry:
                self._say(f"Worker {addr}: refused: {entry['refused']}")
            else:
                self._say(f"Worker {addr}: bench {entry['nodes']} nodes, {entry['nps']} nps, "
                          f"time control x {entry['factor']:.2f}")
        self.scale_report = report

    def _say(self, line: str) -> None:
        if self.out is not None:
            print(line, file=self.out, flush=True)

    # -- results ------------------------------------------------------------------------
    def wait(self, timeout: float | None = None) -> list[PairDone]:
        """The tasks that ended: at least one, unless `timeout` passes first or the cluster
        has room for more tasks (none then). Raises SchedulerLost when the connection to the
        scheduler is lost."""
        from distributed import wait

        while self.active or self.queue:
            if not self.active:
                self._guard(self._dispatch)
                if not self.active:
                    return []
            try:
                step = WATCH_SECONDS if timeout is None else min(timeout, WATCH_SECONDS)
                done = wait(list(self.active), timeout=step, return_when="FIRST_COMPLETED").done
            except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11
                done = ()
            except Exception as e:
                self._check(e)
                raise
            out = [r for r in (self._result(fut) for fut in done if fut in self.active)
                   if r is not None]
            self._check()
            self._guard(self._dispatch)  # workers that joined or left
            if out or timeout is not None or self.in_flight() < self.slots():
                return out  # finished tasks, or room for more (a worker joined)
        return []

    def _result(self, fut) -> PairDone | None:
        """The task's rows; None when they went with a worker that left before they were
        fetched (Dask plays the task again, or `_dispatch` does for a pinned one). A scheduler
        lost between wait() and here cancels a finished task, which ends the run as a lost
        scheduler does, not as a failed pair."""
        task, worker = self.active.pop(fut)
        try:
            res = fut.result(timeout=WATCH_SECONDS)
        except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11
            self._check()
            self.active[fut] = (task, worker)
            return None
        except Exception as e:
            self._check(e)
            return PairDone(task, [], error="dask task failed:\n" + traceback.format_exc())
        if "error" in res:
            return PairDone(task, [], res["worker"], res["error"])
        self.workers_seen[res["worker"]] = self.workers_seen.get(res["worker"], 0) + 1
        return PairDone(task, res["rows"], res["worker"])

    def close(self, kill: bool = False) -> None:
        for fut in self.active:
            fut.cancel()
        self.active.clear()
        self.queue.clear()
        self.client.close()
