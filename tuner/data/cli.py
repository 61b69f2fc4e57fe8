"""`wasp-tune data` and `wasp-tune loop`: labelled sets from games, the tuning loop."""

import os
import sys

from wasp.cliargs import ArgumentParser, add_output, add_resume, add_run_dir, run_dir
from wasp.exitcodes import EXIT_USAGE, CliError, check_files, check_params_file, fail

DATA_EXAMPLES = """examples:
  wasp-tune data games.pgn more.pgn -o sets/a            # sets/a/train.epd, valid.epd, summary
  wasp-tune data runs/x/games.pgn -o sets/b -max-per-game 20 -valid 0.2 -format bracket
  wasp-tune data games.pgn -o sets/c -tb /syzygy/3-4-5:/syzygy/6 -tb-pieces 6
  wasp-tune data dfrc -o dfrc.epd -n 1000 -seed 1         # an opening book of DFRC starts
  wasp-match -engine cmd=wasp -engine cmd=stockfish -each tc=5+0.05 -rounds 100 \\
      -variant fischerandom -openings file=datasets/chess960.epd -pgnout g.pgn
  wasp-tune data g.pgn -o sets/960                         # a set from any engines' games
  wasp-tune run sets/a/train.epd -valid-data sets/a/valid.epd -dir runs/a

Positions: after -skip-plies plies and after the book moves, not in check, no mate score in
the move's {score/depth time} comment, quiet (the tuner's quiescence search returns the static
evaluation), de-duplicated by Zobrist key, at most -max-per-game per game; the validation set
is a fraction of the games. Bad games are reported (file:line: game N: reason) and skipped.
With -tb, the positions the Syzygy tables hold are labelled by their WDL (a cursed win is a
draw), or with -tb-mode drop left out where the game's result says otherwise.

exit codes: 0 ok, 1 a file that cannot be used (or no positions in it), 2 a bad command line
"""

LOOP_EXAMPLES = """examples:
  wasp-tune loop --quick -dir loops/q          # a few minutes on 2 cores: tuned beats its start
  wasp-tune loop -dir loops/s -start my-params.txt -games 200 -sprt-games 200
  wasp-tune loop -dir loops/night -games 4000 -nodes 2000 -max-passes 3 -sprt-games 2000
  wasp-tune loop -dir loops/night              # after a kill: completed stages are reused
  wasp-tune loop -dir loops/n2 -method adam -params '!pst_*' -reg 3e-4 -min-count 500 \\
      -then-binary ks_attacker_weight ks_undefended ks_shield ks_storm ks_safe_check 'df_*'

Stages (subdirectories of -dir): games/ (self-play, match runner), data/ (train.epd,
valid.epd split by game), tune/ (a tuner run directory; tune/nonlinear/ the -then-binary
run), sprt/ (tuned, with option.EvalFile= the last run's params.txt, against the start:
the built-in values or -start's, written to start.txt), then report.json. Settings are saved
in loop.json on the first run; later runs read them from there. The report gives E of the
training and validation sets before and after tuning (and says so when the validation E rose)
and the match's score and Elo; the run ends on a summary of them. Every engine plays the
hand-written evaluation (EvalFile empty or a parameter file), not the engine's default net.

exit codes: 0 ok, 1 a file that cannot be used or a stage that failed, 2 a bad command line
"""


