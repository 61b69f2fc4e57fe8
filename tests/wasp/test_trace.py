"""The trace: `wasp eval` output and the tuner's sparse linear coefficients."""

import chess
import numpy as np

from wasp import params as P
from wasp.evaluate import (
    X_KS_BLACK,
    X_KS_WHITE,
    X_PHASE,
    X_SCALE,
    X_SPECIAL,
    default_weights,
    evaluate_white,
)
from wasp.trace import coefficients, linear_eval, print_trace, trace_position

from .test_evaluate import random_positions

X = 2 * P.N_WEIGHTS


def _linear_only(TR):
    e = TR[X:]
    return e[X_KS_WHITE] == 0 and e[X_KS_BLACK] == 0 and e[X_SCALE] == 64 and e[X_SPECIAL] == 0


def test_linear_part_times_weights_is_the_evaluation():
    W = default_weights()
    checked = 0
    for b in random_positions(600, seed=21):
        TR, _ = trace_position(b.fen())
        if not _linear_only(TR):
            continue
        assert linear_eval(coefficients(TR), int(TR[X + X_PHASE]), W) == evaluate_white(b)
        checked += 1
    assert checked > 100


def test_linear_part_follows_changed_weights():
    rng = np.random.default_rng(8)
    W = default_weights()
    lin = np.nonzero(P.LINEAR)[0]
    W[lin] += rng.integers(-20, 20, len(lin))
    for b in random_positions(150, seed=22):
        TR, _ = trace_position(b.fen(), W)
        if _linear_only(TR):
            assert linear_eval(coefficients(TR), int(TR[X + X_PHASE]), W) == \
                evaluate_white(b, W)


def test_only_linear_opening_indices_are_traced():
    TR, _ = trace_position("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    used = np.nonzero(TR[0:X:2] | TR[1:X:2])[0]
    assert len(used) > 20
    assert (P.PHASE_OF[used] == 0).all() and P.LINEAR[used].all()


def test_print_trace_ends_with_the_white_view_score(capsys):
    fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4"
    assert print_trace(fen) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"Final evaluation: {evaluate_white(fen)} (white side)"
    text = "\n".join(out)
    for word in ("material", "pst", "pawns", "king safety", "Phase", "Draw factor"):
        assert word in text


def test_print_trace_defaults_to_the_start_and_rejects_bad_fens(capsys):
    assert print_trace(None) == 0
    assert capsys.readouterr().out.strip().endswith(
        f"Final evaluation: {evaluate_white(chess.STARTING_FEN)} (white side)")
    assert print_trace("not a fen") == 1
