"""The tuning loop: self-play games -> labelled set -> Texel tuning -> SPRT tuned vs default.

`wasp-tune loop -dir DIR` runs the stages in order, each in its own subdirectory of DIR:

- ``games/``: self-play of our engine with the match runner (``match/`` run store, games.pgn);
- ``data/``: the labelled set built from those games (train.epd, valid.epd split by game,
  summary.json);
- ``tune/``: a tuner run directory (params.txt, history.csv, passes.csv, run.json); with
  ``then_binary`` set, ``tune/nonlinear/`` is a second run, Wasp's binary search over those
  weights starting from the first run's result (the gradient methods leave the non-linear
  king-safety and draw-factor terms alone);
- ``sprt/``: the match of the tuned engine (``option.EvalFile=`` the last run's params.txt)
  against the one it started from, with an SPRT;
- ``report.json``: positions, tuning time, E of the training and validation sets before and
  after (``E_valid_rose``: the tuned parameters are worse on the held-out games; the report's
  text says so), the match's score, Elo and SPRT result (null where a statistic is undefined);
  ``report.svg`` plots E per tuning pass.

The loop plays and tunes the hand-written evaluation (its engines get ``EvalFile`` empty or a
parameter file, never the engine's default net). It starts from the built-in values, or from
another start (``start``: a parameter file, or the built-in values with the material scaled,
``material*0.3``), written to ``start.txt``: self-play, tuning and the match all start from it,
so the match measures what tuning gained.

A stage whose output is complete is skipped when the command runs again, and a killed stage
resumes (the match runner's ``-resume``, the tuner's checkpoint), so after a kill the same
command picks up where it stopped. The settings are saved in ``loop.json`` at the first run and
read from there afterwards.
"""

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from tuner.sets import BuildConfig, build, summary_text
from tuner.sets import write as write_set
from tuner.shipped import DATA_DIR
from tuner.texel import SplitRun
from wasp import background
from wasp.atomicfile import replacing

from . import selfplay

STAGES = ("games", "data", "tune", "sprt", "report")
MATERIAL = ("pawn_value", "knight_value", "bishop_value", "rook_value", "queen_value")
# the shipped sample's games (datasets/README.md): the quick loop tunes on them and its own
SAMPLE_GAMES = os.path.join(DATA_DIR, "sample", "games.pgn")


@dataclass
class LoopConfig:
    games: int = 2000  # self-play games (whole pairs)
    nodes: int = 2000  # nodes per move in self-play and the SPRT (0: use tc)
    tc: str = ""  # a time control instead, e.g. "5+0.05"
    concurrency: int = 2
    openings: str = ""  # EPD or PGN openings (default: datasets/openings-uho-5000.epd)
    extra_data: list = field(default_factory=list)  # more PGN games for the set
    skip_plies: int = 8
    max_per_game: int = 40
    valid: float = 0.1
    method: str = "binary"
    params: list = field(default_factory=list)  # tuner globs (default: all)
    max_passes: int = 3
    partial: float = 1.0  # binary: move this fraction of the way to each optimum
    reg: float | None = None  # tuner: L2 pull toward the start (None: methods.default_reg)
    lr: float = 0.0  # tuner: gradient methods' learning rate (0: the method's default)
    min_count: int = 0  # tuner: leave weights rarer than this in the training set alone
    then_binary: list = field(default_factory=list)  # globs binary-searched after the method
    then_passes: int = 2  # passes of that binary search at most
    threads: int = 2
    sprt_games: int = 1000  # at most, in pairs
    sprt_nodes: int = 0  # 0: as self-play
    sprt_tc: str = ""
    elo0: float = 0.0
    elo1: float = 10.0
    seed: int = 1
    start: str = ""  # the evaluation to start from: built-in, a file, or "material*F"

    @classmethod
    def quick(cls):
        """A first run that shows a gain in a few minutes on 2 cores: from the built-in values
        with the material cut to 30 % (about 240 Elo weaker at 2000 nodes), tune material and
        tempo on the shipped sample's 600 games and 24 played here (a quarter of the games
        held out, so the validation E is not that of a few games), then at most 100 games of
        the tuned engine against that start, an SPRT of 0 against 50 nElo (a gain this
        size is accepted in a few dozen games)."""
        return cls(games=24, nodes=400, max_per_game=30, valid=0.25, max_passes=6,
                   extra_data=[SAMPLE_GAMES] if os.path.exists(SAMPLE_GAMES) else [],
                   params=[*MATERIAL, "tempo"], start="material*0.3",
                   sprt_games=100, sprt_nodes=2000, elo1=50.0)


