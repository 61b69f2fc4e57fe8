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

Any engine whose evaluation writes a trace (docs/traces.md), from its own self-play or -data:
  wasp-tune loop -dir loops/e -data games.pgn \
      -trace-cmd 'python3 my_trace.py {positions} {trace}' \
      -tuned-engine 'cmd=./my-engine option.EvalFile={params}' \
      -each tc=10+0.1 -sprt elo0=0 elo1=10 -sprt-games 400
  wasp-tune loop -dir loops/u -games 400 -nodes 2000 \
      -trace-cmd './engine trace {positions} {trace}' \
      -tuned-engine 'cmd=./engine option.PawnValue={pawn.mg} option.Tempo={tempo}'
There the stages are data/ (train.epd, valid.epd split by game; without -data, the engine's
self-play at -nodes), trace/ (the trace command on both), tune/ (a wasp-tune trace run),
sprt/ (the template with {params} the tuned values against it with the start values, the
terms of the trace's header) and report.json; the commands inherit the loop's environment.

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
    p.add_argument("-until", choices=["games", "data", "trace", "tune", "sprt"],
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
            ("reg", float, "tuner: L2 pull toward the start values, the E a weight pays for "
                           "moving 100 cp (default: the tuner's, from the training positions "
                           "a tuned weight; wasp-tune trace --help)"),
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
                   help="more PGN games for the set (e.g. a shipped sample); with -trace-cmd "
                        "the labelled positions (PGN, or EPD with results) instead of self-play")
    e = p.add_argument_group("any engine (with -trace-cmd and -tuned-engine)")
    e.add_argument("-trace-cmd", default=None, metavar="'CMD {positions} {trace}'",
                   help="the engine's trace writer, run on the training and validation "
                        "positions")
    e.add_argument("-tuned-engine", default=None, metavar="'cmd=CMD ... {params}'",
                   help="wasp-match -engine items for both sides: {params} is a file of the "
                        "values (the trace's terms form), {NAME} (or {NAME.mg}, {NAME.eg}) a "
                        "term's value, e.g. option.NAME={NAME}")
    e.add_argument("-each", nargs="+", default=None, metavar="KEY=VALUE",
                   help="wasp-match -each items of the match (e.g. tc=10+0.1 or depth=3)")
    e.add_argument("-sprt", nargs="+", default=None, metavar="KEY=VALUE",
                   help="wasp-match -sprt items (default elo0=0 elo1=10)")
    e.add_argument("-epochs", type=int, default=None,
                   help="Adam steps a pass (default 100)")
    e.add_argument("-valid-every", type=int, default=None, metavar="N",
                   help="check the validation E every N Adam steps (default 10)")
    e.add_argument("-patience", type=int, default=None,
                   help="passes' worth of checks without a lower validation E (default 3)")
    e.add_argument("-smooth", type=float, default=None,
                   help="pull between neighbouring squares of a table (default 0)")
    e.add_argument("-no-check", action="store_true",
                   help="tune traces the start values do not reproduce")
    return p


# Flags of the Wasp-Py loop only, and those of the loop for any engine only
WASP_ONLY = ("quick", "start", "method", "partial", "then_binary", "then_passes", "tc",
             "sprt_nodes", "sprt_tc", "elo0", "elo1")
ENGINE_ONLY = ("each", "sprt", "epochs", "valid_every", "patience", "smooth")


def engine_loop_config(args):
    """The settings of the loop for any engine from the command line (UsageError-like
    CliError for a flag that belongs to the Wasp-Py loop)."""
    from .anyengine import EngineLoopConfig

    wasp_only = [f for f in WASP_ONLY if getattr(args, f, None) not in (None, False)]
    if wasp_only:
        raise CliError(f"-{wasp_only[0].replace('_', '-')} is a flag of the Wasp-Py loop, not "
                       f"of the loop for any engine (-trace-cmd)", EXIT_USAGE)
    if not args.trace_cmd or not args.tuned_engine:
        raise CliError("the loop for any engine takes both -trace-cmd and -tuned-engine",
                       EXIT_USAGE)
    if "{positions}" not in args.trace_cmd or "{trace}" not in args.trace_cmd:
        raise CliError("-trace-cmd must name {positions} and {trace}", EXIT_USAGE)
    if "{" not in args.tuned_engine:
        raise CliError("-tuned-engine must name {params} (or a term, {NAME})", EXIT_USAGE)
    c = EngineLoopConfig(trace_cmd=args.trace_cmd, tuned_engine=args.tuned_engine,
                         no_check=args.no_check)
    for name in ("games", "nodes", "valid", "seed", "max_per_game", "params", "lr",
                 "max_passes", "reg", "min_count", "threads", "concurrency", "each", "sprt",
                 "epochs", "valid_every", "patience", "smooth"):
        v = getattr(args, name, None)
        if v is not None:
            setattr(c, name, v)
    if args.sprt_games is not None:
        c.rounds = max(1, (args.sprt_games + 1) // 2)
    if args.openings:
        c.openings = args.openings.split() if "=" in args.openings else \
            [f"file={os.path.abspath(args.openings)}", "order=random"]
    if args.data:
        check_files(args.data, "data file")
        c.data = [os.path.abspath(p) for p in args.data]
    return c


def _engine_loop_dir(directory) -> bool:
    """A loop directory whose saved settings are those of the loop for any engine."""
    import json

    try:
        with open(os.path.join(directory, "loop.json"), encoding="utf-8") as f:
            return "trace_cmd" in json.load(f)
    except (OSError, ValueError):
        return False


def cmd_engine_loop(args):
    """The loop for any engine: check the templates, then run (or resume) it."""
    from .anyengine import run_loop

    directory, resume = run_dir(args)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise CliError(f"-dir {directory}: not a directory", EXIT_USAGE)
    if os.path.isfile(os.path.join(directory, "loop.json")):
        config = None  # the saved settings
    else:
        if resume:
            raise CliError(f"{directory}: no loop to resume (no loop.json)")
        config = engine_loop_config(args)
        import re
        import shlex

        import testing
        from testing import UsageError

        try:  # the template reads as -engine items (a term's value stands in for each {...})
            tokens = [re.sub(r"\{[^{}]+\}", "0", t) for t in shlex.split(config.tuned_engine)]
            testing.read_engine([*tokens, "name=check"], config.each)
        except (UsageError, ValueError) as e:
            raise CliError(f"-tuned-engine: {e}", EXIT_USAGE) from None
    try:
        run_loop(directory, config, until=args.until, quiet=args.quiet)
    except (RuntimeError, ValueError, OSError) as e:
        raise CliError(e) from None
    return 0


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
    if args.trace_cmd is not None or args.tuned_engine is not None or \
            _engine_loop_dir(run_dir(args)[0]):
        return cmd_engine_loop(args)
    engine_only = [f for f in ENGINE_ONLY if getattr(args, f, None) is not None]
    if engine_only or args.no_check:
        flag = engine_only[0].replace("_", "-") if engine_only else "no-check"
        raise CliError(f"-{flag} is a flag of the loop for any engine (-trace-cmd)", EXIT_USAGE)
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
        # The loop compiles its kernels first, under one bar (`tuner.loop.warm`); a kernel it
        # did not foresee (another tuning method's) compiles here, under a bar too
        with kernel_progress(enabled=not args.quiet):
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
