"""`wasp`: the engine's one command-line entry point.

With no arguments it is a UCI engine (xboard too, when the GUI says `xboard`).
Heavy modules (numba kernels) are imported only by the subcommand that needs them,
so `wasp --help` starts fast; as an engine, they load in a thread while `uci` is answered.
Packages above the engine add flags and a server to `wasp gui` through the entry-point group
`GUI_PLUGINS` (the runs dashboard adds `--runs`), looked up only when `gui` runs.
"""

import argparse
import os
import sys

from wasp.cliargs import ArgumentParser, add_output
from wasp.exitcodes import EXIT_OK, EXIT_USAGE, CliError, fail, file_problem, run_tool

# Each entry point of this group names an object (a module) with `add_arguments(parser)`,
# which adds its flags to `wasp gui`'s parser, and `server(args)`, which returns a
# `make_server(host, port, verbose, engine_settings)` for `wasp.gui.serve` when its flags ask
# for one (else None) and raises CliError for a bad value.
GUI_PLUGINS = "wasp.gui"

EXAMPLES = """examples:
  wasp                                   run as a UCI engine (for GUIs and match runners)
  wasp perft --depth 6                   count leaf nodes from the start position
  wasp perft --fen "FEN" --depth 3 --divide --walk
  wasp perft --epd tests/data/perftsuite.epd --max-nodes 1000000
  wasp bench 10                          fixed-depth search of the bench positions
  wasp epd tests/data/wac.epd --time 1000   solve a test suite
  wasp eval "FEN"                        evaluation trace, term by term
  wasp book build games.pgn --plies 16 -o book.bin
  wasp book probe book.bin "FEN"         list a position's book moves
  wasp play --side b --time 3            play the engine in the terminal (SAN moves)
  wasp gui --port 8000                   a board in the browser at http://127.0.0.1:8000/
  wasp warmup                            compile and cache every kernel

Flags take one or two dashes (--depth or -depth).

exit codes: 0 ok, 1 a file that cannot be used (or a failed check), 2 a bad command line
"""


def _example(*lines):
    return "example:\n" + "\n".join(f"  {ln}" for ln in lines)


def _sub(sub, name, help_, description, example):
    """A subcommand whose help has a description (wrapped), its options and an example."""
    import textwrap

    return sub.add_parser(name, help=help_, description=textwrap.fill(description, 79),
                          epilog=example)


def gui_plugins() -> list:
    """The installed `wasp gui` plugins (entry-point group `GUI_PLUGINS`), loaded; one that
    cannot be loaded is named on stderr and left out."""
    from importlib.metadata import entry_points

    plugins = []
    for point in entry_points(group=GUI_PLUGINS):
        try:
            plugins.append(point.load())
        except Exception as e:  # a broken install of another package: the board still serves
            print(f"wasp gui: warning: plugin {point.name} ({point.value}) not loaded: {e}",
                  file=sys.stderr)
    return plugins


