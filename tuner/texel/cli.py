"""`wasp-tune run`, `k` and `error`: Texel tuning of Wasp-Py's hand-written evaluation from
labelled positions, each a `Subcommand` in `SUBCOMMANDS` (its flags and its function)."""

import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass

from tuner.texel.methods import REG_HELP
from wasp.cliargs import ArgumentParser, add_resume, add_run_dir, run_dir
from wasp.exitcodes import EXIT_USAGE, CliError, check_files, check_params_file, fail

RUN_EXAMPLES = """examples:
  wasp-tune run positions.epd -dir runs/a -method binary -params 'pst_*' 'pawn_value'
  wasp-tune run games.pgn -dir runs/b -method adam -max-passes 20 -skip-plies 8
  wasp-tune run -resume runs/a                # continue a killed run (or -dir runs/a --resume)
  wasp-tune run sets/a/train.epd -valid-data sets/a/valid.epd -dir runs/c
  wasp-tune k positions.epd -params runs/a/params.txt
  wasp-tune error positions.epd -params runs/a/params.txt -k 1.2 -qsearch

Flags take one or two dashes (-dir or --dir); a run directory is -dir DIR (or -rundir DIR),
-resume DIR goes on with one, -o names an output. The run directory holds params.txt (load it
in the engine with 'setoption name EvalFile value runs/a/params.txt'), history.csv and
passes.csv (pandas.read_csv), run.json (the settings and K) and the checkpoint state.json. With
a validation set, params.txt holds the parameters of the lowest validation E seen
(params-last.txt the last ones) and the run stops after -patience passes without a validation
gain.

exit codes: 0 ok, 1 a data or parameter file that cannot be used, 2 a bad command line
"""


K_EXAMPLES = """examples:
  wasp-tune k datasets/sample/train.epd
  wasp-tune k games.pgn -params runs/a/params.txt -skip-plies 10
"""

ERROR_EXAMPLES = """examples:
  wasp-tune error datasets/sample/valid.epd -params runs/a/params.txt
  wasp-tune error positions.epd -k 1.2 -qsearch
"""


def add_set_flags(p):
    """The flags that read a labelled set (`positions.load_set`): -skip-bad, -skip-plies and
    -limit, on a parser or a group."""
    p.add_argument("-skip-bad", action="store_true",
                   help="skip bad lines (counted and summarised) instead of stopping")
    p.add_argument("-skip-plies", type=int, default=8,
                   help="PGN: plies skipped at the start of each game (default 8)")
    p.add_argument("-limit", type=int, default=0,
                   help="use only the first N positions (0: all)")


def add_fit_flags(p):
    """The flags that keep the tuner from fitting a small set's noise, for `wasp-tune run` and
    `wasp-tune trace` alike: -reg, -min-count and -smooth, on a parser or a group."""
    p.add_argument("-reg", type=float, default=None,
                   help="L2 pull toward the start values: the objective is E + REG * "
                        "sum(((w - w0) / 100)^2), so REG is the E a weight pays for moving "
                        f"100 cp (default: {REG_HELP}; run.json records the value used)")
    p.add_argument("-min-count", type=int, default=0,
                   help="tune only weights that count in at least this many training "
                        "positions (rarer ones keep their values; default 0: all)")
    p.add_argument("-smooth", type=float, default=0.0,
                   help="pull between neighbouring squares of a piece-square table (terms "
                        "named NAME[0] ... NAME[63]): SMOOTH * sum(((w_a - w_b) / 100)^2) "
                        "(default 0: off)")


def fit_settings(args) -> dict:
    """The settings `add_fit_flags` read, as the run configurations name them."""
    if (args.reg is not None and args.reg < 0) or args.min_count < 0 or args.smooth < 0:
        raise CliError("-reg, -min-count and -smooth must not be negative", EXIT_USAGE)
    return {"reg": args.reg, "min_count": args.min_count, "smooth": args.smooth}


def _add_data_flags(p):
    p.add_argument("data", nargs="*", help="EPD, PGN or parquet files (PGN: every position "
                                          "after -skip-plies, labelled with the game's result; "
                                          "parquet: columns fen and result)")
    add_set_flags(p)
    p.add_argument("-threads", "-concurrency", type=int, default=2,
                   help="worker threads (default 2; results do not depend on it)")


