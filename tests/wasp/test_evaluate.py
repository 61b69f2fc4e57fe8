"""The Wasp evaluation: colour symmetry, one built position per term, caches and info slots."""

import pathlib
import random

import chess
import numpy as np
import pytest

from wasp import params as P
from wasp.board import Position
from wasp.evaluate import (
    X_KS_BLACK,
    X_KS_WHITE,
    X_SCALE,
    X_SPECIAL,
    cache_stats,
    clear_eval_cache,
    default_weights,
    evaluate,
    evaluate_white,
    new_eval_cache,
)
from wasp.trace import trace_position
from wasp.types import (
    INFO_HUNG,
    INFO_MATE_THREAT,
    INFO_PAWN_ENDING,
    INFO_PROMO_THREAT,
    N_INFO,
)

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
X = 2 * P.N_WEIGHTS


def random_positions(n, seed=11):
    """Positions by seeded random play (captures preferred) from the repository's openings."""
    lines = [ln for ln in (DATA / "openings-sample.epd").read_text().splitlines() if ln.strip()]
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b = chess.Board(" ".join(rng.choice(lines).split()[:4]) + " 0 1")
        for ply in range(rng.randint(20, 140)):
            moves = list(b.legal_moves)
            if not moves:
                break
            caps = [m for m in moves if b.is_capture(m)]
            b.push(rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(moves))
            if ply % 7 == 3:
                out.append(b.copy())
    return out[:n]


def coef(fen, name, element=0):
    """(white count, black count) of one linear parameter in a position's trace."""
    TR, _ = trace_position(fen)
    i = P.weight_index(name, element)
    return int(TR[2 * i]), int(TR[2 * i + 1])


def extras(fen):
    TR, _ = trace_position(fen)
    return TR[X:]


def test_white_view_is_minus_the_colour_flipped_twin():
    for b in random_positions(3000):
        assert evaluate_white(b) == -evaluate_white(b.mirror()), b.fen()


def test_start_position_is_the_tempo():
    W = default_weights()
    assert evaluate_white(chess.STARTING_FEN) == W[P.TEMPO] == 1  # full phase: the mg tempo
    W[P.TEMPO] = 17
    assert evaluate_white(chess.STARTING_FEN, W) == 17
    assert evaluate_white(chess.Board().mirror(), W) == -17  # black to move: black's tempo


@pytest.mark.parametrize("fen, name, element, expect", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "knight_value", 0, (2, 2)),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "bishop_pair", 0, (1, 1)),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "pst_knight", 1, (1, 1)),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "pst_knight", 57, (0, 0)),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "tempo", 0, (1, 0)),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1", "tempo", 0, (0, 1)),
    ("4k3/8/8/8/8/4P3/4P3/4K3 w - - 0 1", "pawn_doubled", 0, (1, 0)),
    ("4k3/8/8/8/8/8/P1P5/4K3 w - - 0 1", "pawn_isolated", 0, (2, 0)),
    ("4k3/8/8/4p3/2P5/3P4/8/4K3 w - - 0 1", "pawn_backward", 0, (1, 0)),
    ("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "pawn_weak", 0, (1, 0)),
    ("4k3/p7/8/8/8/8/P7/4K3 w - - 0 1", "pawn_weak", 0, (0, 0)),
    ("4k3/8/2p5/8/3P4/8/4P3/4K3 w - - 0 1", "pawn_candidate", 3, (1, 0)),
    ("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1", "passed_rank", 4, (1, 0)),
    ("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1", "passed_safe", 4, (1, 0)),
    ("4k3/8/3n4/3P4/8/8/8/4K3 w - - 0 1", "passed_blocked", 4, (1, 0)),
    ("4k3/8/3n4/3P4/8/8/8/4K3 w - - 0 1", "passed_safe", 4, (0, 0)),
    ("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1", "passed_own_king_distance", 4, (5, 0)),
    ("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1", "passed_enemy_king_distance", 4, (2, 0)),
    ("7k/8/8/8/P7/8/8/K7 w - - 0 1", "passed_unstoppable", 0, (1, 0)),
    ("8/8/8/4k3/P7/8/8/K7 w - - 0 1", "passed_unstoppable", 0, (0, 0)),
    ("4k3/8/8/8/8/8/8/N3K3 w - - 0 1", "knight_mobility", 2, (1, 0)),
    ("4k3/8/8/4N3/3P4/8/8/4K3 w - - 0 1", "knight_outpost", 0, (1, 0)),
    ("4k3/8/5p2/4N3/3P4/8/8/4K3 w - - 0 1", "knight_outpost", 0, (0, 0)),
    ("4k3/8/8/8/8/8/8/B3K3 w - - 0 1", "bishop_mobility", 7, (1, 0)),
    ("4k3/8/8/4B3/3P4/8/8/4K3 w - - 0 1", "bishop_outpost", 0, (1, 0)),
    ("4k3/B7/1p6/8/8/8/8/4K3 w - - 0 1", "bishop_trapped", 0, (1, 0)),
    ("4k3/8/8/8/8/1P6/b7/4K3 w - - 0 1", "bishop_trapped", 0, (0, 1)),
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "rook_mobility", 10, (1, 0)),
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "rook_open_file", 0, (1, 0)),
    ("4k3/p7/8/8/8/8/8/R3K3 w - - 0 1", "rook_semi_open_file", 0, (1, 0)),
    ("4k3/R7/8/8/8/8/8/4K3 w - - 0 1", "rook_seventh", 0, (1, 0)),
    ("4k3/8/8/8/8/8/5PPP/5KR1 w - - 0 1", "rook_trapped", 0, (1, 0)),
    ("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", "queen_mobility", 17, (1, 0)),
    ("4k3/Q7/8/8/8/8/8/4K3 w - - 0 1", "queen_seventh", 0, (1, 0)),
    ("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "king_pawn_distance", 0, (4, 6)),
    ("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", "hung_piece", 0, (0, 1)),
    ("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1", "hung_piece", 0, (1, 0)),
    ("4k3/8/8/2n1n3/3P4/8/8/4K3 w - - 0 1", "hung_multiple", 0, (0, 1)),
])
def test_each_linear_term_on_a_built_position(fen, name, element, expect):
    assert coef(fen, name, element) == expect


