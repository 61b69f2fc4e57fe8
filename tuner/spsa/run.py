"""SPSA with real games: an engine's option list as SPSA input (`emit_params`), and a run
(`SpsaRun`) that plays each iteration's game pairs through the match runner's engines, games
and store, in a resumable run directory.

The run directory holds ``games.sqlite`` (the match runner's store: every game committed as
it ends, with the run's settings), ``params.csv`` (one row per iteration), ``result.txt``
(``name, value`` lines, OpenBench's output) and ``result-options.txt`` (``name = value``, the
format of Wasp-Py's SearchFile). An iteration counts once all its games are stored; theta is
recomputed from the stored games on -resume, so a killed run repeats no game and ends with the
same params.csv as an uninterrupted one (for engines whose games repeat, e.g. node-limited).
"""

from __future__ import annotations

import csv
import fnmatch
import os
import sys
import time
from dataclasses import asdict, dataclass

from testing.config import MatchConfig
from testing.engine import EngineConfig, make_engine
from testing.executor import ExecutorError, make_executor
from testing.openings import OpeningBook, OpeningSequence
from testing.process import EngineError
from testing.schedule import GameSpec, PairSpec
from testing.store import RunStore
from testing.uci import UciOption
from testing.worker import PairTask
from wasp.atomicfile import write_text

from .algorithm import HEADER, Param, Schedule, Step, parse_params, perturb, update

PARAMS_CSV = "params.csv"
RESULT_TXT = "result.txt"
RESULT_OPTIONS = "result-options.txt"
META_KEY = "spsa"

# --emit-params leaves out options that set resources, time handling, output or the protocol
# rather than how the engine plays (glob patterns, case-insensitive); naming one with -params
# brings it back.
NOT_TUNED = ("hash", "threads", "multipv", "*overhead*", "*time*", "slow mover", "nodestime",
             "syzygy*", "uci_*", "skill level", "contempt", "ponder", "clear hash")
SPRT_DIR = "sprt"
SPRT_PAIRS = 10000  # -then-sprt's default bound on game pairs
R_END = 0.002  # the usual r_end of OpenBench and fishtest tunes
C_END_SHARE = 20  # c_end = (max - min) / 20, the usual rule of thumb; ints at least 0.5


class SpsaError(Exception):
    """A run that cannot go on: `code` is the exit status (1 a file or an engine, 2 usage)."""

    def __init__(self, message, code=1):
        super().__init__(str(message))
        self.code = code


# -- the engine's options as SPSA input -----------------------------------------------------


def c_end_for(lo: float, hi: float, is_float: bool) -> float:
    """The rule of thumb: c_end = (max - min) / 20 (4 significant digits), at least 0.5 for an
    int option (OpenBench never perturbs an int by less)."""
    c = float(f"{(hi - lo) / C_END_SHARE:.4g}")
    return c if is_float else max(c, 0.5)


def read_options(cfg: EngineConfig) -> tuple[str, list[UciOption]]:
    """Start the engine, read its ``uci`` option list, quit: (id name, options)."""
    if cfg.proto != "uci":
        raise SpsaError("--emit-params reads a UCI engine's option list (proto=uci)", 2)
    eng = make_engine(cfg)
    try:
        eng.start()
    except EngineError as e:
        eng.kill()
        raise SpsaError(f"engine {cfg.name!r} failed to start: {e}") from None
    eng.quit()
    return eng.id_name or cfg.name, list(eng.options.values())


