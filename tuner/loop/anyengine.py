"""The tuning loop for any engine whose evaluation writes a trace (`wasp-tune loop -trace-cmd
... -tuned-engine ...`): labelled positions -> the engine's traces -> the trace tuner -> an SPRT
of the engine with the tuned values against itself with the start values.

Stages, each in a subdirectory of the loop directory and skipped once done:

- ``data/``: ``train.epd`` and ``valid.epd`` (``FEN c9 "RESULT";``) from `data` (PGN games:
  quiet positions split by game, as ``wasp-tune data`` builds them; EPD with results: split in
  blocks of `EPD_BLOCK` lines, so the positions of one game, listed together, stay on one side)
  or from the engine's own self-play at fixed nodes (``data/selfplay/``, ``wasp-tune
  datagen``'s any-engine path; split by game), with ``summary.json``; ``start.txt``, the start
  values, is the header of the trace the trace command writes of one position;
- ``trace/``: ``train.trace`` and ``valid.trace``, written by the trace command;
- ``tune/``: a ``wasp-tune trace`` run directory (params.txt, passes.csv, checks.csv);
- ``sprt/``: the match, planned with `testing.plan_match` from ``wasp-match``'s flags (the
  engines from the one template, ``{params}`` the start or the tuned values);
- ``report.json``, ``report.svg``: as the Wasp-Py loop writes them (`tuner.loop.run`).

The trace command and both engines run with the loop's environment.
"""

import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field

import numpy as np

from . import selfplay
from .run import Loop, closing_summary

STAGES = ("data", "trace", "tune", "sprt", "report")
EPD_BLOCK = 64  # EPD lines kept together on one side of the split
PROBE_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
RESULT_TEXT = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}


@dataclass
class EngineLoopConfig:
    trace_cmd: str = ""  # 'CMD {positions} {trace}': the engine's trace writer
    tuned_engine: str = ""  # -engine items with {params} (or {TERM}) for both sides
    data: list = field(default_factory=list)  # EPD with results or PGN; none: self-play
    games: int = 100  # self-play games (without data)
    nodes: int = 1000  # self-play nodes a move
    valid: float = 0.1  # fraction of the games (EPD: of the blocks) held out
    skip_plies: int = 8
    max_per_game: int = 40
    seed: int = 1
    no_check: bool = False  # tune a trace the start values do not reproduce
    # the trace tuner (tuner.traces.run.TraceConfig)
    params: list = field(default_factory=list)
    lr: float = 1.0
    epochs: int = 100
    max_passes: int = 0
    patience: int = 3
    valid_every: int = 10
    reg: float | None = None  # None: the tuner's default (tuner.texel.methods.default_reg)
    min_count: int = 0
    smooth: float = 0.0
    threads: int = 2
    # the match: wasp-match's flags
    each: list = field(default_factory=list)
    sprt: list = field(default_factory=lambda: ["elo0=0", "elo1=10"])
    rounds: int = 100
    games_per_round: int = 2
    openings: list = field(default_factory=list)
    concurrency: int = 2


def engine_tokens(template: str, params_file: str) -> list[str]:
    """The ``-engine`` items of the template for one side: ``{params}`` the values' file (its
    absolute path), ``{NAME}`` a one-value term's value, ``{NAME.mg}`` and ``{NAME.eg}`` a
    tapered term's (rounded, for engines whose terms are UCI options). ValueError for a name
    the file does not hold."""
    from tuner.traces import read_terms

    terms = None
    out = []
    for token in shlex.split(template):
        def value(m):
            nonlocal terms
            key = m.group(1)
            if key == "params":
                return os.path.abspath(params_file)
            if terms is None:
                terms = read_terms(params_file)
            name, _, part = key.rpartition(".") if key.endswith((".mg", ".eg")) else \
                (key, "", "")
            if name not in terms:
                raise ValueError(f"-tuned-engine: {{{key}}} names no term of {params_file}")
            values = terms[name]
            v = values[1] if part == "eg" and len(values) > 1 else values[0]
            return str(int(round(v)))
        out.append(re.sub(r"\{([^{}]+)\}", value, token))
    return out