def test_king_safety_counts_attackers_near_the_king():
    attacked = extras("r5k1/5p1p/6pQ/6N1/8/8/5PPP/6K1 b - - 0 1")
    # (the tuned shield and storm weights give white's king a few units too)
    assert attacked[X_KS_BLACK] > attacked[X_KS_WHITE] + 10
    calm = extras("r5k1/5p1p/6p1/8/8/8/5PPP/3Q2K1 b - - 0 1")
    assert calm[X_KS_BLACK] < attacked[X_KS_BLACK]
    # the table is applied: without it the attacked side (black) would stand better
    no_table = default_weights()
    no_table[P.KS_TABLE:P.KS_TABLE + 64] = 0
    fen = "r5k1/5p1p/6pQ/6N1/8/8/5PPP/6K1 b - - 0 1"
    assert evaluate_white(fen) > evaluate_white(fen, no_table)


def test_pawn_shield_lowers_king_danger():
    shield = extras("6k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 1")
    bare = extras("6k1/8/8/8/8/8/5PPP/6K1 w - - 0 1")
    assert shield[X_KS_BLACK] <= bare[X_KS_BLACK]


@pytest.mark.parametrize("fen", [
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",  # KK
    "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1",  # KBK
    "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1",  # KNK
    "4k3/8/8/8/8/8/8/2B1Kn2 w - - 0 1",  # KBKN
    "4k3/8/8/8/8/8/8/1N1NK3 w - - 0 1",  # KNNK
    "k7/8/8/8/8/8/P7/2B1K3 w - - 0 1",  # rook pawn, wrong bishop
    "k7/8/1K6/P7/8/8/8/8 w - - 0 1",  # KPK draw
])
def test_drawn_endings_score_zero(fen):
    assert evaluate_white(fen) == 0
    assert evaluate_white(chess.Board(fen).mirror()) == 0


@pytest.mark.parametrize("fen, name", [
    ("r3k3/8/8/8/8/8/8/R2BK3 w - - 0 1", "df_pawnless"),
    ("4k3/5b2/8/4P3/3P4/8/8/2B1K3 w - - 0 1", "df_opposite_bishops_pure"),
    ("r3k3/5b2/8/4P3/3P4/8/8/R1B1K3 w - - 0 1", "df_opposite_bishops"),
    ("4k3/8/8/8/8/8/3P4/2B1K1n1 w - - 0 1", "df_minor_for_pawn"),
    ("4k3/8/8/4P3/8/8/7r/R3K3 w - - 0 1", "df_krpkr"),
])
def test_draw_factor_scales_drawish_endings(fen, name):
    W = default_weights()
    assert extras(fen)[X_SCALE] == W[P.OFFSETS[name]]
    assert extras(chess.Board(fen).mirror().fen())[X_SCALE] == W[P.OFFSETS[name]]


