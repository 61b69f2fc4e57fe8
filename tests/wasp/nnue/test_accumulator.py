"""Incrementally updated accumulators equal fresh ones after long random make/unmake walks
(castling both ways, en passant, promotions, Chess960 castling, null moves), for the simple
net and for king-bucketed, mirrored ones (kings crossing the d/e files and bucket borders,
their accumulators refreshed from the finny table)."""

import random

import numpy as np
import pytest

from wasp.board import Position
from wasp.nnue import arch as A
from wasp.nnue import netfile
from wasp.nnue.accumulator import (
    acc_make,
    acc_null,
    acc_offset,
    acc_refresh,
    acc_slot,
    acc_update,
    nn_array,
)
from wasp.nnue.inputs import bucket_table
from wasp.position import make_move, make_null, unmake_move, unmake_null
from wasp.types import (
    FLAG_CASTLE,
    FLAG_EP,
    KING,
    MAILBOX,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    ST_PLY,
)

START_FENS = [
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", False),
    ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", False),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", False),
    ("4k3/2p5/8/3pP3/1p6/8/P1P5/4K3 w - d6 0 1", False),
    ("r3k2r/1P4P1/8/2pP4/8/8/1p4p1/R3K2R w KQkq c6 0 1", False),
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", True),
    ("1rk1r3/8/8/8/8/8/8/1RK1R3 w EBeb - 0 1", True),
    ("rk2r3/8/8/8/8/8/8/RK2R3 w EAea - 0 1", True),
]


def _net(hidden=24, seed=5):
    rng = np.random.default_rng(seed)
    return netfile.quantise(rng.normal(0, 0.5, (768, hidden)).clip(-1.98, 1.98),
                            rng.normal(0, 0.5, hidden), rng.normal(0, 0.5, 2 * hidden), 0.2)