def start_weights(spec: str) -> np.ndarray:
    """The weights a loop starts from: the built-in values (""), those with the material
    values (mg and eg) scaled ("material*0.5"), or a parameter file's."""
    from wasp import params as P

    if not spec:
        return P.default_weights()
    if spec.startswith("material*"):
        try:
            factor = float(spec[len("material*"):])
        except ValueError:
            raise ValueError(f"start {spec!r}: material*F needs a number F") from None
        if not 0 < factor < 100:
            raise ValueError(f"start {spec!r}: the factor must be above 0 and below 100")
        W = P.default_weights()
        for name in MATERIAL:
            for phase in ("mg", "eg"):
                i = P.weight_index(name, 0, phase)
                W[i] = int(round(W[i] * factor))
        return W
    if not os.path.isfile(spec):
        raise ValueError(f"start {spec!r}: no such parameter file (or material*F)")
    return P.load(spec)


class Loop:
    """One loop directory; `run()` does what is still to do. A loop of another kind names its
    settings (`CONFIG`), its stages (`STAGES`, each a method of that name, the last "report")
    and when each is `done`."""

    CONFIG = LoopConfig
    STAGES = STAGES
    KERNEL_STAGES = ("games", "data", "tune", "sprt", "report")  # stages that run our kernels

    def __init__(self, loop_dir, config=None, log=print, quiet_matches=False, warm=True):
        self.dir = str(loop_dir)
        self.log = log
        self.quiet_matches = quiet_matches
        self.warm = warm  # compile the kernels first (`tuner.loop.warm`), under one bar
        saved = os.path.join(self.dir, "loop.json")
        if os.path.exists(saved):
            with open(saved, encoding="utf-8") as f:
                self.config = self.CONFIG(**json.load(f))
            self.resumed = True
        else:
            self.config = config or self.CONFIG()
            os.makedirs(self.dir, exist_ok=True)
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(asdict(self.config), f, indent=2)
            self.resumed = False

    def __repr__(self):
        return f"Loop({self.dir!r}, next stage {self.next_stage()!r})"

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    # -- stage status -----------------------------------------------------------

    def done(self, stage) -> bool:
        if stage in ("games", "sprt"):
            return selfplay.match_done(self.path(stage))
        if stage == "data":
            return os.path.exists(self.path("data", "summary.json"))
        if stage == "tune":
            return os.path.exists(self.path("tune", "done.json"))
        return os.path.exists(self.path("report.json"))

    def next_stage(self):
        for s in self.STAGES:
            if not self.done(s):
                return s
        return None

    def start_params(self) -> str:
        """The starting parameter file (start.txt, written the first time), or "" for the
        built-in values."""
        if not self.config.start:
            return ""
        path = self.path("start.txt")
        if not os.path.exists(path):
            from wasp import params as P

            with replacing(path) as tmp:
                P.save(start_weights(self.config.start), tmp)
        return path

    def start_name(self) -> str:
        return "wasp-start" if self.config.start else "wasp-default"

    # -- stages -----------------------------------------------------------------

    def games(self):
        c = self.config
        start = self.start_params()
        self.log(f"[games] {c.games} self-play games at "
                 f"{c.tc or f'{c.nodes} nodes a move'} in {self.path('games')}"
                 + (f", from {start} ({c.start})" if start else ""))
        selfplay.selfplay(self.path("games"), c.games, nodes=c.nodes, tc=c.tc,
                          concurrency=c.concurrency, openings=c.openings, seed=c.seed,
                          params=start, quiet=self.quiet_matches, log=self.log,
                          warm=not self.warm)

    def data(self):
        c = self.config
        paths = [self.path("games", "games.pgn"), *c.extra_data]
        bc = BuildConfig(skip_plies=c.skip_plies, max_per_game=c.max_per_game,
                                 valid=c.valid, seed=c.seed, threads=c.threads)
        self.log(f"[data] building the labelled set from {', '.join(paths)}")
        ds = build(paths, bc, log=self.log)
        s = write_set(ds, self.path("data"), "c9", bc)
        self.log(summary_text(s))
        if s["train"] == 0 or s["valid"] == 0:
            raise RuntimeError(f"the set has {s['train']} training and {s['valid']} validation "
                               f"positions: play more games")

    def tuned_params(self):
        """The parameter file the tune stage ends with (the SPRT's EvalFile)."""
        if self.config.then_binary:
            return self.path("tune", "nonlinear", "params.txt")
        return self.path("tune", "params.txt")

    def _tuner_run(self, rdir, make_config, started):
        """Resume the tuner run in rdir, or create it (validation: the set's held-out games)
        from make_config() and log `started`; then tune it to the end."""
        if os.path.exists(os.path.join(rdir, "state.json")):
            run = SplitRun.open(rdir, threads=self.config.threads)
            self.log(f"[tune] resuming {run}")
        else:
            run = SplitRun.create_split(rdir, make_config(), [self.path("data", "valid.epd")])
            self.log(started)
        run.tune(progress=not self.quiet_matches, log=self.log)
        return run

    def builtin_k(self) -> float:
        """K fitted with the hand-written evaluation's built-in weights when the loop starts
        from other weights (0: the tuner fits it with the start): the scale of the engine's
        centipawns, so that K does not absorb a start whose scale is wrong (halved material)
        and E shows it."""
        if not self.config.start:
            return 0.0
        from tuner.texel import Scorer, fit_k, load
        from wasp import params as P

        ps = load(self.path("data", "train.epd"), use_cache=False)
        q, _ = Scorer(self.config.threads).qsearch_scores(P.default_weights(), ps.rows)
        k = fit_k(q, ps.results)
        self.log(f"[tune] K {k:.4f}, fitted with the built-in weights")
        return k

    def tune(self):
        from tuner.texel import RunConfig, select_weights

        c = self.config
        tdir = self.path("tune")
        train = [self.path("data", "train.epd")]
        if c.then_binary:
            select_weights(c.then_binary)  # a glob naming nothing fails before the first run
        run = self._tuner_run(
            tdir, lambda: RunConfig(data=train, method=c.method, params=list(c.params),
                                    threads=c.threads, seed=c.seed, max_passes=c.max_passes,
                                    partial=c.partial, skip_plies=c.skip_plies, reg=c.reg,
                                    lr=c.lr, min_count=c.min_count,
                                    init=self.start_params(), k=self.builtin_k()),
            f"[tune] {c.method} search over {', '.join(c.params) or 'all parameters'}, at most "
            f"{c.max_passes} passes, in {tdir}")
        seconds, passes = run.state.elapsed, run.state.passes
        best_pass = passes if run.state.best is None else run.state.best.passes
        if c.then_binary:
            ndir = os.path.join(tdir, "nonlinear")
            second = self._tuner_run(
                ndir, lambda: RunConfig(data=train, method="binary", params=list(c.then_binary),
                                        threads=c.threads, seed=c.seed,
                                        max_passes=c.then_passes, skip_plies=c.skip_plies,
                                        init=os.path.join(tdir, "params.txt"), k=run.K),
                f"[tune] then binary search over {', '.join(c.then_binary)} from "
                f"{tdir}/params.txt (K {run.K:.4f}), at most {c.then_passes} passes, in {ndir}")
            seconds += second.state.elapsed
            passes += second.state.passes
        with open(os.path.join(tdir, "done.json"), "w", encoding="utf-8") as f:
            json.dump({"tuning_seconds": seconds, "passes": passes, "best_pass": best_pass}, f,
                      indent=2)

    def sprt(self):
        c = self.config
        tuned, start = self.tuned_params(), self.start_params()
        engines = [selfplay.wasp_engine("wasp-tuned", tuned),
                   selfplay.wasp_engine(self.start_name(), start)]
        self.log(f"[sprt] wasp-tuned ({tuned}) against {self.start_name()}"
                 + (f" ({start})" if start else "") + f", at most {c.sprt_games} "
                 f"games at {c.sprt_tc or c.tc or f'{c.sprt_nodes or c.nodes} nodes a move'}, "
                 f"SPRT elo0={c.elo0} elo1={c.elo1}")
        selfplay.run_match(self.path("sprt"), engines, c.sprt_games,
                           nodes=c.sprt_nodes or c.nodes, tc=c.sprt_tc or c.tc,
                           concurrency=c.concurrency, openings=c.openings, seed=c.seed + 1,
                           sprt={"elo0": c.elo0, "elo1": c.elo1}, quiet=self.quiet_matches,
                           log=self.log, warm=not self.warm)

    def report(self):
        """E before (the start) and after (tuned) with the run's K; the match's outcome."""
        c = self.config
        data, K, tuned = self.tuning_records()
        E, W0, W1 = self.errors(K)
        head = {"start": c.start or "built-in", "opponent": self.start_name(),
                "selfplay_games": int(_count_games(self.path("games", "games.pgn")))}
        return self.publish(head, data, K, tuned, E, W0, W1, c.elo0, c.elo1)

    def errors(self, K):
        """(E, W0, W1): E of the training and validation sets at `K` with the start weights
        W0 and the tuned W1, ``E[set] = [before, after]``."""
        from tuner.texel import Scorer, error, load
        from wasp import params as P

        sc = Scorer(self.config.threads)
        start = self.start_params()
        W0 = P.load(start) if start else P.default_weights()
        W1 = P.load(self.tuned_params())
        E = {}
        for name in ("train", "valid"):
            ps = load(self.path("data", f"{name}.epd"), use_cache=False)
            E[name] = [error(sc.qsearch_scores(W, ps.rows)[0], ps.results, K) for W in (W0, W1)]
        return E, W0, W1

    def tuning_records(self):
        """The data stage's summary.json, the tuning run's K and its done.json."""
        def read(*parts):
            with open(self.path(*parts), encoding="utf-8") as f:
                return json.load(f)
        return (read("data", "summary.json"), float(read("tune", "run.json")["k"]),
                read("tune", "done.json"))

    def publish(self, head, data, K, tuned, E, W0, W1, elo0, elo1, **tail):
        """report.json, report.svg and the closing lines of a finished loop: `head` (what was
        tuned, against what), the data and the tuning run, E before and after on both sets
        (`E[set] = [before, after]`), the match's figures, then `tail`."""
        rep = {
            **head,
            "positions": data["positions"], "train": data["train"], "valid": data["valid"],
            "K": K, "tuning_seconds": round(tuned["tuning_seconds"], 1),
            "passes": tuned["passes"], "best_pass": tuned.get("best_pass"),
            "changed_weights": int(np.sum(W0 != W1)),
            "E_train_before": E["train"][0], "E_train_after": E["train"][1],
            "E_valid_before": E["valid"][0], "E_valid_after": E["valid"][1],
            "E_valid_rose": bool(E["valid"][1] > E["valid"][0]),
            **match_figures(self.path("sprt", "match"), elo0, elo1),
            **tail,
        }
        write_report(self.path("report.json"), rep)
        self.write_plot(rep)
        self.log(report_text(rep))
        return rep

    def write_plot(self, rep):
        """report.svg: E per pass of the tuning run, the match's score beneath."""
        from tuner.texel import passes

        from .svgplot import e_per_pass_svg

        note = f"then tuned vs {_opponent(rep)}: " + (
            "no games" if rep["sprt_score"] is None else
            f"score {rep['sprt_score']:.3f} over {rep['sprt_games']} games, {_elo_text(rep)}")
        svg = e_per_pass_svg(passes(self.path("tune")).to_dict("records"),
                             f"E per tuning pass from {rep['start']} ({self.dir})", note)
        with open(self.path("report.svg"), "w", encoding="utf-8") as f:
            f.write(svg)

    def run(self, until=None):
        """Run the stages still to do (up to and including `until`); returns the report or
        None."""
        if self.resumed:
            self.log(f"resuming the loop in {self.dir} (settings from loop.json); next stage: "
                     f"{self.next_stage()}")
        if self.warm and self.next_stage() in self.KERNEL_STAGES:
            compile_kernels(self.config, quiet=self.quiet_matches)
        for stage in self.STAGES:
            if self.done(stage):
                self.log(f"[{stage}] done: reused")
            else:
                t = time.time()
                getattr(self, stage)()
                self.log(f"[{stage}] finished in {time.time() - t:.1f} s")
            if stage == until:
                return None
        with open(self.path("report.json"), encoding="utf-8") as f:
            return json.load(f)