def emit_params(name: str, options: list[UciOption], globs: list[str] = ()) -> str:
    """OpenBench input for the spin options (ranges from min/max, start at the default,
    c_end and r_end by the rule of thumb); numeric string options only when named by a glob,
    as a comment line to complete (they have no range)."""
    def named(o):
        return any(fnmatch.fnmatch(o.name.lower(), g.lower()) for g in globs)

    lines = [f"# SPSA input for {name}, written by wasp-tune spsa --emit-params", HEADER,
             f"# c_end = (max - min) / {C_END_SHARE} (ints at least 0.5), r_end = {R_END}"]
    for o in options:
        if globs and not named(o):
            continue
        bounds = o.bounds()
        if o.type == "spin" and bounds is not None and bounds[0] < bounds[1]:
            if not globs and any(fnmatch.fnmatch(o.name.lower(), g) for g in NOT_TUNED):
                continue
            lo, hi = bounds
            p = Param(o.name, False, float(int(o.default)) if _num(o.default) else lo,
                      lo, hi, c_end_for(lo, hi, False), R_END)
            lines.append(p.line())
        elif o.type == "string" and globs and _num(o.default):
            lines.append(f"# {o.name}, float, {o.default}, MIN, MAX, C_END, {R_END}   "
                         f"(a string option: give its range and c_end)")
    return "\n".join(lines) + "\n"


def _num(text: str | None) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


# -- the run ----------------------------------------------------------------------------------


@dataclass
class SpsaSettings:
    """What a run tunes and how; saved in the store, so -resume needs nothing else."""

    params_text: str
    params_source: str
    iterations: int
    pairs: int
    seed: int
    alpha: float
    gamma: float
    a_ratio: float
    in_flight: int = 1  # iterations played at once (iteration k starts from theta_{k-L})
    then_sprt: dict | None = None  # SprtConfig fields: the tuned values against the start
    sprt_pairs: int = SPRT_PAIRS  # at most this many game pairs in that SPRT
    sprt_limits: dict | None = None  # that SPRT's limits (tc, st, nodes, depth) if not the run's

    def params(self) -> list[Param]:
        return parse_params(self.params_text, self.params_source)

    def schedule(self) -> Schedule:
        return Schedule(self.iterations, self.alpha, self.gamma, self.a_ratio)


def load_settings(rundir: str) -> SpsaSettings:
    """The settings of the run in `rundir`, read without writing (for notebooks)."""
    return SpsaReader(rundir).settings()