def _kind(m):
    if m & FLAG_CASTLE:
        return "castle"
    if m & FLAG_EP:
        return "ep"
    if (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK:
        return "promo"
    return "move"


def _king_moves(pos, m, layout, seen):
    """Note in `seen` whether move `m` (about to be made) takes the mover's king across the
    d/e files ("cross") or into another bucket of `layout` ("bucket")."""
    frm, to = m & MOVE_FROM_MASK, (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    us = pos.turn
    if pos.S.st[MAILBOX + frm] != 6 * us + KING:  # only king moves and castlings
        return
    if m & FLAG_CASTLE:
        to = (to & 7) + (frm & ~7)
    table = bucket_table(layout)
    before, after = frm ^ (56 * us), to ^ (56 * us)
    if (before & 7 > 3) != (after & 7 > 3):
        seen.add("cross")
    if table[before] != table[after]:
        seen.add("bucket")


def _walk(fen, chess960, seed, steps, NN, fresh, seen, layout=None):
    """A random walk of makes, unmakes and null moves; after each step (a simple net) or
    after a random half of them (a bucketed net, whose accumulators are brought up to date
    when asked for, several plies at a time) the incremental accumulators equal those
    computed from the pieces."""
    rng = random.Random(seed)
    when = random.Random(-seed)  # which steps compare, apart from the walk's own choices
    pos = Position(fen, chess960)
    T, S = pos.T, pos.S
    acc_refresh(S, NN)
    stack = []  # "move" or "null" for each step made
    width = 2 * int(NN[0])
    for _ in range(steps):
        r = rng.random()
        moves = pos.legal_move_codes()
        if stack and (r < 0.3 or not moves or len(stack) > 150):
            if stack.pop() == "null":
                unmake_null(T, S)
            else:
                unmake_move(T, S)
        elif r < 0.36 and not pos.is_check():
            make_null(T, S)
            acc_null(S, NN)
            stack.append("null")
            seen.add("null")
        else:
            special = [m for m in moves if _kind(m) != "move"]
            m = rng.choice(special if special and rng.random() < 0.6 else moves)
            if layout is not None:
                _king_moves(pos, m, layout, seen)
            make_move(T, S, m)
            acc_make(S, NN)
            stack.append("move")
            seen.add(_kind(m) + ("960" if chess960 and _kind(m) == "castle" else ""))
        if layout is not None and when.random() < 0.5:
            continue
        acc_update(S, NN)
        ply = int(S.st[ST_PLY])
        acc_refresh(S, fresh)
        a = acc_slot(NN, ply)
        assert np.array_equal(NN[a:a + width], fresh[a:a + width]), (fen, pos.fen())


EXAMPLE_LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
                  8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]
LAYOUTS = [EXAMPLE_LAYOUT, list(range(32)), [0] * 16 + [1] * 16]


def _bucketed_net(layout, hidden=24, seed=5, activation="screlu", k=8):
    a = A.Arch(inputs="buckets-mirrored", layout=layout, hidden=hidden, activation=activation,
               output_buckets=k)
    rng = np.random.default_rng(seed)
    tensors = {name: rng.integers(-400, 400, shape).astype(np.int16)
               for name, shape in a.file_shapes().items()}
    return A.QuantisedNet(a, tensors)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("fen,chess960", START_FENS)
def test_bucketed_mirrored_accumulators_equal_fresh_ones_on_random_walks(fen, chess960, layout):
    NN = nn_array(_bucketed_net(layout, hidden=16 + len(set(layout))))
    fresh = NN.copy()
    seen = set()
    for seed in range(4):
        _walk(fen, chess960, seed, 400, NN, fresh, seen, layout)
    assert "null" in seen and "move" in seen


def test_the_bucketed_walks_cross_files_and_buckets_with_every_kind_of_move():
    seen = set()
    for layout in LAYOUTS:
        NN = nn_array(_bucketed_net(layout, hidden=16, seed=len(set(layout))))
        fresh = NN.copy()
        for i, (fen, chess960) in enumerate(START_FENS):
            _walk(fen, chess960, 200 + i, 300, NN, fresh, seen, layout)
    assert {"castle", "castle960", "ep", "promo", "null", "move", "cross", "bucket"} <= seen


@pytest.mark.parametrize("fen,chess960", START_FENS)
def test_incremental_accumulators_equal_fresh_ones_on_random_walks(fen, chess960):
    NN = nn_array(_net())
    fresh = NN.copy()
    seen = set()
    for seed in range(4):
        _walk(fen, chess960, seed, 400, NN, fresh, seen)
    assert "null" in seen and "move" in seen


def test_the_walks_cover_every_kind_of_move():
    NN = nn_array(_net(8, 1))
    fresh = NN.copy()
    seen = set()
    for i, (fen, chess960) in enumerate(START_FENS):
        _walk(fen, chess960, 100 + i, 300, NN, fresh, seen)
    assert {"castle", "castle960", "ep", "promo", "null", "move"} <= seen


def test_the_stack_has_room_for_the_longest_history():
    from wasp.types import MAX_HISTORY

    NN = nn_array(_net(4, 2))
    assert acc_offset(NN, MAX_HISTORY) + 8 <= NN.shape[0]
    NN = nn_array(_bucketed_net(EXAMPLE_LAYOUT, hidden=16))
    assert acc_slot(NN, MAX_HISTORY) + 32 <= NN.shape[0]


def test_the_kernels_rows_are_bullets_chess768_features():
    """The accumulator's weight row of each piece (colour * 6 + type) is that of
    wasp.nnue.inputs.feature (bullet's Chess768, pinned in test_inputs)."""
    from wasp.nnue import inputs
    from wasp.nnue.accumulator import NN_HEADER, _row

    n = 7
    for perspective in (0, 1):
        for piece in range(12):
            for sq in range(64):
                expected = inputs.feature(perspective, piece // 6, piece % 6, sq)
                assert _row(NN_HEADER, n, perspective, piece, sq) == NN_HEADER + expected * n


def test_the_bucketed_rows_are_bullets_chess_buckets_mirrored_features():
    """A king-bucketed NN's row of each piece, king square and perspective is that of
    wasp.nnue.inputs.bucketed_feature (pinned to bullet's in test_inputs)."""
    from wasp.nnue import inputs
    from wasp.nnue.accumulator import _row, general_layout, king_view

    n = 16
    net = _bucketed_net(EXAMPLE_LAYOUT, hidden=n)
    NN = nn_array(net)
    table = bucket_table(EXAMPLE_LAYOUT)
    l0w = general_layout(net.arch)["l0w"]
    bb = np.zeros(16, dtype=np.uint64)
    for king in range(64):
        for perspective in (0, 1):
            bb[:] = 0
            bb[6 * perspective + KING] = np.uint64(1) << np.uint64(king)
            bucket, mirror = king_view(NN, bb, perspective)
            own_king = inputs.relative(perspective, king)
            for piece in range(12):
                for sq in range(0, 64, 5):
                    expected = inputs.bucketed_feature(table, own_king, perspective,
                                                       piece // 6, piece % 6, sq)
                    assert _row(l0w + 768 * bucket * n, n, perspective, piece, sq ^ mirror) \
                        == l0w + expected * n


@pytest.mark.parametrize("k", [1, 3, 8, 32])
def test_the_output_bucket_table_is_bullets_material_count_of_every_piece_count(k):
    """The NN's table of output buckets, 0 to 64 pieces on the board, is
    wasp.nnue.arch.output_bucket's (bullet's MaterialCount<K>, pinned in test_arch)."""
    from wasp.nnue.accumulator import NN_OUTPUT_TABLE

    NN = nn_array(_bucketed_net(EXAMPLE_LAYOUT, hidden=16, k=k))
    assert [int(b) for b in NN[NN_OUTPUT_TABLE:NN_OUTPUT_TABLE + 65]] == \
        [A.output_bucket(pieces, k) for pieces in range(65)]
