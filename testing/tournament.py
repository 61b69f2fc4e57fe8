"""A run: the schedule played by concurrent workers, committed game by game, with SPRT stop."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from .config import MatchConfig
from .enginestats import EngineTally, quantile
from .executor import cpu_seconds, stop_on_sigterm
from .openings import OpeningBook, OpeningSequence
from .process import Logger
from .schedule import PairSpec, make_schedule
from .store import SUMMARY_NAME, RunStore
from .tablebase import TERMINATION as TB_TERMINATION
from .tally import Encounter, rating_table, score_table
from .worker import PairTask

__all__ = ["Runner", "host_steal", "steal_share", "stop_on_sigterm"]

_PRELOAD_CPU = [0.0]


def _preload_statistics() -> None:
    """Import the statistics module (numpy/scipy: about a second) off the critical path."""

    def load() -> None:
        t = time.thread_time()
        __import__("testing.sprt")
        _PRELOAD_CPU[0] = time.thread_time() - t

    threading.Thread(target=load, daemon=True).start()


def host_steal() -> tuple[int, int] | None:
    """(steal, total) jiffies over all CPUs from /proc/stat. Steal is the time a virtual
    machine was ready to run while the hypervisor ran something else: its engines then stall
    for no fault of their own. None where there is no such count (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        values = [int(x) for x in fields[1:9]]
    except (OSError, ValueError):
        return None
    if fields[0] != "cpu" or len(values) < 8:
        return None
    return values[7], sum(values)


def steal_share(before, after) -> float | None:
    """Percentage of all CPU time stolen between two `host_steal` readings."""
    if before is None or after is None:
        return None
    total = after[1] - before[1]
    return 100.0 * (after[0] - before[0]) / total if total > 0 else 0.0


class Runner:
    """Plays the run in ``rundir`` (new or resumed) and prints its progress and reports."""

    def __init__(self, cfg: MatchConfig, rundir: str, resume: bool = False, out=None, err=None):
        self.cfg = cfg
        self.rundir = rundir
        self.resume = resume
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.names = [e.name for e in cfg.engines]
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.fatal: str | None = None
        self.decision: dict | None = None
        self.latencies: list[float] = []
        self.session_games = 0
        self.session_time_losses = 0
        self.total_time_losses = 0
        self.tb_adjudications = 0  # games the Syzygy tables decided (-tb), resumed ones too
        self.worker_cpu: dict[int, float] = {}  # CPU of each worker process
        self._progress_on = cfg.progress if cfg.progress is not None else self.err.isatty()
        self._progress_len = 0
        self._reported_at = -1

    # -- setup --------------------------------------------------------------
    def _prepare(self) -> None:
        cfg = self.cfg
        self.store = RunStore(self.rundir)
        if not self.resume:
            self.store.set_meta("config", cfg.to_dict())
            with open(os.path.join(self.rundir, "config.json"), "w") as f:
                json.dump(cfg.to_dict(), f, indent=2)
        book = None
        if cfg.openings is not None:
            o = cfg.openings
            book = OpeningBook(o.file, o.format, o.plies, chess960=cfg.chess960)
        o = cfg.openings
        self.openings = OpeningSequence(
            book,
            o.order if o else "sequential",
            o.start if o else 1,
            cfg.srand or 0,
            chess960=cfg.chess960,
        )
        self.schedule = make_schedule(
            len(cfg.engines), cfg.tournament, cfg.rounds, cfg.games, cfg.repeat,
            cfg.openings.policy if cfg.openings else "default",
        )
        self.pairs_by_id = {p.pair_id: p for p in self.schedule}
        self.total_games = sum(len(p.games) for p in self.schedule)
        self.encounters: dict[tuple[int, int], Encounter] = {}
        self.games_done = 0
        self.logger = Logger(cfg.log) if cfg.log else None
        self.decision = self.store.get_meta("sprt_decision")
        stored = self.store.games(
            ["pair_id", "game_in_pair", "engine1", "white", "black", "result", "time_loss",
             "termination", "move_stats"]
        )
        self.engine_tally = EngineTally(self.names)
        for row in stored:
            self._count(row)
            self.engine_tally.add(row)
            self.total_time_losses += row["time_loss"]
        done: dict[int, set[int]] = {}
        for row in stored:
            done.setdefault(row["pair_id"], set()).add(row["game_in_pair"])
        self.done = done
        if self.resume and (cfg.pgnout or cfg.epdout):
            self._rewrite_outputs()
        if self.decision is not None:
            self.pending: list[PairSpec] = []
        else:
            self.pending = [p for p in self.schedule if len(done.get(p.pair_id, ())) < len(p.games)]
        # Local workers take single games, in schedule order (less idle time at the end).
        self.pending_games = [
            (p, g)
            for p in self.pending
            for g in p.games
            if g.game_in_pair not in done.get(p.pair_id, ())
        ]
        self._started_pairs = {p for p in done}
        self._next = 0

    def _rewrite_outputs(self) -> None:
        rows = self.store.games(["pgn", "final_fen"])
        if self.cfg.pgnout:
            with open(self.cfg.pgnout, "w") as f:
                f.writelines(r["pgn"] for r in rows)
        if self.cfg.epdout:
            with open(self.cfg.epdout, "w") as f:
                f.writelines(_epd(r["final_fen"]) + "\n" for r in rows)

    # -- counting -----------------------------------------------------------
    def _count(self, row: dict) -> tuple[Encounter, bool]:
        pair = self.pairs_by_id[row["pair_id"]]
        key = (pair.e1, pair.e2)
        enc = self.encounters.get(key)
        if enc is None:
            enc = Encounter(self.names[pair.e1], self.names[pair.e2], 2 if self.cfg.repeat else 1)
            self.encounters[key] = enc
        s = {"1-0": 1.0, "0-1": 0.0}.get(row["result"], 0.5)
        score = s if row["white"] == row["engine1"] else 1.0 - s
        completed = enc.add(row["pair_id"], score, len(pair.games))
        self.games_done += 1
        if row.get("termination") == TB_TERMINATION:
            self.tb_adjudications += 1
        return enc, completed

    def commit(self, row: dict) -> None:
        """Store a finished game, then count it."""
        with self.lock:
            if not self.store.add_game(row):
                return
            enc, completed = self._count(row)
            self.engine_tally.add(row)
            self.session_games += 1
            self.latencies.extend(row.get("_latencies", ()))
            if row["time_loss"]:
                self.session_time_losses += 1
                self.total_time_losses += 1
            if self.cfg.pgnout:
                with open(self.cfg.pgnout, "a") as f:
                    f.write(row["pgn"])
            if self.cfg.epdout:
                with open(self.cfg.epdout, "a") as f:
                    f.write(_epd(row["final_fen"]) + "\n")
            failed = row.get("_failed") or []
            if failed and not self.cfg.recover and self.fatal is None:
                who = ", ".join(self.names[i] for i in failed)
                self.fatal = (
                    f"engine {who} failed ({row['reason']}) in game {row['pair_id']}."
                    f"{row['game_in_pair']}; use -recover to restart it and go on"
                )
                self.stop.set()
            pair = self.pairs_by_id[row["pair_id"]]
            self._clear_progress()
            print(
                f"Finished game {pair.games[row['game_in_pair']].number} "
                f"({row['white']} vs {row['black']}): {row['result']} {{{row['reason']}}}",
                file=self.out,
            )
            if completed and self.cfg.sprt is not None and self.decision is None:
                self._check_sprt()
            if self.cfg.ratinginterval and self.games_done % self.cfg.ratinginterval == 0:
                print(self.report(), file=self.out)
                self._reported_at = self.games_done
            self.out.flush()
            self._show_progress()

    def _check_sprt(self) -> None:
        from . import sprt

        s = self.cfg.sprt
        enc = self.encounters.get((0, 1))
        counts = enc.sprt_counts() if enc else None
        if counts is None:
            return
        value = sprt.llr(counts, s.elo0, s.elo1, s.model)
        verdict = sprt.sprt_decision(value, s.alpha, s.beta)
        if verdict is not None:
            self.decision = {
                "decision": verdict,
                "llr": value,
                "games": self.games_done,
                "counts": list(counts),
                "bounds": list(sprt.bounds(s.alpha, s.beta)),
            }
            self.store.set_meta("sprt_decision", self.decision)
            self.stop.set()
            print(f"SPRT: {self.decision_text()}", file=self.out)

    def decision_text(self) -> str:
        d = self.decision
        if d is None:
            return "no decision"
        lo, hi = d["bounds"]
        which = "H1 accepted" if d["decision"] == "H1" else "H0 accepted"
        bound = f"upper bound {hi:.2f}" if d["decision"] == "H1" else f"lower bound {lo:.2f}"
        return (
            f"{which} after {d['games']} games (LLR {d['llr']:.2f} crossed {bound}; "
            f"counts {d['counts']})"
        )

    # -- output -------------------------------------------------------------
    def report(self) -> str:
        lines = ["-" * 60]
        if len(self.names) == 2:
            enc = self.encounters.get((0, 1))
            lines.append(f"Results of {self.names[0]} vs {self.names[1]}:")
            lines.append(enc.report(self.cfg.sprt) if enc else "No games yet")
        else:
            lines.append(f"Ratings relative to {self.names[0]} after {self.games_done} games:")
            lines.append(rating_table(self.names, self.encounters))
            if self.cfg.tournament == "roundrobin":
                lines.append("")
                lines.append(score_table(self.names, self.encounters))
        if self.cfg.tb is not None:
            lines.append(f"Tablebase adjudications: {self.tb_adjudications} of "
                         f"{self.games_done} games")
        if self.games_done:
            lines.append("Engine statistics (means a move; knps; t/move median and p95; clock "
                         "left at the end):")
            lines.append(self.engine_tally.table())
        lines.append("-" * 60)
        return "\n".join(lines)

    def progress_line(self) -> str:
        from . import sprt

        parts = [f"Games {self.games_done}/{self.total_games}"]
        enc = self.encounters.get((0, 1))
        if enc is not None and enc.games:
            parts.append(f"W-D-L {enc.wins}-{enc.draws}-{enc.losses}")
            counts = enc.sprt_counts() or enc.trinomial()
            try:
                e, err, _ = sprt.elo(counts)
                parts.append(f"Elo {e:.1f} +/- {err:.1f}")
            except ValueError:
                pass
            if self.cfg.sprt is not None and enc.sprt_counts() is not None:
                s = self.cfg.sprt
                parts.append(f"LLR {sprt.llr(enc.sprt_counts(), s.elo0, s.elo1, s.model):.2f}")
        return "  ".join(parts)

    def _show_progress(self) -> None:
        if self._progress_on:
            line = self.progress_line()
            self.err.write("\r" + line + " " * max(0, self._progress_len - len(line)))
            self.err.flush()
            self._progress_len = len(line)

    def _clear_progress(self) -> None:
        if self._progress_on and self._progress_len:
            self.err.write("\r" + " " * self._progress_len + "\r")
            self._progress_len = 0

    # -- running ------------------------------------------------------------
    def _next_task(self) -> PairTask | None:
        """The next task: a single game locally (less idle time at the end, in schedule
        order), a whole pair on Dask; after an SPRT stop only games of started pairs."""
        with self.lock:
            if self.fatal is not None:
                return None
            if self.cfg.dask:
                if self.stop.is_set() or self._next >= len(self.pending):
                    return None
                pair = self.pending[self._next]
                self._next += 1
                return PairTask(pair, self.openings[pair.opening_k],
                                frozenset(self.done.get(pair.pair_id, ())))
            if self._next >= len(self.pending_games):
                return None
            pair, spec = self.pending_games[self._next]
            if self.stop.is_set() and pair.pair_id not in self._started_pairs:
                return None
            self._started_pairs.add(pair.pair_id)
            self._next += 1
            others = frozenset(g.game_in_pair for g in pair.games if g is not spec)
            return PairTask(pair, self.openings[pair.opening_k], others)

    def _play(self) -> None:
        """Feed the executor (local processes, or the Dask scheduler at -dask) and commit
        every game it hands back."""
        from .executor import ExecutorError, make_executor

        n = max(1, min(self.cfg.concurrency, len(self.pending_games) or 1))
        try:
            ex = make_executor(self.cfg, n, out=self.out,
                               resume_command=f"-resume {self.rundir}")
        except ExecutorError as e:
            self._fail(str(e))
            return
        _preload_statistics()
        ended = False
        try:
            while True:
                while ex.in_flight() < ex.slots():
                    task = self._next_task()
                    if task is None:
                        break
                    ex.submit(task)
                if not ex.in_flight():
                    break
                for done in ex.wait():
                    if done.error is not None:
                        self._fail(done.error)
                    for row in done.rows:
                        self.commit(row)
            ended = True
        except ExecutorError as e:
            self._fail(str(e))
            ended = True
        finally:
            ex.close(kill=not ended)  # an interrupt ends the games in flight, unstored
            self.worker_cpu = getattr(ex, "worker_cpu", {})
            if self.cfg.dask:
                self.workers_seen = ex.workers_seen
                self.scale_report = ex.scale_report

    def _fail(self, msg: str) -> None:
        with self.lock:
            if self.fatal is None:
                self.fatal = msg
        self.stop.set()

    def run(self) -> int:
        """Play the run holding its lock; the exit status (0 ok, 1 engine failure or a run
        another process holds, 130 interrupted)."""
        from .runlock import RunBusy, RunLock

        try:
            lock = RunLock(self.rundir).acquire()
        except RunBusy as e:
            print(f"Error: {e}", file=self.err)
            return 1
        try:
            return self._run()
        finally:
            lock.release()

    def _run(self) -> int:
        t_wall = time.monotonic()
        cpu0 = cpu_seconds()
        self._prepare()
        self.cpu_setup = cpu_seconds() - cpu0
        if self.resume:
            print(
                f"Resuming {self.rundir}: {self.games_done} of {self.total_games} games stored",
                file=self.out,
            )
        cpu0 = cpu_seconds()
        steal0 = host_steal()
        interrupted = False
        try:
            self._play()
        except KeyboardInterrupt:
            interrupted = True
            self.stop.set()
        self.cpu_play = cpu_seconds() - cpu0 + sum(self.worker_cpu.values())
        self.steal_pct = None if self.cfg.dask else steal_share(steal0, host_steal())
        self.wall = time.monotonic() - t_wall
        self._clear_progress()
        if self._reported_at != self.games_done:
            print(self.report(), file=self.out)
        if self.cfg.sprt is not None:
            print(f"SPRT: {self.decision_text()}", file=self.out)
        summary = self.last_summary = self.summary()
        print(self.summary_text(summary), file=self.out)
        with open(os.path.join(self.rundir, SUMMARY_NAME), "w") as f:
            json.dump(summary, f, indent=2)
        if self.logger:
            self.logger.close()
        self.store.close()
        if interrupted:
            print(f"Interrupted: resume with -resume {self.rundir}", file=self.err)
            return 130
        if self.fatal:
            print(f"Error: {self.fatal}", file=self.err)
            return 1
        return 0

    def summary(self) -> dict:
        lat = self.latencies
        g = self.session_games
        process_cpu = cpu_seconds() + sum(self.worker_cpu.values())
        return {
            "rundir": self.rundir,
            "games_total": self.games_done,
            "games_this_session": g,
            "wall_s": self.wall,
            # play phase, less the one-off import of numpy/scipy for the statistics
            "runner_cpu_s": self.cpu_play - _PRELOAD_CPU[0],
            "runner_cpu_per_game_s": (self.cpu_play - _PRELOAD_CPU[0]) / g if g else None,
            "statistics_import_cpu_s": _PRELOAD_CPU[0],
            # everything the runner process used: interpreter start, imports, setup, play
            "process_cpu_s": process_cpu,
            "process_cpu_per_game_s": process_cpu / g if g else None,
            "latency_median_ms": quantile(lat, 0.5) * 1e3 if lat else None,
            "latency_p99_ms": quantile(lat, 0.99) * 1e3 if lat else None,
            "latency_max_ms": max(lat) * 1e3 if lat else None,
            "latency_mean_ms": sum(lat) / len(lat) * 1e3 if lat else None,
            "time_losses_this_session": self.session_time_losses,
            "time_losses_total": self.total_time_losses,
            "tb_adjudications": self.tb_adjudications,
            # CPU the hypervisor took from this machine while the games ran (local runs)
            "cpu_steal_pct": getattr(self, "steal_pct", None),
            "sprt_decision": self.decision,
            "distributed": bool(self.cfg.dask),
            # -scale-tc: each worker's bench, clock factor or the reason it was refused
            "scale_tc": getattr(self, "scale_report", None),
            # Dask: the pairs each worker played this session
            "workers": getattr(self, "workers_seen", None),
            # per engine, over the whole run (NaN: the engine never sent the figure)
            "engines": [{k: (None if isinstance(v, float) and v != v else v)
                         for k, v in r.items()} for r in self.engine_tally.rows()],
        }

    @staticmethod
    def summary_text(s: dict) -> str:
        txt = (
            f"Runner: {s['games_this_session']} games in {s['wall_s']:.1f} s wall, "
            f"time losses {s['time_losses_this_session']}"
        )
        if s["runner_cpu_per_game_s"] is not None:
            txt += (
                f", CPU {s['runner_cpu_per_game_s']:.3f} s/game playing "
                f"({s['process_cpu_per_game_s']:.3f} s/game with start-up)"
            )
            if s["distributed"]:
                txt += " (client only)"
        if s["latency_median_ms"] is not None:
            txt += (
                f", move latency median {s['latency_median_ms']:.2f} ms, "
                f"p99 {s['latency_p99_ms']:.2f} ms, max {s['latency_max_ms']:.2f} ms"
            )
        steal = s.get("cpu_steal_pct")
        if steal is not None and steal >= 0.5:
            txt += f", CPU stolen by the host {steal:.1f} %"
            if steal >= 5 and s["time_losses_this_session"]:
                txt += ("\nNote: the hypervisor took the CPU away for part of the run, so time "
                        "losses may be its doing, not the engines' (a larger timemargin= "
                        "absorbs such stalls)")
        return txt


def _epd(fen: str) -> str:
    return " ".join(fen.split()[:4])