class SpsaRun:
    """A run directory: settings, stored games, and the iterations still to play."""

    def __init__(self, rundir: str, cfg: MatchConfig, settings: SpsaSettings, out=None,
                 err=None):
        self.rundir = rundir
        self.cfg = cfg
        self.settings = settings
        self.params = settings.params()
        self.schedule = settings.schedule()
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.store = RunStore(rundir, kind=SpsaReader.KIND)
        book = None
        o = cfg.openings
        if o is not None:
            try:
                book = OpeningBook(o.file, o.format, o.plies, chess960=cfg.chess960)
            except (OSError, ValueError) as e:
                raise SpsaError(f"-openings: {e}") from None
        self.openings = OpeningSequence(book, o.order if o else "sequential",
                                        o.start if o else 1, cfg.srand or 0,
                                        chess960=cfg.chess960)
        self.session_games = 0

    def __repr__(self) -> str:
        s = self.settings
        return (f"SpsaRun({self.rundir!r}, {len(self.params)} parameters, {s.iterations} "
                f"iterations x {s.pairs} pairs, seed {s.seed})")

    @classmethod
    def create(cls, rundir: str, cfg: MatchConfig, settings: SpsaSettings, **kw) -> SpsaRun:
        run = cls(rundir, cfg, settings, **kw)
        run.store.set_meta("config", cfg.to_dict())
        run.store.set_meta(META_KEY, asdict(settings))
        return run

    @classmethod
    def open(cls, rundir: str, cfg: MatchConfig | None = None, **kw) -> SpsaRun:
        """Reopen a run; `cfg` (the saved one with -resume's overrides) replaces the saved."""
        store = RunStore(rundir)
        saved, config = store.get_meta(META_KEY), store.get_meta("config")
        store.close()
        if saved is None or config is None:
            raise SpsaError(f"-resume: {rundir!r} holds no SPSA run")
        return cls(rundir, cfg or MatchConfig.from_dict(config), SpsaSettings(**saved), **kw)

    # -- counting -------------------------------------------------------------------------
    def _wdl(self, rows) -> tuple[int, int, int]:
        plus = self.cfg.engines[0].name
        w = d = l_ = 0
        for r in rows:
            s = {"1-0": 1.0, "0-1": 0.0}.get(r["result"], 0.5)
            s = s if r["white"] == plus else 1.0 - s
            w, d, l_ = w + (s == 1.0), d + (s == 0.5), l_ + (s == 0.0)
        return w, d, l_

    # -- output ---------------------------------------------------------------------------
    def _csv_header(self) -> list[str]:
        cols = ["iteration", "games", "wins", "draws", "losses", "score"]
        for p in self.params:
            n = p.name
            cols += [n, f"{n}.c_k", f"{n}.a_k", f"{n}.flip", f"{n}.plus", f"{n}.minus"]
        return cols

    def _csv_row(self, step: Step, wdl, theta) -> list[str]:
        w, d, l_ = wdl
        games = w + d + l_
        row = [str(step.k), str(games), str(w), str(d), str(l_), f"{(w + d / 2) / games:.6g}"]
        for i, p in enumerate(self.params):
            row += [f"{theta[i]:.10g}", f"{step.c[i]:.10g}", f"{step.a[i]:.10g}",
                    str(step.flips[i]), p.value_text(step.plus[i]), p.value_text(step.minus[i])]
        return row

    def write_result(self, theta) -> None:
        """result.txt (``name, value``) and result-options.txt (``name = value``)."""
        ob = "".join(f"{p.name}, {p.value_text(x)}\n" for p, x in zip(self.params, theta,
                                                                      strict=True))
        opts = "".join(f"{p.name} = {p.value_text(x)}\n" for p, x in zip(self.params, theta,
                                                                          strict=True))
        for name, text in ((RESULT_TXT, ob), (RESULT_OPTIONS, opts)):
            write_text(os.path.join(self.rundir, name), text)

    # -- the loop -------------------------------------------------------------------------
    def run(self, progress: bool | None = None) -> list[float]:
        """Play the iterations not yet stored, holding the run's lock; theta at the end.
        Raises SpsaError (also when another process holds the run)."""
        from testing.runlock import RunBusy, RunLock

        try:
            lock = RunLock(self.rundir).acquire()
        except RunBusy as e:
            raise SpsaError(str(e)) from None
        try:
            return self._run(progress)
        finally:
            lock.release()

    def _run(self, progress: bool | None = None) -> list[float]:
        """Play the iterations not yet stored; theta at the end. Raises SpsaError.

        Iteration k is planned from theta after iteration k - in_flight (so that many
        iterations are played at once) and the updates are applied in the order of k: the
        path depends on the settings and the game results only, never on which game ends
        first, and a resumed run replays the stored games into the same path."""
        from tqdm import tqdm

        s, params = self.settings, self.params
        lag = max(1, s.in_flight)
        stored: dict[int, dict[int, dict]] = {}
        for r in self.store.games(["pair_id", "game_in_pair", "white", "result"]):
            stored.setdefault(r["pair_id"], {})[r["game_in_pair"]] = r
        thetas = [[p.start for p in params]]  # thetas[j]: theta after iteration j
        steps: dict[int, Step] = {}
        missing: dict[int, set[int]] = {}  # iteration -> its pairs not yet stored
        if progress is None:
            progress = self.cfg.progress if self.cfg.progress is not None else self.err.isatty()
        csv_file = open(os.path.join(self.rundir, PARAMS_CSV), "w", newline="")
        writer = csv.writer(csv_file)
        writer.writerow(self._csv_header())
        try:
            pairs = make_executor(self.cfg, out=self.out,
                                  resume_command=f"wasp-tune spsa -resume {self.rundir}")
        except ExecutorError as e:
            csv_file.close()
            raise SpsaError(e) from None
        t0 = time.monotonic()
        bar = None
        k_next = k_done = 0
        ended_early = True
        try:
            while k_done < s.iterations:
                while k_next < s.iterations and k_next + 1 - k_done <= lag:
                    k = k_next = k_next + 1
                    steps[k] = step = perturb(params, self.schedule, thetas[max(0, k - lag)],
                                              k, s.seed)
                    options = (step.options(params, 1), step.options(params, -1))
                    missing[k] = set()
                    for pid in range((k - 1) * s.pairs, k * s.pairs):
                        skip = frozenset(stored.get(pid, {}))
                        if len(skip) < 2:
                            missing[k].add(pid)
                            pairs.submit(PairTask(spsa_pair(pid, k), self._opening(pid), skip,
                                                  options))
                    if missing[k] and bar is None:
                        bar = tqdm(total=s.iterations, initial=k_done, disable=not progress,
                                   file=self.err, unit="it", dynamic_ncols=True)
                k = k_done + 1
                if missing[k]:
                    if not pairs.in_flight():  # never: every missing pair has its task
                        raise SpsaError(f"iteration {k}: pairs {sorted(missing[k])} lost")
                    for done in pairs.wait():
                        if done.error is not None:
                            raise SpsaError(done.error)
                        self._commit(done.rows, stored)
                        pid = done.task.pair.pair_id
                        if len(stored.get(pid, {})) == 2:
                            missing[done.task.pair.round + 1].discard(pid)
                    continue
                rows = [stored[pid][g] for pid in range((k - 1) * s.pairs, k * s.pairs)
                        for g in (0, 1)]
                wdl = self._wdl(rows)
                step = steps.pop(k)
                theta = update(params, thetas[-1], step, wdl[0], wdl[2])
                thetas.append(theta)
                writer.writerow(self._csv_row(step, wdl, theta))
                csv_file.flush()
                k_done = k
                if bar is not None:
                    rate = self.session_games / max(time.monotonic() - t0, 1e-9)
                    values = " ".join(f"{p.name}={x:.4g}" for p, x in
                                      list(zip(params, theta, strict=True))[:4])
                    bar.set_postfix_str(f"{rate:.1f} games/s {values}", refresh=False)
                    bar.update(1)
                    self.write_result(theta)
            self.write_result(thetas[-1])
            ended_early = False
        except ExecutorError as e:  # a lost scheduler: how to go on
            raise SpsaError(e) from None
        finally:
            if bar is not None:
                bar.close()
            csv_file.close()
            pairs.close(kill=ended_early)  # an interrupt ends the games in flight, unstored
            self.store.close()
        return thetas[-1]

    def _opening(self, pair_id: int):
        try:
            return self.openings[pair_id]
        except ValueError as e:
            raise SpsaError(f"-openings: {e}") from None

    def _commit(self, rows: list[dict], stored) -> None:
        """Store a finished task's games (the client alone writes the store)."""
        for row in rows:
            self.store.add_game(row)
            stored.setdefault(row["pair_id"], {})[row["game_in_pair"]] = row
            self.session_games += 1
            if row["_failed"] and not self.cfg.recover:
                who = ", ".join(self.cfg.engines[i].name for i in row["_failed"])
                raise SpsaError(f"engine {who} failed ({row['reason']}) in game "
                                f"{row['pair_id']}.{row['game_in_pair']}; use -recover to "
                                f"restart it and go on")