def test_krpkr_with_the_king_aside_is_not_scaled():
    assert extras("8/8/8/4P3/8/8/7r/R3K2k w - - 0 1")[X_SCALE] == 64


def test_kbnk_drives_the_king_to_the_bishops_corner():
    right = evaluate_white("8/8/8/8/8/8/8/k1B1KN2 w - - 0 1")  # dark bishop, king on a1
    wrong = evaluate_white("8/8/8/8/8/8/8/2B1KN1k w - - 0 1")  # king on h1
    assert right > wrong > 300
    assert extras("8/8/8/8/8/8/8/k1B1KN2 w - - 0 1")[X_SPECIAL] == 1


def test_kpk_uses_the_bitbase():
    assert evaluate_white("7k/8/8/8/8/8/P7/K7 w - - 0 1") > 400
    assert evaluate_white("4k3/8/8/8/8/8/P7/4K3 w - - 0 1") == 0
    assert evaluate_white("k7/8/8/8/8/8/p7/7K b - - 0 1") < -400


def _info(fen):
    p = Position(fen)
    info = np.zeros(N_INFO, dtype=np.int64)
    evaluate(p.T, p.S, default_weights(), new_eval_cache(), info)
    return info


def test_info_slots():
    W = default_weights()
    assert _info("4k3/8/8/3n4/4P3/8/8/4K3 b - - 0 1")[INFO_HUNG] == W[P.KNIGHT_VALUE]
    assert _info("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1")[INFO_HUNG] == 0
    assert _info("4k3/8/8/8/8/8/P7/4K3 w - - 0 1")[INFO_PAWN_ENDING] == 1
    assert _info("4k3/8/8/8/8/8/P7/R3K3 w - - 0 1")[INFO_PAWN_ENDING] == 0
    assert _info("4k3/8/8/8/8/8/p7/4K3 w - - 0 1")[INFO_PROMO_THREAT] == 1
    assert _info("4k3/8/8/8/8/p7/8/4K3 w - - 0 1")[INFO_PROMO_THREAT] == 0
    # queen on f6 supported by the h6 pawn: Qg7 mate is threatened
    assert _info("6k1/5ppp/8/8/8/2B5/6Q1/6K1 b - - 0 1")[INFO_MATE_THREAT] == 0
    assert _info("6k1/5p1p/6p1/8/8/2B5/6Q1/6K1 b - - 0 1")[INFO_MATE_THREAT] == 0
    assert _info("6k1/5p1p/5QpP/8/8/8/8/6K1 b - - 0 1")[INFO_MATE_THREAT] == 1


def test_caches_hit_and_clear_when_weights_change():
    p = Position("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    W = default_weights()
    E = new_eval_cache()
    info = np.zeros(N_INFO, dtype=np.int64)
    a = evaluate(p.T, p.S, W, E, info)
    b = evaluate(p.T, p.S, W, E, info)
    assert a == b
    s = cache_stats(E)
    assert s["eval_probes"] == 2 and s["eval_hit_rate"] == 0.5
    W2 = W.copy()
    W2[P.PST_BISHOP + 26] += 40  # c4
    assert evaluate(p.T, p.S, W2, E, info) == a  # stale until cleared
    clear_eval_cache(E)
    assert evaluate(p.T, p.S, W2, E, info) != a
    assert evaluate(p.T, p.S, W2, new_eval_cache(), info) == evaluate(p.T, p.S, W2, E, info)


def test_cached_and_uncached_evaluations_agree_over_a_game():
    E = new_eval_cache()
    W = default_weights()
    info = np.zeros(N_INFO, dtype=np.int64)
    cached = np.zeros(N_INFO, dtype=np.int64)
    for b in random_positions(300, seed=5):
        p = Position(b.fen())
        fresh = evaluate(p.T, p.S, W, new_eval_cache(), info)
        assert evaluate(p.T, p.S, W, E, cached) == fresh
        assert evaluate(p.T, p.S, W, E, cached) == fresh  # a hit: score and info unpacked
        assert list(cached) == list(info), b.fen()


def test_eval_cache_size_is_a_power_of_two():
    p = Position("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    info = np.zeros(N_INFO, dtype=np.int64)
    big = new_eval_cache(1 << 16)
    v = evaluate(p.T, p.S, default_weights(), big, info)
    assert evaluate(p.T, p.S, default_weights(), big, info) == v
    assert cache_stats(big)["eval_hit_rate"] == 0.5
    with pytest.raises(ValueError):
        new_eval_cache(1000)