def _parser(plugins=()):
    p = ArgumentParser(prog="wasp", epilog=EXAMPLES,
                       description="Wasp-Py chess engine (after John Stanback's Wasp 1.02).")
    sub = p.add_subparsers(dest="command")

    _sub(sub, "uci", "run the UCI protocol on stdin/stdout (the default)",
         "The engine: UCI on stdin/stdout; xboard when the GUI's first command is `xboard`.",
         _example("wasp uci"))

    pf = _sub(sub, "perft", "count leaf nodes of the legal move tree",
              "Count the leaf nodes of the legal move tree to --depth plies (with --divide, "
              "under each move), or check every count of a perft suite (--epd).",
              _example('wasp perft --depth 5', 'wasp perft --fen "FEN" --depth 3 --divide --walk',
                       'wasp perft --epd tests/data/perftsuite.epd --max-nodes 1000000'))
    pf.add_argument("--fen", help="start position (default: the initial position)")
    pf.add_argument("--depth", type=int, help="plies to count (required without --epd)")
    pf.add_argument("--divide", action="store_true", help="print the count under each move")
    pf.add_argument("--walk", action="store_true",
                    help="after the counts, enter moves to descend the tree, q to leave")
    pf.add_argument("--epd", metavar="FILE", help="check a perft suite (FEN ;D1 n ;D2 n ...)")
    pf.add_argument("--max-nodes", type=int, default=10**9,
                    help="with --epd: skip depths whose count exceeds this (default 1e9)")

    pb = _sub(sub, "bench", "search the bench positions to a fixed depth",
              "Search 30 fixed positions to a fixed depth from cleared tables; the total node "
              "count is the search's signature, the speed the machine's. Engine options (an "
              "EvalFile, a search parameter) give the signature of that engine; --eval-file '' "
              "the hand-written evaluation's (the default is Wasp-Py's net).",
              _example("wasp bench", "wasp bench 6", "wasp bench --eval-file ''"))
    pb.add_argument("depth", nargs="?", type=int, default=None,
                    help="search depth in plies (default 9)")
    _engine_options(pb)

    pe = _sub(sub, "epd", "run a test suite with bm/am operations",
              "Search each position of an EPD suite and check the move against its bm (best "
              "move) or am (avoid move) operations; prints one line a position and 'solved "
              "S/T'. A record that cannot be judged (bad FEN, no bm/am, an illegal move) is "
              "reported with its line and counted as not solved (exit code 1).",
              _example("wasp epd tests/data/wac.epd --time 1000",
                       "wasp epd tests/data/bk.epd --depth 8"))
    pe.add_argument("file", help="the EPD suite")
    g = pe.add_mutually_exclusive_group()
    g.add_argument("--time", type=int, metavar="MS",
                   help="milliseconds per position (default 1000)")
    g.add_argument("--depth", type=int, help="fixed depth per position (instead of --time)")

    pv = _sub(sub, "eval", "print the static evaluation of a position",
              "Print the static evaluation of a position. With a net (the default, Wasp-Py's "
              "own, or --eval-file NET.nnue): the net's output and the evaluation the search "
              "uses. With the hand-written evaluation (--eval-file '' for its built-in "
              "weights, or a params.txt): its trace term by term (white and black, opening and "
              "endgame), the phase, king safety, draw factor and the final score.",
              _example('wasp eval "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq '
                       '- 2 3"', "wasp eval startpos --eval-file ''",
                       "wasp eval startpos --eval-file net.nnue"))
    pv.add_argument("fen", help="the position: a FEN in quotes, or 'startpos'")
    pv.add_argument("--eval-file", metavar="FILE",
                    help="a net: then the lines 'NNUE: N (side to move)' and the evaluation "
                         "the search uses; evaluation parameters, or '' for the built-in "
                         "ones: the hand-written evaluation's trace (default: Wasp-Py's net)")

    bk = _sub(sub, "book", "build or probe a Polyglot opening book",
              "Build a Polyglot opening book from PGN games, or list a position's book moves.",
              _example("wasp book build games.pgn --plies 16 -o book.bin",
                       'wasp book probe book.bin "FEN"'))
    bsub = bk.add_subparsers(dest="book_command", required=True)
    bb = _sub(bsub, "build", "write a Polyglot book from PGN games",
              "Write a Polyglot book of the first --plies plies of every game (weights: 2 a "
              "win, 1 a draw, for the side that moved).",
              _example("wasp book build games.pgn more.pgn --plies 16 -o book.bin"))
    bb.add_argument("pgn", nargs="+", help="PGN files")
    bb.add_argument("--plies", type=int, default=16, help="plies of each game (default 16)")
    add_output(bb, "the .bin file to write", dest="output")
    bb.add_argument("--min-count", type=int, default=1,
                    help="leave out moves played fewer times (default 1)")
    bp = _sub(bsub, "probe", "list the book moves of a position",
              "List the book moves of a position with their weights.",
              _example('wasp book probe book.bin', 'wasp book probe book.bin "FEN"'))
    bp.add_argument("book", help="a Polyglot .bin file")
    bp.add_argument("fen", nargs="?", default=None,
                    help="the position (default: the initial position)")

    pp = _sub(sub, "play", "play the engine in the terminal, moves in SAN",
              "Play a game against the engine in the terminal: type moves in SAN or UCI; "
              "undo, hint and q as well. The game is saved as PGN.",
              _example("wasp play --side b --time 3 --book book.bin"))
    pp.add_argument("--side", choices=["w", "b", "r"], default="w",
                    help="your colour: w, b or r (random); default w")
    pp.add_argument("--time", type=float, default=5.0,
                    help="the engine's seconds per move (default 5)")
    pp.add_argument("--depth", type=int,
                    help="the engine searches to this depth instead of --time (default: none)")
    pp.add_argument("--fen", help="start from this position (default: the initial position)")
    pp.add_argument("--pgn", help="where to save the game (default wasp-game-<time>.pgn)")
    _engine_options(pp)

    pg = _sub(sub, "gui", "serve a board in the browser (play and watch the engine)",
              "Serve a board in the browser: play the engine or watch it play itself.",
              _example("wasp gui --port 8000   # then open http://127.0.0.1:8000/"))
    pg.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    pg.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only; "
                         "0.0.0.0 lets the machines of your network in)")
    for plugin in plugins:
        plugin.add_arguments(pg)
    _engine_options(pg)

    pw = _sub(sub, "warmup", "compile every kernel into the numba cache "
                             "(and the engine's Python files to bytecode)",
              "Compile (or load) every numba kernel into the cache, so that the engine answers "
              "at once and searches at full speed from its first move when a GUI or "
              "wasp-match starts it. The kernel groups (net: the engine's search with a net; "
              "hand: with the hand-written evaluation; tools: qsearch, SEE, perft, the "
              "position queries) compile in parallel processes into the one cache. About a "
              "minute and a half the first time on 2 cores.",
              _example("wasp warmup", "wasp warmup --only net"))
    pw.add_argument("--only", choices=("net", "hand", "tools"),
                    help="one group, in this process (default: every group, in parallel)")
    pw.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="processes at once (default: one a core)")
    pw.add_argument("--report", action="store_true",
                    help="with --only: a line on stdout as each kernel's compile starts "
                         "(`wasp-warmup compiling <compiles done> <kernel>`), for a program "
                         "that waits for it")
    pw.add_argument("--parent", type=int, default=None, metavar="PID",
                    help="with --only: end when process PID ends (an engine's compile, which "
                         "serves no one once the engine is gone)")
    return p