# -- a pair of an iteration ---------------------------------------------------------------------


def spsa_pair(pair_id: int, k: int) -> PairSpec:
    """Pair `pair_id` of iteration k: game 0 with engine 0 (theta + c) white, game 1 with the
    colours swapped, on opening `pair_id`."""
    games = tuple(GameSpec(pair_id, g, 2 * pair_id + g + 1, k - 1, g, 1 - g, 0, 1)
                  for g in (0, 1))
    return PairSpec(pair_id, k - 1, 0, 1, pair_id, games)


# -- then an SPRT: the tuned values against the start values -----------------------------------


def sprt_config(run: SpsaRun, theta) -> MatchConfig:
    """The match runner's settings for the SPRT after a run: the engine with the tuned values
    (``NAME-tuned``) against the engine with the start values (``NAME-start``), game pairs on
    the run's openings, at most `sprt_pairs` pairs, at the run's limits or `sprt_limits` (a
    tune at fixed nodes, say, checked at the time control that matters)."""
    from dataclasses import replace

    from testing.config import SprtConfig

    cfg = MatchConfig.from_dict(run.cfg.to_dict())
    base = cfg.engines[0].name.removesuffix("-plus")
    for i, (label, values) in enumerate((("tuned", theta),
                                         ("start", [p.start for p in run.params]))):
        opts = {p.name: p.value_text(x) for p, x in zip(run.params, values, strict=True)}
        e = cfg.engines[i]
        cfg.engines[i] = replace(e, name=f"{base}-{label}", options={**e.options, **opts},
                                 **(run.settings.sprt_limits or {}))
    cfg.tournament, cfg.games, cfg.repeat = "roundrobin", 2, True
    cfg.rounds = run.settings.sprt_pairs
    cfg.sprt = SprtConfig(**run.settings.then_sprt)
    return cfg


