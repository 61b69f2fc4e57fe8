"""`wasp-tune spsa`: tune a UCI engine's options with SPSA through games, with the match
runner's flags (`wasp-match`) for the engine, the limits, the openings and the run directory."""

from __future__ import annotations

import os
import re
import sys

from wasp.exitcodes import EXIT_INPUT, UsageError, fail, file_problem

from .algorithm import A_RATIO, ALPHA, GAMMA, SpsaInputError, parse_params
from .run import SPRT_PAIRS

LIMIT_KEYS = ("tc", "st", "nodes", "depth")  # -then-sprt keys that set the SPRT's limits

PROG = "wasp-tune spsa"

USAGE = f"""\
usage: wasp-tune spsa PARAMS.txt -iterations N [-pairs M] -engine cmd=CMD ... -each nodes=N
                      [-openings file=F ...] [-concurrency K | -dask ADDRESS] [-in-flight L]
                      [-srand S] [-rundir DIR] [-then-sprt elo0=E0 elo1=E1]
       wasp-tune spsa -resume DIR [-concurrency K] [-dask ADDRESS] [-progress on|off]
       wasp-tune spsa --emit-params -engine cmd=CMD ... [-params GLOB ...] [-o FILE]

Tunes an engine's spin options by SPSA (as OpenBench and fishtest do): each iteration plays
M game pairs (one opening, colours swapped) between the engine with theta + c_k * flip and
with theta - c_k * flip, and moves theta by a_k / c_k * (wins - losses) * flip. Options are
set with setoption before every game; engines are not restarted (restart=on if needed).

PARAMS.txt: one parameter a line, OpenBench's format
  name, int|float, start, min, max, c_end, r_end
  (c_k = c / k^gamma and a_k = a / (A + k)^alpha, with c = c_end * N^gamma and
  a = r_end * c_end^2 * (A + N)^alpha: c_k reaches c_end and a_k / c_k^2 reaches r_end at the
  last iteration N.) --emit-params writes it from the engine's own option list.

SPSA:
  -iterations N          iterations (N in the schedule)
  -pairs M               game pairs per iteration (default 1; OpenBench's pairs-per)
  -alpha X -gamma X      schedule exponents (default {ALPHA}, {GAMMA})
  -a-ratio X             A = X * N (default {A_RATIO})
  -srand S               seed of the flips, the roundings and a random opening order
  -then-sprt elo0=E0 elo1=E1 [alpha=0.05] [beta=0.05] [model=normalized|logistic]
             [pairs=N]   then play the tuned values against the start values with the match
                         runner's SPRT (game pairs on the same openings, at most N pairs,
                         default {SPRT_PAIRS}) in DIR/sprt; -resume goes on with it too;
             [tc=T | st=S | nodes=N | depth=D]   the SPRT's limits instead of the run's
                         (tune at nodes=, check at the time control that matters)

The match runner's flags, as in wasp-match (see wasp-match --help):
  -engine KEY=VALUE ...  the one engine tuned: cmd= arg= dir= proto= option.NAME=VALUE
                         restart= startup= (and the limits below)
  -each tc= | st= | nodes= | depth=   the limits of every game
  -openings file=F [format=epd|pgn] [order=random|sequential] [plies=N] [start=N]
  -concurrency K         game pairs at once on this machine (default 1)
  -in-flight L           iterations played at once (default: enough for -concurrency, i.e.
                         ceil(K / M)): iteration k starts from theta after iteration k - L,
                         and the updates are applied in order, so the run depends on L but not
                         on which game ends first (OpenBench and fishtest let workers start
                         from a stale theta too); with -dask give L x M >= the workers' threads
  -draw ... -resign ... -maxmoves N   adjudication; -recover; -log FILE; -config FILE
  -dask ADDRESS          play the pairs as tasks on a Dask scheduler (pip install
                         "wasp-chess[dask]"); the engine command must run on the workers
  -rundir DIR, -dir DIR  run directory (default runs/<timestamp>)
  -resume DIR            go on with the run in DIR (a run killed even by SIGKILL repeats no
                         stored game)
  -progress on|off       the progress bar (default: when stderr is a terminal)

--emit-params:
  -params GLOB ...       only options matching a glob ('Lmr*'), any spin option then; without
                         it every spin option but Hash, Threads, MultiPV, *Overhead*, *Time*,
                         Slow Mover, nodestime, Syzygy*, UCI_*, Skill Level, Contempt (they set
                         resources, time use, output or strength limits, not the search)
  -o FILE                write the input there (default: stdout)
  startup= defaults to 300 s here: the list is read once, and an engine that compiles at
  start (Wasp-Py on a cold numba cache) may need it.
  Start at the default, range min..max, c_end = (max - min) / 20 (ints at least 0.5), r_end
  0.002: the rule of thumb of OpenBench and fishtest users, c_end a step that moves strength
  measurably in the last iterations and r_end the learning rate most tunes use. Check them: a
  range far wider than the values that make sense needs a smaller c_end.

The run directory: games.sqlite (every game as it ends), params.csv (one row per iteration:
theta after it, c_k, a_k, flip, the values played, wins/draws/losses; pandas.read_csv),
result.txt (name, value: OpenBench's output) and result-options.txt (name = value: load it with
'setoption name SearchFile value DIR/result-options.txt' in Wasp-Py).

examples:
  wasp-tune spsa --emit-params -engine cmd=wasp -params 'Lmr*' -o lmr.txt
  wasp-tune spsa lmr.txt -iterations 2000 -pairs 4 -engine cmd=wasp -each nodes=5000 \\
      -openings file=tests/data/uho_sample.epd order=random -srand 1 -concurrency 2 -rundir runs/lmr
  wasp-tune spsa -resume runs/lmr
  wasp-tune spsa lmr.txt -iterations 500 -engine cmd=wasp -each nodes=2000 -then-sprt elo0=0 elo1=5

exit codes: 0 ok, 1 a file that cannot be used (PARAMS.txt, -openings, -resume) or an engine
that fails, 2 a bad command line, 130 interrupted (resume with -resume DIR)
"""

