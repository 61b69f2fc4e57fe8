"""Shared test set-up: one numba cache for the whole run, and the repo's data folder."""

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"

# Share one cache across the run and with engine subprocesses (set before numba loads).
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
