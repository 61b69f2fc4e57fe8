"""Tuning a trace (`tuner.traces.tracefile`) in a run directory: K, then Adam or Wasp's binary
search.

The same code tunes Wasp-Py's evaluation: the gradient steps are `tuner.texel.methods.GradientState`
over `tuner.texel.sparse.gradient`, the coordinate steps `tuner.texel.methods.tune_parameter` over
`tuner.texel.sparse.LinearObjective`, K `tuner.texel.objective.fit_k`. Files in the run directory:

- ``run.json``: the settings, with ``k`` the K of the run (fitted on the training trace with the
  start values unless given);
- ``params.txt``: the values of the lowest validation E so far (without a validation trace, the
  current ones), one line a term in the trace's own ``terms`` form; ``params-last.txt``: the
  current ones;
- ``passes.csv``: E of each pass (pass 0: the start values); a pass is ``epochs`` full-batch
  Adam steps, or one binary search of every chosen weight (a run that stops inside a pass ends
  on a row of the steps it took);
- ``checks.csv``: with a validation trace, E of both traces every ``valid_every`` Adam steps
  (step counted over the run): the granularity at which the best values are kept and the run
  stops;
- ``state.json`` (and ``adam-<pass>.npz``, Adam's weights and moments): where the run stands,
  written after every pass, so ``-resume`` goes on from the last one.
"""

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from tuner.texel import (
    ADAM,
    BINARY,
    Best,
    GradientState,
    LinearObjective,
    TuningRun,
    data_warnings,
    error,
    fit_k,
    frequent,
    gradient_epoch,
    linear_counts,
    neighbour_pairs,
    penalty,
    select_matching,
    settle_reg,
    tune_parameter,
)
from wasp.atomicfile import replacing, write_text

PASS_COLUMNS = ["pass", "moved", "e_train", "e_valid", "lr", "time"]
CHECK_COLUMNS = ["step", "pass", "e_train", "e_valid"]
TRACE_METHODS = (ADAM, BINARY)


@dataclass
class TraceConfig:
    trace: str
    valid_data: str = ""
    method: str = ADAM
    params: list = field(default_factory=list)
    k: float = 0.0  # 0: fit
    lr: float = 1.0  # Adam's step, centipawns
    epochs: int = 100  # Adam: full-batch steps a pass
    max_passes: int = 0  # 0: adam 50, binary 10 (run.json records the number used)
    patience: int = 3  # passes without a lower validation E before stopping (0: never)
    as_float: bool = False  # params.txt with decimals (default: rounded)
    threads: int = 2
    valid_every: int = 10  # Adam: steps between validation checks (0: at the end of a pass)
    reg: float | None = None  # pull toward the start values (methods.penalty); None:
    # methods.default_reg of the training trace, settled at the start and kept in run.json
    reg_source: str = ""  # "-reg" or the default rule's figures
    min_count: int = 0  # tune only weights counting in this many training positions
    smooth: float = 0.0  # pull between neighbouring squares of a table

    def passes(self):
        return self.max_passes or (50 if self.method == ADAM else 10)

    def checks_a_pass(self, valid=True) -> int:
        """Validation checks in an Adam pass (0: the pass's end is the check)."""
        if self.method != ADAM or not self.valid_every or not valid:
            return 0
        return math.ceil(self.epochs / self.valid_every)


def weight_keys(trace):
    """The names a -params glob is matched against, per weight: the term and the label."""
    labels = trace.labels()
    keys = [None] * trace.n_weights
    for t, name in enumerate(trace.names):
        for w in {int(trace.linear.mg_of[t]), int(trace.linear.eg_of[t])}:
            keys[w] = (name, labels[w])
    return keys


def select_trace_weights(trace, patterns) -> np.ndarray:
    """Indices of the trace's weights chosen by the globs (all when none)."""
    return np.nonzero(select_matching(weight_keys(trace), patterns))[0]


