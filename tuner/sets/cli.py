"""`wasp-tune data`: labelled position sets from PGN games; `data dfrc`, books of Chess960
and DFRC starts."""

import os
import sys

from wasp.cliargs import ArgumentParser, add_output
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


def _build_config(args):
    from . import builder

    return builder.BuildConfig(skip_plies=args.skip_plies, skip_book=not args.keep_book,
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
    from . import builder

    try:
        builder.check_format(args.format)
    except ValueError as e:
        raise CliError(e) from None
    check_files(paths, "PGN file")
    for path in paths:
        why = builder.not_pgn(path)
        if why:
            raise CliError(why)
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


def check_pgn(path):
    """`builder.check_pgn` as a command-line error (exit 1)."""
    from . import builder

    check_files([path], "PGN file")
    try:
        builder.check_pgn(path)
    except ValueError as e:
        raise CliError(e) from None


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


def main(argv=None) -> int:
    """`wasp-tune data ARGS` (argv without the `data`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["dfrc"]:  # an opening book of DFRC / Chess960 start positions
        from .frc import main as frc_main

        return frc_main(argv[1:])
    try:
        return cmd_data(argv)
    except CliError as e:
        return fail("wasp-tune data", e, e.code)
