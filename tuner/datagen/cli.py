"""The command line of `wasp-tune datagen`: self-play data in a run directory
(`tuner.datagen.run`)."""

import os
import sys

from wasp.cliargs import ArgumentParser
from wasp.exitcodes import EXIT_INPUT, EXIT_USAGE, fail, file_problem

EXAMPLES = """examples:
  wasp-tune datagen -dir runs/dg -games 200000 -nodes 5000 -concurrency 2
  wasp-tune datagen -resume runs/dg                   # after a kill: no game lost or repeated
  wasp-tune datagen -resume runs/dg -games 400000     # extend a finished run
  wasp-tune datagen -dir runs/dg2 -games 1000 -nodes 5000 -openings book.epd -random-plies 2
  wasp-tune datagen -dir runs/dg4 -games 1000 -nodes 5000 -eval-file nets/a.nnue  # a net teaches
  wasp-tune datagen -dir runs/sf -games 1000 -nodes 5000 -concurrency 2 \
      -engine cmd=/usr/games/stockfish option.Hash=16 option.Threads=1
  wasp-tune datagen -dir runs/dg3 -games 100000 -nodes 5000 -dask tcp://10.0.0.5:8786
  wasp-tune datagen -dir runs/dg5 -games 100000 -nodes 5000 -format viriformat  # data.vf
  wasp-tune data convert runs/dg/data.txt runs/dg/data.bf -shuffle   # for bullet
  wasp-tune data convert runs/dg/data.txt tune.epd -no-check -no-capture -dedupe

Both sides are Wasp-Py searches in this process (one process a core with -concurrency), each
move at a hard node limit (the search stops at -nodes nodes, as UCI 'go nodes'). With -engine
(wasp-match's KEY=VALUE items: cmd=, arg=, option.NAME=, ...) any UCI engine plays itself
instead, one process a side, through the match runner's executor: 'go nodes N' each move, the
score from its last 'info ... score' line. A game with a broken engine (a crash, an illegal
move, no score) is reported and skipped. -dask ADDRESS plays the games on a Dask cluster; the
results stream back into this run directory. A game starts
from -random-plies random legal moves (after a random -openings position when given); a start
that a -start-nodes search scores beyond -start-bound cp is skipped. A game ends by the rules,
by the tables (-tb), as a win once White's score stays beyond -win-score for -win-plies plies,
as a draw once |score| stays within -draw-score for -draw-plies plies from -draw-ply on, or as
a draw at -max-plies. Every searched position is recorded (filters belong to 'data convert').

The run directory: data.txt (bullet's text, 'FEN | score | result', White's view, mates as
+/-32000), data.moves ('game ply move', line for line), games.jsonl, run.json, state.json,
stats.json; with -format viriformat, data.vf (Viridithas's games, which bullet's
ViriBinpackLoader reads: about 4.3 bytes a position against text's 80) in place of data.txt and
data.moves, the same positions ('data convert' turns either into the other). Games are
committed whole and in order; each is a function of (seed, game index), so a run resumed after
a kill ends with the same data as an uninterrupted one.

exit codes: 0 ok, 1 a file or run directory that cannot be used, 2 a bad command line
"""


def build_parser():
    from .run import DatagenConfig

    d = DatagenConfig()
    ap = ArgumentParser(
        prog="wasp-tune datagen", epilog=EXAMPLES,
        description="Self-play games of Wasp-Py (or any UCI engine), every position "
                    "recorded with its search score and the game's result, for net trainers "
                    "and the Texel tuner.")

    def flag(name, **kw):
        ap.add_argument(f"-{name}", **kw)

    def number(name, metavar, text, attr=None):
        """An integer flag defaulting to the config's field (`name` with '_' for '-')."""
        default = getattr(d, attr or name.replace("-", "_"))
        flag(name, metavar=metavar, type=int, default=default,
             help=f"{text} (default {default})")

    ap.add_argument("-dir", "-rundir", dest="dir", default="",
                    help="a new run directory")
    flag("resume", default="", metavar="DIR", help="continue the run in DIR (its settings)")
    flag("games", metavar="N", type=int, default=None, help=f"games in the run (default {d.games})")
    number("nodes", "N", "nodes a move, a hard limit")
    number("random-plies", "K", "random legal plies at the start")
    flag("openings", metavar="FILE", default="",
         help="a book (EPD/FEN lines or PGN) to start from, then -random-plies random plies")
    flag("concurrency", metavar="C", type=int, default=1,
         help="processes playing games (default 1)")
    flag("engine", nargs="+", metavar="KEY=VALUE", default=None,
         help="a UCI engine playing itself instead of Wasp-Py, as wasp-match takes it "
              "(cmd=... option.Hash=16 ...); its moves at 'go nodes -nodes'")
    flag("eval-file", metavar="FILE", default="",
         help="Wasp-Py's evaluation: a net (.nnue) or a params.txt, as its EvalFile "
              "(default: the hand-written evaluation's built-in weights; the engine's "
              "default net: -eval-file wasp-py-3.nnue)")
    flag("dask", metavar="ADDRESS", default="",
         help="play the games on the Dask scheduler at ADDRESS")
    number("seed", "S", "the run's seed")
    flag("tb", default="", metavar="PATH", help="Syzygy directories: adjudicate the "
                                               "positions the tables hold")
    number("hash", "MB", "MB a side's hash, Wasp-Py's (a UCI engine: option.Hash=)", "hash_mb")
    number("start-nodes", "N", "nodes of the search that vets a start")
    number("start-bound", "CP", "skip starts scored beyond this, cp")
    number("win-score", "CP", "a win once White's score stays beyond +/-CP ...")
    number("win-plies", "N", "... for N plies in a row")
    number("draw-ply", "PLY", "a draw from ply PLY on ...")
    number("draw-score", "CP", "... once |score| stays within CP ...")
    number("draw-plies", "N", "... for N plies in a row")
    number("max-plies", "PLY", "a draw when the game reaches ply PLY")
    flag("format", choices=("text", "viriformat"), default=None,
         help="the data: text (data.txt and data.moves, the default) or viriformat (data.vf)")
    flag("quiet", action="store_true", help="no progress bar")
    return ap