# Compiles on an empty cache, about: the bar's total. A cold `compile_kernels` of the quick loop
# made 73 in both processes; the engines' search alone makes `background`'s count for "hand".
EXPECTED_COMPILES = {"hand": background.EXPECTED_COMPILES["hand"],
                     "tuner": 73 - background.EXPECTED_COMPILES["hand"]}


def compile_kernels(config, quiet=False) -> None:
    """Compile (or load) the kernels of a loop of `config` into the cache, in two processes
    at once: `wasp warmup --only hand` (the engines' search) and `tuner.loop.warm` (the
    tuner's); one bar on stderr counts both (none with `quiet`, nothing when they are
    cached). RuntimeError when a process fails."""
    from wasp.warmup import compile_parallel

    tuner = [sys.executable, "-m", "tuner.loop.warm", json.dumps(asdict(config)),
             "--parent", str(os.getpid()), *([] if quiet else ["--report"])]
    if compile_parallel("hand", jobs=2, verbose=False, more={"tuner": tuner},
                        progress=None if quiet else EXPECTED_COMPILES):
        raise RuntimeError("the kernels failed to compile (see above)")


def match_figures(rundir, elo0, elo1) -> dict:
    """The report's figures of the SPRT played in `rundir`: games, score, pentanomial, LLR and
    its bounds, Elo and its error (None where undefined), and the decision."""
    from testing import results
    from testing import sprt as S

    df = results(rundir)
    full = [g["score"].sum() for _, g in df.groupby("pair_id") if len(g) == 2]
    penta = S.pentanomial_from_pairs(full)
    with open(os.path.join(rundir, "summary.json"), encoding="utf-8") as f:
        decision = json.load(f).get("sprt_decision")
    llr = S.llr(penta, elo0, elo1) if sum(penta) else None
    try:
        elo, err, _ = S.elo(penta)
    except ValueError:
        elo = err = None
    return {"sprt_games": int(len(df)),
            "sprt_score": float(df["score"].mean()) if len(df) else None,
            "sprt_pentanomial": penta, "sprt_llr": _finite(llr),
            "sprt_bounds": list(S.bounds()), "sprt_elo": _finite(elo),
            "sprt_elo_error": _finite(err),
            "sprt_decision": decision["decision"] if decision else "inconclusive"}


