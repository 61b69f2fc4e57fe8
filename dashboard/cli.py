"""The dashboard on the command line: `wasp gui --runs DIR` serves the runs under DIR beside the
board. This module is a `wasp gui` plugin (entry-point group `wasp.gui`, see `wasp.cli`): it
adds `--runs` and, when given, the dashboard's server; `python -m dashboard ARGS` runs the
`wasp` command with it, installed or not.
"""

import os
import sys
import textwrap

from wasp.exitcodes import InputError


def add_arguments(parser) -> None:
    """`--runs DIR` on `wasp gui`'s parser, with its example."""
    parser.add_argument("--runs", metavar="DIR",
                        help="serve a live dashboard of the run directories under DIR at /runs")
    parser.description = textwrap.fill(
        f"{parser.description} With --runs DIR, also a live dashboard of the match, SPSA and "
        f"tuning runs under DIR at /runs (read-only).", 79)
    parser.epilog += "\n  wasp gui --runs runs   # then open http://127.0.0.1:8000/runs"


def server(args):
    """The dashboard's server for `wasp.gui.serve` when `--runs DIR` is given, else None."""
    if args.runs is None:
        return None
    if not os.path.isdir(args.runs):
        raise InputError(f"--runs {args.runs!r} is not a directory")
    runs_dir = args.runs

    def make_server(host, port, verbose, engine_settings):
        from dashboard.server import DashboardServer  # only when serving: `wasp` starts light

        return DashboardServer(host, port, verbose, engine_settings, runs_dir)

    return make_server


def main(argv=None) -> int:
    """`wasp ARGS` with this plugin on `wasp gui`."""
    from wasp.cli import main as wasp_main

    return wasp_main(argv, plugins=[sys.modules[__name__]])


def entry() -> int:
    """`python -m dashboard`: the `wasp` command's entry over this `main`."""
    from wasp.cli import entry as wasp_entry

    return wasp_entry(main)


if __name__ == "__main__":
    sys.exit(entry())