def trace_command(template: str, positions: str, trace: str) -> list[str]:
    """The trace command's argv for one set (``{positions}`` and ``{trace}`` filled in)."""
    if "{positions}" not in template or "{trace}" not in template:
        raise ValueError("-trace-cmd must name {positions} and {trace}")
    return [t.replace("{positions}", positions).replace("{trace}", trace)
            for t in shlex.split(template)]


def epd_line(fen: str, result: float) -> str:
    """A labelled EPD line, ``FEN c9 "1-0";`` (the FEN's first four fields)."""
    return f'{" ".join(fen.split()[:4])} c9 "{RESULT_TEXT[float(result)]}";'


def split_blocks(n: int, valid: float, seed: int, block: int = EPD_BLOCK) -> np.ndarray:
    """A mask of the validation lines among n: whole blocks of `block` lines, drawn seeded."""
    blocks = (n + block - 1) // block
    held = np.random.default_rng(seed).permutation(blocks)[:int(round(valid * blocks))]
    mask = np.zeros(n, dtype=bool)
    for b in held:
        mask[b * block:(b + 1) * block] = True
    return mask


class EngineLoop(Loop):
    """One loop directory of the loop for any engine; `run()` does what is still to do."""

    CONFIG = EngineLoopConfig
    STAGES = STAGES
    KERNEL_STAGES = ()  # its engines and tracer are the user's: nothing of ours to compile

    def done(self, stage) -> bool:
        marks = {"data": ("data", "summary.json"), "trace": ("trace", "done.json"),
                 "tune": ("tune", "done.json"), "report": ("report.json",)}
        if stage == "sprt":
            return selfplay.match_done(self.path("sprt"))
        return os.path.exists(self.path(*marks[stage]))

    def start_params(self) -> str:
        """start.txt: the start values, the terms of the trace the trace command writes of one
        position (written the first time)."""
        path = self.path("start.txt")
        if not os.path.exists(path):
            from tuner.traces import read_trace

            probe = self.path("data", "probe.epd")
            os.makedirs(os.path.dirname(probe), exist_ok=True)
            with open(probe, "w", encoding="utf-8") as f:
                f.write(epd_line(PROBE_FEN, 0.5) + "\n")
            trace = self.path("data", "probe.trace")
            self._trace(probe, trace)
            tr = read_trace(trace, use_cache=False)
            from wasp.atomicfile import write_text

            write_text(path, tr.terms_text(tr.start_weights(), as_float=True))
        return path

    def _trace(self, positions, trace):
        argv = trace_command(self.config.trace_cmd, positions, trace)
        self.log(f"[trace] {shlex.join(argv)}")
        r = subprocess.run(argv, stdout=subprocess.DEVNULL if self.quiet_matches else None,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or not os.path.exists(trace):
            last = (r.stderr or "").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"the trace command failed (exit {r.returncode}) on "
                               f"{positions}: {last[0]}")

    # -- stages ---------------------------------------------------------------------------

    def data(self):
        c = self.config
        start = self.start_params()
        out = self.path("data")
        if not c.data:
            summary = self._selfplay(start)
        elif all(_is_pgn(p) for p in c.data):
            from tuner.sets import BuildConfig, build, summary_text
            from tuner.sets import write as write_set

            bc = BuildConfig(skip_plies=c.skip_plies, max_per_game=c.max_per_game,
                             valid=c.valid, seed=c.seed, threads=c.threads)
            self.log(f"[data] the labelled set from {', '.join(c.data)}")
            s = write_set(build(c.data, bc, log=self.log), out, "c9", bc)
            self.log(summary_text(s))
            return self._check_split(s["train"], s["valid"])
        else:
            summary = self._split_epd()
        with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
        self.log(f"[data] {summary['train']} training and {summary['valid']} validation "
                 f"positions in {out}")
        self._check_split(summary["train"], summary["valid"])

    def _check_split(self, train, valid):
        if train == 0 or valid == 0:
            raise RuntimeError(f"the set has {train} training and {valid} validation positions: "
                               f"more games or data")

    def _split_epd(self) -> dict:
        """EPD files with results: every labelled line, split in seeded blocks."""
        from wasp.epd import numbered_lines, parse_line

        c = self.config
        lines = []
        for path in c.data:
            for n, text in numbered_lines(path):
                epd = parse_line(text)
                result = None if epd is None else epd.result()
                if result is None:
                    raise ValueError(f"{path}:{n}: expected a FEN and a result")
                lines.append(epd_line(epd.position, result))
        held = split_blocks(len(lines), c.valid, c.seed)
        for name, keep in (("train", ~held), ("valid", held)):
            with open(self.path("data", f"{name}.epd"), "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line, k in zip(lines, keep, strict=True) if k)
        return {"positions": len(lines), "train": int((~held).sum()), "valid": int(held.sum()),
                "games": None, "source": list(c.data), "split": f"blocks of {EPD_BLOCK} lines"}

    def _selfplay(self, start) -> dict:
        """The start engine's own games at fixed nodes (``wasp-tune datagen``'s any-engine
        path), split by game."""
        from tuner.datagen import (
            DatagenConfig,
            DatagenRun,
            generate,
            read_records,
            uci_engine,
        )

        c = self.config
        rdir = self.path("data", "selfplay")
        if os.path.exists(os.path.join(rdir, "state.json")):
            run = DatagenRun.open(rdir, log=self.log)
        else:
            engine = uci_engine(engine_tokens(c.tuned_engine, start) + ["name=start"], c.nodes)
            run = DatagenRun.create(rdir, DatagenConfig(games=c.games, nodes=c.nodes,
                                                        seed=c.seed, engine="start", uci=engine))
        self.log(f"[data] {c.games} self-play games of the start engine at {c.nodes} nodes a "
                 f"move in {rdir}")
        generate(run, concurrency=c.concurrency, progress=not self.quiet_matches, log=self.log)
        by_game = {}
        for r in read_records(rdir):
            if r.ply is None or r.ply >= c.skip_plies:
                by_game.setdefault(r.game, []).append(r)
        games = sorted(by_game)
        order = np.random.default_rng(c.seed).permutation(len(games))
        held = {games[i] for i in order[:int(round(c.valid * len(games)))]}
        counts = {"train": 0, "valid": 0}
        files = {k: open(self.path("data", f"{k}.epd"), "w", encoding="utf-8") for k in counts}
        try:
            for g in games:
                side = "valid" if g in held else "train"
                records = by_game[g]
                step = max(1, len(records) // max(1, c.max_per_game))
                for r in records[::step][:c.max_per_game]:
                    files[side].write(epd_line(r.fen, r.result) + "\n")
                    counts[side] += 1
        finally:
            for f in files.values():
                f.close()
        return {"positions": sum(counts.values()), **counts, "games": len(games),
                "valid_games": len(held), "source": "self-play", "split": "by game"}

    def trace(self):
        from tuner.traces import check_trace, read_trace

        os.makedirs(self.path("trace"), exist_ok=True)
        for name in ("train", "valid"):
            trace = self.path("trace", f"{name}.trace")
            self._trace(self.path("data", f"{name}.epd"), trace)
            c = check_trace(read_trace(trace))
            if not c.ok and not self.config.no_check:
                raise RuntimeError(f"{c.message(trace)}; refused (-no-check to tune anyway)")
            self.log(f"[trace] {c.message(trace)}")
        with open(self.path("trace", "done.json"), "w", encoding="utf-8") as f:
            json.dump({"train": self.path("trace", "train.trace"),
                       "valid": self.path("trace", "valid.trace")}, f, indent=2)

    def _traces(self):
        from tuner.traces import read_trace

        return (read_trace(self.path("trace", "train.trace")),
                read_trace(self.path("trace", "valid.trace")))

    def tune(self):
        from tuner.traces import TraceConfig, TraceRun

        c = self.config
        tdir = self.path("tune")
        train, valid = self._traces()
        if os.path.exists(os.path.join(tdir, "state.json")):
            run = TraceRun.open(tdir, threads=c.threads)
            self.log(f"[tune] resuming {run}")
        else:
            run = TraceRun.create(tdir, TraceConfig(
                trace=train.path, valid_data=valid.path, params=list(c.params), lr=c.lr,
                epochs=c.epochs, max_passes=c.max_passes, patience=c.patience,
                valid_every=c.valid_every, reg=c.reg, min_count=c.min_count, smooth=c.smooth,
                threads=c.threads))
            self.log(f"[tune] Adam over {', '.join(c.params) or 'every term'} in {tdir}")
        run.tune(train, valid, progress=not self.quiet_matches, log=self.log)
        st = run.state
        with open(os.path.join(tdir, "done.json"), "w", encoding="utf-8") as f:
            json.dump({"tuning_seconds": st.elapsed, "passes": st.passes,
                       "best_pass": st.passes if st.best is None else st.best.passes}, f,
                      indent=2)

    def tuned_params(self) -> str:
        return self.path("tune", "params.txt")

    def match_argv(self) -> list[str]:
        """``wasp-match``'s flags of the SPRT: tuned against start, the one template."""
        c = self.config
        argv = ["-engine", *engine_tokens(c.tuned_engine, self.tuned_params()), "name=tuned",
                "-engine", *engine_tokens(c.tuned_engine, self.start_params()), "name=start"]
        if c.each:
            argv += ["-each", *c.each]
        if c.sprt:
            argv += ["-sprt", *c.sprt]
        openings = c.openings or [f"file={selfplay.DEFAULT_OPENINGS}", "order=random"]
        argv += ["-openings", *openings]
        return argv + ["-draw", "movenumber=40", "movecount=8", "score=10",
                       "-resign", "movecount=4", "score=1000", "-maxmoves", "200",
                       "-rounds", str(c.rounds), "-games", str(c.games_per_round), "-repeat",
                       "-concurrency", str(c.concurrency), "-srand", str(c.seed + 1),
                       "-recover", "-ratinginterval", "0",
                       "-pgnout", os.path.abspath(self.path("sprt", "games.pgn"))]

    def match_config(self):
        """The SPRT's `testing.MatchConfig` (read from `match_argv`, not planned yet)."""
        import testing

        config = testing.read_flags(self.match_argv()).config
        config.progress = False
        return config

    def sprt(self):
        c = self.config
        self.log(f"[sprt] tuned ({self.tuned_params()}) against start ({self.start_params()}), "
                 f"at most {c.rounds * c.games_per_round} games, -sprt {' '.join(c.sprt)}")
        selfplay.play_match(self.path("sprt"), self.match_config, c.concurrency,
                            quiet=self.quiet_matches, log=self.log)

    def sprt_bounds(self) -> tuple[float, float]:
        """elo0 and elo1 of the match as it was planned."""
        with open(os.path.join(self.path("sprt"), selfplay.DONE), encoding="utf-8") as f:
            sprt = json.load(f)["config"].get("sprt") or {}
        return float(sprt.get("elo0", 0.0)), float(sprt.get("elo1", 10.0))

    def report(self):
        """E of both traces with the start and the tuned values (the run's K), the match's
        figures and the terms that moved most."""
        from tuner.texel import error
        from tuner.traces import moved_most, read_terms

        c = self.config
        data, K, tuned = self.tuning_records()
        train, valid = self._traces()
        W0 = train.start_weights()
        W1 = _weights(train, read_terms(self.tuned_params()))
        E = {name: [error(tr.scores(W), tr.results, K) for W in (W0, W1)]
             for name, tr in (("train", train), ("valid", valid))}
        head = {"start": "the trace's start values", "opponent": "start",
                "engine": c.tuned_engine,
                "selfplay_games": 0 if c.data else int(data.get("games") or 0),
                "data": list(c.data)}
        return self.publish(head, data, K, tuned, E, W0, W1, *self.sprt_bounds(),
                            moved_most=moved_most(train, W1))


def _weights(trace, terms) -> np.ndarray:
    """The weight vector of a params file's terms (`read_terms`) in the trace's layout."""
    W = trace.start_weights()
    for t, name in enumerate(trace.names):
        values = terms[name]
        W[trace.linear.mg_of[t]] = values[0]
        W[trace.linear.eg_of[t]] = values[-1]
    return W


def _is_pgn(path) -> bool:
    return path.lower().endswith(".pgn")


def run_loop(loop_dir, config, until=None, quiet=False, log=print):
    """Run (or resume) the loop in `loop_dir`; returns the report (None with `until`)."""
    t = time.time()
    loop = EngineLoop(loop_dir, config, log=log, quiet_matches=quiet)
    rep = loop.run(until=until)
    if rep is not None:
        log(closing_summary(rep, loop_dir))
        log(f"({time.time() - t:.0f} s)")
    return rep