def same_terms(a, b):
    """ValueError unless traces a and b have the same terms (names and tapering)."""
    if list(a.names) != list(b.names) or not np.array_equal(a.tapered, b.tapered):
        raise ValueError(f"{b.path}: its terms differ from {a.path}'s (a validation trace "
                         f"must list the same terms in the same order)")


@dataclass
class TraceState:
    """Where a trace run stands: state.json, replaced atomically after every pass."""

    W: list | None = None  # the current values (float), None before the first pass
    passes: int = 0
    done: bool = False
    K: float = 0.0
    lr: float = 1.0
    elapsed: float = 0.0  # tuning seconds, over every session of the run
    stale: int = 0  # passes since the lowest validation E
    best: Best | None = None
    stopped: str = ""  # "patience" when the run stopped for it
    adam: str = ""  # Adam's last checkpoint (adam-<pass>.npz)
    steps: int = 0  # Adam steps over the run
    checks: int = 0  # rows of checks.csv

    @classmethod
    def from_json(cls, d: dict) -> "TraceState":
        return cls(W=d["W"], passes=d["pass"], done=d["done"], K=d["K"], lr=d["lr"],
                   elapsed=d["elapsed"], stale=d["stale"], best=Best.from_json(d["best"]),
                   stopped=d.get("stopped", ""), adam=d.get("adam", ""),
                   steps=d.get("steps", 0), checks=d.get("checks", 0))

    def to_json(self) -> dict:
        d = {"pass": self.passes, "done": self.done, "K": self.K, "W": self.W, "lr": self.lr,
             "elapsed": self.elapsed, "stale": self.stale,
             "best": None if self.best is None else self.best.to_json()}
        if self.adam:
            d["adam"] = self.adam
        if self.stopped:
            d["stopped"] = self.stopped
        if self.steps:
            d["steps"] = self.steps
        if self.checks:
            d["checks"] = self.checks
        return d


