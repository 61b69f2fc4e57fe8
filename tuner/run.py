"""A tuning run in a directory, checkpointed after every parameter so a killed run resumes.

Files in the run directory:

- ``run.json``: the configuration, with ``k`` the K of the run (fitted once, at the start, on
  the training set and the starting parameters, unless given);
- ``params.txt``: the parameters of the lowest validation E so far (the full quiescence E at
  the end of a pass, the start counting as pass 0), or, without a validation set, the current
  ones (`wasp.params` format: ``setoption name EvalFile``); ``params-last.txt``: the current
  parameters. The run stops after ``patience`` passes without a lower validation E;
- ``history.csv``: one row per parameter settled (pass, parameter, old, new, e_train, e_valid,
  time); ``passes.csv``: one row per pass with the full-qsearch E of both sets, starting with
  pass 0, the starting parameters;
- ``state.json``: where the run stands (W, pass, next parameter, rows written), replaced
  atomically after each parameter; ``leaves.npz``: the leaves of the current resolution (and
  the W they were resolved with); ``gradient-<pass>.npz``: the float weights and moments of the
  gradient methods after that epoch;
- ``valid_data.json`` (a `SplitRun` only): the validation files.

Everything a pass does is a function of the saved state, so a resumed run finishes with exactly
the parameters an uninterrupted one would.
"""

import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from testing.rundir import mark
from tuner import methods as M
from tuner.error import Scorer, error, fit_k
from tuner.positions import load_many
from wasp import params as P

HISTORY_COLUMNS = ["pass", "parameter", "old", "new", "e_train", "e_valid", "time"]
VALID_FILE = "valid_data.json"  # a SplitRun's validation files
PASS_COLUMNS = ["pass", "moved", "e_train", "e_valid", "e_train_qsearch", "e_valid_qsearch",
                "time"]


@dataclass
class RunConfig:
    data: list
    method: str = M.BINARY
    params: list = field(default_factory=list)
    threads: int = 2
    valid: float = 0.1
    seed: int = 1
    max_passes: int = 10
    partial: float = 1.0
    resolve_every: int = 1
    skip_bad: bool = False
    skip_plies: int = 8
    limit: int = 0
    init: str = ""
    k: float = 0.0  # 0: fit
    lr: float = 0.0  # 0: the method's default (recorded in run.json as the rate used)
    batch_size: int = 16384
    reg: float = 0.0  # L2 pull toward the starting weights (methods.penalty)
    min_count: int = 0  # tune only weights counting in this many training positions
    patience: int = 2  # stop after this many passes without a lower validation E (0: never)