EMIT_STARTUP = 300  # seconds --emit-params waits for an engine without startup= (numba...)
SPSA_VALUE_FLAGS = {"-iterations", "-pairs", "-in-flight", "-alpha", "-gamma", "-a-ratio", "-o"}


def is_flag(tok: str) -> bool:
    """A flag ends the items of -params and -then-sprt: a word starting with '-' that is not
    KEY=VALUE."""
    return tok.startswith("-") and "=" not in tok


def split_argv(argv: list[str]):
    """(PARAMS file or None, SPSA settings, --emit-params, -params globs, runner argv)."""
    params_file = None
    own: dict = {}
    emit = False
    globs: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        flag = tok[1:] if tok.startswith("--") else tok
        if flag == "-emit-params":
            emit = True
        elif flag == "-params":
            i += 1
            while i < len(argv) and not is_flag(argv[i]):
                globs.append(argv[i])
                i += 1
            continue
        elif flag == "-then-sprt":
            i += 1
            sprt = own.setdefault("then-sprt", {})
            while i < len(argv) and not is_flag(argv[i]):
                k, eq, v = argv[i].partition("=")
                if not eq:
                    raise UsageError(f"-then-sprt: expected KEY=VALUE, got {argv[i]!r}")
                sprt[k] = v
                i += 1
            continue
        elif flag in SPSA_VALUE_FLAGS:
            if i + 1 >= len(argv):
                raise UsageError(f"{flag}: missing value")
            own[flag[1:]] = argv[i + 1]
            i += 1
        elif i == 0 and not tok.startswith("-"):
            params_file = tok
        else:
            rest.append(tok)
        i += 1
    return params_file, own, emit, globs, rest


def _number(own, key, cast, default, lo, where=""):
    """own[key] as a number of at least `lo` (`default` when absent); UsageError naming
    `where` (default -KEY)."""
    if key not in own:
        return default
    where = where or f"-{key}"
    try:
        x = cast(own[key])
    except ValueError:
        raise UsageError(f"{where}: expected a number, got {own[key]!r}") from None
    if not x >= lo:
        raise UsageError(f"{where}: must be at least {lo}, got {x}")
    return x


def plus_and_minus(cfg) -> None:
    """The one engine of `cfg` (a MatchConfig) becomes the run's two engines, plus (theta + c)
    and minus."""
    import copy

    if len(cfg.engines) != 1:
        raise UsageError(f"give exactly one -engine (the engine tuned), got {len(cfg.engines)}")
    e = cfg.engines[0]
    cfg.engines = [copy.deepcopy(e) for _ in range(2)]
    for engine, side in zip(cfg.engines, ("plus", "minus"), strict=True):
        engine.name = f"{e.name}-{side}"


