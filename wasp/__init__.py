"""Wasp-Py: a Wasp 1.02-style chess engine written in numba.

Importing `wasp` stays light: the numba kernels load on first use.
"""

__version__ = "0.1.0"
