"""`wasp-tune data` and `wasp-tune loop`: labelled sets from games, self-play, the tuning loop."""

import argparse
import os
import sys

DATA_EXAMPLES = """examples:
  wasp-tune data games.pgn more.pgn -o sets/a            # sets/a/train.epd, valid.epd, summary
  wasp-tune data runs/x/games.pgn -o sets/b -max-per-game 20 -valid 0.2 -format bracket
  wasp-tune data selfplay -o sets/sp -games 200 -nodes 2000 -concurrency 2
  wasp-tune data selfplay -o sets/sf -games 100 -tc 5+0.05 \\
      -engine cmd=stockfish name=sf option.Hash=16
  wasp-tune run sets/a/train.epd -valid-data sets/a/valid.epd -dir runs/a

Positions: after -skip-plies plies and after the book moves, not in check, no mate score in
the move's {score/depth time} comment, quiet (the tuner's quiescence search returns the static
evaluation), de-duplicated by Zobrist key, at most -max-per-game per game; the validation set
is a fraction of the games. Bad games are reported (file:line: game N: reason) and skipped.
"""

LOOP_EXAMPLES = """examples:
  wasp-tune loop --quick -dir loops/q          # a few minutes on 2 cores: the pipeline check
  wasp-tune loop -dir loops/night -games 4000 -nodes 2000 -max-passes 3 -sprt-games 2000
  wasp-tune loop -dir loops/night              # after a kill: completed stages are reused
  wasp-tune loop -dir loops/n2 -method adam -params '!pst_*' -reg 3e-4 -min-count 500 \\
      -then-binary ks_attacker_weight ks_undefended ks_shield ks_storm ks_safe_check 'df_*'

Stages (subdirectories of -dir): games/ (self-play, match runner), data/ (train.epd,
valid.epd split by game), tune/ (a tuner run directory; tune/nonlinear/ the -then-binary
run), sprt/ (tuned against default with option.EvalFile= the last run's params.txt), then
report.json. Settings are saved in loop.json on the first run; later runs read them from
there.
"""


def _build_flags(p):
    p.add_argument("-o", "--out", "-out", required=True, help="output directory")
    p.add_argument("-skip-plies", "--skip-plies", type=int, default=8,
                   help="plies skipped at the start of each game (default 8)")
    p.add_argument("-keep-book", "--keep-book", action="store_true",
                   help="keep positions reached by {book} moves (default: skipped)")
    p.add_argument("-no-quiet", "--no-quiet", action="store_true",
                   help="keep positions that are not quiet")
    p.add_argument("-no-dedupe", "--no-dedupe", action="store_true",
                   help="keep repeated positions")
    p.add_argument("-max-per-game", "--max-per-game", type=int, default=0,
                   help="at most N positions per game, a seeded random choice (0: all)")
    p.add_argument("-valid", "--valid", type=float, default=0.1,
                   help="fraction of the games held out for validation (default 0.1)")
    p.add_argument("-seed", "--seed", type=int, default=1, help="cap and split seed")
    p.add_argument("-params", "--params", default="",
                   help="parameter file for the quiet test (default: built-in values)")
    p.add_argument("-format", "--format", default="c9", choices=["c9", "bracket", "parquet"],
                   help='c9: FEN c9 "1-0"; (default), bracket: FEN [1.0], parquet (pyarrow)')
    p.add_argument("-threads", "--threads", type=int, default=2, help="worker threads")


