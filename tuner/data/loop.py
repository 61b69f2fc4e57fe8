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
  against the default one, with an SPRT;
- ``report.json``: positions, tuning time, E of the training and validation sets before and
  after (``E_valid_rose``: the tuned parameters are worse on the held-out games; the report's
  text says so), the SPRT result.

A stage whose output is complete is skipped when the command runs again, and a killed stage
resumes (the match runner's ``-resume``, the tuner's checkpoint), so after a kill the same
command picks up where it stopped. The settings are saved in ``loop.json`` at the first run and
read from there afterwards.
"""

import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from tuner.data import DATA_DIR, builder, selfplay
from tuner.run import SplitRun

STAGES = ("games", "data", "tune", "sprt", "report")
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
    reg: float = 0.0  # tuner: L2 pull toward the defaults (tuner.methods.penalty)
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

    @classmethod
    def quick(cls):
        """Small enough for a test on 2 cores: a few minutes, an inconclusive SPRT is fine.
        The set adds the shipped sample's 600 games to the 24 played here."""
        return cls(games=24, nodes=400, max_per_game=30, max_passes=2,
                   extra_data=[SAMPLE_GAMES] if os.path.exists(SAMPLE_GAMES) else [],
                   params=["pawn_value", "knight_value", "bishop_value", "rook_value",
                           "queen_value", "tempo"],
                   sprt_games=8, sprt_nodes=400)