def _write_atomic(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _truncate_csv(path, columns, rows):
    """Keep the header and the first `rows` data rows (rows written after the last checkpoint
    are dropped: they will be written again)."""
    if not os.path.exists(path):
        _write_atomic(path, ",".join(columns) + "\n")
        return
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    _write_atomic(path, "\n".join(lines[:1 + rows]) + "\n")


def _csv_row(values):
    out = []
    for v in values:
        if isinstance(v, float):
            out.append("" if np.isnan(v) else repr(v))
        else:
            out.append(str(v))
    return ",".join(out)


class Run:
    """A run directory; `Run.create(dir, config)` or `Run.open(dir)` (to resume), then `tune()`."""

    def __init__(self, run_dir, config, state):
        self.dir = str(run_dir)
        self.config = config
        self.state = state
        self.K = float(state.get("K", 0.0))
        self._train = self._valid = None

    def __repr__(self):
        return (f"Run({self.dir!r}, method={self.config.method}, pass={self.state['pass']}, "
                f"next={self.state['cursor']})")

    # -- files ---------------------------------------------------------------

    def path(self, name):
        return os.path.join(self.dir, name)

    @classmethod
    def create(cls, run_dir, config):
        if os.path.exists(os.path.join(run_dir, "state.json")):
            raise FileExistsError(f"{run_dir} already holds a run: use --resume or another "
                                  f"directory")
        if config.method not in M.METHODS:
            raise ValueError(f"unknown method {config.method!r} (one of {', '.join(M.METHODS)})")
        M.select_weights(config.params)  # fail early on a bad pattern
        if config.method in M.DEFAULT_LR and not config.lr:
            config.lr = M.DEFAULT_LR[config.method]  # run.json shows the rate used
        os.makedirs(run_dir, exist_ok=True)
        mark(run_dir, TuningReader.KIND)
        W = P.load(config.init) if config.init else P.default_weights()
        state = {"pass": 0, "cursor": 0, "moved": 0, "history_rows": 0, "pass_rows": 0,
                 "leaves_pass": -1, "done": False, "W": [int(v) for v in W],
                 "W0": [int(v) for v in W], "K": 0.0, "elapsed": 0.0}
        run = cls(run_dir, config, state)
        _write_atomic(run.path("run.json"), json.dumps(asdict(config), indent=2) + "\n")
        _truncate_csv(run.path("history.csv"), HISTORY_COLUMNS, 0)
        _truncate_csv(run.path("passes.csv"), PASS_COLUMNS, 0)
        run._save()
        return run

    @classmethod
    def open(cls, run_dir, threads=None):
        with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as f:
            config = RunConfig(**json.load(f))
        if threads:
            config.threads = threads  # the thread count does not change any result
        with open(os.path.join(run_dir, "state.json"), encoding="utf-8") as f:
            state = json.load(f)
        run = cls(run_dir, config, state)
        _truncate_csv(run.path("history.csv"), HISTORY_COLUMNS, state["history_rows"])
        _truncate_csv(run.path("passes.csv"), PASS_COLUMNS, state["pass_rows"])
        return run

    @property
    def W(self):
        return np.array(self.state["W"], dtype=np.int64)

    def _save(self, W=None):
        if W is not None:
            self.state["W"] = [int(v) for v in W]
        self.state["K"] = self.K
        text = P.format_params(self.W)
        _write_atomic(self.path("params-last.txt"), text)
        best = self.state.get("best")
        if best is not None:
            text = P.format_params(np.array(best["W"], dtype=np.int64))
        _write_atomic(self.path("params.txt"), text)
        _write_atomic(self.path("state.json"), json.dumps(self.state) + "\n")

    @property
    def best_W(self):
        """The parameters of params.txt: the lowest validation E, or the current ones."""
        best = self.state.get("best")
        return self.W if best is None else np.array(best["W"], dtype=np.int64)

    def _track_best(self, done, e_valid, log):
        """After pass `done` (0: the start), keep the parameters if `e_valid` is the lowest
        validation E so far; count the passes without a gain and stop after `patience`."""
        if not np.isfinite(e_valid):  # no validation set: params.txt follows the run
            return
        best = self.state.get("best")
        if best is None or e_valid < best["e_valid"]:
            self.state["best"] = {"pass": done, "e_valid": float(e_valid),
                                  "W": [int(v) for v in self.W]}
            self.state["stale"] = 0
            return
        self.state["stale"] = self.state.get("stale", 0) + 1
        log(f"validation E {e_valid:.6f} is above its lowest, {best['e_valid']:.6f} after pass "
            f"{best['pass']} ({self.state['stale']} pass{'es' if self.state['stale'] > 1 else ''}"
            f" without a gain: fitting the training set's noise)")
        patience = self.config.patience
        if patience and self.state["stale"] >= patience:
            self.state["done"] = True
            self.state["stopped"] = "patience"
            log(f"stopping: {self.state['stale']} passes without a lower validation E "
                f"(-patience {patience}); params.txt holds pass {best['pass']}'s parameters, "
                f"params-last.txt the last ones")

    def _append(self, name, values):
        with open(self.path(name), "a", encoding="utf-8") as f:
            f.write(_csv_row(values) + "\n")

    # -- data ----------------------------------------------------------------

    def load_data(self):
        """The training and validation sets (a seeded split, the same on every resume)."""
        c = self.config
        ps = load_many(c.data, skip_bad=c.skip_bad, skip_plies=c.skip_plies)
        if c.limit:
            ps = ps.subset(np.arange(min(c.limit, len(ps))))
        order = np.random.default_rng(c.seed).permutation(len(ps))
        n_valid = int(round(c.valid * len(ps)))
        self._valid = ps.subset(np.sort(order[:n_valid]))
        self._train = ps.subset(np.sort(order[n_valid:]))
        return ps

    # -- tuning --------------------------------------------------------------

    def tune(self, progress=True, log=print):
        """Run passes until no parameter moves, max_passes or `patience` passes without a lower
        validation E, holding the run's lock; returns the parameters of params.txt."""
        from testing.runlock import RunBusy, RunLock

        try:
            lock = RunLock(self.dir).acquire()
        except RunBusy as e:
            raise ValueError(str(e)) from None
        try:
            return self._tune(progress, log)
        finally:
            lock.release()

    def _tune(self, progress=True, log=print):
        """Run passes until no parameter moves, max_passes or `patience` passes without a lower
        validation E; returns the parameters of params.txt (see the module docstring)."""
        from tqdm import tqdm

        c = self.config
        if self._train is None:
            ps = self.load_data()
            log(f"data: {ps.summary()}; train {len(self._train)}, valid {len(self._valid)}")
            if len(self._train) == 0:
                raise ValueError(f"no training positions in {', '.join(c.data)}")
        train, valid = self._train, self._valid
        sc = Scorer(c.threads)
        if not self.K:
            if c.k:
                self.K = float(c.k)
            else:
                q, _ = sc.qsearch_scores(self.W, train.rows)
                self.K = fit_k(q, train.results)
            c.k = self.K
            _write_atomic(self.path("run.json"), json.dumps(asdict(c), indent=2) + "\n")
            self._save()
            log(f"K = {self.K:.6f}")
        K = self.K
        gradient = c.method in (M.ADAM, M.ADAGRAD)
        indices = M.select_weights(c.params, linear_only=gradient)
        if c.min_count > 0:  # settled once, at the start, so a resumed run tunes the same set
            if "frequent" not in self.state:
                from tuner.sparse import sparse_traces

                kept = M.frequent(indices, sparse_traces(self.W, train.rows, c.threads),
                                  c.min_count)
                self.state["frequent"] = [int(i) for i in kept]
                self._save()
                log(f"min count {c.min_count}: {len(kept)} of {len(indices)} weights tuned")
            indices = np.asarray(self.state["frequent"], dtype=np.int64)
        W0 = np.array(self.state.get("W0", self.state["W"]), dtype=np.float64)
        if len(indices) == 0:
            raise ValueError("no weights to tune (the gradient methods tune linear weights only)")
        leaves_t = leaves_v = None
        q_start = None  # qsearch scores of the starting W (pass 0's row)
        traces = None
        gstate = None
        t_start = time.time() - self.state.get("elapsed", 0.0)

        while not self.state["done"] and self.state["pass"] < c.max_passes:
            p = self.state["pass"]
            W = self.W
            # leaves: re-resolved at the start of every resolve_every-th pass
            want = p - p % max(1, c.resolve_every)
            if self.state["leaves_pass"] != want and self.state["cursor"] == 0:
                q_t, leaves_t = sc.qsearch_scores(W, train.rows)
                q_v, leaves_v = sc.qsearch_scores(W, valid.rows)
                if p == 0:
                    q_start = q_t, q_v
                tmp = self.path("leaves.tmp.npz")
                np.savez(tmp, train=leaves_t, valid=leaves_v, tag=want, W=W)
                os.replace(tmp, self.path("leaves.npz"))
                self.state["leaves_pass"] = want
                self._save()
                traces = None
                W_resolved = W
            elif leaves_t is None:
                with np.load(self.path("leaves.npz")) as z:
                    leaves_t, leaves_v, W_resolved = z["train"], z["valid"], z["W"]
            t0 = time.time()
            if p == 0 and self.state["cursor"] == 0 and not self.state.get("start_row"):
                # pass 0: the starting parameters, in passes.csv and as the first best
                e_t = error(sc.leaf_scores(W, leaves_t), train.results, K)
                e_v = error(sc.leaf_scores(W, leaves_v), valid.results, K)
                if q_start is None:
                    q_start = sc.qsearch_scores(W, train.rows)[0], sc.qsearch_scores(
                        W, valid.rows)[0]
                eq_t = error(q_start[0], train.results, K)
                eq_v = error(q_start[1], valid.results, K)
                self._append("passes.csv", [0, 0, e_t, e_v, eq_t, eq_v,
                                            round(time.time() - t_start, 3)])
                self.state["pass_rows"] += 1
                self.state["start_row"] = True
                self._track_best(0, eq_v, log)
                self._save()
                log(f"start: E train {e_t:.6f} valid {e_v:.6f} (qsearch {eq_t:.6f} / "
                    f"{eq_v:.6f})")

            def f(Wx, _rows=leaves_t, _res=train.results):
                return error(sc.leaf_scores(Wx, _rows), _res, K)

            def objective(Wx, _f=f):
                return _f(Wx) + M.penalty(Wx, W0, c.reg, indices)

            if gradient and self.state["cursor"] < len(indices):
                if traces is None:
                    from tuner.sparse import sparse_traces

                    traces = sparse_traces(W_resolved, leaves_t, c.threads)
                if gstate is None:
                    gstate = M.GradientState(W, c.method, c.lr or None)
                    if self.state.get("gradient"):
                        with np.load(self.path(self.state["gradient"])) as z:
                            gstate.restore(z)
                mask = np.zeros(P.N_WEIGHTS, dtype=bool)
                mask[indices] = True
                M.gradient_epoch(gstate, traces, train.results, K, mask, c.batch_size,
                                 seed=c.seed * 100003 + p, reg=c.reg, W0=W0)
                W_new = gstate.rounded(W)
                moved = int(np.sum(W_new != W))
                e_t = f(W_new)
                e_v = error(sc.leaf_scores(W_new, leaves_v), valid.results, K)
                previous = self.state.get("gradient")
                name = f"gradient-{p}.npz"
                tmp = self.path("gradient.tmp.npz")
                np.savez(tmp, **gstate.arrays())
                os.replace(tmp, self.path(name))
                self.state["gradient"] = name
                self._append("history.csv", [p + 1, "epoch", float("nan"), float(moved), e_t, e_v,
                                             round(time.time() - t_start, 3)])
                self.state["history_rows"] += 1
                self.state["moved"] = moved
                self.state["cursor"] = len(indices)
                self._save(W_new)
                if previous and previous != name and os.path.exists(self.path(previous)):
                    os.remove(self.path(previous))
                log(f"epoch {p + 1}: E train {e_t:.6f}, E valid {e_v:.6f}, {moved} weights "
                    f"changed")
            elif not gradient:
                e = objective(W)
                bar = tqdm(total=len(indices), initial=self.state["cursor"], disable=not progress,
                           desc=f"pass {p + 1}", unit="param", dynamic_ncols=True)
                evals = [0]

                def fc(Wx, _evals=evals, _f=objective):
                    _evals[0] += 1
                    return _f(Wx)

                for k in range(self.state["cursor"], len(indices)):
                    i = int(indices[k])
                    old, new, e = M.tune_parameter(c.method, fc, W, i, e, c.partial)
                    e_v = error(sc.leaf_scores(W, leaves_v), valid.results, K)
                    e_plain = e - M.penalty(W, W0, c.reg, indices)  # history: E itself
                    self._append("history.csv", [p + 1, M.weight_label(i), old, new, e_plain, e_v,
                                                 round(time.time() - t_start, 3)])
                    self.state["history_rows"] += 1
                    self.state["cursor"] = k + 1
                    self.state["moved"] += int(new != old)
                    self.state["elapsed"] = time.time() - t_start
                    self._save(W)
                    dt = max(1e-9, time.time() - t0)
                    bar.set_postfix(E=f"{e_plain:.6f}", pos_s=f"{evals[0] * len(train) / dt:.3g}")
                    bar.update(1)
                bar.close()
            # end of the pass: full quiescence E of both sets
            W = self.W
            eq_t = error(sc.qsearch_scores(W, train.rows)[0], train.results, K)
            eq_v = error(sc.qsearch_scores(W, valid.rows)[0], valid.results, K)
            e_t = f(W)
            e_v = error(sc.leaf_scores(W, leaves_v), valid.results, K)
            moved = self.state["moved"]
            self._append("passes.csv", [p + 1, moved, e_t, e_v, eq_t, eq_v,
                                        round(time.time() - t_start, 3)])
            self.state["pass_rows"] += 1
            log(f"pass {p + 1}: {moved} moved; E train {e_t:.6f} valid {e_v:.6f} "
                f"(qsearch {eq_t:.6f} / {eq_v:.6f})")
            self.state["pass"] = p + 1
            self.state["cursor"] = 0
            self.state["moved"] = 0
            if moved == 0:
                self.state["done"] = True
            self._track_best(p + 1, eq_v, log)
            self.state["elapsed"] = time.time() - t_start
            self._save()
        best = self.state.get("best")
        if best is not None and best["pass"] != self.state["pass"] and \
                self.state.get("stopped") != "patience":
            log(f"lowest validation E {best['e_valid']:.6f} after pass {best['pass']}: those "
                f"parameters are params.txt (the last ones: params-last.txt)")
        return self.best_W


class SplitRun(Run):
    """A `Run` whose validation set is given as files (split by game), not drawn at random.

    Its training set is the run's data files, its validation set the files listed in
    ``valid_data.json`` in the run directory (written by `SplitRun.create_split`).
    ``wasp-tune run TRAIN -valid-data VALID``, its ``--resume`` and ``wasp-tune loop`` use it.
    """

    @classmethod
    def create_split(cls, run_dir, config, valid_data):
        """Create the run directory (as `Run.create`) and record the validation files."""
        missing = [p for p in valid_data if not os.path.exists(p)]
        if missing:
            raise FileNotFoundError(f"validation file not found: {missing[0]}")
        config.valid = 0.0
        run = cls.create(run_dir, config)
        with open(run.path(VALID_FILE), "w", encoding="utf-8") as f:
            json.dump({"valid_data": [os.path.abspath(p) for p in valid_data]}, f, indent=2)
        return run

    def valid_files(self):
        with open(self.path(VALID_FILE), encoding="utf-8") as f:
            return list(json.load(f)["valid_data"])

    def load_data(self):
        """Training set: the data files (first `limit` positions); validation: the given files."""
        c = self.config
        train = load_many(c.data, skip_bad=c.skip_bad, skip_plies=c.skip_plies)
        if c.limit:
            train = train.subset(np.arange(min(c.limit, len(train))))
        valid = load_many(self.valid_files(), skip_bad=c.skip_bad, skip_plies=c.skip_plies)
        self._train, self._valid = train, valid
        return type(train).concat([train, valid])


def history(run_dir):
    """The history table as a pandas DataFrame."""
    import pandas as pd

    return pd.read_csv(os.path.join(run_dir, "history.csv"))


def passes(run_dir):
    """The passes table (pass 0 the start) as a pandas DataFrame."""
    import pandas as pd

    return pd.read_csv(os.path.join(run_dir, "passes.csv"))


class TuningReader:
    """A tuning run read without writing (the dashboard, notebooks): its configuration, where
    it stands, the passes and steps so far, and the parameters before and after."""

    KIND = "tuning"
    FILES = ("run.json", "state.json", "history.csv", "passes.csv", "params.txt")

    def __init__(self, run_dir):
        self.dir = str(run_dir)
        if not self.is_run(self.dir):
            raise FileNotFoundError(f"no tuning run in {self.dir!r} (run.json and state.json)")

    def __repr__(self):
        return f"TuningReader({self.dir!r})"

    @staticmethod
    def is_run(run_dir) -> bool:
        """A tuning run, also one written before runs were marked (`testing.rundir`)."""
        return all(os.path.isfile(os.path.join(run_dir, n)) for n in ("run.json", "state.json"))

    def _json(self, name):
        with open(os.path.join(self.dir, name), encoding="utf-8") as f:
            return json.load(f)

    def _csv(self, name):
        import csv

        try:
            with open(os.path.join(self.dir, name), newline="", encoding="utf-8") as f:
                return [r for r in csv.DictReader(f) if r]
        except FileNotFoundError:
            return []

    def config(self) -> dict:
        """run.json: the configuration (`RunConfig`'s fields)."""
        return self._json("run.json")

    def state(self) -> dict:
        """state.json: pass, next parameter, weights (W, and W0 at the start), done."""
        return self._json("state.json")

    def passes(self) -> list[dict]:
        """passes.csv's rows (`PASS_COLUMNS`, as text), pass 0 first."""
        return self._csv("passes.csv")

    def steps(self) -> int:
        """Rows of history.csv: the parameters settled so far."""
        return len(self._csv("history.csv"))

    def finished(self) -> bool:
        state = self.state()
        return bool(state.get("done")) or \
            state.get("pass", 0) >= self.config().get("max_passes", float("inf"))

    def started(self) -> float:
        return os.path.getmtime(os.path.join(self.dir, "run.json"))

    def updated(self) -> float:
        """When the run last wrote a file (0.0 if never)."""
        times = [os.path.getmtime(p) for p in (os.path.join(self.dir, n) for n in self.FILES)
                 if os.path.exists(p)]
        return max(times, default=0.0)

    def start_weights(self) -> np.ndarray:
        state = self.state()
        return np.asarray(state.get("W0", state.get("W", [])), dtype=np.float64)

    def best_weights(self) -> np.ndarray:
        """The weights of params.txt (the best so far), or the current ones before it exists."""
        path = os.path.join(self.dir, "params.txt")
        if os.path.exists(path):
            return P.load(path).astype(np.float64)
        return np.asarray(self.state()["W"], dtype=np.float64)

    def resume_command(self) -> str:
        return f"wasp-tune run -dir {self.dir} --resume"

