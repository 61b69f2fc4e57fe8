"""`python -m dashboard ARGS` runs the `wasp` command (e.g. `gui --runs DIR`)."""

import sys

from dashboard.cli import entry

sys.exit(entry())