class _Usage(Exception):
    pass


def main(argv=None) -> int:
    from testing.executor import ExecutorError

    from .run import (
        DatagenConfig,
        DatagenRun,
        RunError,
        TaskFailed,
        check_engine_starts,
        describe_stats,
        generate,
        uci_engine,
    )

    prog = "wasp-tune datagen"
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    run = book = None
    try:
        if args.concurrency < 1:
            raise _Usage("-concurrency must be at least 1")
        if args.resume:
            if args.dir and os.path.abspath(args.dir) != os.path.abspath(args.resume):
                raise _Usage("give -dir or -resume, not both")
            if args.games is not None and args.games < 1:
                raise _Usage("-games must be at least 1")
            if args.engine is not None or args.eval_file:
                raise _Usage("-resume plays with the run's own engine: give it no -engine "
                             "or -eval-file")
            if args.format:
                raise _Usage("-resume writes the run's own data format: give it no -format")
            run = DatagenRun.open(args.resume, args.games)
            print(f"resuming {run}")
        else:
            if not args.dir:
                raise _Usage("give -dir DIR (a new run) or -resume DIR")
            if args.openings:
                problem = file_problem(args.openings)
                if problem:
                    raise RunError(f"openings {problem}")
            config = DatagenConfig(
                games=DatagenConfig.games if args.games is None else args.games,
                nodes=args.nodes, random_plies=args.random_plies, openings=args.openings,
                seed=args.seed, tb=args.tb, hash_mb=args.hash, start_nodes=args.start_nodes,
                start_bound=args.start_bound, win_score=args.win_score,
                win_plies=args.win_plies, draw_ply=args.draw_ply, draw_score=args.draw_score,
                draw_plies=args.draw_plies, max_plies=args.max_plies)
            if args.eval_file:
                if args.engine is not None:
                    raise _Usage("-eval-file is Wasp-Py's: give a UCI engine its "
                                 "option.EvalFile= in -engine")
                from wasp.engine import eval_file_path, load_eval_file

                load_eval_file(args.eval_file)  # ValueError in one line: a bad file
                config.eval_file = os.path.abspath(eval_file_path(args.eval_file))
            try:
                config.check()
                if args.engine is not None:
                    config.uci = uci_engine(args.engine, args.nodes)
            except ValueError as e:  # a bad setting or -engine item (UsageError)
                raise _Usage(e) from None
            if config.uci:
                try:
                    config.engine = check_engine_starts(config.uci)
                except RuntimeError as e:
                    raise RunError(e) from None
            if config.openings:
                config.openings = os.path.abspath(config.openings)
                from .run import load_book

                book = load_book(config.openings)  # a bad book fails here, not in a worker
            if config.tb:
                from wasp.tablebase import Tablebases

                Tablebases(config.tb).close()
            run = DatagenRun.create(args.dir, config, ["wasp-tune", "datagen", *argv],
                                    data_format=args.format or "text")
        stats = generate(run, args.concurrency, progress=not args.quiet, dask=args.dask,
                         book=book)
    except _Usage as e:
        return fail(prog, e, EXIT_USAGE)
    except (RunError, ValueError) as e:
        return fail(prog, e, EXIT_INPUT)
    except (TaskFailed, ExecutorError) as e:
        where = f"; the committed games are kept: wasp-tune datagen -resume {run.path}" \
            if run is not None else ""
        return fail(prog, f"{e}{where}", EXIT_INPUT)
    except OSError as e:
        return fail(prog, f"{e.filename}: {e.strerror}", EXIT_INPUT)
    except KeyboardInterrupt:
        if run is not None:
            print(f"\ninterrupted: continue with 'wasp-tune datagen -resume {run.path}'",
                  file=sys.stderr)
        return 130
    print(describe_stats(stats))
    print(f"data: {run.data_file} ({stats['positions']} positions); "
          f"statistics: {run.file('stats.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
