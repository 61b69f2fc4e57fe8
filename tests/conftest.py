"""Shared test set-up: the repo's data folder, and one numba cache for the whole run."""

import pathlib

import wasp  # noqa: F401  (keys NUMBA_CACHE_DIR to the sources; engine subprocesses inherit it)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