def _run_flags(r):
    _add_data_flags(r)
    add_run_dir(r, aliases=("-run-dir",))
    add_resume(r, help="continue the run in DIR (its settings are reused; -dir DIR -resume "
                       "as well)")
    r.add_argument("-method", default="binary", choices=["binary", "local", "adam", "adagrad"],
                   help="binary: Wasp's per-parameter binary search; local: Texel's +1/-1; "
                        "adam/adagrad: gradient descent over the linear weights (default "
                        "binary)")
    r.add_argument("-params", nargs="+", default=[], metavar="GLOB",
                   help="parameters to tune by name or glob ('pst_*', 'passed_rank.eg', "
                        "'pst_knight.mg[27]'); '!GLOB' leaves those out ('!pst_*': all but "
                        "the piece-square tables); default all")
    r.add_argument("-init", default="",
                   help="starting parameter file (default: the built-in values)")
    r.add_argument("-valid", type=float, default=0.1,
                   help="held-out validation fraction (default 0.1)")
    r.add_argument("-valid-data", nargs="+", default=[], metavar="FILE",
                   help="validation set files (e.g. the valid.epd of 'wasp-tune data', split "
                        "by game); the data files are then all training (-valid is ignored)")
    r.add_argument("-seed", type=int, default=1, help="split and batch seed (default 1)")
    r.add_argument("-max-passes", type=int, default=10,
                   help="passes (epochs for the gradient methods), default 10")
    r.add_argument("-partial", type=float, default=1.0,
                   help="binary: move this fraction of the way to each optimum (Stanback; "
                        "default 1)")
    r.add_argument("-resolve-every", type=int, default=1,
                   help="re-run the quiescence search for new leaves every N passes "
                        "(default 1)")
    r.add_argument("-patience", type=int, default=2,
                   help="stop after N passes without a lower validation E (default 2; 0: "
                        "never); params.txt keeps the parameters of the lowest validation E")
    r.add_argument("-k", type=float, default=0.0, help="K (default: fitted)")
    r.add_argument("-lr", type=float, default=0.0,
                   help="learning rate in centipawns (default adam 1, adagrad 5)")
    r.add_argument("-batch-size", type=int, default=16384,
                   help="adam/adagrad: positions per gradient step (default 16384)")
    add_fit_flags(r)
    r.add_argument("-quiet", action="store_true", help="no progress bar")


def _k_flags(p):
    _add_data_flags(p)
    p.add_argument("-params", default="", help="parameter file (default: the built-in "
                                               "defaults)")


def _error_flags(p):
    _k_flags(p)
    p.add_argument("-k", type=float, default=0.0, help="K (default: fitted)")
    p.add_argument("-qsearch", action="store_true",
                   help="only the full quiescence E (default: also the leaf E)")


def _load_set(args):
    from .positions import DataError, load_set

    if not args.data:
        raise CliError("no data files given", EXIT_USAGE)
    check_files(args.data, "data file")
    try:
        ps = load_set(args.data, args.skip_bad, args.skip_plies, args.limit)
    except DataError as e:
        raise CliError(e) from None
    print(f"data: {ps.summary()}")
    return ps


def _weights(W):
    from wasp import params as P

    return P.default_weights() if W is None else W


def _qsearch_scores(args):
    """The weights of -params, the set, its scorer, and the set's quiescence scores, leaves
    and seconds taken: what `k` and `error` start from."""
    from .objective import Scorer

    W = _weights(check_params_file(args.params))
    ps = _load_set(args)
    sc = Scorer(args.threads)
    t = time.time()
    q, leaves = sc.qsearch_scores(W, ps.rows)
    return W, ps, sc, q, leaves, time.time() - t


def cmd_k(args):
    import numpy as np

    from .objective import error, fit_k

    _, ps, _, q, _, seconds = _qsearch_scores(args)
    K = fit_k(q, ps.results)
    print(f"K = {K:.6f}  E = {error(q, ps.results, K):.8f}  ({len(ps)} positions, "
          f"{seconds:.1f} s, mean |q| {np.mean(np.abs(q)):.1f} cp)")
    return 0


def cmd_error(args):
    from .objective import error, fit_k

    W, ps, sc, q, leaves, tq = _qsearch_scores(args)
    K = args.k or fit_k(q, ps.results)
    print(f"K = {K:.6f}")
    print(f"E qsearch = {error(q, ps.results, K):.8f}  ({tq:.2f} s, {len(ps) / tq:.0f} pos/s)")
    if not args.qsearch:
        t = time.time()
        e = error(sc.leaf_scores(W, leaves), ps.results, K)
        tl = time.time() - t
        print(f"E leaves  = {e:.8f}  ({tl:.3f} s, {len(ps) / max(tl, 1e-9):.0f} pos/s)")
    return 0


