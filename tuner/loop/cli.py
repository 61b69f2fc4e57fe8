"""`wasp-tune loop`: self-play -> labelled set -> Texel tuning -> SPRT, resumable."""

import os
import sys

from wasp.cliargs import ArgumentParser, add_resume, add_run_dir, run_dir
from wasp.exitcodes import EXIT_USAGE, CliError, check_files, fail

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


def loop_parser():
    from .run import LoopConfig

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


def cmd_loop(argv):
    from dataclasses import fields

    from .run import Loop, LoopConfig

    args = loop_parser().parse_args(argv)
    config = LoopConfig.quick() if args.quick else LoopConfig()
    for f in fields(LoopConfig):
        v = getattr(args, f.name, None)
        if v is not None:
            setattr(config, f.name, v)
    if args.data is not None:
        from tuner.sets import check_pgn

        for path in args.data:
            check_files([path], "PGN file")
            try:
                check_pgn(path)
            except ValueError as e:
                raise CliError(e) from None
        config.extra_data = [os.path.abspath(p) for p in args.data]
    _check_openings(args.openings)
    if args.start:
        from .run import start_weights

        try:
            start_weights(args.start)
        except ValueError as e:
            raise CliError(f"-start: {e}") from None
        if os.path.isfile(args.start):
            config.start = os.path.abspath(args.start)
    if args.params or args.then_binary:
        from tuner.texel import select_weights

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
        from .run import closing_summary

        print(closing_summary(rep, directory))
    return 0


def main(argv=None) -> int:
    """`wasp-tune loop ARGS` (argv without the `loop`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return cmd_loop(argv)
    except CliError as e:
        return fail("wasp-tune loop", e, e.code)