class _Setting(argparse.Action):
    """Collects engine options, in command-line order, as (UCI name, value) pairs."""

    UCI_NAMES = {"--eval-file": "EvalFile", "--search-file": "SearchFile", "--hash": "Hash"}

    def __call__(self, parser, namespace, values, option_string=None):
        option_string = "--" + option_string.lstrip("-")  # -hash as --hash
        settings = list(getattr(namespace, "engine_settings", None) or [])
        if option_string == "--option":
            name, eq, value = values.partition("=")
            if not eq or not name.strip():
                parser.error(f"--option expects NAME=VALUE, got {values!r}")
            settings.append((name.strip(), value))
        elif option_string == "--book":
            settings += [("BookFile", values), ("OwnBook", "true")]
        else:
            settings.append((self.UCI_NAMES[option_string], values))
        namespace.engine_settings = settings


def _engine_options(parser) -> None:
    """The engine options of `play` and `gui`: the UCI options, as flags."""
    g = parser.add_argument_group("engine options (as the UCI options of the same names)")
    g.add_argument("--book", action=_Setting, metavar="FILE",
                   help="a Polyglot book for the engine's opening moves")
    g.add_argument("--eval-file", action=_Setting, metavar="FILE",
                   help="a net (bullet's layout, .nnue; default: Wasp-Py's own, "
                        "wasp-py-3.nnue) or the hand-written evaluation's parameters (a "
                        "`wasp-tune run` params.txt; '': its built-in tuned values)")
    g.add_argument("--search-file", action=_Setting, metavar="FILE",
                   help="search parameters, `Name = value` lines (default: built in)")
    g.add_argument("--hash", action=_Setting, metavar="MB", help="hash table MB (default 16)")
    g.add_argument("--option", action=_Setting, metavar="NAME=VALUE",
                   help="any UCI option, e.g. --option RazorMargin1=150 (repeatable)")
    parser.set_defaults(engine_settings=[])


