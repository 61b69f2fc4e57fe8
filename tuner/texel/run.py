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
from dataclasses import dataclass, field

import numpy as np

from wasp import params as P
from wasp.atomicfile import replacing, write_text

from . import methods as M
from .objective import Scorer, error, fit_k
from .positions import load_many
from .tuningrun import Best, TuningRun

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
    reg: float | None = None  # L2 pull toward the starting weights (methods.penalty); None:
    # methods.default_reg of the training set, settled at the start and kept in run.json
    reg_source: str = ""  # "-reg" or the default rule's figures
    min_count: int = 0  # tune only weights counting in this many training positions
    smooth: float = 0.0  # pull between neighbouring squares of a table (methods.penalty)
    patience: int = 2  # stop after this many passes without a lower validation E (0: never)


@dataclass
class RunState:
    """Where a run stands: state.json, replaced atomically after each parameter.

    The JSON keys are the field names, except ``pass`` (`passes`); the fields after `elapsed`
    are written only once set, and a state.json without them (an older run) reads as unset.
    """

    W: list  # the current parameters
    W0: list  # the starting parameters (the regularisation's anchor)
    passes: int = 0  # passes finished; the one under way is passes + 1
    cursor: int = 0  # the next parameter (or epoch) of the pass under way
    moved: int = 0  # parameters moved in the pass under way
    history_rows: int = 0  # rows of history.csv and passes.csv this state accounts for
    pass_rows: int = 0
    leaves_pass: int = -1  # the pass whose start resolved leaves.npz (-1: none yet)
    done: bool = False
    K: float = 0.0
    elapsed: float = 0.0  # tuning seconds, over every session of the run
    frequent: list | None = None  # -min-count: the weights tuned, settled at the start
    start_row: bool = False  # passes.csv holds pass 0 (the starting parameters)
    best: Best | None = None
    stale: int | None = None  # passes since the lowest validation E
    stopped: str = ""  # "patience" when the run stopped for it
    gradient: str = ""  # the gradient methods' last checkpoint (gradient-<pass>.npz)

    _REQUIRED = ("pass", "cursor", "moved", "history_rows", "pass_rows", "leaves_pass", "done",
                 "W", "W0", "K", "elapsed")

    @classmethod
    def start(cls, W) -> "RunState":
        W = [int(v) for v in W]
        return cls(W=W, W0=list(W))

    @classmethod
    def from_json(cls, d: dict) -> "RunState":
        best = d.get("best")
        return cls(W=d["W"], W0=d.get("W0", d["W"]), passes=d["pass"], cursor=d["cursor"],
                   moved=d["moved"], history_rows=d["history_rows"], pass_rows=d["pass_rows"],
                   leaves_pass=d["leaves_pass"], done=d["done"], K=float(d.get("K", 0.0)),
                   elapsed=d.get("elapsed", 0.0), frequent=d.get("frequent"),
                   start_row=bool(d.get("start_row", False)),
                   best=Best.from_json(best),
                   stale=d.get("stale"), stopped=d.get("stopped", ""),
                   gradient=d.get("gradient", ""))

    def to_json(self) -> dict:
        d = {"pass": self.passes, "cursor": self.cursor, "moved": self.moved,
             "history_rows": self.history_rows, "pass_rows": self.pass_rows,
             "leaves_pass": self.leaves_pass, "done": self.done, "W": self.W, "W0": self.W0,
             "K": self.K, "elapsed": self.elapsed}
        optional = {"frequent": self.frequent, "start_row": self.start_row or None,
                    "best": None if self.best is None else self.best.to_json(),
                    "stale": self.stale, "stopped": self.stopped or None,
                    "gradient": self.gradient or None}
        d.update((k, v) for k, v in optional.items() if v is not None)
        return d