def cmd_emit(globs, own, rest) -> int:
    import testing

    from .run import emit_params, read_options

    # a one-off that searches nothing: no limits needed, and a long wait for a slow start
    # (the command line's own -each and -engine items come after these)
    defaults = ["-each", "nodes=1", f"startup={EMIT_STARTUP}"]
    config = testing.read_flags([*defaults, *rest], count_engines=False).config
    engines = config.engines if config is not None else []  # none with -resume
    if len(engines) != 1:
        raise UsageError("--emit-params: give exactly one -engine")
    cfg = engines[0]
    out = own.get("o")
    if out and not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        raise UsageError(f"-o {out}: directory does not exist")
    name, options = read_options(cfg)
    text = emit_params(name, options, globs)
    if out:
        with open(out, "w") as f:
            f.write(text)
        print(f"{out}: {sum(1 for ln in text.splitlines() if not ln.startswith('#'))} "
              f"parameters", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_run(params_file, own, rest) -> int:
    import testing
    from testing.tournament import stop_on_sigterm

    from .run import SpsaRun, SpsaSettings

    flags = testing.read_flags(rest, count_engines=False)  # the match runner's flags
    resume = flags.resume
    if resume:
        if params_file or own:
            raise UsageError("-resume: PARAMS and -iterations/-pairs/... cannot be given: "
                             "the run's settings are read from its directory")
        plan = testing.plan_match(None, flags.rundir, session=flags.session, spsa=True)
    else:
        if not params_file:
            raise UsageError("no PARAMS file given (wasp-tune spsa PARAMS.txt ...; "
                             "--emit-params writes one)")
        plus_and_minus(flags.config)
        plan = testing.plan_match(flags.config, flags.rundir, new=True)
    cfg, rundir = plan.config, plan.rundir
    then_sprt, sprt_pairs, sprt_limits = (_then_sprt(own, rest, cfg) if not resume
                                          else (None, 0, None))
    if resume:
        run = SpsaRun.open(rundir, cfg)
        print(f"resuming {run}", flush=True)
    else:
        if "iterations" not in own:
            raise UsageError("-iterations N is required")
        iterations = _number(own, "iterations", int, 0, 1)
        pairs = _number(own, "pairs", int, 1, 1)
        in_flight = _number(own, "in-flight", int, -(-cfg.concurrency // pairs), 1)
        alpha = _number(own, "alpha", float, ALPHA, 0.0)
        gamma = _number(own, "gamma", float, GAMMA, 0.0)
        a_ratio = _number(own, "a-ratio", float, A_RATIO, 0.0)
        problem = file_problem(params_file)
        if problem:
            raise UsageError(f"parameter file {problem}", EXIT_INPUT)
        with open(params_file, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            parse_params(text, params_file)
        except SpsaInputError as e:
            raise UsageError(e, EXIT_INPUT) from None
        settings = SpsaSettings(text, params_file, iterations, pairs, cfg.srand, alpha, gamma,
                                a_ratio, in_flight, then_sprt, sprt_pairs, sprt_limits)
        run = SpsaRun.create(rundir, cfg, settings)
        print(f"run directory: {rundir}", flush=True)
    stop_on_sigterm()
    try:
        theta = run.run()
    except KeyboardInterrupt:
        print(f"interrupted: resume with {PROG} -resume {rundir}", file=sys.stderr)
        return 130
    for p, x in zip(run.params, theta, strict=True):
        print(f"{p.name}, {p.value_text(x)}")
    print(f"done: {os.path.join(rundir, 'result.txt')}", flush=True)
    if run.settings.then_sprt is None:
        return 0
    from .run import run_sprt

    code = run_sprt(SpsaRun.open(rundir, cfg), theta)
    if code == 130:
        print(f"resume the SPRT with {PROG} -resume {rundir}", file=sys.stderr)
    return code


def _then_sprt(own: dict, rest: list[str], cfg):
    """-then-sprt's settings, checked as wasp-match checks -sprt, and its limits as -each checks
    them (`rest`: the runner's flags; `cfg`: the run's MatchConfig): (SprtConfig fields, pairs,
    limits or None)."""
    from dataclasses import asdict, replace

    import testing

    d = dict(own.pop("then-sprt", None) or {})
    if not d:
        return None, SPRT_PAIRS, None
    pairs = _number(d, "pairs", int, SPRT_PAIRS, 1, "-then-sprt: pairs")
    d.pop("pairs", None)
    limits = {k: d.pop(k) for k in LIMIT_KEYS if k in d}
    try:
        items = [f"{k}={v}" for k, v in d.items()]
        sprt = testing.read_flags([*rest, "-sprt", *items], count_engines=False).config.sprt
        replace(cfg, sprt=sprt).validate()
    except testing.UsageError as e:  # the runner's message, named for this flag
        raise UsageError(str(e).replace("-sprt", "-then-sprt"), e.code) from None
    if limits:  # checked as -each checks them; they replace the run's limits
        e = cfg.engines[0]
        where = [f"cmd={e.cmd}", *([f"dir={e.dir}"] if e.dir else [])]
        try:
            engine = testing.read_engine([*where, *(f"{k}={v}" for k, v in limits.items())])
        except testing.UsageError as err:
            why = re.sub(r"^-engine #\d+ \([^)]*\): ", "", str(err))
            raise UsageError(f"-then-sprt: {why}", err.code) from None
        limits = {k: getattr(engine, k) for k in LIMIT_KEYS}
        limits["tc"] = str(limits["tc"]) if limits["tc"] is not None else None  # as saved
    return asdict(sprt), pairs, limits or None


def main(argv: list[str] | None = None) -> int:
    from .run import SpsaError

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "spsa":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help", "-help"):
        print(USAGE)
        return 0
    try:
        params_file, own, emit, globs, rest = split_argv(argv)
        if emit:
            if params_file:
                raise UsageError("--emit-params takes no PARAMS file (it writes one: -o FILE)")
            return cmd_emit(globs, own, rest)
        if globs:
            raise UsageError("-params GLOB goes with --emit-params")
        return cmd_run(params_file, own, rest)
    except (UsageError, SpsaError) as e:
        return fail(PROG, e, e.code)


if __name__ == "__main__":
    sys.exit(main())