def write_report(path, rep) -> None:
    """report.json: the figures, strict JSON (no NaN)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rep, f, indent=2, allow_nan=False)
        f.write("\n")


def _opponent(r) -> str:
    """The match's opponent as the text names it ('default', 'start', an engine's name)."""
    name = r.get("opponent", "wasp-default")
    return name[5:] if name.startswith("wasp-") else name


def _source(r) -> str:
    """Where the positions came from: '24 self-play games', or the data files given."""
    if r.get("data"):
        return "data " + ", ".join(os.path.basename(p) for p in r["data"])
    return f"{r['selfplay_games']} self-play games"


def _count_games(pgn):
    """Games in a PGN file (python-chess finds where each ends)."""
    import chess.pgn

    n = 0
    with open(pgn, encoding="utf-8", errors="replace") as f:
        while chess.pgn.skip_game(f):
            n += 1
    return n


def _finite(x):
    """x as a float, or None (JSON null) when it is undefined or infinite."""
    return float(x) if x is not None and np.isfinite(x) else None


def _num(x, spec, undefined="undefined") -> str:
    return undefined if _finite(x) is None else format(x + 0.0, spec)  # 0.0, never -0.0


def _elo_text(r) -> str:
    """The match's Elo and its 95 % error bar, in words where a figure is undefined."""
    if _finite(r["sprt_elo"]) is None:  # null (or NaN in a report of an older version)
        score = _finite(r.get("sprt_score"))
        why = "no games" if score is None else "every game won" if score == 1 else \
            "every game lost" if score == 0 else "too few games"
        return f"Elo undefined ({why})"
    err = _num(r["sprt_elo_error"], ".1f")
    if _finite(r["sprt_elo_error"]) is None:  # the 95 % interval of the score leaves 0..1
        err += f" (the 95 % interval reaches a score of {1 if r['sprt_score'] > 0.5 else 0})"
    return f"Elo {_num(r['sprt_elo'], '+.1f')} +/- {err}"


