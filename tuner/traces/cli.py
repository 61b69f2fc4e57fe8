"""`wasp-tune trace`: tune the terms of any engine's linear evaluation from its trace."""

import os
import sys
import textwrap
import time

from tuner.texel import add_fit_flags, add_set_flags, fit_settings
from wasp.cliargs import ArgumentParser
from wasp.exitcodes import EXIT_INPUT, EXIT_USAGE, CliError, fail, file_problem

EXAMPLES = """examples:
  wasp-tune trace my-engine.trace -dir runs/t            # K, then Adam over every term
  wasp-tune trace train.trace -valid-data valid.trace -dir runs/t -params 'pst_*' mobility
  wasp-tune trace train.trace -dir runs/b -method binary -k 1.1
  wasp-tune trace -resume runs/t                         # go on with a stopped run
  wasp-tune trace --write datasets/sample/train.epd -o train.trace   # Wasp-Py's own trace

The trace format is in docs/traces.md. Before tuning, the model with the trace's start values
must reproduce each position's EVAL within 1 cp; a trace where more than 0.1 % of positions
differ is refused (-no-check to go on). RUN/params.txt holds the tuned values in the trace's own
'terms' form (NAME OPENING ENDGAME, or NAME VALUE), rounded unless -float; with -valid-data,
those of the lowest validation E. RUN/passes.csv holds E after each pass.

--write DATA -o TRACE writes Wasp-Py's own evaluation of a labelled set (EPD, PGN or parquet,
as wasp-tune run reads it) as a trace: its linear terms as terms, at the quiescence leaves of
the start parameters (wasp-tune run's leaves before it re-resolves them), king safety and the
evaluation's rounding in FIXED, the draw factor as both scales. It passes the check as is.

exit codes: 0 ok, 1 a trace or run that cannot be used (or fails the check), 2 a bad command line
"""


class _Fail(Exception):
    def __init__(self, message, code=EXIT_INPUT):
        super().__init__(str(message))
        self.code = code


def build_parser():
    ap = ArgumentParser(
        prog="wasp-tune trace",
        description=textwrap.fill("Texel tuning of any engine's linear evaluation from a "
                                  "trace: K, then full-batch Adam (or Wasp's per-term binary "
                                  "search) over the terms.", 79),
        epilog=EXAMPLES)
    ap.add_argument("trace", nargs="?", help="the training trace (docs/traces.md)")
    ap.add_argument("-dir", default="", help="the run directory")
    ap.add_argument("-resume", default="", metavar="DIR",
                    help="go on with the run in DIR (its settings and traces are reused)")
    ap.add_argument("-method", default="adam", choices=["adam", "binary"],
                    help="adam: full-batch gradient descent over all chosen terms (default); "
                         "binary: Wasp's per-term binary search on integer values")
    ap.add_argument("-valid-data", default="", metavar="TRACE",
                    help="a validation trace with the same terms: params.txt keeps the values "
                         "of its lowest E, and the run stops after -patience passes without "
                         "a gain")
    ap.add_argument("-params", nargs="+", default=[], metavar="GLOB",
                    help="terms to tune by name or glob ('pst_*', 'knight.eg'); '!GLOB' "
                         "leaves those out; default all")
    ap.add_argument("-k", type=float, default=0.0, help="K (default: fitted)")
    ap.add_argument("-lr", type=float, default=1.0,
                    help="adam: learning rate in centipawns (default 1)")
    ap.add_argument("-epochs", type=int, default=100,
                    help="adam: full-batch steps a pass (default 100)")
    ap.add_argument("-max-passes", type=int, default=0,
                    help="passes (default adam 50, binary 10)")
    ap.add_argument("-patience", type=int, default=3,
                    help="stop after N passes without a lower validation E (default 3; 0: "
                         "never)")
    ap.add_argument("-valid-every", type=int, default=10, metavar="N",
                    help="adam: check the validation E every N steps, keep the values of the "
                         "lowest and stop at a check when -patience passes' worth of checks "
                         "found none lower (default 10; 0: at the end of each pass)")
    add_fit_flags(ap)
    ap.add_argument("-float", dest="as_float", action="store_true",
                    help="write values with decimals (default: rounded to integers)")
    ap.add_argument("-no-check", action="store_true",
                    help="tune even when the start values do not reproduce EVAL")
    ap.add_argument("-no-cache", action="store_true",
                    help="parse the trace text, not the binary cache beside it")
    ap.add_argument("-top", type=int, default=10,
                    help="terms that moved most to print (default 10)")
    ap.add_argument("-threads", type=int, default=2,
                    help="worker threads (default 2; results do not depend on it)")
    ap.add_argument("-quiet", action="store_true", help="no progress bar")
    w = ap.add_argument_group("writing Wasp-Py's own trace")
    w.add_argument("-write", nargs="+", default=[], metavar="DATA",
                   help="labelled positions (EPD, PGN or parquet) to trace with Wasp-Py's "
                        "evaluation instead of tuning (with -o)")
    w.add_argument("-o", "--output", default="", metavar="TRACE", help="the trace to write")
    w.add_argument("-init", default="",
                   help="the parameters to trace with, the terms' start values (default: the "
                        "built-in ones)")
    add_set_flags(w)
    return ap


def _read(path, what, use_cache):
    from .tracefile import TraceError, read_trace

    problem = file_problem(path)
    if problem:
        raise _Fail(f"{what} {problem}")
    t = time.time()
    try:
        tr = read_trace(path, use_cache=use_cache)
    except TraceError as e:
        raise _Fail(e) from None
    print(f"{what} {path}: {len(tr)} positions, {len(tr.names)} terms ({tr.n_weights} "
          f"weights), {time.time() - t:.1f} s")
    return tr


