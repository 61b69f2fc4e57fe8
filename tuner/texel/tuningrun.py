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
    """The values of the lowest validation E so far (params.txt), the pass in which they were
    reached (0: the start) and, for a run that checks every few steps, the step (counted over
    the run)."""

    passes: int
    e_valid: float
    W: list
    step: int | None = None

    def to_json(self) -> dict:
        d = {"pass": self.passes, "e_valid": self.e_valid, "W": self.W}
        if self.step is not None:
            d["step"] = self.step
        return d

    @classmethod
    def from_json(cls, d: dict | None) -> "Best | None":
        return None if d is None else cls(d["pass"], d["e_valid"], d["W"], d.get("step"))

    def where(self) -> str:
        """'pass 3' or 'step 40 (pass 1)'."""
        return f"pass {self.passes}" if self.step is None else \
            f"step {self.step} (pass {self.passes})"


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
            kept = lines[:1 + run.rows(name)]
            if kept != lines or not os.path.exists(path):  # a finished run's logs stay as they are
                write_text(path, "\n".join(kept) + "\n")
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

    def keep_best(self, done: int, e_valid: float, W, log, step=None, checks=None) -> None:
        """After pass `done` (0: the start), or at `step` of it, keep `W` if `e_valid` is the
        lowest validation E so far; count the passes (or, with `checks` a pass, the checks)
        without a gain and stop after the settings' `patience` passes' worth."""
        if not np.isfinite(e_valid):  # no validation set: params.txt follows the run
            return
        st = self.state
        best = st.best
        if best is None or e_valid < best.e_valid:
            st.best = Best(done, float(e_valid), list(W), step)
            st.stale = 0
            return
        st.stale = (st.stale or 0) + 1
        unit = "check" if checks else "pass"
        plural = f"{unit}{'es' if unit == 'pass' else 's'}"
        if not checks:
            log(f"validation E {e_valid:.6f} is not below its lowest, {best.e_valid:.6f} after "
                f"{best.where()} ({st.stale} {plural if st.stale > 1 else unit}"
                f" without a gain: fitting the training set's noise)")
        patience = self.config.patience * (checks or 1)
        if patience and st.stale >= patience:
            st.done = True
            st.stopped = "patience"
            at = "" if step is None else f" at step {step}"
            log(f"stopping{at}: {st.stale} {plural} without a lower validation E "
                f"(-patience {self.config.patience}); params.txt holds the values of "
                f"{best.where()}, params-last.txt the last ones")

    @property
    def best_W(self) -> np.ndarray:
        """The values of params.txt: those of the lowest validation E, or the current ones."""
        best = self.state.best
        return np.array(self.state.W if best is None else best.W)
