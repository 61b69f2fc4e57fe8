"""The lifecycle every tuning run shares, Wasp-Py's (`run.Run`) and a trace's
(`tuner.traces.TraceRun`): a directory holding the settings (``run.json``, a dataclass), where
the run stands (``state.json``, a typed state replaced atomically at every checkpoint) and CSV
logs cut back to the checkpoint when it resumes, so that a killed run repeats no row; the run's
lock while it tunes; and the lowest validation E kept, with the patience that stops the run."""

import json
import os
from dataclasses import asdict, dataclass

import numpy as np

from testing.rundir import mark
from wasp.atomicfile import write_text

CONFIG_FILE = "run.json"
STATE_FILE = "state.json"


@dataclass
class Best:
    """The values of the lowest validation E so far (params.txt) and the pass after which they
    were reached (0: the start)."""

    passes: int
    e_valid: float
    W: list

    def to_json(self) -> dict:
        return {"pass": self.passes, "e_valid": self.e_valid, "W": self.W}

    @classmethod
    def from_json(cls, d: dict | None) -> "Best | None":
        return None if d is None else cls(d["pass"], d["e_valid"], d["W"])


def csv_row(values) -> str:
    """One CSV row: a float as ``repr`` (NaN empty), anything else as ``str``."""
    out = []
    for v in values:
        if isinstance(v, float):
            out.append("" if np.isnan(v) else repr(float(v)))
        else:
            out.append(str(v))
    return ",".join(out)


class TuningRun:
    """A run directory. A subclass names its settings' dataclass (`CONFIG`), its state's class
    (`STATE`, with ``from_json``/``to_json`` and the fields ``W``, ``done``, ``best``,
    ``stale`` and ``stopped``), its CSV logs and their columns (`LOGS`), the kind its directory
    is marked with (`KIND`), and how many rows of each log a state accounts for (`rows`)."""

    CONFIG: type
    STATE: type
    LOGS: dict = {}
    KIND: str | None = None

    def __init__(self, run_dir, config, state):
        self.dir = str(run_dir)
        self.config = config
        self.state = state

    def path(self, name) -> str:
        return os.path.join(self.dir, name)

    def rows(self, log: str) -> int:
        """The rows of `log` the saved state accounts for (the rest is written again)."""
        raise NotImplementedError

    @classmethod
    def start(cls, run_dir, config, state):
        """A new run in `run_dir` (refused when it holds one): its settings, empty logs."""
        if os.path.exists(os.path.join(run_dir, STATE_FILE)):
            raise FileExistsError(f"{run_dir} already holds a run: use -resume {run_dir} or "
                                  f"another directory")
        os.makedirs(run_dir, exist_ok=True)
        if cls.KIND:
            mark(run_dir, cls.KIND)
        run = cls(run_dir, config, state)
        run.write_config()
        for name, columns in cls.LOGS.items():
            write_text(run.path(name), ",".join(columns) + "\n")
        return run

    @classmethod
    def open(cls, run_dir, threads=None):
        """The run in `run_dir`, its logs cut back to its last checkpoint; `threads` (when
        given) replaces the saved thread count, which changes no result."""
        with open(os.path.join(run_dir, CONFIG_FILE), encoding="utf-8") as f:
            config = cls.CONFIG(**json.load(f))
        if threads:
            config.threads = threads
        with open(os.path.join(run_dir, STATE_FILE), encoding="utf-8") as f:
            state = cls.STATE.from_json(json.load(f))
        run = cls(run_dir, config, state)
        for name, columns in cls.LOGS.items():
            path = run.path(name)
            lines = [",".join(columns)]
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines() or lines
            write_text(path, "\n".join(lines[:1 + run.rows(name)]) + "\n")
        return run

    def write_config(self) -> None:
        write_text(self.path(CONFIG_FILE), json.dumps(asdict(self.config), indent=2) + "\n")

    def write_state(self) -> None:
        write_text(self.path(STATE_FILE), json.dumps(self.state.to_json()) + "\n")

    def append(self, log: str, values) -> None:
        with open(self.path(log), "a", encoding="utf-8") as f:
            f.write(csv_row(values) + "\n")

    def locked(self, work):
        """`work()` while this process holds the run's lock (ValueError when another does)."""
        from testing.runlock import RunBusy, RunLock

        try:
            lock = RunLock(self.dir).acquire()
        except RunBusy as e:
            raise ValueError(str(e)) from None
        try:
            return work()
        finally:
            lock.release()

    def keep_best(self, done: int, e_valid: float, W, log) -> None:
        """After pass `done` (0: the start), keep `W` if `e_valid` is the lowest validation E so
        far; count the passes without a gain and stop after the settings' `patience`."""
        if not np.isfinite(e_valid):  # no validation set: params.txt follows the run
            return
        st = self.state
        best = st.best
        if best is None or e_valid < best.e_valid:
            st.best = Best(done, float(e_valid), list(W))
            st.stale = 0
            return
        st.stale = (st.stale or 0) + 1
        log(f"validation E {e_valid:.6f} is above its lowest, {best.e_valid:.6f} after pass "
            f"{best.passes} ({st.stale} pass{'es' if st.stale > 1 else ''}"
            f" without a gain: fitting the training set's noise)")
        patience = self.config.patience
        if patience and st.stale >= patience:
            st.done = True
            st.stopped = "patience"
            log(f"stopping: {st.stale} passes without a lower validation E "
                f"(-patience {patience}); params.txt holds pass {best.passes}'s values, "
                f"params-last.txt the last ones")

    @property
    def best_W(self) -> np.ndarray:
        """The values of params.txt: those of the lowest validation E, or the current ones."""
        best = self.state.best
        return np.array(self.state.W if best is None else best.W)