def _build_flags(p):
    add_output(p, "output directory")
    p.add_argument("-skip-plies", type=int, default=8,
                   help="plies skipped at the start of each game (default 8)")
    p.add_argument("-keep-book", action="store_true",
                   help="keep positions reached by {book} moves (default: skipped)")
    p.add_argument("-no-quiet", action="store_true",
                   help="keep positions that are not quiet")
    p.add_argument("-no-dedupe", action="store_true",
                   help="keep repeated positions")
    p.add_argument("-max-per-game", type=int, default=0,
                   help="at most N positions per game, a seeded random choice (0: all)")
    p.add_argument("-valid", type=float, default=0.1,
                   help="fraction of the games held out for validation (default 0.1)")
    p.add_argument("-seed", type=int, default=1, help="cap and split seed (default 1)")
    p.add_argument("-params", default="",
                   help="parameter file for the quiet test (default: built-in values)")
    p.add_argument("-format", default="c9", choices=["c9", "bracket", "parquet"],
                   help='c9: FEN c9 "1-0"; (default), bracket: FEN [1.0], parquet (pyarrow)')
    p.add_argument("-threads", type=int, default=2,
                   help="worker threads (default 2)")
    p.add_argument("-tb", default="", metavar="PATHS",
                   help="Syzygy tablebase directories (':'-separated): endgame positions are "
                        "labelled by the tables instead of the game's result")
    p.add_argument("-tb-pieces", type=int, default=None, metavar="N",
                   help="-tb: only positions of N pieces or fewer (default: the largest table)")
    p.add_argument("-tb-mode", choices=["relabel", "drop"], default=None,
                   help="-tb: relabel (the tables' result, the default) or drop the positions "
                        "whose game result the tables contradict")


def data_parser():
    p = ArgumentParser(
        prog="wasp-tune data", description="Labelled position sets from PGN games.",
        epilog=DATA_EXAMPLES)
    p.add_argument("pgn", nargs="+", help="PGN files (the match runner's -pgnout or any PGN)")
    _build_flags(p)
    return p


def loop_parser():
    from tuner.data.loop import LoopConfig

    d = LoopConfig()
    p = ArgumentParser(
        prog="wasp-tune loop",
        description="Self-play -> labelled set -> tuning -> SPRT of tuned against its start.",
        epilog=LOOP_EXAMPLES)
    add_run_dir(p, help="the loop directory")
    add_resume(p, help="go on with the loop in DIR (its saved settings; running the same "
                       "command again does too)")
    p.add_argument("-quick", action="store_true",
                   help="the first run: from the material values cut to 30 %% (-start "
                        "material*0.3), 24 games at 400 nodes plus the shipped sample's 600, "
                        "material and tempo tuned, then an SPRT (0 against 50 nElo, at most "
                        "100 games at 2000 nodes) of tuned against that start; a few minutes")
    p.add_argument("-until", choices=["games", "data", "tune", "sprt"],
                   help="stop after this stage")
    p.add_argument("-quiet", action="store_true",
                   help="no per-game lines from the match runner, no progress bars")
    for name, typ, help_ in (
            ("games", int, "self-play games (default %(default)s)"),
            ("nodes", int, "nodes per move, self-play and SPRT (default %(default)s)"),
            ("tc", str, "a time control instead of nodes, e.g. 5+0.05"),
            ("concurrency", int, "games at once (default %(default)s)"),
            ("openings", str, "openings file (default: datasets/openings-uho-5000.epd)"),
            ("max-per-game", int, "positions per game at most (default %(default)s)"),
            ("valid", float, "fraction of games for validation (default %(default)s)"),
            ("method", str, "binary, local, adam or adagrad (default %(default)s)"),
            ("max-passes", int, "tuning passes at most (default %(default)s)"),
            ("partial", float, "binary: move this fraction of the way to each optimum "
                               "(default %(default)s)"),
            ("reg", float, "tuner: L2 pull toward the defaults, the E a weight pays for "
                           "moving 100 cp (default %(default)s: off; 1e-5 or more on small "
                           "sets)"),
            ("lr", float, "tuner: learning rate of adam/adagrad (default: the method's)"),
            ("min-count", int, "tuner: tune only weights counting in at least this many "
                               "training positions (default %(default)s: all)"),
            ("then-passes", int, "passes of the -then-binary search at most (default "
                                 "%(default)s)"),
            ("threads", int, "tuner threads (default %(default)s)"),
            ("sprt-games", int, "SPRT games at most (default %(default)s)"),
            ("sprt-nodes", int, "SPRT nodes per move (default: as -nodes)"),
            ("sprt-tc", str, "SPRT time control instead of nodes"),
            ("elo0", float, "SPRT H0 (nElo, default %(default)s)"),
            ("elo1", float, "SPRT H1 (nElo, default %(default)s)"),
            ("seed", int, "seed (default %(default)s)"),
            ("start", str, "the evaluation to start from (self-play, tuning and the match's "
                           "opponent): a parameter file, or material*F for the built-in values "
                           "with the material scaled by F (default: the built-in values; "
                           "--quick: material*0.3)")):
        attr = name.replace("-", "_")
        p.add_argument(f"-{name}", type=typ, default=None, dest=attr,
                       help=help_.replace("%(default)s", str(getattr(d, attr))))
    p.add_argument("-params", nargs="+", default=None, metavar="GLOB",
                   help="parameters to tune, globs; '!GLOB' leaves some out (default: all; "
                        "--quick: material and tempo)")
    p.add_argument("-then-binary", nargs="+", default=None, metavar="GLOB",
                   dest="then_binary",
                   help="after the tuning method, Wasp's binary search over these weights "
                        "(e.g. the non-linear king-safety and draw-factor scalars the gradient "
                        "methods leave alone: ks_attacker_weight ks_undefended ks_shield "
                        "ks_storm ks_safe_check 'df_*'); the SPRT plays the result")
    p.add_argument("-data", nargs="+", default=None, metavar="PGN",
                   help="more PGN games for the set (e.g. a shipped sample)")
    return p


