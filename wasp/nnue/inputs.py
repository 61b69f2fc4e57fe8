"""The net's inputs as bullet defines them, the one definition the engine's accumulator and the
trainer both import: `Chess768` and the king-bucketed, mirrored `ChessBucketsMirrored`.

Chess768: a piece of colour c, type t (pawn 0 .. king 5) on square s (a1 = 0, h8 = 63) is
feature `384 * (c != perspective) + 64 * t + relative(perspective, s)`: each side sees the
board from its own first rank, its own pieces first. In a bulletformat record the side to move
plays White's part (its pieces are colour 0, its first rank is rank 1).

ChessBucketsMirrored: a layout gives a bucket to each of 32 king squares (ranks 1 to 8, files
a to d, as the king's own side sees the board); a king on files e-h takes the bucket of its
mirror image, and then every square is mirrored left to right (`MIRROR`). The feature is
`FEATURES * bucket + feature(perspective, c, t, s ^ mirror)`.
"""

import numpy as np
from numba import njit

from wasp.types import BLACK, WHITE

__all__ = ["WHITE", "BLACK", "PIECE_TYPES", "SQUARES", "FLIP", "MIRROR", "COLOUR_FEATURES",
           "FEATURES", "MAX_ACTIVE", "LAYOUT_SIZE", "LAYOUT_FILE", "relative", "feature",
           "bucket_table", "bucket_count", "mirror", "bucketed_feature"]

PIECE_TYPES = 6
SQUARES = 64
FLIP = 56  # square ^ FLIP: the board seen from the other side (ranks reversed)
MIRROR = 7  # square ^ MIRROR: the board mirrored left to right (files reversed)
COLOUR_FEATURES = PIECE_TYPES * SQUARES  # 384: the features of one colour's pieces
FEATURES = 2 * COLOUR_FEATURES  # 768: Chess768's features a perspective, and a bucket's
MAX_ACTIVE = 32  # active features a perspective: one a piece

LAYOUT_SIZE = 32  # king squares of a bucket layout: 8 ranks of files a-d
LAYOUT_FILE = (0, 1, 2, 3, 3, 2, 1, 0)  # the layout's column of each file a .. h


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


def bucket_table(layout) -> np.ndarray:
    """The bucket of each king square (int64 [64], a1 .. h8, the king's own view) from a
    32-entry layout (rank by rank, files a-d); files e-h take their mirror images'.
    ValueError names a layout that is not 32 non-negative integers."""
    values = np.asarray(layout)
    if values.shape != (LAYOUT_SIZE,) or not np.issubdtype(values.dtype, np.integer) \
            or values.min() < 0:
        raise ValueError(f"a bucket layout is {LAYOUT_SIZE} non-negative integers, not "
                         f"{list(np.ravel(layout))!r}")
    squares = np.arange(SQUARES)
    return values.astype(np.int64)[4 * (squares // 8) + np.array(LAYOUT_FILE)[squares % 8]]


def bucket_count(layout) -> int:
    """The buckets of a layout: its largest number plus one (bullet's `get_num_buckets`)."""
    return int(bucket_table(layout).max()) + 1


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def mirror(king_square):
    """MIRROR when the king (on `king_square`) stands on files e-h, else 0: the value a
    bucketed perspective's squares are xor-ed with."""
    return MIRROR if (king_square & 7) > 3 else 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def bucketed_feature(table, king_square, perspective, colour, piece_type, square):
    """ChessBucketsMirrored's input index of a piece as `perspective` sees it, its king on
    `king_square` as seen from its own side (relative(perspective, k)); `table` from
    bucket_table."""
    return FEATURES * table[king_square] + feature(perspective, colour, piece_type,
                                                   square ^ mirror(king_square))
