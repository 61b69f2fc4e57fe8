"""Games for labelled sets and for SPRTs, played by the match runner (`testing.plan_match`,
`testing.run_match`).

Each match runs in its own run directory; a run directory that already holds games is resumed
with its stored settings, so a killed match loses nothing. A ``done.json`` beside it marks a
match that finished.
"""

import json
import os
import subprocess
import sys
from contextlib import nullcontext
from dataclasses import replace

from tuner.shipped import DATA_DIR
from wasp.engine import EMPTY

DEFAULT_OPENINGS = os.path.join(DATA_DIR, "openings-uho-5000.epd")
CHESS960_OPENINGS = os.path.join(DATA_DIR, "chess960.epd")  # the 960 starts, numbered
DONE = "done.json"


def wasp_engine(name, params="", hash_mb=16):
    """Our engine run by this Python (``python -m wasp.cli``), as a `testing.EngineConfig`
    without limits, with the hand-written evaluation these sets tune: `params`, or "" for its
    built-in weights (not the engine's default net)."""
    from testing import EngineConfig

    return EngineConfig(cmd=sys.executable, name=name, args=["-m", "wasp.cli"],
                        options={"Hash": str(hash_mb),
                                 "EvalFile": os.path.abspath(params) if params else EMPTY},
                        startup=300.0)  # a loaded machine may compile


def warm_kernels(quiet=False):
    """Compile (or load) the kernels of the engines' search with the hand-written evaluation
    once, so that the engines the match starts load them from the cache (and search with
    them from their first move) instead of compiling them."""
    out = subprocess.DEVNULL if quiet else None
    subprocess.run([sys.executable, "-m", "wasp.cli", "warmup", "--only", "hand"], stdout=out,
                   check=True)


def limits(nodes=0, tc=""):
    """Every engine's limits: fixed nodes per move or a time control (its text)."""
    if tc:
        return {"tc": tc}
    if nodes <= 0:
        raise ValueError("give nodes > 0 or a time control")
    return {"nodes": nodes}


def match_done(out_dir) -> bool:
    return os.path.exists(os.path.join(out_dir, DONE))


def run_match(out_dir, engines, games, *, nodes=0, tc="", concurrency=2, openings="",
              seed=1, sprt=None, repeat=True, adjudicate=True, quiet=False, log=print,
              variant="standard", warm=True):
    """Play (or resume) a match in ``out_dir/match``, its PGN in ``out_dir/games.pgn``.

    `engines` is a list of `testing.EngineConfig` (`wasp_engine`'s, or any other: the limits
    fill in those it does not set itself); with `repeat` the games are colour-swapped pairs
    (`games` rounded up to whole pairs), else each game has its own opening; `sprt` is None or
    a dict of `testing.config.SprtConfig` settings (elo0, elo1, ...);
    ``variant="fischerandom"`` plays Chess960 (from the 960 starts unless `openings`). The
    kernels are warmed first (unless not `warm`: the caller did) and our engines get a long
    start-up limit (`wasp_engine`), so a loaded machine does not make them miss the runner's
    timeout. Returns the run directory;
    RuntimeError when it fails.
    """
    pgn = os.path.join(out_dir, "games.pgn")
    if warm:
        warm_kernels(quiet)
    return play_match(out_dir, lambda: match_config(
        pgn, engines, games, nodes, tc, concurrency, openings, seed, sprt, repeat, adjudicate,
        variant), concurrency, quiet=quiet, log=log)


def play_match(out_dir, make_config, concurrency=2, *, quiet=False, log=print):
    """Play the match `make_config()` (a `testing.MatchConfig`, its PGN ``out_dir/games.pgn``)
    in ``out_dir/match``, planned by `testing.plan_match`, or resume the one there; then mark it
    done (``done.json``). Returns the run directory; RuntimeError when it fails."""
    from testing import plan_match
    from testing import run_match as play

    os.makedirs(out_dir, exist_ok=True)
    rundir = os.path.join(out_dir, "match")
    if os.path.exists(os.path.join(rundir, "games.sqlite")):
        log(f"resuming the match in {rundir}")
        plan = plan_match(None, rundir, session={"concurrency": concurrency, "progress": False})
    else:
        config = make_config()
        plan = plan_match(config, rundir)
    if not quiet:  # the runner starts the engines before its first line
        log(f"starting the match: {len(plan.config.engines)} engines, {concurrency} games at "
            f"a time")
    with open(os.devnull, "w") if quiet else nullcontext(sys.stdout) as out:
        result = play(plan, out=out)
    if result.status == 130:
        raise KeyboardInterrupt
    if not result.ok:
        raise RuntimeError(f"the match in {rundir} failed: {result.error}")
    with open(os.path.join(out_dir, DONE), "w", encoding="utf-8") as f:
        json.dump({"rundir": rundir, "pgn": os.path.join(out_dir, "games.pgn"),
                   "config": plan.config.to_dict()}, f, indent=2)
    return rundir


def match_config(pgn, engines, games, nodes, tc, concurrency, openings, seed, sprt, repeat,
                 adjudicate, variant="standard"):
    """The `testing.MatchConfig` of the match `run_match` plays (not planned yet)."""
    from testing import MatchConfig
    from testing.config import OpeningsConfig, SprtConfig
    from testing.game import DrawAdjudication, ResignAdjudication

    each = limits(nodes, tc)
    players, seen = [], {}
    for e in engines:  # each limit the engine does not set; names made unique (wasp, wasp-2)
        e = replace(e, **{k: v for k, v in each.items() if getattr(e, k) is None})
        seen[e.name] = seen.get(e.name, 0) + 1
        players.append(e if seen[e.name] == 1 else replace(e, name=f"{e.name}-{seen[e.name]}"))
    if variant != "standard":
        openings = openings or CHESS960_OPENINGS
    config = MatchConfig(
        engines=players, rounds=max(1, (games + 1) // 2) if repeat else max(1, games),
        games=2 if repeat else 1, repeat=repeat, variant=variant, concurrency=concurrency,
        srand=seed, openings=OpeningsConfig(os.path.abspath(openings or DEFAULT_OPENINGS),
                                            order="random"),
        pgnout=os.path.abspath(pgn), recover=True, ratinginterval=0, progress=False)
    if adjudicate:
        config.draw = DrawAdjudication(movenumber=40, movecount=8, score=10)
        config.resign = ResignAdjudication(movecount=4, score=1000)
        config.maxmoves = 200
    if sprt:
        config.sprt = SprtConfig(**{k: v if k == "model" else float(v) for k, v in sprt.items()})
    return config


def selfplay(out_dir, games, *, nodes=0, tc="", concurrency=2, openings="", seed=1,
             params="", others=(), quiet=False, log=print, variant="standard", warm=True):
    """Self-play games of our engine (two instances, or against `others`).

    Each game starts from its own opening (no colour-swapped pairs: two instances of a
    deterministic engine would play the same game twice). With `others` (EngineConfigs), our
    engine plays a round robin with them, `games` games per encounter. Returns the PGN path.
    """
    engines = [wasp_engine("wasp", params)]
    engines += list(others) if others else [wasp_engine("wasp", params)]
    run_match(out_dir, engines, games, nodes=nodes, tc=tc, concurrency=concurrency,
              openings=openings, seed=seed, repeat=False, quiet=quiet, log=log,
              variant=variant, warm=warm)
    return os.path.join(out_dir, "games.pgn")