def _build_config(args):
    from tuner.data.builder import BuildConfig

    return BuildConfig(skip_plies=args.skip_plies, skip_book=not args.keep_book,
                       quiet=not args.no_quiet, dedupe=not args.no_dedupe,
                       max_per_game=args.max_per_game, valid=args.valid, seed=args.seed,
                       params=args.params, threads=args.threads, tb=args.tb,
                       tb_pieces=args.tb_pieces or 0, tb_mode=args.tb_mode or "relabel")


def _check_tablebase(args):
    """-tb's directories must hold tables (exit 1), its options need it (exit 2)."""
    if not args.tb:
        for flag, value in (("-tb-pieces", args.tb_pieces), ("-tb-mode", args.tb_mode)):
            if value is not None:
                raise CliError(f"{flag} needs -tb PATHS (the Syzygy tables)", EXIT_USAGE)
        return
    if args.tb_pieces is not None and args.tb_pieces < 0:
        raise CliError("-tb-pieces: must be at least 0", EXIT_USAGE)
    from wasp.tablebase import open_tables

    try:
        tables, _, _ = open_tables(args.tb, dtz=False)
    except ValueError as e:
        raise CliError(f"-tb: {e}") from None
    tables.close()


def _build_and_write(paths, args):
    from tuner.data import builder

    try:
        builder.check_format(args.format)
    except ValueError as e:
        raise CliError(e) from None
    check_files(paths, "PGN file")
    check_params_file(args.params)
    _check_tablebase(args)
    config = _build_config(args)
    ds = builder.build(paths, config, log=print)
    if len(ds) == 0:
        raise CliError(f"no positions from {', '.join(paths)}: nothing written")
    s = builder.write(ds, args.out, args.format, config)
    print(builder.summary_text(s))
    print(f"wrote {os.path.join(args.out, s['files']['train'])} and "
          f"{os.path.join(args.out, s['files']['valid'])} "
          f"({os.path.join(args.out, 'summary.json')})")
    return 0


def _check_pgn(path):
    """The first game of a PGN file must read without errors (a loop plays its own games before
    it reads -data: a wrong file would be found only then)."""
    import logging

    import chess.pgn

    check_files([path], "PGN file")
    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)
    with open(path, encoding="utf-8", errors="replace") as f:
        try:
            game = chess.pgn.read_game(f)
        except (ValueError, IndexError):  # IndexError: python-chess on a stray `)`
            game = None
    if game is None or game.errors or game.next() is None:
        raise CliError(f"PGN file {path}: its first game has no readable moves: not PGN games")