def cmd_run(args):
    import os

    from .methods import select_weights
    from .positions import DataError
    from .run import VALID_FILE, Run, RunConfig, SplitRun

    directory, resume = run_dir(args)
    split = bool(args.valid_data) or (resume and os.path.exists(
        os.path.join(directory, VALID_FILE)))
    cls = SplitRun if split else Run
    if resume:
        if not os.path.exists(os.path.join(directory, "state.json")):
            raise CliError(f"{directory}: no run to resume (no state.json)")
    else:
        if not args.data:
            raise CliError("no data files given", EXIT_USAGE)
        if os.path.exists(os.path.join(directory, "state.json")):
            raise CliError(f"{directory} already holds a run: use -resume {directory} or "
                           f"another directory", EXIT_USAGE)
        try:
            chosen = select_weights(args.params, linear_only=args.method in ("adam", "adagrad"))
        except ValueError as e:
            raise CliError(f"-params: {e}", EXIT_USAGE) from None
        if len(chosen) == 0:
            raise CliError(f"-params: no weights to tune ({args.method} tunes linear weights "
                           f"only)", EXIT_USAGE)
        check_files(args.data, "data file")
        check_files(args.valid_data, "validation file")
        check_params_file(args.init)
    try:
        if resume:
            run = cls.open(directory, threads=args.threads)
            print(f"resuming {run}")
        else:
            config = RunConfig(data=list(args.data), method=args.method, params=args.params,
                               threads=args.threads, valid=args.valid, seed=args.seed,
                               max_passes=args.max_passes, partial=args.partial,
                               resolve_every=args.resolve_every, skip_bad=args.skip_bad,
                               skip_plies=args.skip_plies, limit=args.limit, init=args.init,
                               k=args.k, lr=args.lr, batch_size=args.batch_size,
                               patience=args.patience, **fit_settings(args))
            if split:
                config.valid = 0.0
                run = SplitRun.create_split(directory, config, args.valid_data)
            else:
                run = Run.create(directory, config)
        run.tune(progress=not args.quiet)
    except DataError as e:
        raise CliError(f"{e} (use --skip-bad to skip bad lines)") from None
    except OSError as e:
        raise CliError(f"{e.filename}: {e.strerror}") from None
    except ValueError as e:
        raise CliError(e) from None
    print(f"done: {os.path.join(directory, 'params.txt')}")
    return 0


@dataclass
class Subcommand:
    """A subcommand parsed here: its help line, description, examples, flags and function."""

    help: str
    description: str
    examples: str
    flags: Callable
    run: Callable


SUBCOMMANDS = {
    "run": Subcommand(
        "tune parameters in a run directory (or -resume one)",
        "Tune evaluation parameters on labelled positions, checkpointed in a run directory "
        "after every parameter.", RUN_EXAMPLES, _run_flags, cmd_run),
    "k": Subcommand(
        "fit K for a parameter file on a data set",
        "Fit K, the scale of the win-probability curve, so that the quiescence scores of a "
        "parameter file best predict the results; print K and E.", K_EXAMPLES, _k_flags, cmd_k),
    "error": Subcommand(
        "E of a parameter file on a data set",
        "Print E, the mean squared error of the predicted results, for a parameter file: with "
        "the full quiescence search and with the leaves the tuner uses.", ERROR_EXAMPLES,
        _error_flags, cmd_error),
}


def parser(name: str) -> ArgumentParser:
    """The parser of `wasp-tune NAME` for NAME in `SUBCOMMANDS`."""
    c = SUBCOMMANDS[name]
    p = ArgumentParser(prog=f"wasp-tune {name}", description=textwrap.fill(c.description, 79),
                       epilog=c.examples)
    c.flags(p)
    return p


def main(argv=None) -> int:
    """`wasp-tune run|k|error ARGS`: argv starts with the subcommand's name."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in SUBCOMMANDS:
        return fail("wasp-tune", f"expected one of {', '.join(SUBCOMMANDS)}", EXIT_USAGE)
    name = argv[0]
    args = parser(name).parse_args(argv[1:])
    import logging

    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)  # bad games: DataError, counted
    try:
        return SUBCOMMANDS[name].run(args)
    except CliError as e:
        return fail(f"wasp-tune {name}", e, e.code)
