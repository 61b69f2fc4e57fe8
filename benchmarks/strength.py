"""Playing strength against Debian's engines (issue 3): Wasp-Py against Fairy-Max (CCRL about
1890; goal >= 60 %) and against Stockfish limited to UCI_Elo 1800 (goal >= 50 %).

    python benchmarks/strength.py                          # both, 200 games each at 10+0.1
    python benchmarks/strength.py --opponent stockfish --games 40 --tc 5+0.05
    python benchmarks/strength.py --rundir runs/strength   # again: resumes a stopped run
    python benchmarks/strength.py --opponent stockfish --elo 2000 2200 2400 --games 100
        # a gauntlet: Wasp-Py against each level, 100 games (50 pairs) each; goal 50 % at 2400
    python benchmarks/strength.py --opponent stockfish --elo 2400 --wasp-option SearchFile=s.txt

Openings: UHO_4060_v2 from ../shared (random order, fixed seed), game pairs with colours
swapped. One game at a time by default: Stockfish's time management runs close to the clock
and, with other work on a 2-core machine, it lost dozens of games on time at concurrency 2;
it gets a Move Overhead of 100 ms for the same reason. With nothing else running,
--concurrency 2 is safe (the 300-game gauntlet of 2026-11-24: no time loss on either side).
Wasp-Py keeps its own defaults: its net (--wasp-option 'EvalFile=<empty>' for the hand-written
evaluation).
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT.parent / "shared" / "data" / "openings" / "UHO_4060_v2.epd"
GOALS = {"fairymax": 60.0, "stockfish": 50.0}


def _which(name):
    return shutil.which(name) or shutil.which(name, path="/usr/games")


def opponent_engine(name, elo=1800):
    path = _which(name)
    if path is None:
        raise SystemExit(f"{name} is not installed (apt-get install {name})")
    if name == "fairymax":
        return ["cmd=" + path, "name=Fairy-Max", "proto=xboard"]
    return ["cmd=" + path, f"name=SF-{elo}", "proto=uci", "option.Threads=1",
            "option.UCI_LimitStrength=true", f"option.UCI_Elo={elo}", "option.Move Overhead=100"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opponent", choices=["fairymax", "stockfish", "both"], default="both")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--tc", default="10+0.1")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rundir", default=None, help="where the runs go (default: a temp dir)")
    ap.add_argument("--elo", type=int, nargs="+", default=[1800],
                    help="Stockfish's UCI_Elo; several make a gauntlet, --games each "
                         "(default 1800)")
    ap.add_argument("--wasp-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a UCI option for Wasp-Py (SearchFile=..., EvalFile=...); repeatable")
    args = ap.parse_args()
    for item in args.wasp_option:
        if "=" not in item:
            ap.error(f"--wasp-option: expected NAME=VALUE, got {item!r}")
    workdir = pathlib.Path(args.rundir or tempfile.mkdtemp(prefix="strength-"))
    workdir.mkdir(parents=True, exist_ok=True)
    opponents = ["fairymax", "stockfish"] if args.opponent == "both" else [args.opponent]
    status = 0
    for name in opponents:
        levels = args.elo if name == "stockfish" else [None]
        run = name if levels in ([None], [1800]) else f"{name}-{'-'.join(map(str, levels))}"
        others = [tok for elo in levels
                  for tok in ("-engine", *(opponent_engine(name, elo) if elo else
                                           opponent_engine(name)))]
        cmd = ["wasp-match",
               "-engine", f"cmd={sys.executable}", "arg=-m", "arg=wasp.cli", f"dir={ROOT}",
               "proto=uci", "name=Wasp-Py", *(f"option.{o}" for o in args.wasp_option),
               *others, *(["-tournament", "gauntlet"] if len(levels) > 1 else []),
               "-each", f"tc={args.tc}", "option.Hash=16",
               # a gauntlet plays one game pair against each level in turn, so a run stopped
               # early has measured every level; a single opponent plays its games in one round
               *(["-games", "2", "-rounds", str((args.games + 1) // 2)] if len(levels) > 1
                 else ["-games", str(args.games)]),
               "-repeat", "-concurrency", str(args.concurrency),
               "-openings", f"file={BOOK}", "format=epd", "order=random",
               "-srand", str(args.seed), "-ratinginterval", "20",
               "-rundir", str(workdir / run), "-pgnout", str(workdir / f"{run}.pgn"),
               "-recover"]
        if (workdir / run / "games.sqlite").exists():  # a stopped run: play the games left
            cmd = ["wasp-match", "-resume", str(workdir / run),
                   "-concurrency", str(args.concurrency), "-ratinginterval", "20"]
        target = f"{name} at UCI_Elo {max(levels)}" if levels != [None] else name
        print(f"# goal against {target}: >= {GOALS[name]:.0f} %", flush=True)
        print(" ".join(cmd), flush=True)
        status |= subprocess.call(cmd)
    return status


if __name__ == "__main__":
    sys.exit(main())
