"""The net's inputs are bullet's: Chess768's index, and ChessBucketsMirrored's bucket table,
mirror and index (jw1912/bullet, crates/bullet_lib/src/game/inputs/), on hand-worked cases."""

import random

import pytest

from wasp.nnue import inputs
from wasp.nnue.inputs import (
    BLACK,
    WHITE,
    bucket_count,
    bucket_table,
    bucketed_feature,
    feature,
    mirror,
    relative,
)

# bullet's examples/progression/3_input_buckets.rs: ten buckets
EXAMPLE_3 = [0, 1, 2, 3,
             4, 4, 5, 5,
             6, 6, 6, 6,
             7, 7, 7, 7,
             8, 8, 8, 8,
             8, 8, 8, 8,
             9, 9, 9, 9,
             9, 9, 9, 9]
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


def test_a_layout_expands_to_64_squares_with_files_e_to_h_mirrored():
    table = bucket_table(EXAMPLE_3)
    assert table.shape == (64,)
    assert [table[s] for s in range(8)] == [0, 1, 2, 3, 3, 2, 1, 0]  # rank 1
    assert [table[s] for s in range(8, 16)] == [4, 4, 5, 5, 5, 5, 4, 4]  # rank 2
    assert (table[16:24] == 6).all() and (table[32:48] == 8).all() and (table[48:] == 9).all()
    assert table[E1] == table[D1] == 3 and table[A8] == table[H8] == 9
    one_each = bucket_table(range(32))  # the layout's own index: 4 * rank + file (a-d)
    for square in range(64):
        rank, file = divmod(square, 8)
        assert one_each[square] == 4 * rank + (file if file < 4 else 7 - file)


def test_bucket_count_is_the_largest_bucket_plus_one():
    assert bucket_count(EXAMPLE_3) == 10
    assert bucket_count([0] * 32) == 1
    assert bucket_count(range(32)) == 32


@pytest.mark.parametrize("layout", [[0] * 31, [0] * 33, [0] * 31 + [-1], [0.5] * 32,
                                    [[0] * 16] * 2])
def test_a_bad_layout_is_refused_by_name(layout):
    with pytest.raises(ValueError, match="a bucket layout is 32 non-negative integers"):
        bucket_table(layout)


def test_the_mirror_is_set_for_kings_on_files_e_to_h():
    assert mirror(E1) == 7 and mirror(H8) == 7 and mirror(H1) == 7
    assert mirror(D1) == 0 and mirror(A8) == 0 and mirror(A1) == 0


def test_bucketed_hand_worked_features_both_perspectives():
    t = bucket_table(EXAMPLE_3)
    # White's view, king e1: bucket 3, mirrored; White's pawn a2 counts as on h2
    assert bucketed_feature(t, E1, WHITE, WHITE, PAWN, A2) == 3 * 768 + 15
    # king d1: bucket 3, not mirrored
    assert bucketed_feature(t, D1, WHITE, WHITE, PAWN, A2) == 3 * 768 + 8
    # White's king a8: bucket 9; Black's rook h1
    assert bucketed_feature(t, A8, WHITE, BLACK, ROOK, H1) == 9 * 768 + 384 + 192 + 7
    # White's king h8: bucket 9, mirrored; the rook counts as on a1
    assert bucketed_feature(t, H8, WHITE, BLACK, ROOK, H1) == 9 * 768 + 384 + 192 + 0
    # Black's king on a8 is a1 in its own view: bucket 0; White's queen d1 is Black's d8
    assert bucketed_feature(t, relative(BLACK, A8), BLACK, WHITE, QUEEN, D1) == \
        384 + 256 + 59
    # Black's king on h8 (its h1): bucket 0, mirrored; the queen counts as on e1: Black's e8
    assert bucketed_feature(t, relative(BLACK, H8), BLACK, WHITE, QUEEN, D1) == \
        384 + 256 + 60
    # Black's king on e1 (its e8): bucket 9, mirrored; its pawn e2 counts as d2: Black's d7
    assert bucketed_feature(t, relative(BLACK, E1), BLACK, BLACK, PAWN, E2) == 9 * 768 + 51
    # one bucket everywhere: Chess768 of the position mirrored when the king is on e-h
    zero = bucket_table([0] * 32)
    assert bucketed_feature(zero, E1, WHITE, BLACK, KNIGHT, A1) == feature(WHITE, BLACK,
                                                                           KNIGHT, H1)


def test_bucketed_features_are_bullets_map_features_on_random_records():
    """bullet: get(ksq) = (7 if ksq % 8 > 3 else 0, 768 * buckets[ksq]), then for each piece
    (stm_bucket + (stm ^ stm_flip), ntm_bucket + (ntm ^ ntm_flip)) with the record's ksq (the
    side to move's king) and opp_ksq (the other king in its own view)."""
    expanded = [EXAMPLE_3[(idx // 8) * 4 + [0, 1, 2, 3, 3, 2, 1, 0][idx % 8]]
                for idx in range(64)]
    t = bucket_table(EXAMPLE_3)
    assert t.tolist() == expanded
    rng = random.Random(3)
    for _ in range(300):
        squares = rng.sample(range(64), rng.randint(2, 32))
        our_ksq, their_king = squares[0], squares[1]
        opp_ksq = their_king ^ 56
        pieces = [(0, KING, our_ksq), (1, KING, their_king)] + \
            [(rng.randint(0, 1), rng.randint(0, 4), s) for s in squares[2:]]

        def get(ksq):
            return (7 if ksq % 8 > 3 else 0), 768 * expanded[ksq]

        stm_flip, stm_bucket = get(our_ksq)
        ntm_flip, ntm_bucket = get(opp_ksq)
        for colour, piece_type, square in pieces:
            stm, ntm = _bullet_chess768(colour, piece_type, square)
            assert bucketed_feature(t, our_ksq, WHITE, colour, piece_type, square) == \
                stm_bucket + (stm ^ stm_flip)
            assert bucketed_feature(t, opp_ksq, BLACK, colour, piece_type, square) == \
                ntm_bucket + (ntm ^ ntm_flip)
            assert opp_ksq == relative(BLACK, their_king)


def test_bucketed_features_of_a_layout_stay_below_buckets_times_768():
    t = bucket_table(EXAMPLE_3)
    seen = {int(bucketed_feature(t, k, p, c, pt, s)) for k in range(64) for p in (0, 1)
            for c in (0, 1) for pt in range(6) for s in range(0, 64, 9)}
    assert min(seen) >= 0 and max(seen) < bucket_count(EXAMPLE_3) * inputs.FEATURES
    assert len({f // inputs.FEATURES for f in seen}) == 10
