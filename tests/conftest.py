"""Shared test set-up: the repo's data folder, and one numba cache for the whole run."""

import contextlib
import os
import pathlib

from wasp import kernelcache

# One numba cache for the run, keyed to the engine's and the tuner's kernels, set up before any
# test module imports a kernel; engine and tool subprocesses inherit it (NUMBA_CACHE_DIR).
kernelcache.setup(("wasp", "tuner"))

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@contextlib.contextmanager
def root_on_pythonpath():
    """The repo on PYTHONPATH while the block runs: Dask worker processes import the project
    from it."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