@dataclass
class _Session:
    """What one call of `Run.tune` works with besides the saved state: the sets, the scorer,
    K, the weights tuned, and the leaves (and what follows from them) while they hold."""

    train: object
    valid: object
    sc: Scorer
    K: float
    gradient: bool  # a gradient method (one epoch a pass) rather than a coordinate search
    indices: np.ndarray  # the weights tuned
    W0: np.ndarray  # the starting weights (float), for the regularisation
    pairs: np.ndarray  # neighbouring squares of the tables (methods.neighbour_pairs)
    t_start: float  # time.time() less the run's earlier tuning time
    leaves_t: np.ndarray | None = None
    leaves_v: np.ndarray | None = None
    W_resolved: np.ndarray | None = None  # the W the leaves were resolved with
    q_start: tuple | None = None  # qsearch scores of the starting W (pass 0's row)
    traces: object = None  # sparse traces of the leaves (gradient methods)
    gstate: object = None  # the gradient method's float weights and moments
    linear_e: object = None  # the coordinate methods' objective of the linear weights
    linear_leaves: object = None  # the leaves it was built on

    def seconds(self) -> float:
        return round(time.time() - self.t_start, 3)

    def e_train(self, W) -> float:
        """E of the training set at its leaves."""
        return error(self.sc.leaf_scores(W, self.leaves_t), self.train.results, self.K)

    def e_valid(self, W) -> float:
        """E of the validation set at its leaves."""
        return error(self.sc.leaf_scores(W, self.leaves_v), self.valid.results, self.K)

    def e_qsearch(self, W) -> tuple[float, float]:
        """E of both sets after a full quiescence search."""
        return (error(self.sc.qsearch_scores(W, self.train.rows)[0], self.train.results, self.K),
                error(self.sc.qsearch_scores(W, self.valid.rows)[0], self.valid.results, self.K))


