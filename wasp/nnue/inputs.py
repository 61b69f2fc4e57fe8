"""The net's inputs as bullet defines them, the one definition the engine's accumulator and the
trainer both import: `Chess768`.

Chess768: a piece of colour c, type t (pawn 0 .. king 5) on square s (a1 = 0, h8 = 63) is
feature `384 * (c != perspective) + 64 * t + relative(perspective, s)`: each side sees the
board from its own first rank, its own pieces first. In a bulletformat record the side to move
plays White's part (its pieces are colour 0, its first rank is rank 1).
"""

from numba import njit

from wasp.types import BLACK, WHITE

__all__ = ["WHITE", "BLACK", "PIECE_TYPES", "SQUARES", "FLIP", "COLOUR_FEATURES", "FEATURES",
           "MAX_ACTIVE", "relative", "feature"]

PIECE_TYPES = 6
SQUARES = 64
FLIP = 56  # square ^ FLIP: the board seen from the other side (ranks reversed)
COLOUR_FEATURES = PIECE_TYPES * SQUARES  # 384: the features of one colour's pieces
FEATURES = 2 * COLOUR_FEATURES  # 768: Chess768's features a perspective
MAX_ACTIVE = 32  # active features a perspective: one a piece


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def relative(perspective, square):
    """`square` as `perspective` sees the board: from its own first rank."""
    return square if perspective == WHITE else square ^ FLIP


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def feature(perspective, colour, piece_type, square):
    """Chess768's input index of a piece of `colour` and `piece_type` on `square` as
    `perspective` sees it."""
    theirs = 1 if colour != perspective else 0
    return COLOUR_FEATURES * theirs + SQUARES * piece_type + relative(perspective, square)

