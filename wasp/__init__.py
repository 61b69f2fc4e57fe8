"""Wasp-Py: a Wasp 1.02-style chess engine written in numba.

Importing `wasp` stays light: numpy, numba and the kernels load on first use of
`wasp.Position` (or of a submodule).
"""

import hashlib
import os
import pathlib
import sys

__version__ = "0.1.0"

__all__ = ["Position", "IllegalMoveError", "STARTING_FEN", "__version__", "cache_dir"]

_SOURCES = ("wasp", "tuner")  # packages whose kernels share the cache
# Front-end modules: no kernels and no constants that kernels read, so editing them
# need not recompile anything. Every other module counts (a new one too).
_FRONT_END = {
    "wasp": {"__init__.py", "cli.py", "uci.py", "xboard.py", "play.py", "book.py", "san.py",
             "perft_cli.py", "epd.py", "benchmark.py", "warmup.py", "timeman.py"},
    "tuner": {"__init__.py", "cli.py", "methods.py", "run.py"},
}


def _source_key() -> str:
    """A digest of the kernel source files: the cache directory's name."""
    root = pathlib.Path(__file__).resolve().parent.parent
    h = hashlib.sha1(__version__.encode())
    for package in _SOURCES:
        for path in sorted((root / package).glob("*.py")):
            if path.name in _FRONT_END[package]:
                continue
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> str:
    """numba's cache directory for this process.

    Numba notices edits to a kernel's own file but not to the callees and constants
    it takes from other files, so unless NUMBA_CACHE_DIR is set, the cache lives in
    a directory keyed by all kernel sources: an edit anywhere means a fresh compile,
    never a stale kernel. Base: WASP_CACHE_DIR, else ~/.cache/wasp-py.
    """
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("WASP_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "wasp-py")
    return os.path.join(base, f"numba-{_source_key()}")


def _use_keyed_cache() -> None:
    path = cache_dir()
    os.environ["NUMBA_CACHE_DIR"] = path  # subprocesses (engines, workers) share it
    if "numba" in sys.modules:  # numba read its config already: tell it too
        from numba.core import config

        config.CACHE_DIR = path


_use_keyed_cache()


def __getattr__(name):
    if name in ("Position", "IllegalMoveError"):
        from wasp import board

        return getattr(board, name)
    if name == "STARTING_FEN":
        from wasp.fen import STARTING_FEN

        return STARTING_FEN
    raise AttributeError(f"module 'wasp' has no attribute {name!r}")
