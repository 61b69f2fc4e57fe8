"""`wasp`: the engine's one command-line entry point.

With no arguments it is a UCI engine (xboard too, when the GUI says `xboard`).
Heavy modules (numba kernels) are imported only by the subcommand that needs them,
so `wasp --help` starts fast; as an engine, they load in a thread while `uci` is answered.
"""

import argparse
import sys

EXAMPLES = """examples:
  wasp                                   run as a UCI engine (for GUIs and match runners)
  wasp perft --depth 6                   count leaf nodes from the start position
  wasp perft --fen "FEN" --depth 3 --divide --walk
  wasp perft --epd tests/data/perftsuite.epd --max-nodes 1000000
  wasp bench 10                          fixed-depth search of the bench positions
  wasp epd suites/wac.epd --time 1000    solve a test suite
  wasp eval "FEN"                        evaluation trace, term by term
  wasp book build games.pgn --plies 16 -o book.bin
  wasp book probe book.bin "FEN"         list a position's book moves
  wasp play --side b --time 3            play the engine in the terminal (SAN moves)
  wasp gui --port 8000                   a board in the browser at http://127.0.0.1:8000/
  wasp warmup                            compile and cache every kernel
"""


def _parser():
    p = argparse.ArgumentParser(
        prog="wasp",
        description="Wasp-Py chess engine (after John Stanback's Wasp 1.02).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command")

    sub.add_parser("uci", help="run the UCI protocol on stdin/stdout (the default)")

    pf = sub.add_parser("perft", help="count leaf nodes of the legal move tree")
    pf.add_argument("--fen", help="start position (default: the initial position)")
    pf.add_argument("--depth", type=int, help="plies to count")
    pf.add_argument("--divide", action="store_true", help="print the count under each move")
    pf.add_argument("--walk", action="store_true",
                    help="after the counts, enter moves to descend the tree, q to leave")
    pf.add_argument("--epd", help="check a perft suite (FEN ;D1 n ;D2 n ...)")
    pf.add_argument("--max-nodes", type=int, default=10**9,
                    help="with --epd: skip depths whose count exceeds this (default 1e9)")

    pb = sub.add_parser("bench", help="search the bench positions to a fixed depth")
    pb.add_argument("depth", nargs="?", type=int, default=None)
    _engine_options(pb)

    pe = sub.add_parser("epd", help="run a test suite with bm/am operations")
    pe.add_argument("file")
    g = pe.add_mutually_exclusive_group()
    g.add_argument("--time", type=int, help="milliseconds per position")
    g.add_argument("--depth", type=int, help="fixed depth per position")

    pv = sub.add_parser("eval", help="print the evaluation trace of a position")
    pv.add_argument("fen", nargs="?", default=None)

    bk = sub.add_parser("book", help="build or probe a Polyglot opening book")
    bsub = bk.add_subparsers(dest="book_command", required=True)
    bb = bsub.add_parser("build", help="write a Polyglot book from PGN games")
    bb.add_argument("pgn", nargs="+", help="PGN files")
    bb.add_argument("--plies", type=int, default=16, help="plies of each game (default 16)")
    bb.add_argument("-o", "--output", required=True, help="the .bin file to write")
    bb.add_argument("--min-count", type=int, default=1,
                    help="leave out moves played fewer times (default 1)")
    bp = bsub.add_parser("probe", help="list the book moves of a position")
    bp.add_argument("book", help="a Polyglot .bin file")
    bp.add_argument("fen", nargs="?", default=None)

    pp = sub.add_parser("play", help="play the engine in the terminal, moves in SAN")
    pp.add_argument("--side", choices=["w", "b", "r"], default="w",
                    help="your colour: w, b or r (random); default w")
    pp.add_argument("--time", type=float, default=5.0,
                    help="the engine's seconds per move (default 5)")
    pp.add_argument("--depth", type=int, help="search to this depth instead of --time")
    pp.add_argument("--fen", help="start from this position")
    pp.add_argument("--pgn", help="where to save the game (default wasp-game-<time>.pgn)")
    _engine_options(pp)

    pg = sub.add_parser("gui", help="serve a board in the browser (play and watch the engine)")
    pg.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    pg.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1: this machine only)")
    _engine_options(pg)

    sub.add_parser("warmup", help="compile every kernel into the numba cache "
                                  "(and the engine's Python files to bytecode)")
    return p