class Run(TuningRun):
    """A run directory; `Run.create(dir, config)` or `Run.open(dir)` (to resume), then `tune()`."""

    CONFIG = RunConfig
    STATE = RunState
    LOGS = {"history.csv": HISTORY_COLUMNS, "passes.csv": PASS_COLUMNS}
    KIND = "tuning"

    def __init__(self, run_dir, config, state: RunState):
        super().__init__(run_dir, config, state)
        self.K = float(state.K)
        self._train = self._valid = None

    def __repr__(self):
        return (f"Run({self.dir!r}, method={self.config.method}, pass={self.state.passes}, "
                f"next={self.state.cursor})")

    def rows(self, log):
        return self.state.history_rows if log == "history.csv" else self.state.pass_rows

    @classmethod
    def create(cls, run_dir, config):
        if config.method not in M.METHODS:
            raise ValueError(f"unknown method {config.method!r} (one of {', '.join(M.METHODS)})")
        M.select_weights(config.params)  # fail early on a bad pattern
        if config.method in M.DEFAULT_LR and not config.lr:
            config.lr = M.DEFAULT_LR[config.method]  # run.json shows the rate used
        W = P.load(config.init) if config.init else P.default_weights()
        run = cls.start(run_dir, config, RunState.start(W))
        run._save()
        return run

    @property
    def W(self):
        return np.array(self.state.W, dtype=np.int64)

    def _save(self, W=None):
        if W is not None:
            self.state.W = [int(v) for v in W]
        self.state.K = self.K
        text = P.format_params(self.W)
        write_text(self.path("params-last.txt"), text)
        if self.state.best is not None:
            text = P.format_params(np.array(self.state.best.W, dtype=np.int64))
        write_text(self.path("params.txt"), text)
        self.write_state()

    def _keep_best(self, done, e_valid, log):
        self.keep_best(done, e_valid, [int(v) for v in self.W], log)

    def _history_row(self, s: _Session, passes, parameter, old, new, e_train, e_valid):
        self.append("history.csv", [passes, parameter, old, new, e_train, e_valid,
                                     s.seconds()])
        self.state.history_rows += 1

    def _pass_row(self, s: _Session, passes, moved, e_train, e_valid, eq_train, eq_valid):
        self.append("passes.csv", [passes, moved, e_train, e_valid, eq_train, eq_valid,
                                    s.seconds()])
        self.state.pass_rows += 1

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
        return self.locked(lambda: self._tune(progress, log))

    def _tune(self, progress=True, log=print):
        """Run passes until no parameter moves, max_passes or `patience` passes without a lower
        validation E; returns the parameters of params.txt (see the module docstring)."""
        s = self._start_session(log)
        st = self.state
        while not st.done and st.passes < self.config.max_passes:
            self._resolve_leaves(s)
            t0 = time.time()
            if st.passes == 0 and st.cursor == 0 and not st.start_row:
                self._start_row(s, log)
            if s.gradient and st.cursor < len(s.indices):
                self._gradient_epoch(s, log)
            elif not s.gradient:
                self._coordinate_pass(s, t0, progress)
            self._end_pass(s, log)
        best = st.best
        if best is not None and best.passes != st.passes and st.stopped != "patience":
            log(f"lowest validation E {best.e_valid:.6f} after pass {best.passes}: those "
                f"parameters are params.txt (the last ones: params-last.txt)")
        return self.best_W

    def _start_session(self, log) -> _Session:
        """The data, K (fitted once, then kept in run.json) and the weights to tune."""
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
            self.write_config()
            self._save()
            log(f"K = {self.K:.6f}")
        gradient = c.method in (M.ADAM, M.ADAGRAD)
        indices = M.select_weights(c.params, linear_only=gradient)
        if c.min_count > 0:  # settled once, at the start, so a resumed run tunes the same set
            if self.state.frequent is None:
                from .sparse import sparse_traces

                counts = M.linear_counts(sparse_traces(self.W, train.rows, c.threads))
                kept = M.frequent(indices, counts, c.min_count)
                self.state.frequent = [int(i) for i in kept]
                self._save()
                log(f"min count {c.min_count}: {len(kept)} of {len(indices)} weights tuned")
            indices = np.asarray(self.state.frequent, dtype=np.int64)
        if len(indices) == 0:
            raise ValueError("no weights to tune (the gradient methods tune linear weights only)")
        if self.state.passes == 0:
            for line in M.data_warnings(len(train), len(indices), len(valid)):
                log(line)
        if M.settle_reg(c, len(train), len(indices), self.state.passes == 0):
            self.write_config()
        log(f"reg {c.reg:g} ({c.reg_source})")
        if not gradient:  # term by term (opening, endgame), as `wasp-tune trace` goes
            indices = np.asarray(sorted(indices, key=lambda i: (P.PARAM_OF[i], P.ELEMENT_OF[i],
                                                                P.PHASE_OF[i])), dtype=np.int64)
        pairs = M.neighbour_pairs([M.weight_label(i) for i in range(P.N_WEIGHTS)]) \
            if c.smooth else None
        return _Session(train, valid, sc, self.K, gradient, indices,
                        np.array(self.state.W0, dtype=np.float64), pairs,
                        time.time() - self.state.elapsed)

    def _resolve_leaves(self, s: _Session):
        """The leaves of both sets: resolved again at the start of every resolve_every-th pass
        (and saved in leaves.npz), else those of leaves.npz."""
        st, p = self.state, self.state.passes
        want = p - p % max(1, self.config.resolve_every)
        if st.leaves_pass != want and st.cursor == 0:
            W = self.W
            q_t, s.leaves_t = s.sc.qsearch_scores(W, s.train.rows)
            q_v, s.leaves_v = s.sc.qsearch_scores(W, s.valid.rows)
            if p == 0:
                s.q_start = q_t, q_v
            with replacing(self.path("leaves.npz"), ".npz") as tmp:
                np.savez(tmp, train=s.leaves_t, valid=s.leaves_v, tag=want, W=W)
            st.leaves_pass = want
            self._save()
            s.traces = None
            s.W_resolved = W
        elif s.leaves_t is None:
            with np.load(self.path("leaves.npz")) as z:
                s.leaves_t, s.leaves_v, s.W_resolved = z["train"], z["valid"], z["W"]

    def _start_row(self, s: _Session, log):
        """Pass 0: the starting parameters, in passes.csv and as the first best."""
        W = self.W
        e_t, e_v = s.e_train(W), s.e_valid(W)
        if s.q_start is None:
            s.q_start = (s.sc.qsearch_scores(W, s.train.rows)[0],
                         s.sc.qsearch_scores(W, s.valid.rows)[0])
        eq_t = error(s.q_start[0], s.train.results, s.K)
        eq_v = error(s.q_start[1], s.valid.results, s.K)
        self._pass_row(s, 0, 0, e_t, e_v, eq_t, eq_v)
        self.state.start_row = True
        self._keep_best(0, eq_v, log)
        self._save()
        log(f"start: E train {e_t:.6f} valid {e_v:.6f} (qsearch {eq_t:.6f} / {eq_v:.6f})")

    def _linear_e(self, s: _Session, W):
        """The objective of the linear weights at the training leaves: the trace tuner's
        (`waspterms.WaspLinearE`), built on the leaves' trace at the weights they were
        resolved with (the non-linear ones as in W), again when either changes."""
        lin = s.linear_e
        if lin is None or s.linear_leaves is not s.leaves_t or not lin.serves(W):
            from .waspterms import WaspLinearE

            Wb = np.where(P.LINEAR, s.W_resolved, W)
            lin = s.linear_e = WaspLinearE(Wb, s.leaves_t, s.train.results, s.K,
                                           self.config.threads)
            s.linear_leaves = s.leaves_t
        lin.commit(W)
        return lin

    def _objective(self, s: _Session, W, i):
        """The training E at the leaves that settles weight i, plus the L2 pull toward the
        starting weights: a linear weight's through the trace tuner's linear model of the
        leaves (so `wasp-tune run` and `wasp-tune trace` of Wasp's trace are one tuner), a
        non-linear one's from the evaluation itself."""
        c = self.config
        score = self._linear_e(s, W) if P.LINEAR[i] else s.e_train
        return lambda Wx: score(Wx) + M.penalty(Wx, s.W0, c.reg, s.indices, c.smooth, s.pairs)

    def _gradient_epoch(self, s: _Session, log):
        """A gradient method's pass: one epoch over the training leaves, then a checkpoint of
        its float weights and moments (gradient-<pass>.npz)."""
        c, st, p = self.config, self.state, self.state.passes
        W = self.W
        if s.traces is None:
            from .sparse import sparse_traces

            s.traces = sparse_traces(s.W_resolved, s.leaves_t, c.threads)
        if s.gstate is None:
            s.gstate = M.GradientState(W, c.method, c.lr or None)
            if st.gradient:
                with np.load(self.path(st.gradient)) as z:
                    s.gstate.restore(z)
        mask = np.zeros(P.N_WEIGHTS, dtype=bool)
        mask[s.indices] = True
        M.gradient_epoch(s.gstate, s.traces, s.train.results, s.K, mask, c.batch_size,
                         seed=c.seed * 100003 + p, reg=c.reg, W0=s.W0, smooth=c.smooth,
                         pairs=s.pairs)
        W_new = s.gstate.rounded(W)
        moved = int(np.sum(W_new != W))
        e_t, e_v = s.e_train(W_new), s.e_valid(W_new)
        previous = st.gradient
        name = f"gradient-{p}.npz"
        with replacing(self.path(name), ".npz") as tmp:
            np.savez(tmp, **s.gstate.arrays())
        st.gradient = name
        self._history_row(s, p + 1, "epoch", float("nan"), float(moved), e_t, e_v)
        st.moved = moved
        st.cursor = len(s.indices)
        self._save(W_new)
        if previous and previous != name and os.path.exists(self.path(previous)):
            os.remove(self.path(previous))
        log(f"epoch {p + 1}: E train {e_t:.6f}, E valid {e_v:.6f}, {moved} weights changed")

    def _coordinate_pass(self, s: _Session, t0, progress):
        """A coordinate search's pass: each weight from the cursor on settled by the method,
        with a checkpoint after each (history.csv, state.json)."""
        from tqdm import tqdm

        c, st, p = self.config, self.state, self.state.passes
        W = self.W
        bar = tqdm(total=len(s.indices), initial=st.cursor, disable=not progress,
                   desc=f"pass {p + 1}", unit="param", dynamic_ncols=True)
        evals = 0
        for k in range(st.cursor, len(s.indices)):
            i = int(s.indices[k])
            objective = self._objective(s, W, i)

            def counted(Wx, objective=objective):
                nonlocal evals
                evals += 1
                return objective(Wx)

            old, new, _ = M.tune_parameter(c.method, counted, W, i, objective(W), c.partial)
            e_v = s.e_valid(W)
            e_plain = s.e_train(W)  # history: E itself, of the evaluation at the leaves
            self._history_row(s, p + 1, M.weight_label(i), old, new, e_plain, e_v)
            st.cursor = k + 1
            st.moved += int(new != old)
            st.elapsed = time.time() - s.t_start
            self._save(W)
            dt = max(1e-9, time.time() - t0)
            bar.set_postfix(E=f"{e_plain:.6f}", pos_s=f"{evals * len(s.train) / dt:.3g}")
            bar.update(1)
        bar.close()

    def _end_pass(self, s: _Session, log):
        """The end of a pass: the full quiescence E of both sets in passes.csv, the best so
        far, and the stop when nothing moved."""
        st = self.state
        p, W = st.passes, self.W
        eq_t, eq_v = s.e_qsearch(W)
        e_t, e_v = s.e_train(W), s.e_valid(W)
        moved = st.moved
        self._pass_row(s, p + 1, moved, e_t, e_v, eq_t, eq_v)
        log(f"pass {p + 1}: {moved} moved; E train {e_t:.6f} valid {e_v:.6f} "
            f"(qsearch {eq_t:.6f} / {eq_v:.6f})")
        st.passes = p + 1
        st.cursor = 0
        st.moved = 0
        if moved == 0:
            st.done = True
        self._keep_best(p + 1, eq_v, log)
        st.elapsed = time.time() - s.t_start
        self._save()


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
        from testing.rundir import last_write

        return last_write(self.dir, self.FILES)

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

