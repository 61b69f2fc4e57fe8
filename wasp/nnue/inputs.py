"""bullet's Chess768 inputs: 768 features a perspective (colour relative, piece, square).

A piece of colour c, type t (pawn 0 .. king 5) on square s (a1 = 0, h8 = 63) is feature
`384 * (c != perspective) + 64 * t + (s if perspective is White else s ^ 56)`: each side
sees the board from its own first rank, its own pieces first.
"""

WHITE, BLACK = 0, 1
PIECE_TYPES = 6
FEATURES = 2 * PIECE_TYPES * 64


def feature(perspective: int, colour: int, piece_type: int, square: int) -> int:
    """The input index of one piece as `perspective` sees it."""
    relative = square if perspective == WHITE else square ^ 56
    return 384 * (colour != perspective) + 64 * piece_type + relative
