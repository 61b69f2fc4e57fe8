"""tuner.texel.qsearch: the leaf it keeps evaluates to its score; captures are resolved."""

import numpy as np

from tests.conftest import DATA
from tuner.texel import positions as Ps
from tuner.texel.objective import Scorer
from wasp.evaluate import evaluate_white
from wasp.params import default_weights


def test_leaf_evaluation_equals_the_quiescence_score():
    ps = Ps.load(DATA / "tuner_quiet_200.epd", use_cache=False)
    W = default_weights()
    q, leaves = Scorer(2).qsearch_scores(W, ps.rows)
    for k in range(0, len(ps), 20):  # the engine's own Python face, one position at a time
        assert evaluate_white(Ps.row_to_fen(leaves[k])) == q[k]
    assert np.array_equal(Scorer(2).leaf_scores(W, leaves), q)


def test_hanging_queen_is_taken_and_a_quiet_position_stands_pat():
    fens = ["4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1",  # white takes the queen: leaf has 2 queens fewer
            "4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1"]  # no captures: the root
    rows = np.stack([Ps.pack_fen(f) for f in fens])
    q, leaves = Scorer(1).qsearch_scores(default_weights(), rows)
    assert Ps.row_to_fen(leaves[0]).startswith("4k3/8/8/3Q4/8/8/8/4K3 b")
    assert q[0] > 500
    assert np.array_equal(leaves[1], rows[1])
    assert q[1] == evaluate_white(fens[1])
