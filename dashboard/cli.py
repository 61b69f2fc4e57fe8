"""The `wasp` command: everything goes to the engine's command line (`wasp.cli`), which serves
`wasp gui` with the dashboard's server, so `wasp gui --runs DIR` shows the runs under DIR.

The engine imports none of the tools; the dashboard, which reads the runs of all of them, sits
above them, and so does this command.
"""

import sys


def _gui(**kw) -> int:
    from dashboard.server import serve_runs  # only for `wasp gui`: the engine starts light

    return serve_runs(**kw)


def main(argv=None) -> int:
    from wasp.cli import main as wasp_main

    return wasp_main(argv, gui=_gui)


def entry() -> int:
    """Console-script entry: `wasp.cli.entry` over this `main`."""
    from wasp.cli import entry as wasp_entry

    return wasp_entry(main)


if __name__ == "__main__":
    sys.exit(entry())
