"""The net's inputs are bullet's: Chess768's index (jw1912/bullet,
crates/bullet_lib/src/game/inputs/), on hand-worked cases."""

from wasp.nnue import inputs
from wasp.nnue.inputs import BLACK, WHITE, feature, relative

A1, D1, E1, H1, A2, E2, A7, A8, H8 = 0, 3, 4, 7, 8, 12, 48, 56, 63
PAWN, KNIGHT, ROOK, QUEEN, KING = 0, 1, 3, 4, 5


def _bullet_chess768(colour, piece_type, square):
    """bullet's Chess768 over a bulletformat record (side to move = colour 0, its view):
    (stm, ntm) = ([0, 384][c] + 64 pc + sq, [384, 0][c] + 64 pc + (sq ^ 56))."""
    pc = 64 * piece_type
    return [0, 384][colour] + pc + square, [384, 0][colour] + pc + (square ^ 56)


def test_chess768_sizes_are_bullets():
    assert inputs.FEATURES == 768 and inputs.COLOUR_FEATURES == 384 and inputs.MAX_ACTIVE == 32


def test_chess768_hand_worked_features():
    assert feature(WHITE, WHITE, PAWN, A2) == 8  # White's pawn on a2, White's view
    assert feature(BLACK, BLACK, PAWN, A7) == 8  # Black's pawn on a7, Black's view: a2
    assert feature(BLACK, WHITE, KING, E1) == 384 + 320 + 60  # White's king e1 from Black: e8
    assert feature(WHITE, BLACK, QUEEN, H8) == 384 + 256 + 63
    assert relative(WHITE, E1) == E1 and relative(BLACK, E1) == 60


def test_chess768_is_bullets_map_features_for_every_piece_and_square():
    for colour in (0, 1):
        for piece_type in range(6):
            for square in range(64):
                stm, ntm = _bullet_chess768(colour, piece_type, square)
                assert feature(WHITE, colour, piece_type, square) == stm
                assert feature(BLACK, colour, piece_type, square) == ntm