def _check(tr, no_check):
    from .tracefile import check_trace

    c = check_trace(tr)
    if c.ok:
        print(c.message(tr.path) if not c.bad else
              f"check: {c.bad} of {c.n} positions differ from EVAL by more than 1 cp (at most "
              f"0.1 % allowed); the first: {c.message(tr.path)}")
        return
    if no_check:
        print(f"check (ignored, -no-check): {c.message(tr.path)}")
        return
    raise _Fail(f"{c.message(tr.path)}; refused (-no-check to tune anyway)")


def write(args):
    """--write: Wasp-Py's own evaluation of a labelled set as a trace."""
    from tuner.texel import DataError, load_set
    from wasp.exitcodes import check_files, check_params_file

    from .wasp_eval import write_wasp_trace

    if args.trace or args.dir or args.resume:
        raise _Fail("--write takes labelled data and -o TRACE, not a trace to tune or a run "
                    "directory", EXIT_USAGE)
    if not args.output:
        raise _Fail("no output given (--write DATA -o TRACE)", EXIT_USAGE)
    if args.limit < 0:
        raise _Fail("-limit must be 0 or more", EXIT_USAGE)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir) or os.path.isdir(args.output):
        raise _Fail(f"-o {args.output}: not a file in an existing directory", EXIT_USAGE)
    check_files(args.write, "data file")
    W = check_params_file(args.init)
    try:
        ps = load_set(args.write, args.skip_bad, args.skip_plies, args.limit)
    except DataError as e:
        raise _Fail(e) from None
    print(f"data: {ps.summary()}")
    t = time.time()
    n = write_wasp_trace(args.output, ps, W, threads=args.threads, progress=not args.quiet)
    print(f"wrote {args.output}: {n} positions, {time.time() - t:.1f} s")
    return 0


def run(args):
    import numpy as np

    from .run import (
        TraceConfig,
        TraceRun,
        moved_most,
        same_terms,
        select_trace_weights,
    )

    use_cache = not args.no_cache
    if args.resume:
        if args.dir and os.path.abspath(args.dir) != os.path.abspath(args.resume):
            raise _Fail("-dir and -resume name different directories", EXIT_USAGE)
        if not os.path.exists(os.path.join(args.resume, "state.json")):
            raise _Fail(f"{args.resume}: no run to resume (no state.json)")
        run_ = TraceRun.open(args.resume, threads=args.threads)
        c = run_.config
        if args.trace and os.path.abspath(args.trace) != os.path.abspath(c.trace):
            raise _Fail(f"{args.resume} tunes {c.trace}, not {args.trace}", EXIT_USAGE)
        train = _read(c.trace, "trace", use_cache)
        valid = _read(c.valid_data, "validation trace", use_cache) if c.valid_data else None
        print(f"resuming {run_}")
    else:
        if not args.trace:
            raise _Fail("no trace given (wasp-tune trace TRACE -dir RUN)", EXIT_USAGE)
        if not args.dir:
            raise _Fail("no run directory given (-dir RUN)", EXIT_USAGE)
        if os.path.exists(os.path.join(args.dir, "state.json")):
            raise _Fail(f"{args.dir} already holds a run: use -resume {args.dir} or another "
                        f"directory", EXIT_USAGE)
        if args.lr <= 0 or args.epochs <= 0:
            raise _Fail("-lr and -epochs must be positive", EXIT_USAGE)
        if args.valid_every < 0:
            raise _Fail("-valid-every must not be negative", EXIT_USAGE)
        fit = fit_settings(args)
        train = _read(args.trace, "trace", use_cache)
        valid = None
        if args.valid_data:
            valid = _read(args.valid_data, "validation trace", use_cache)
            try:
                same_terms(train, valid)
            except ValueError as e:
                raise _Fail(e) from None
        try:
            chosen = select_trace_weights(train, args.params)
        except ValueError as e:
            raise _Fail(f"-params: {e}", EXIT_USAGE) from None
        _check(train, args.no_check)
        if valid is not None:
            _check(valid, args.no_check)
        print(f"tuning {len(chosen)} of {train.n_weights} weights by {args.method}")
        config = TraceConfig(trace=os.path.abspath(args.trace),
                             valid_data=os.path.abspath(args.valid_data) if valid else "",
                             method=args.method, params=list(args.params), k=args.k,
                             lr=args.lr, epochs=args.epochs, max_passes=args.max_passes,
                             patience=args.patience, as_float=args.as_float,
                             threads=args.threads, valid_every=args.valid_every, **fit)
        run_ = TraceRun.create(args.dir, config)
    W = run_.tune(train, valid, progress=not args.quiet)
    best = run_.state.best
    if valid is not None and best is not None and best.passes == 0 and not best.step:
        print("the start values kept the lowest validation E: nothing the training set taught "
              "held on the validation set (more data, fewer terms with -params, or -reg)")
    W = np.asarray(W) if run_.config.as_float else np.rint(W)
    lines = moved_most(train, W, args.top)
    if lines:
        print(f"moved most (start -> tuned; {os.path.join(run_.dir, 'params.txt')}):")
        print("\n".join(lines))
    else:
        print("no term moved")
    print(f"done: {os.path.join(run_.dir, 'params.txt')}")
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        return write(args) if args.write else run(args)
    except _Fail as e:
        return fail("wasp-tune trace", e, e.code)
    except CliError as e:
        return fail("wasp-tune trace", e, e.code)
    except OSError as e:
        return fail("wasp-tune trace", f"{e.filename}: {e.strerror}")
    except ValueError as e:
        return fail("wasp-tune trace", e)


if __name__ == "__main__":
    sys.exit(main())