def run_sprt(run: SpsaRun, theta) -> int:
    """Play (or resume) the SPRT in RUNDIR/sprt with the match runner; its exit status."""
    from testing import plan_match, run_match
    from testing.store import DB_NAME

    rundir = os.path.join(run.rundir, SPRT_DIR)
    cfg = sprt_config(run, theta)
    print(f"SPRT of the tuned values against the start values: {rundir}", file=run.out,
          flush=True)
    if os.path.exists(os.path.join(rundir, DB_NAME)):  # as saved, with this session's pace
        plan = plan_match(None, rundir, session={"concurrency": cfg.concurrency,
                                                 "progress": cfg.progress})
    else:
        plan = plan_match(cfg, rundir)
    return run_match(plan, out=run.out, err=run.err).status


class SpsaReader:
    """An SPSA run read without writing (the dashboard, notebooks): its settings, params.csv,
    its stored games (`store()`) and the SPRT that may close it (`sprt_dir()`)."""

    KIND = "spsa"

    def __init__(self, rundir: str):
        from testing.store import is_store

        self.rundir = rundir
        if not is_store(rundir):
            raise FileNotFoundError(f"no SPSA run in {rundir!r} (no run store)")

    def __repr__(self) -> str:
        return f"SpsaReader({self.rundir!r})"

    @staticmethod
    def is_run(rundir: str) -> bool:
        """An SPSA run, also one written before runs were marked (`testing.rundir`)."""
        from testing.store import is_store

        return is_store(rundir) and os.path.isfile(os.path.join(rundir, PARAMS_CSV))

    def store(self):
        """The run's games (a `testing.store.StoreReader`; close it)."""
        from testing.store import StoreReader

        return StoreReader(self.rundir)

    def settings(self) -> SpsaSettings:
        with self.store() as store:
            saved = store.meta(META_KEY)
        if saved is None:
            raise ValueError(f"{self.rundir!r} holds no SPSA run")
        return SpsaSettings(**saved)

    def rows(self) -> list[dict]:
        """params.csv's rows (as text): one per iteration, theta and its steps."""
        try:
            with open(os.path.join(self.rundir, PARAMS_CSV), newline="", encoding="utf-8") as f:
                return [r for r in csv.DictReader(f) if r]
        except FileNotFoundError:
            return []

    def table(self):
        """params.csv as a pandas DataFrame (one row per iteration)."""
        import pandas as pd

        return pd.read_csv(os.path.join(self.rundir, PARAMS_CSV))

    def sprt_dir(self) -> str | None:
        """The directory of the closing SPRT (a match run) once it started, else None."""
        from testing.store import is_store

        path = os.path.join(self.rundir, SPRT_DIR)
        return path if is_store(path) else None

    def finished(self) -> bool:
        """Every iteration played, and the closing SPRT (if asked for) decided."""
        from testing.store import StoreReader

        settings = self.settings()
        if len(self.rows()) < settings.iterations:
            return False
        if not settings.then_sprt:
            return True
        sprt = self.sprt_dir()
        if sprt is None:
            return False
        with StoreReader(sprt) as store:
            return store.meta("sprt_decision") is not None

    def updated(self) -> float:
        """When the run last wrote (its store or params.csv), 0.0 if never."""
        from testing.rundir import last_write
        from testing.store import DB_NAME

        return last_write(self.rundir, (DB_NAME, DB_NAME + "-wal", PARAMS_CSV))

    def resume_command(self) -> str:
        return f"wasp-tune spsa -resume {self.rundir}"