def report_text(r) -> str:
    return "\n".join([
        f"{_source(r)}; positions {r['positions']} (train {r['train']}, valid {r['valid']})",
        f"tuning: {r['passes']} passes in {r['tuning_seconds']:.1f} s, {r['changed_weights']} "
        f"weights changed, K {r['K']:.4f}" + (
            f" (the parameters of pass {r['best_pass']}, the lowest validation E; 0: the "
            f"start)" if r.get("best_pass") is not None and r["best_pass"] != r["passes"]
            else ""),
        f"E train {r['E_train_before']:.6f} -> {r['E_train_after']:.6f}; E valid "
        f"{r['E_valid_before']:.6f} -> {r['E_valid_after']:.6f}" + (
            f"  WARNING: the validation E rose by {r['E_valid_after'] - r['E_valid_before']:.6f}"
            f": the tuned parameters fit the training games, not chess (more games, -reg or "
            f"fewer parameters)" if r['E_valid_after'] > r['E_valid_before'] else ""),
        f"SPRT tuned vs {_opponent(r)}: {r['sprt_decision']} after "
        f"{r['sprt_games']} games, score {_num(r['sprt_score'], '.3f', 'undefined (no games)')}"
        f", {_elo_text(r)}, LLR {_num(r['sprt_llr'], '.2f')} in ({r['sprt_bounds'][0]:.2f}, "
        f"{r['sprt_bounds'][1]:.2f}), pentanomial {r['sprt_pentanomial']}",
        *(["moved most (start -> tuned):", *r["moved_most"]] if r.get("moved_most") else []),
    ])


