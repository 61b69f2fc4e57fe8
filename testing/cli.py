"""``wasp-match``: the command line, with cutechess-cli/fastchess flag names, over the match
runner's API (`testing.plan_match`, `testing.run_match`).

Every flag is parsed and checked before any game starts; a bad one is named
with the reason and the exit status is 2; a file that cannot be used (-config,
-openings, -resume) is named with the reason and the exit status is 1.
"""

from __future__ import annotations

import sys

from .args import compliance_config
from .config import UsageError

USAGE = """\
usage: wasp-match -engine cmd=CMD [name=NAME] [proto=uci|xboard] ... -engine ... [options]
       wasp-match reproduce DIR GAME [--ply N] [--side white|black] [--timeout S]

Plays engine matches (UCI or xboard engines as subprocesses), commits every game
to a SQLite run store, and reports Elo, nElo, pentanomial counts and the SPRT.

Engines:
  -engine KEY=VALUE ...   one engine; keys: cmd= name= (default: the command's name)
                          proto=uci|xboard (default uci) dir= arg= (one per argument)
                          option.NAME=VALUE tc=[moves/]time[+inc] st= nodes= depth=
                          (one of tc, st, nodes, depth is needed) timemargin=MS (default 0)
                          restart=on|off (default off) startup=SECONDS (the time to answer
                          uci/isready or send xboard features; default 15)
  -each KEY=VALUE ...     the same keys, applied to every engine
  -config FILE            engines and settings as JSON (also -config file=FILE): the keys
                          are the flags' names ("concurrency": 2, "openings": {"file": ...},
                          "engines": [{"cmd": ..., "options": {...}}]); unknown keys are refused

Schedule:
  -tournament gauntlet|roundrobin   (default roundrobin)
  -rounds N -games N      games per encounter = rounds x games (default 1 x 1)
  -repeat                 game pairs: each opening twice, colours swapped
  -concurrency N          games played at once (default 1)
  -openings file=F [format=epd|pgn] [order=random|sequential] [plies=N] [start=N]
            [policy=default|encounter|round]
                          (defaults: format from the file name, order sequential, all the
                          PGN moves, start 1; EPD lines starting with # are comments);
                          policy (cutechess's): default a new opening for each game pair
                          (each game without -repeat), encounter a new one when the
                          players change, round one opening per round
  -srand N                seed of the random opening order (default: a random seed)
  -variant standard|fischerandom   fischerandom: Chess960 and DFRC books (X-FEN or
                          Shredder-FEN castling), engines told UCI_Chess960 (xboard:
                          variant fischerandom), castling as king-takes-rook (default standard)
  -event NAME -site NAME  PGN tags (default ?)

Adjudication (default: none):
  -draw movenumber=N movecount=N score=CP     (defaults 0, 1, 0)
  -resign movecount=N score=CP [twosided=true|false]   (defaults 1, 1000, false)
  -maxmoves N
  -tb PATHS               Syzygy tablebase directories (':'-separated): a game reaching a
                          position they hold (50-move counter at 0, no castling) ends with
                          their result
  -tbpieces N             only positions of N pieces or fewer (default, or 0: the largest
                          table's)
  -tbignore50             a win the 50-move rule would draw (cursed) counts as a win
  -tbadjudicate BOTH|WIN_LOSS|DRAW   which results the tables decide (default BOTH)

Statistics:
  -sprt elo0=E0 elo1=E1 [alpha=0.05] [beta=0.05] [model=normalized|logistic]
  -ratinginterval N       print the report every N games (default 10; 0: only at the end)

Output and runs:
  -pgnout FILE [min] [fi]  or  -pgnout file=FILE [nodes=true] [seldepth=true] [nps=true]
          [hashfull=true] [tbhits=true] [pv=true] [timeleft=true] [latency=true] [min=true]
          [notation=san|lan|uci]
                          the games as PGN: each move's comment holds score/depth and time,
                          and the figures switched on (n= sd= nps= hashfull= tbhits= tl=
                          latency= pv="..."); min: the seven tags only, no comments; fi:
                          finished games only (always so: unfinished games are not kept)
  -epdout FILE  -log FILE
  -rundir DIR, -dir DIR   run directory (default runs/<timestamp>)
  -resume DIR             go on with the run stored in DIR
  -recover                restart engines that crash or stall and go on
  -ponder                 let engines ponder
  -use-affinity [CORES]   pin each running game's engines to cores of their own (list as
                          0,2,4-7; default every core): the cores are split into one set
                          per concurrent game, handed out when a game starts, returned
                          when it ends (local games only)
  -dask ADDRESS           play game pairs on a Dask distributed scheduler
  -scale-tc nps=N [nodes=N] [engine=NAME|INDEX] [maxfactor=3] [bench=WORDS]
                          with -dask, as fishtest: each worker runs the engine's own
                          bench (`CMD ARGS bench`, default the first engine) and plays
                          with its tc/st scaled by reference nps / worker nps; a worker
                          slower than maxfactor, or whose bench node count differs from
                          nodes=, is refused with the reason
  -progress on|off        live progress line (default: when stderr is a terminal)

Every game's protocol transcript and engine stderr are kept in the run store
(testing.transcript(DIR, GAME), testing.stderr(DIR, GAME)); `wasp-match reproduce DIR
GAME` replays a game against fresh engines and says where they behave differently
(see wasp-match reproduce --help).

Example:
  wasp-match -engine cmd=stockfish name=sf1 -engine cmd=stockfish name=sf2 \\
      -each proto=uci tc=10+0.1 option.Hash=16 -rounds 200 -repeat -concurrency 2 \\
      -openings file=UHO_4060_v2.epd format=epd order=random -srand 42 \\
      -sprt elo0=0 elo1=5 -pgnout games.pgn -recover
  wasp-match -engine cmd=wasp name=wasp -engine cmd=fairymax proto=xboard \\
      -each tc=10+0.1 startup=60 -rounds 10 -repeat
  wasp-match -compliance /usr/games/fairymax proto=xboard

Checks:
  -compliance CMD [proto=uci|xboard] [arg=ARG ...] [option.NAME=VALUE] [startup=S]
                          check the engine's protocol handling step by step (fastchess's
                          --compliance and more): each step PASS/FAIL with the offending
                          line; exit status 0 when all pass, 1 otherwise

Exit codes: 0 done, 1 a file that cannot be used (-config, -openings, -resume) or
an engine that failed, 2 a bad flag or setting, 130 interrupted.
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "-help"):
        print(USAGE)
        return 0
    if argv[0] == "reproduce":
        from .reproduce import main as reproduce_main

        return reproduce_main(argv[1:])
    if argv[0] in ("-compliance", "--compliance"):
        try:
            ecfg = compliance_config(argv[1:])
        except UsageError as e:
            print(f"wasp-match: error: {e}", file=sys.stderr)
            return e.code
        from . import compliance

        return compliance.main(ecfg, sys.stdout, sys.stderr)
    from .plan import plan_match

    try:
        plan = plan_match(argv, new=True)
    except UsageError as e:
        print(f"wasp-match: error: {e}", file=sys.stderr)
        return e.code
    from .match import run_match
    from .tournament import stop_on_sigterm

    stop_on_sigterm()
    print(f"Run directory: {plan.rundir}", flush=True)
    return run_match(plan).status


def entry() -> int:
    """The `wasp-match` console script: `main` as every tool runs (`wasp.exitcodes.run_tool`;
    the engines it starts set up their own kernel cache)."""
    from wasp.exitcodes import run_tool

    return run_tool(main)


if __name__ == "__main__":
    sys.exit(entry())