def _check_openings(path, variant="standard"):
    """An openings file (-openings) is read now: a bad line fails before any game is played
    (and before the loop saves its settings)."""
    if not path:
        return
    check_files([path], "openings file")
    from testing.openings import OpeningBook
    from testing.variant import VariantError

    try:
        book = OpeningBook(path, chess960=variant == "fischerandom")
        for i in range(len(book)):
            book.get(i)
    except VariantError as e:
        raise CliError(f"openings file {str(e).split(': give')[0]}: these games are "
                       f"standard chess (-variant fischerandom plays Chess960)") from None
    except ValueError as e:
        raise CliError(f"openings file {e}") from None


SELFPLAY_GONE = (
    "'data selfplay' is gone: self-play data come from 'wasp-tune datagen -dir D -games N "
    "-nodes N' (any UCI engine with -engine cmd=...), a labelled set from 'wasp-tune data "
    "convert D/data.txt set.epd -no-check -no-capture -dedupe'; games between engines, at a "
    "clock or in Chess960: 'wasp-match ... -pgnout g.pgn', then 'wasp-tune data g.pgn -o SET'")


def cmd_data(argv):
    if argv and argv[0] == "selfplay":
        raise CliError(SELFPLAY_GONE, EXIT_USAGE)
    if argv and argv[0] == "build":
        argv = argv[1:]
    args = data_parser().parse_args(argv)
    return _build_and_write(args.pgn, args)


def cmd_loop(argv):
    from dataclasses import fields

    from tuner.data.loop import Loop, LoopConfig

    args = loop_parser().parse_args(argv)
    config = LoopConfig.quick() if args.quick else LoopConfig()
    for f in fields(LoopConfig):
        v = getattr(args, f.name, None)
        if v is not None:
            setattr(config, f.name, v)
    if args.data is not None:
        for path in args.data:
            _check_pgn(path)
        config.extra_data = [os.path.abspath(p) for p in args.data]
    _check_openings(args.openings)
    if args.start:
        from tuner.data.loop import start_weights

        try:
            start_weights(args.start)
        except ValueError as e:
            raise CliError(f"-start: {e}") from None
        if os.path.isfile(args.start):
            config.start = os.path.abspath(args.start)
    if args.params or args.then_binary:
        from tuner.methods import select_weights

        for flag, globs in (("-params", args.params), ("-then-binary", args.then_binary)):
            try:
                select_weights(globs or [])
            except ValueError as e:
                raise CliError(f"{flag}: {e}", EXIT_USAGE) from None
    if args.method is not None and args.method not in ("binary", "local", "adam", "adagrad"):
        raise CliError(f"-method: {args.method!r} (binary, local, adam or adagrad)", EXIT_USAGE)
    directory, resume = run_dir(args)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise CliError(f"-dir {directory}: not a directory", EXIT_USAGE)
    if resume and not os.path.isfile(os.path.join(directory, "loop.json")):
        raise CliError(f"{directory}: no loop to resume (no loop.json)")
    from wasp.kernelprogress import kernel_progress

    try:
        loop = Loop(directory, config, quiet_matches=args.quiet)
        # The stages run here (the set's labels, the tuner) compile kernels the first time:
        # a bar on stderr while they do (`wasp warmup` shows one for the engines' kernels)
        with kernel_progress():
            rep = loop.run(until=args.until)
    except (RuntimeError, ValueError, OSError) as e:
        raise CliError(e) from None
    if rep is not None:
        from tuner.data.loop import closing_summary

        print(closing_summary(rep, directory))
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        return fail("wasp-tune", "a subcommand is needed: data or loop (see wasp-tune data "
                                 "--help, wasp-tune loop --help)", EXIT_USAGE)
    commands = {"data": cmd_data, "loop": cmd_loop}
    if argv[0] not in commands:
        return fail("wasp-tune", f"unknown subcommand {argv[0]!r}", EXIT_USAGE)
    if argv[:2] == ["data", "dfrc"]:  # an opening book of DFRC / Chess960 start positions
        from tuner.data.frc import main as frc_main

        return frc_main(argv[2:])
    prog = f"wasp-tune {argv[0]}"
    try:
        return commands[argv[0]](argv[1:])
    except CliError as e:
        return fail(prog, e, e.code)
