"""Wasp-Py: a Wasp 1.02-style chess engine written in numba.

Importing `wasp` stays light and touches no file: numpy, numba and the kernels load on first
use of `wasp.Position` (or of a submodule). A process that runs kernels first calls
`wasp.kernelcache.setup()`, which points numba at a cache keyed to the kernel sources.
"""

__version__ = "0.1.0"

__all__ = ["Position", "IllegalMoveError", "STARTING_FEN", "__version__"]


def __getattr__(name):
    if name in ("Position", "IllegalMoveError"):
        from wasp import board

        return getattr(board, name)
    if name == "STARTING_FEN":
        from wasp.fen import STARTING_FEN

        return STARTING_FEN
    raise AttributeError(f"module 'wasp' has no attribute {name!r}")