class _Setting(argparse.Action):
    """Collects engine options, in command-line order, as (UCI name, value) pairs."""

    def __call__(self, parser, namespace, values, option_string=None):
        settings = list(getattr(namespace, "engine_settings", None) or [])
        if option_string == "--option":
            name, eq, value = values.partition("=")
            if not eq or not name.strip():
                parser.error(f"--option expects NAME=VALUE, got {values!r}")
            settings.append((name.strip(), value))
        elif option_string == "--book":
            settings += [("BookFile", values), ("OwnBook", "true")]
        else:
            settings.append((self.metavar, values))
        namespace.engine_settings = settings


def _engine_options(parser) -> None:
    """The engine options of `play` and `gui`: the UCI options, as flags."""
    g = parser.add_argument_group("engine options (as the UCI options of the same names)")
    g.add_argument("--book", action=_Setting, metavar="BookFile",
                   help="a Polyglot book for the engine's opening moves")
    g.add_argument("--eval-file", action=_Setting, metavar="EvalFile",
                   help="evaluation parameters (a `wasp-tune run` params.txt; default: the "
                        "built-in tuned values)")
    g.add_argument("--search-file", action=_Setting, metavar="SearchFile",
                   help="search parameters, `Name = value` lines (default: built in)")
    g.add_argument("--hash", action=_Setting, metavar="Hash", help="hash table MB (default 16)")
    g.add_argument("--option", action=_Setting, metavar="NAME=VALUE",
                   help="any UCI option, e.g. --option RazorMargin1=150 (repeatable)")
    parser.set_defaults(engine_settings=[])


def _engine():
    """The engine on stdin/stdout: xboard (CECP) when the GUI's first word is `xboard`,
    else UCI."""
    import itertools

    from wasp import warmup

    warmup.start_background()  # the kernels load while the GUI says `uci`
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
    warmup.exit_now_if_loading(code)  # `quit` came before they were loaded
    return code


def _book(args):
    from wasp.board import Position
    from wasp.book import Book, build
    from wasp.fen import STARTING_FEN

    try:
        if args.book_command == "build":
            summary = build(args.pgn, args.plies, args.output, min_count=args.min_count)
            print(f"{args.output}: {summary['entries']} entries for {summary['positions']} "
                  f"positions from {summary['games']} games "
                  f"({summary['skipped_games']} unreadable games skipped)")
            return 0
        book = Book(args.book)
        moves = book.moves(Position(args.fen or STARTING_FEN))
    except (OSError, ValueError) as e:
        print(f"wasp book: {e}", file=sys.stderr)
        return 2
    total = sum(w for _, w in moves) or 1
    for move, weight in moves:
        print(f"{move:6} weight {weight:6}  {100 * weight / total:5.1f} %")
    if not moves:
        print("no book moves")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv in ([], ["uci"]):  # the engine: no time lost on the parser
        return _engine()
    args = _parser().parse_args(argv)
    if args.command in (None, "uci"):
        return _engine()
    if args.command == "perft":
        from wasp.perft_cli import run

        return run(args)
    if args.command == "bench":
        from wasp.benchmark import bench

        return bench(args.depth, settings=args.engine_settings)
    if args.command == "epd":
        from wasp.epd import run_suite

        return run_suite(args.file, time_ms=args.time, depth=args.depth)
    if args.command == "eval":
        from wasp.trace import print_trace

        return print_trace(args.fen)
    if args.command == "book":
        return _book(args)
    if args.command == "gui":
        from wasp.gui import serve

        return serve(host=args.host, port=args.port, engine_settings=args.engine_settings)
    if args.command == "play":
        from wasp.play import main as play_main

        return play_main(args)
    if args.command == "warmup":
        from wasp.warmup import warmup, write_bytecode

        write_bytecode()
        return warmup(verbose=True)
    return 2


def _entry():
    """Console-script entry: a closed pipe (`wasp perft ... | head`) is not an error."""
    try:
        return main()
    except BrokenPipeError:
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(_entry())