def data_parser():
    p = argparse.ArgumentParser(
        prog="wasp-tune data", description="Labelled position sets from PGN games.",
        epilog=DATA_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pgn", nargs="+", help="PGN files (the match runner's -pgnout or any PGN)")
    _build_flags(p)
    return p


def selfplay_parser():
    p = argparse.ArgumentParser(
        prog="wasp-tune data selfplay",
        description="Play games with the match runner and build a labelled set from them.",
        epilog=DATA_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _build_flags(p)
    p.add_argument("-games", "--games", type=int, default=100,
                   help="games per encounter, in colour-swapped pairs (default 100)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-nodes", "--nodes", type=int, default=2000,
                   help="nodes per move (default 2000)")
    g.add_argument("-tc", "--tc", default="", help="time control instead, e.g. 5+0.05")
    p.add_argument("-concurrency", "--concurrency", type=int, default=2)
    p.add_argument("-openings", "--openings", default="",
                   help="openings EPD/PGN (default: datasets/openings-uho-5000.epd)")
    p.add_argument("-engine-params", "--engine-params", default="",
                   help="EvalFile for our engine")
    p.add_argument("-engine", "--engine", nargs="+", action="append", default=[],
                   metavar="KEY=VALUE",
                   help="another engine, as wasp-match takes it (cmd=... name=... option.X=..."
                        "); our engine then plays a round robin with the others")
    return p


def loop_parser():
    from datasets.loop import LoopConfig

    d = LoopConfig()
    p = argparse.ArgumentParser(
        prog="wasp-tune loop",
        description="Self-play -> labelled set -> tuning -> SPRT of tuned against default.",
        epilog=LOOP_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-dir", "--dir", required=True, help="the loop directory")
    p.add_argument("-quick", "--quick", action="store_true",
                   help="tiny sizes (24 games at 400 nodes plus the shipped sample's 600, "
                        "material only, 8 SPRT games): a pipeline check that runs in a few "
                        "minutes")
    p.add_argument("-until", "--until", choices=["games", "data", "tune", "sprt"],
                   help="stop after this stage")
    p.add_argument("-quiet", "--quiet", action="store_true",
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
            ("seed", int, "seed (default %(default)s)")):
        attr = name.replace("-", "_")
        p.add_argument(f"-{name}", f"--{name}", type=typ, default=None, dest=attr,
                       help=help_.replace("%(default)s", str(getattr(d, attr))))
    p.add_argument("-params", "--params", nargs="+", default=None, metavar="GLOB",
                   help="parameters to tune, globs; '!GLOB' leaves some out (default: all; "
                        "--quick: material and tempo)")
    p.add_argument("-then-binary", "--then-binary", nargs="+", default=None, metavar="GLOB",
                   dest="then_binary",
                   help="after the tuning method, Wasp's binary search over these weights "
                        "(e.g. the non-linear king-safety and draw-factor scalars the gradient "
                        "methods leave alone: ks_attacker_weight ks_undefended ks_shield "
                        "ks_storm ks_safe_check 'df_*'); the SPRT plays the result")
    p.add_argument("-data", "--data", nargs="+", default=None, metavar="PGN",
                   help="more PGN games for the set (e.g. a shipped sample)")
    return p


def _build_config(args):
    from datasets.builder import BuildConfig

    return BuildConfig(skip_plies=args.skip_plies, skip_book=not args.keep_book,
                       quiet=not args.no_quiet, dedupe=not args.no_dedupe,
                       max_per_game=args.max_per_game, valid=args.valid, seed=args.seed,
                       params=args.params, threads=args.threads)


def _build_and_write(paths, args):
    from datasets import builder

    try:
        builder.check_format(args.format)
    except ValueError as e:
        raise SystemExit(f"wasp-tune data: error: {e}") from None
    for p in paths:
        if not os.path.isfile(p):
            raise SystemExit(f"wasp-tune data: error: no such file: {p}")
    config = _build_config(args)
    ds = builder.build(paths, config, log=print)
    s = builder.write(ds, args.out, args.format, config)
    print(builder.summary_text(s))
    print(f"wrote {os.path.join(args.out, s['files']['train'])} and "
          f"{os.path.join(args.out, s['files']['valid'])} "
          f"({os.path.join(args.out, 'summary.json')})")
    return 0


def cmd_data(argv):
    if argv and argv[0] == "selfplay":
        return cmd_selfplay(argv[1:])
    if argv and argv[0] == "build":
        argv = argv[1:]
    args = data_parser().parse_args(argv)
    return _build_and_write(args.pgn, args)


def cmd_selfplay(argv):
    from datasets import builder, selfplay

    args = selfplay_parser().parse_args(argv)
    try:
        builder.check_format(args.format)
    except ValueError as e:
        raise SystemExit(f"wasp-tune data selfplay: error: {e}") from None
    others = [["-engine", *tokens] for tokens in args.engine]
    try:
        pgn = selfplay.selfplay(args.out, args.games, nodes=0 if args.tc else args.nodes,
                                tc=args.tc, concurrency=args.concurrency,
                                openings=args.openings, seed=args.seed,
                                params=args.engine_params, others=others)
    except (RuntimeError, ValueError) as e:
        raise SystemExit(f"wasp-tune data selfplay: error: {e}") from None
    return _build_and_write([pgn], args)


def cmd_loop(argv):
    from dataclasses import fields

    from datasets.loop import Loop, LoopConfig

    args = loop_parser().parse_args(argv)
    config = LoopConfig.quick() if args.quick else LoopConfig()
    for f in fields(LoopConfig):
        v = getattr(args, f.name, None)
        if v is not None:
            setattr(config, f.name, v)
    if args.data is not None:
        config.extra_data = [os.path.abspath(p) for p in args.data]
    try:
        loop = Loop(args.dir, config, quiet_matches=args.quiet)
        rep = loop.run(until=args.until)
    except (RuntimeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"wasp-tune loop: error: {e}") from None
    if rep is not None:
        print(f"done: {os.path.join(args.dir, 'report.json')}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print("usage: wasp-tune {data,loop} ... (see wasp-tune data --help, wasp-tune loop "
              "--help)")
        return 2
    if argv[0] == "data":
        return cmd_data(argv[1:])
    if argv[0] == "loop":
        return cmd_loop(argv[1:])
    print(f"wasp-tune: unknown subcommand {argv[0]!r}", file=sys.stderr)
    return 2