def closing_summary(r, loop_dir) -> str:
    """The few lines a loop ends on: its stages, the figures, and where to look next."""
    start = "the built-in weights" if r.get("start", "built-in") == "built-in" else \
        f"a start of {r['start']}"
    score = _finite(r["sprt_score"])
    if score is None:
        verdict = "no match games"
    else:
        verdict = ("the tuned engine is stronger" if score > 0.5 else
                   "the tuned engine is weaker" if score < 0.5 else "no difference")
        verdict += {"H1": ", the SPRT accepts H1", "H0": ", the SPRT accepts H0"}.get(
            r["sprt_decision"], "")
    report = os.path.join(loop_dir, "report.json")
    return "\n".join([
        f"summary: {_source(r)} -> {r['positions']} positions -> "
        f"{r['passes']} tuning pass{'' if r['passes'] == 1 else 'es'} from {start} "
        f"({r['changed_weights']} weights changed) "
        f"-> {r['sprt_games']} games of tuned vs {_opponent(r)}",
        f"  E valid {r['E_valid_before']:.6f} -> {r['E_valid_after']:.6f} "
        f"({_num(_pct(r['E_valid_after'], r['E_valid_before']), '+.1f')} %); "
        f"E train {r['E_train_before']:.6f} -> {r['E_train_after']:.6f}",
        f"  match: score {_num(score, '.3f', 'undefined')} for the tuned engine, "
        f"{_elo_text(r)}: {verdict}",
        f"  next: {report}, its plot {os.path.join(loop_dir, 'report.svg')}, the runs in a "
        f"browser: wasp gui --runs {loop_dir}",
    ])


def _pct(after, before):
    return 100.0 * (after - before) / before if before else None