class TraceRun(TuningRun):
    """A trace tuning run: `TraceRun.create(dir, config)` or `TraceRun.open(dir)`, then
    `tune(train, valid)` with the parsed traces (`tuner.traces.tracefile.read_trace`)."""

    CONFIG = TraceConfig
    STATE = TraceState
    LOGS = {"passes.csv": PASS_COLUMNS, "checks.csv": CHECK_COLUMNS}

    def __repr__(self):
        return f"TraceRun({self.dir!r}, method={self.config.method}, pass={self.state.passes})"

    def rows(self, log):
        if log == "checks.csv":
            return self.state.checks
        return self.state.passes + 1  # pass 0, the start values, then one row a pass

    @classmethod
    def create(cls, run_dir, config):
        if config.method not in TRACE_METHODS:
            raise ValueError(f"unknown method {config.method!r} (one of "
                             f"{', '.join(TRACE_METHODS)})")
        config.max_passes = config.passes()
        return cls.start(run_dir, config, TraceState(K=float(config.k), lr=config.lr))

    def _save(self, trace):
        st = self.state
        W = np.array(st.W)
        fl = self.config.as_float
        write_text(self.path("params-last.txt"), trace.terms_text(W, fl))
        best = W if st.best is None else np.array(st.best.W)
        write_text(self.path("params.txt"), trace.terms_text(best, fl))
        self.write_state()

    def _values(self, wf):
        """The weights as they are written: rounded unless -float."""
        return np.asarray(wf, float) if self.config.as_float else np.rint(wf)

    def tune(self, train, valid=None, progress=True, log=print):
        """Run passes until nothing moves, the pass limit or `patience` passes without a lower
        validation E (checked every `valid_every` Adam steps, so the run can stop inside a
        pass); returns the values of params.txt (float weights)."""
        from tqdm import tqdm

        from tuner.texel import set_threads

        c = self.config
        st = self.state
        set_threads(c.threads)
        if valid is not None:
            same_terms(train, valid)
        indices = self._tuned(train, valid, log)
        W0 = train.start_weights()
        if st.W is None:
            st.W = [float(v) for v in W0]
        if not st.K:
            st.K = float(c.k) if c.k else fit_k(train.scores(W0), train.results)
            c.k = st.K
            self.write_config()
            log(f"K = {st.K:.6f}")
        K = st.K
        t_start = time.time() - st.elapsed
        pairs = neighbour_pairs(train.labels()) if c.smooth else None
        per_pass = c.checks_a_pass(valid is not None)

        def e_of(trace, W):
            return np.nan if trace is None else error(trace.scores(W), trace.results, K)

        if st.passes == 0:
            e_t, e_v = e_of(train, W0), e_of(valid, W0)
            self.append("passes.csv", [0, 0, e_t, e_v, c.lr, 0.0])
            self.keep_best(0, e_v, st.W, log, step=0 if per_pass else None)
            self._save(train)
            log(f"start: E train {e_t:.6f}" + (f" valid {e_v:.6f}" if valid else ""))
        mask = np.zeros(train.n_weights, dtype=bool)
        mask[indices] = True
        gstate = None
        obj = None
        passes = c.passes()
        bar = tqdm(total=passes, initial=st.passes, desc=f"trace {c.method}", unit="pass",
                   disable=not progress)
        while not st.done and st.passes < passes:
            p = st.passes + 1
            W = np.array(st.W)
            if c.method == ADAM:
                if gstate is None:
                    gstate = GradientState(W, ADAM, c.lr)
                    if st.adam:
                        with np.load(self.path(st.adam)) as z:
                            gstate.restore(z)
                gstate.lr = st.lr
                steps = self._adam_pass(p, gstate, train, valid, mask, W0, pairs, e_of, log,
                                        per_pass)
                W_new = gstate.wf.copy()
                previous, st.adam = st.adam, f"adam-{p}.npz"
                with replacing(self.path(st.adam), ".npz") as tmp:
                    np.savez(tmp, **gstate.arrays())
            else:
                Wi = np.rint(W).astype(np.int64)
                if obj is None:
                    obj = LinearObjective(train.linear, train.results, K, Wi)
                else:
                    obj.commit(Wi)

                def f(Wx, obj=obj):
                    return obj(Wx) + penalty(Wx, W0, c.reg, indices, c.smooth, pairs)

                inner = tqdm(indices, desc=f"pass {p}", unit="w", leave=False,
                             disable=not progress)
                for i in inner:
                    old, new, _ = tune_parameter(BINARY, f, Wi, int(i), f(Wi))
                    if new != old:
                        obj.commit(Wi)
                W_new = Wi.astype(np.float64)
                steps = 0
            before, after = self._values(W), self._values(W_new)
            moved = int(np.sum(np.abs(after - before) > (1e-2 if c.as_float else 0.5)))
            st.W = [float(v) for v in W_new]
            Wv = after
            e_t, e_v = e_of(train, Wv), e_of(valid, Wv)
            st.passes = p
            st.elapsed = time.time() - t_start
            self.append("passes.csv", [p, moved, e_t, e_v, st.lr, round(st.elapsed, 3)])
            if not per_pass:
                self.keep_best(p, e_v, st.W, log)
            elif not st.done:
                log(f"pass {p}: E train {e_t:.6f} valid {e_v:.6f}; the lowest validation E "
                    f"{st.best.e_valid:.6f} after {st.best.where()}")
            if moved == 0 and not st.done:
                st.done = True
                log(f"pass {p}: no weight moved: converged")
            if st.done and st.stopped == "patience" and steps < c.epochs:
                log(f"pass {p} ended after {steps} of its {c.epochs} steps")
            self._save(train)
            if c.method == ADAM and previous and os.path.exists(self.path(previous)):
                os.remove(self.path(previous))  # the state now points at this pass's moments
            bar.update(1)
            bar.set_postfix(E=f"{e_t:.6f}", moved=moved)
        bar.close()
        return self.best_W

    def _tuned(self, train, valid, log) -> np.ndarray:
        """The weights tuned (-params, then -min-count) and, at the start of a run, the lines
        that say the data is small and the -reg it then takes."""
        c, st = self.config, self.state
        indices = select_trace_weights(train, c.params)
        if c.min_count > 0:
            kept = frequent(indices, linear_counts(train.linear), c.min_count)
            if st.passes == 0:
                log(f"min count {c.min_count}: {len(kept)} of {len(indices)} weights tuned")
            indices = kept
        if len(indices) == 0:
            raise ValueError(f"no weights to tune (-min-count {c.min_count} leaves none)")
        if st.passes == 0:
            valid_n = None if valid is None else len(valid)
            for line in data_warnings(len(train), len(indices), valid_n):
                log(line)
        if settle_reg(c, len(train), len(indices), st.passes == 0):
            self.write_config()
        log(f"reg {c.reg:g} ({c.reg_source})")
        return indices

    def _adam_pass(self, p, gstate, train, valid, mask, W0, pairs, e_of, log, per_pass) -> int:
        """Pass p of Adam: `epochs` full-batch steps, the validation E checked every
        `valid_every` of them (checks.csv), the best kept and the run stopped at a check when
        `patience` passes' worth of checks found no lower E. Returns the steps taken."""
        c, st = self.config, self.state
        steps = 0
        for s in range(1, c.epochs + 1):
            gradient_epoch(gstate, train.linear, train.results, st.K, mask, 0, reg=c.reg,
                           W0=W0, smooth=c.smooth, pairs=pairs)
            steps = s
            step = st.steps + s
            if not per_pass or (s % c.valid_every and s != c.epochs):
                continue
            Wv = self._values(gstate.wf)
            e_t, e_v = e_of(train, Wv), e_of(valid, Wv)
            self.append("checks.csv", [step, p, e_t, e_v])
            st.checks += 1
            if step == c.valid_every:
                self._first_check(train, valid, W0, e_t, e_v, e_of, log)
            self.keep_best(p, e_v, [float(v) for v in gstate.wf], log, step=step,
                           checks=per_pass)
            if st.done:
                break
        st.steps += steps
        return steps

    def _first_check(self, train, valid, W0, e_t, e_v, e_of, log):
        """A line when the validation E rose over the first steps while the training E fell:
        the two sets disagree about the direction of every step."""
        e_t0, e_v0 = e_of(train, W0), e_of(valid, W0)
        if e_v > e_v0 and e_t < e_t0:
            log(f"warning: over the first {self.config.valid_every} steps the training E fell "
                f"({e_t0:.6f} -> {e_t:.6f}) and the validation E rose ({e_v0:.6f} -> "
                f"{e_v:.6f}): the two sets disagree (games from different books, engines or "
                f"time controls?); split one set of games by game for both")


def moved_most(trace, W, count=10):
    """Lines of the `count` terms that moved most from their start values (largest change in
    either phase first)."""
    W0 = trace.start_weights()
    mg_of, eg_of = trace.linear.mg_of, trace.linear.eg_of
    d = np.maximum(np.abs(W[mg_of] - W0[mg_of]), np.abs(W[eg_of] - W0[eg_of]))
    out = []
    width = max([len(n) for n in trace.names] + [4])
    for t in np.argsort(-d, kind="stable")[:count]:
        if d[t] == 0:
            break
        a, b = mg_of[t], eg_of[t]
        if trace.tapered[t]:
            out.append(f"  {trace.names[t]:<{width}} {W0[a]:7g} {W0[b]:7g} -> {W[a]:7g} "
                       f"{W[b]:7g}  ({W[a] - W0[a]:+g} {W[b] - W0[b]:+g})")
        else:
            out.append(f"  {trace.names[t]:<{width}} {W0[a]:7g} -> {W[a]:7g}  "
                       f"({W[a] - W0[a]:+g})")
    return out