def _engine():
    """The engine on stdin/stdout: xboard (CECP) when the GUI's first word is `xboard`,
    else UCI."""
    import itertools

    from wasp import background

    background.request("net", guess=True)  # the default net's kernels load while the GUI
    # says `uci` (compiled once the engine knows it plays with the net)
    lines = iter(sys.stdin)
    first = []
    for line in lines:  # blank lines before the first command are skipped
        if line.strip():
            first = [line]
            break
    if first and first[0].strip() == "xboard":
        from wasp.xboard import main as protocol_main
    else:
        from wasp.uci import main as protocol_main
    try:
        code = protocol_main(itertools.chain(first, lines))
    except KeyboardInterrupt:
        code = 0
    background.exit_now_if_busy(code)  # `quit` came before they were loaded
    return code


def _warmup(args):
    from wasp.warmup import REPORT, compile_parallel, follow_parent, warmup, write_bytecode

    if args.jobs is not None and args.jobs < 1:
        return fail("wasp warmup", f"--jobs {args.jobs}: give 1 or more", EXIT_USAGE)
    if (args.report or args.parent is not None) and not args.only:
        flag = "--report" if args.report else "--parent"
        return fail("wasp warmup", f"{flag} goes with --only GROUP", EXIT_USAGE)
    if args.parent is not None:
        follow_parent(args.parent)
    write_bytecode()
    if args.only is None:
        return compile_parallel(jobs=args.jobs)
    report = None
    if args.report:
        def report(line):
            try:
                print(f"{REPORT} {line}", flush=True)
            except OSError:  # the program that asked has gone: finish the compile for the next
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return warmup(verbose=not args.report, kernels=args.only, report=report)


def _book(args):
    if args.book_command == "build":
        for path in args.pgn:
            problem = file_problem(path)
            if problem:
                return fail("wasp book build", problem)
        parent = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(parent):
            return fail("wasp book build", f"-o {args.output}: the directory {parent} does not "
                                           f"exist", EXIT_USAGE)
        if os.path.isdir(args.output):
            return fail("wasp book build", f"-o {args.output}: is a directory", EXIT_USAGE)
        import logging

        from wasp.book import build

        logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)  # bad games are counted
        try:
            summary = build(args.pgn, args.plies, args.output, min_count=args.min_count)
        except OSError as e:
            return fail("wasp book build", f"{e.filename}: {e.strerror}")
        if summary["games"] == 0:
            os.remove(args.output)
            return fail("wasp book build", f"no readable PGN games in {', '.join(args.pgn)} "
                                           f"({summary['skipped_games']} unreadable): no book "
                                           f"written")
        print(f"{args.output}: {summary['entries']} entries for {summary['positions']} "
              f"positions from {summary['games']} games "
              f"({summary['skipped_games']} unreadable games skipped)")
        return EXIT_OK
    from wasp.board import Position
    from wasp.book import Book
    from wasp.fen import STARTING_FEN

    problem = file_problem(args.book, text=False)
    if problem:
        return fail("wasp book probe", problem)
    try:
        book = Book(args.book)
    except ValueError as e:
        return fail("wasp book probe", e)
    try:
        position = Position(args.fen or STARTING_FEN)
    except ValueError as e:
        return fail("wasp book probe", f"bad FEN {args.fen!r}: {e}", EXIT_USAGE)
    moves = book.moves(position)
    total = sum(w for _, w in moves) or 1
    for move, weight in moves:
        print(f"{move:6} weight {weight:6}  {100 * weight / total:5.1f} %")
    if not moves:
        print("no book moves")
    return EXIT_OK


