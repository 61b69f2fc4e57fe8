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
  Adam steps, or one binary search of every chosen weight;
- ``state.json`` (and ``adam-<pass>.npz``, Adam's weights and moments): where the run stands,
  written after every pass, so ``-resume`` goes on from the last one.
"""

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
    error,
    fit_k,
    gradient_epoch,
    select_matching,
    tune_parameter,
)
from wasp.atomicfile import replacing, write_text

PASS_COLUMNS = ["pass", "moved", "e_train", "e_valid", "lr", "time"]
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
    max_passes: int = 0  # 0: adam 50, binary 10
    patience: int = 3  # passes without a lower validation E before stopping (0: never)
    as_float: bool = False  # params.txt with decimals (default: rounded)
    threads: int = 2

    def passes(self):
        return self.max_passes or (50 if self.method == ADAM else 10)


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

    @classmethod
    def from_json(cls, d: dict) -> "TraceState":
        return cls(W=d["W"], passes=d["pass"], done=d["done"], K=d["K"], lr=d["lr"],
                   elapsed=d["elapsed"], stale=d["stale"], best=Best.from_json(d["best"]),
                   stopped=d.get("stopped", ""), adam=d.get("adam", ""))

    def to_json(self) -> dict:
        d = {"pass": self.passes, "done": self.done, "K": self.K, "W": self.W, "lr": self.lr,
             "elapsed": self.elapsed, "stale": self.stale,
             "best": None if self.best is None else self.best.to_json()}
        if self.adam:
            d["adam"] = self.adam
        if self.stopped:
            d["stopped"] = self.stopped
        return d


class TraceRun(TuningRun):
    """A trace tuning run: `TraceRun.create(dir, config)` or `TraceRun.open(dir)`, then
    `tune(train, valid)` with the parsed traces (`tuner.traces.tracefile.read_trace`)."""

    CONFIG = TraceConfig
    STATE = TraceState
    LOGS = {"passes.csv": PASS_COLUMNS}

    def __repr__(self):
        return f"TraceRun({self.dir!r}, method={self.config.method}, pass={self.state.passes})"

    def rows(self, log):
        return self.state.passes + 1  # pass 0, the start values, then one row a pass

    @classmethod
    def create(cls, run_dir, config):
        if config.method not in TRACE_METHODS:
            raise ValueError(f"unknown method {config.method!r} (one of "
                             f"{', '.join(TRACE_METHODS)})")
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
        validation E; returns the values of params.txt (float weights)."""
        from tqdm import tqdm

        from tuner.texel import set_threads

        c = self.config
        st = self.state
        set_threads(c.threads)
        if valid is not None:
            same_terms(train, valid)
        indices = select_trace_weights(train, c.params)
        if st.W is None:
            st.W = [float(v) for v in train.start_weights()]
        W0 = train.start_weights()
        if not st.K:
            st.K = float(c.k) if c.k else fit_k(train.scores(W0), train.results)
            c.k = st.K
            self.write_config()
            log(f"K = {st.K:.6f}")
        K = st.K
        t_start = time.time() - st.elapsed

        def e_of(trace, W):
            return np.nan if trace is None else error(trace.scores(W), trace.results, K)

        if st.passes == 0:
            e_t, e_v = e_of(train, W0), e_of(valid, W0)
            self.append("passes.csv", [0, 0, e_t, e_v, c.lr, 0.0])
            self.keep_best(0, e_v, st.W, log)
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
                for _ in range(c.epochs):
                    gradient_epoch(gstate, train.linear, train.results, K, mask, 0)
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
                inner = tqdm(indices, desc=f"pass {p}", unit="w", leave=False,
                             disable=not progress)
                for i in inner:
                    old, new, _ = tune_parameter(BINARY, obj, Wi, int(i), obj.E)
                    if new != old:
                        obj.commit(Wi)
                W_new = Wi.astype(np.float64)
            before, after = self._values(W), self._values(W_new)
            moved = int(np.sum(np.abs(after - before) > (1e-2 if c.as_float else 0.5)))
            st.W = [float(v) for v in W_new]
            Wv = after
            e_t, e_v = e_of(train, Wv), e_of(valid, Wv)
            st.passes = p
            st.elapsed = time.time() - t_start
            self.append("passes.csv", [p, moved, e_t, e_v, st.lr, round(st.elapsed, 3)])
            self.keep_best(p, e_v, st.W, log)
            if moved == 0:
                st.done = True
                log(f"pass {p}: no weight moved: converged")
            self._save(train)
            if c.method == ADAM and previous and os.path.exists(self.path(previous)):
                os.remove(self.path(previous))  # the state now points at this pass's moments
            bar.update(1)
            bar.set_postfix(E=f"{e_t:.6f}", moved=moved)
        bar.close()
        return self.best_W


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
