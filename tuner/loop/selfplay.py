"""Games for labelled sets and for SPRTs, played by the match runner (`testing.run_match`).

Each match runs in its own run directory; a run directory that already holds games is resumed
(``-resume``), so a killed match loses nothing. A ``done.json`` beside it marks a match that
finished.
"""

import json
import os
import subprocess
import sys
from contextlib import nullcontext

from tuner.shipped import DATA_DIR
from wasp.engine import EMPTY

DEFAULT_OPENINGS = os.path.join(DATA_DIR, "openings-uho-5000.epd")
CHESS960_OPENINGS = os.path.join(DATA_DIR, "chess960.epd")  # the 960 starts, numbered
DONE = "done.json"


def wasp_engine(name, params="", hash_mb=16):
    """`-engine` tokens for our engine run by this Python (``python -m wasp.cli``) with the
    hand-written evaluation these sets tune: `params`, or "" for its built-in weights (not
    the engine's default net)."""
    tokens = ["-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", f"name={name}",
              f"option.Hash={hash_mb}", "startup=300"]  # a loaded machine may compile
    tokens.append(f"option.EvalFile={os.path.abspath(params) if params else EMPTY}")
    return tokens


def warm_kernels(quiet=False):
    """Compile (or load) the engine's kernels once, so that the engines the match starts load
    them from the cache instead of each compiling them (and missing the start-up timeout)."""
    out = subprocess.DEVNULL if quiet else None
    subprocess.run([sys.executable, "-m", "wasp.cli", "warmup"], stdout=out, check=True)


def limit_tokens(nodes=0, tc=""):
    """`-each` limit tokens: fixed nodes per move or a time control."""
    if tc:
        return [f"tc={tc}"]
    if nodes <= 0:
        raise ValueError("give nodes > 0 or a time control")
    return [f"nodes={nodes}"]


def match_done(out_dir) -> bool:
    return os.path.exists(os.path.join(out_dir, DONE))


def run_match(out_dir, engines, games, *, nodes=0, tc="", concurrency=2, openings="",
              seed=1, sprt=None, repeat=True, adjudicate=True, quiet=False, log=print,
              variant="standard"):
    """Play (or resume) a match in ``out_dir/match``, its PGN in ``out_dir/games.pgn``.

    `engines` is a list of `-engine` token lists; with `repeat` the games are colour-swapped
    pairs (`games` rounded up to whole pairs), else each game has its own opening; `sprt` is
    None or a dict of ``-sprt`` settings (elo0, elo1, ...); ``variant="fischerandom"`` plays
    Chess960 (from the 960 starts unless `openings`). The kernels are warmed first and
    our engines get a long start-up limit (`wasp_engine`), so a loaded machine does not make
    them miss the runner's timeout. Returns the run directory; RuntimeError when it fails.
    """
    from testing import run_match as play

    os.makedirs(out_dir, exist_ok=True)
    rundir = os.path.join(out_dir, "match")
    pgn = os.path.join(out_dir, "games.pgn")
    warm_kernels(quiet)
    argv = match_arguments(rundir, pgn, engines, games, nodes, tc, concurrency, openings, seed,
                           sprt, repeat, adjudicate, log, variant)
    if not quiet:  # the runner reads the openings and starts the engines before its first line
        log(f"starting the match: {len(engines)} engines, {concurrency} games at a time")
    with open(os.devnull, "w") if quiet else nullcontext(sys.stdout) as out:
        result = play(argv, out=out)
    if result.status == 130:
        raise KeyboardInterrupt
    if not result.ok:
        raise RuntimeError(f"the match in {rundir} failed: {result.error}")
    with open(os.path.join(out_dir, DONE), "w", encoding="utf-8") as f:
        json.dump({"rundir": rundir, "pgn": pgn, "arguments": argv}, f, indent=2)
    return rundir


def match_arguments(rundir, pgn, engines, games, nodes, tc, concurrency, openings, seed, sprt,
                    repeat, adjudicate, log, variant="standard"):
    """``wasp-match``'s arguments for the match `run_match` plays (or resumes)."""
    cmd = []
    if os.path.exists(os.path.join(rundir, "games.sqlite")):
        cmd += ["-resume", rundir, "-concurrency", str(concurrency)]
        log(f"resuming the match in {rundir}")
    else:
        for e in engines:
            cmd += e
        cmd += ["-each", *limit_tokens(nodes, tc)]
        if repeat:
            cmd += ["-rounds", str(max(1, (games + 1) // 2)), "-repeat"]
        else:
            cmd += ["-rounds", str(max(1, games))]
        if variant != "standard":
            cmd += ["-variant", variant]
            openings = openings or CHESS960_OPENINGS
        cmd += ["-concurrency", str(concurrency), "-srand", str(seed),
                "-openings", f"file={openings or DEFAULT_OPENINGS}", "order=random",
                "-pgnout", pgn, "-rundir", rundir, "-recover", "-ratinginterval", "0"]
        if adjudicate:
            cmd += ["-draw", "movenumber=40", "movecount=8", "score=10",
                    "-resign", "movecount=4", "score=1000", "-maxmoves", "200"]
        if sprt:
            cmd += ["-sprt", *[f"{k}={v}" for k, v in sprt.items()]]
    cmd += ["-progress", "off"]
    return cmd


def selfplay(out_dir, games, *, nodes=0, tc="", concurrency=2, openings="", seed=1,
             params="", others=(), quiet=False, log=print, variant="standard"):
    """Self-play games of our engine (two instances, or against `others`' -engine tokens).

    Each game starts from its own opening (no colour-swapped pairs: two instances of a
    deterministic engine would play the same game twice). With `others`, our engine plays a
    round robin with them, `games` games per encounter. Returns the PGN path.
    """
    engines = [wasp_engine("wasp", params)]
    engines += [list(o) for o in others] if others else [wasp_engine("wasp", params)]
    run_match(out_dir, engines, games, nodes=nodes, tc=tc, concurrency=concurrency,
              openings=openings, seed=seed, repeat=False, quiet=quiet, log=log,
              variant=variant)
    return os.path.join(out_dir, "games.pgn")