def _eval(fen, eval_file=None):
    from wasp.board import Position
    from wasp.fen import STARTING_FEN

    try:
        position = Position(STARTING_FEN if fen == "startpos" else fen)
    except ValueError as e:
        return fail("wasp eval", f"bad FEN {fen!r}: {e}", EXIT_USAGE)
    from wasp.engine import Engine, eval_file_path

    if eval_file:
        problem = file_problem(eval_file_path(eval_file), text=False)
        if problem:
            return fail("wasp eval", problem)
    engine = Engine()
    try:
        if eval_file is not None:  # "": the hand-written evaluation
            engine.set_option("EvalFile", eval_file)
        W = engine.W
    except ValueError as e:
        return fail("wasp eval", e)
    from wasp.nnue.netfile import is_net

    if is_net(W):
        from wasp.nnue.accumulator import nn_array
        from wasp.nnue.evaluate import evaluate_position

        net, used = evaluate_position(nn_array(W), position)
        white = used if position.turn == 0 else -used
        print(position.fen())
        print(f"NNUE: {net} (side to move)")
        print(f"Final evaluation: {used} (side to move), {white} (white side): the net, with "
              f"the KPK bitbase and insufficient-material draws on top")
        return EXIT_OK
    from wasp.trace import format_trace

    print(format_trace(position, W))
    return EXIT_OK


def _epd(args):
    problem = file_problem(args.file)
    if problem:
        return fail("wasp epd", problem)
    from wasp.testsuite import run_suite

    return run_suite(args.file, time_ms=args.time, depth=args.depth)


def _engine_file_problem(settings):
    """The first unusable file among engine options (BookFile, EvalFile, SearchFile), or None."""
    for name, value in settings:
        if name in ("BookFile", "EvalFile", "SearchFile") and value:
            # an EvalFile may be a net (the engine tells it apart from a parameter file) or
            # the bare name of a file shipped in wasp/evalfiles
            if name == "EvalFile":
                from wasp.engine import eval_file_path

                value = eval_file_path(value)
            problem = file_problem(value, text=name == "SearchFile")
            if problem:
                return f"{name}: {problem}"
    return None


def _play(args):
    problem = _engine_file_problem(args.engine_settings)
    if problem:
        return fail("wasp play", problem)
    if args.fen:
        from wasp.board import Position

        try:
            Position(args.fen)
        except ValueError as e:
            return fail("wasp play", f"bad FEN {args.fen!r}: {e}", EXIT_USAGE)
    from wasp.play import main as play_main

    return play_main(args)


def _gui(args, plugins) -> int:
    problem = _engine_file_problem(args.engine_settings)
    if problem:
        return fail("wasp gui", problem)
    from wasp.gui import BoardServer, serve

    make_server = BoardServer
    try:
        for plugin in plugins:  # the first plugin whose flags were given serves
            found = plugin.server(args)
            if found is not None:
                make_server = found
                break
    except CliError as e:
        return fail("wasp gui", e, e.code)
    return serve(host=args.host, port=args.port, engine_settings=args.engine_settings,
                 make_server=make_server)


def main(argv=None, plugins=None):
    """Run `wasp ARGS`. `plugins`: those of `wasp gui` (default: the installed ones, looked
    up only for `gui`)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv in ([], ["uci"]):  # the engine: no time lost on the parser
        return _engine()
    if plugins is None:
        plugins = gui_plugins() if argv[:1] == ["gui"] else []
    args = _parser(plugins).parse_args(argv)
    if args.command in (None, "uci"):
        return _engine()
    if args.command == "perft":
        from wasp.perft_cli import run

        return run(args)
    if args.command == "bench":
        from wasp.benchmark import bench

        problem = _engine_file_problem(args.engine_settings)
        return fail("wasp bench", problem) if problem else bench(
            args.depth, settings=args.engine_settings)
    if args.command == "epd":
        return _epd(args)
    if args.command == "eval":
        return _eval(args.fen, args.eval_file)
    if args.command == "book":
        return _book(args)
    if args.command == "gui":
        return _gui(args, plugins)
    if args.command == "play":
        return _play(args)
    if args.command == "warmup":
        return _warmup(args)
    return EXIT_USAGE


def entry(run=None) -> int:
    """The `wasp` console script: the kernel cache set up (`wasp.kernelcache`), then `run`
    (default `main`) as every tool runs (`wasp.exitcodes.run_tool`)."""
    from wasp import kernelcache

    kernelcache.setup(("wasp",))
    return run_tool(run or main)


if __name__ == "__main__":
    sys.exit(entry())