class Loop:
    """One loop directory; `run()` does what is still to do."""

    def __init__(self, loop_dir, config=None, log=print, quiet_matches=False):
        self.dir = str(loop_dir)
        self.log = log
        self.quiet_matches = quiet_matches
        saved = os.path.join(self.dir, "loop.json")
        if os.path.exists(saved):
            with open(saved, encoding="utf-8") as f:
                self.config = LoopConfig(**json.load(f))
            self.resumed = True
        else:
            self.config = config or LoopConfig()
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
        for s in STAGES:
            if not self.done(s):
                return s
        return None

    # -- stages -----------------------------------------------------------------

    def play(self):
        c = self.config
        self.log(f"[games] {c.games} self-play games at "
                 f"{c.tc or f'{c.nodes} nodes a move'} in {self.path('games')}")
        selfplay.selfplay(self.path("games"), c.games, nodes=c.nodes, tc=c.tc,
                          concurrency=c.concurrency, openings=c.openings, seed=c.seed,
                          quiet=self.quiet_matches, log=self.log)

    def build(self):
        c = self.config
        paths = [self.path("games", "games.pgn"), *c.extra_data]
        bc = builder.BuildConfig(skip_plies=c.skip_plies, max_per_game=c.max_per_game,
                                 valid=c.valid, seed=c.seed, threads=c.threads)
        self.log(f"[data] building the labelled set from {', '.join(paths)}")
        ds = builder.build(paths, bc, log=self.log)
        s = builder.write(ds, self.path("data"), "c9", bc)
        self.log(builder.summary_text(s))
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

    def tune(self):
        from tuner.methods import select_weights
        from tuner.run import RunConfig

        c = self.config
        tdir = self.path("tune")
        train = [self.path("data", "train.epd")]
        if c.then_binary:
            select_weights(c.then_binary)  # a glob naming nothing fails before the first run
        run = self._tuner_run(
            tdir, lambda: RunConfig(data=train, method=c.method, params=list(c.params),
                                    threads=c.threads, seed=c.seed, max_passes=c.max_passes,
                                    partial=c.partial, skip_plies=c.skip_plies, reg=c.reg,
                                    lr=c.lr, min_count=c.min_count),
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
        tuned = self.tuned_params()
        engines = [selfplay.wasp_engine("wasp-tuned", tuned), selfplay.wasp_engine("wasp-default")]
        self.log(f"[sprt] wasp-tuned ({tuned}) against wasp-default, at most {c.sprt_games} "
                 f"games, SPRT elo0={c.elo0} elo1={c.elo1}")
        selfplay.run_match(self.path("sprt"), engines, c.sprt_games,
                           nodes=c.sprt_nodes or c.nodes, tc=c.sprt_tc or c.tc,
                           concurrency=c.concurrency, openings=c.openings, seed=c.seed + 1,
                           sprt={"elo0": c.elo0, "elo1": c.elo1}, quiet=self.quiet_matches,
                           log=self.log)

    def report(self):
        """E before (defaults) and after (tuned) with the run's K; the SPRT outcome."""
        from testing import results
        from testing import sprt as S
        from tuner.error import Scorer, error
        from tuner.positions import load
        from wasp import params as P

        c = self.config
        with open(self.path("data", "summary.json"), encoding="utf-8") as f:
            data = json.load(f)
        with open(self.path("tune", "run.json"), encoding="utf-8") as f:
            K = float(json.load(f)["k"])
        with open(self.path("tune", "done.json"), encoding="utf-8") as f:
            tuned_info = json.load(f)
        sc = Scorer(c.threads)
        W0, W1 = P.default_weights(), P.load(self.tuned_params())
        E = {}
        for name in ("train", "valid"):
            ps = load(self.path("data", f"{name}.epd"), use_cache=False)
            E[name] = [error(sc.qsearch_scores(W, ps.rows)[0], ps.results, K) for W in (W0, W1)]
        df = results(self.path("sprt", "match"))
        pairs = df.groupby("pair_id")
        full = [g["score"].sum() for _, g in pairs if len(g) == 2]
        penta = S.pentanomial_from_pairs(full)
        with open(self.path("sprt", "match", "summary.json"), encoding="utf-8") as f:
            decision = json.load(f).get("sprt_decision")
        llr = S.llr(penta, c.elo0, c.elo1) if sum(penta) else float("nan")
        try:
            elo, err, _ = S.elo(penta)
        except ValueError:
            elo, err = float("nan"), float("nan")
        games_pgn = self.path("games", "games.pgn")
        rep = {
            "selfplay_games": int(_count_games(games_pgn)),
            "positions": data["positions"], "train": data["train"], "valid": data["valid"],
            "K": K, "tuning_seconds": round(tuned_info["tuning_seconds"], 1),
            "passes": tuned_info["passes"], "best_pass": tuned_info.get("best_pass"),
            "changed_weights": int(np.sum(W0 != W1)),
            "E_train_before": E["train"][0], "E_train_after": E["train"][1],
            "E_valid_before": E["valid"][0], "E_valid_after": E["valid"][1],
            "E_valid_rose": bool(E["valid"][1] > E["valid"][0]),
            "sprt_games": int(len(df)), "sprt_score": float(df["score"].mean()) if len(df) else
            float("nan"), "sprt_pentanomial": penta, "sprt_llr": llr,
            "sprt_bounds": list(S.bounds()), "sprt_elo": elo, "sprt_elo_error": err,
            "sprt_decision": decision["decision"] if decision else "inconclusive",
        }
        with open(self.path("report.json"), "w", encoding="utf-8") as f:
            json.dump(rep, f, indent=2)
            f.write("\n")
        self.log(report_text(rep))
        return rep

    def run(self, until=None):
        """Run the stages still to do (up to and including `until`); returns the report or
        None."""
        actions = {"games": self.play, "data": self.build, "tune": self.tune,
                   "sprt": self.sprt, "report": self.report}
        if self.resumed:
            self.log(f"resuming the loop in {self.dir} (settings from loop.json); next stage: "
                     f"{self.next_stage()}")
        for stage in STAGES:
            if self.done(stage):
                self.log(f"[{stage}] done: reused")
            else:
                t = time.time()
                actions[stage]()
                self.log(f"[{stage}] finished in {time.time() - t:.1f} s")
            if stage == until:
                return None
        with open(self.path("report.json"), encoding="utf-8") as f:
            return json.load(f)


def _count_games(pgn):
    """Games in a PGN file (python-chess finds where each ends)."""
    import chess.pgn

    n = 0
    with open(pgn, encoding="utf-8", errors="replace") as f:
        while chess.pgn.skip_game(f):
            n += 1
    return n


def report_text(r) -> str:
    return "\n".join([
        f"self-play games {r['selfplay_games']}; positions {r['positions']} (train {r['train']}, "
        f"valid {r['valid']})",
        f"tuning: {r['passes']} passes in {r['tuning_seconds']:.1f} s, {r['changed_weights']} "
        f"weights changed, K {r['K']:.4f}" + (
            f" (the parameters of pass {r['best_pass']}, the lowest validation E; 0: the "
            f"defaults)" if r.get("best_pass") is not None and r["best_pass"] != r["passes"]
            else ""),
        f"E train {r['E_train_before']:.6f} -> {r['E_train_after']:.6f}; E valid "
        f"{r['E_valid_before']:.6f} -> {r['E_valid_after']:.6f}" + (
            f"  WARNING: the validation E rose by {r['E_valid_after'] - r['E_valid_before']:.6f}"
            f": the tuned parameters fit the training games, not chess (more games, -reg or "
            f"fewer parameters)" if r['E_valid_after'] > r['E_valid_before'] else ""),
        f"SPRT tuned vs default: {r['sprt_decision']} after {r['sprt_games']} games, score "
        f"{r['sprt_score']:.3f}, Elo {r['sprt_elo']:.1f} +/- {r['sprt_elo_error']:.1f}, LLR "
        f"{r['sprt_llr']:.2f} in ({r['sprt_bounds'][0]:.2f}, {r['sprt_bounds'][1]:.2f}), "
        f"pentanomial {r['sprt_pentanomial']}",
    ])
