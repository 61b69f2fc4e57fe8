"""tuner.texel.methods and tuner.texel.sparse: planted optima, parameter selection, gradients."""

import numpy as np
import pytest

from tests.conftest import DATA
from tuner.texel import methods as M
from tuner.texel import positions as Ps
from tuner.texel.objective import Scorer, error, sigmoid
from tuner.texel.sparse import gradient, model_scores, sparse_traces
from wasp import params as P

K = 1.2


@pytest.fixture(scope="module")
def setup():
    ps = Ps.load(DATA / "tuner_quiet_200.epd", use_cache=False)
    sc = Scorer(2)
    W0 = P.default_weights()
    q, leaves = sc.qsearch_scores(W0, ps.rows)
    return ps, sc, W0, q, leaves


def _planted(setup, changes):
    """Labels generated from a known W* (R = sigmoid(K q*)): E is 0 exactly at W*."""
    ps, sc, W0, q, leaves = setup
    Ws = W0.copy()
    for i, v in changes.items():
        Ws[i] = v
    R = sigmoid(sc.leaf_scores(Ws, leaves), K)

    def f(W):
        return error(sc.leaf_scores(W, leaves), R, K)

    return Ws, f


@pytest.mark.parametrize("name, phase, value", [("pawn_value", "mg", 117),
                                                ("rook_value", "eg", 461),
                                                ("knight_mobility", "eg", -31)])
def test_binary_search_finds_a_planted_optimum(setup, name, phase, value):
    element = 0 if P.BY_NAME[name].size == 1 else 4
    i = P.weight_index(name, element, phase)
    Ws, f = _planted(setup, {i: value})
    W = setup[2].copy()
    old, new, e = M.tune_parameter(M.BINARY, f, W, i, f(W))
    assert (old, new) == (int(setup[2][i]), value) and W[i] == value
    assert e == pytest.approx(0.0, abs=1e-20)


def test_binary_search_leaves_a_parameter_at_its_optimum_alone(setup):
    i = P.weight_index("bishop_value", 0, "mg")
    Ws, f = _planted(setup, {})
    W = setup[2].copy()
    assert M.tune_parameter(M.BINARY, f, W, i, f(W))[1] == Ws[i]


def test_partial_step_moves_part_of_the_way(setup):
    i = P.weight_index("pawn_value", 0, "mg")
    W = setup[2].copy()
    Ws, f = _planted(setup, {i: int(W[i]) + 40})  # 40 above the default
    old, new, _ = M.tune_parameter(M.BINARY, f, W, i, f(W), partial=0.5)
    assert new == old + 20


def test_local_search_steps_by_one_toward_the_optimum(setup):
    i = P.weight_index("queen_value", 0, "eg")
    W = setup[2].copy()
    start = int(W[i])
    Ws, f = _planted(setup, {i: start - 5})
    assert M.tune_parameter(M.LOCAL, f, W, i, f(W))[1:2] == (start - 1,)


def test_select_weights_by_name_glob_entry_and_element():
    assert list(M.select_weights(["pawn_value"])) == [P.weight_index("pawn_value", 0, "mg"),
                                                      P.weight_index("pawn_value", 0, "eg")]
    assert len(M.select_weights(["pst_*"])) == 6 * 64 * 2
    assert len(M.select_weights(["passed_rank.eg"])) == 8
    assert list(M.select_weights(["pst_knight.mg[27]"])) == [P.weight_index("pst_knight", 27)]
    assert len(M.select_weights()) == P.N_WEIGHTS
    assert not P.LINEAR[M.select_weights(["ks_*"])].any()
    assert len(M.select_weights(["ks_*"], linear_only=True)) == 0
    with pytest.raises(ValueError, match="no parameter matches"):
        M.select_weights(["no_such_thing"])
    assert M.weight_label(P.weight_index("pst_knight", 27, "eg")) == "pst_knight.eg[27]"


def test_select_weights_leaves_out_bang_patterns():
    tables = set(M.select_weights(["pst_*"]))
    rest = M.select_weights(["!pst_*"])
    assert len(rest) == P.N_WEIGHTS - len(tables) and not tables & set(rest)
    both = M.select_weights(["*_value", "pst_*", "!pst_king*", "!queen_value.eg"])
    assert len(both) == 5 * 2 - 1 + 5 * 64 * 2
    assert P.weight_index("queen_value", 0, "eg") not in both
    with pytest.raises(ValueError, match="no parameter matches"):
        M.select_weights(["!pst_kinq*"])


def test_sparse_model_tracks_the_evaluation_and_its_gradient_is_exact(setup):
    ps, sc, W0, q, leaves = setup
    tr = sparse_traces(W0, leaves, 2)
    ms = model_scores(W0.astype(float), tr)
    assert np.max(np.abs(ms - q)) <= 2.0  # integer truncation only
    wf = W0.astype(float)
    g, e = gradient(wf, tr, ps.results, K)
    for i in (P.weight_index("pawn_value"), P.weight_index("rook_value", 0, "eg"),
              P.weight_index("pst_knight", 18)):
        h = 1e-3
        wp, wm = wf.copy(), wf.copy()
        wp[i] += h
        wm[i] -= h
        num = (gradient(wp, tr, ps.results, K)[1] - gradient(wm, tr, ps.results, K)[1]) / (2 * h)
        assert g[i] == pytest.approx(num, rel=1e-4, abs=1e-12)


@pytest.mark.parametrize("method", [M.ADAM, M.ADAGRAD])
def test_gradient_descent_lowers_the_error(setup, method):
    ps, sc, W0, q, leaves = setup
    tr = sparse_traces(W0, leaves, 2)
    mask = np.zeros(P.N_WEIGHTS, dtype=bool)
    mask[M.select_weights(["*_value"], linear_only=True)] = True
    st = M.GradientState(W0, method)
    e0 = gradient(st.wf, tr, ps.results, K)[1]
    for epoch in range(30):
        M.gradient_epoch(st, tr, ps.results, K, mask, batch_size=64, seed=epoch)
    assert gradient(st.wf, tr, ps.results, K)[1] < e0
    W = st.rounded(W0)
    assert W.dtype == np.int64 and np.array_equal(W[~mask], W0[~mask])


def test_regularisation_shrinks_the_binary_search_toward_the_start(setup):
    i = P.weight_index("pawn_value", 0, "mg")
    Ws, f = _planted(setup, {i: 125})  # 40 above the default 85
    W0 = setup[2].astype(float)

    def objective(W, reg=1e-3):
        return f(W) + M.penalty(W, W0, reg)

    W = setup[2].copy()
    old, new, e = M.tune_parameter(M.BINARY, objective, W, i, objective(W))
    assert old < new < 125  # pulled short of the planted optimum
    for v in (new - 1, new + 1):  # and the penalised objective is at its minimum there
        Wv = W.copy()
        Wv[i] = v
        assert objective(Wv) >= e
    assert M.penalty(W, W0, 1e-3) > 0.0
    assert M.penalty(W, W0, 0.0) == 0.0


def test_the_penalty_charges_reg_per_100_cp_squared_over_the_tuned_weights():
    W0 = np.array([100.0, 50.0, -20.0])
    W = np.array([300, 50, 30])  # moved 200 cp, 0 and 50 cp
    assert M.penalty(W, W0, 0.01) == pytest.approx(0.01 * (4 + 0.25))
    assert M.penalty(W, W0, 0.01, indices=np.array([2])) == pytest.approx(0.0025)
    assert M.penalty(W0, W0, 0.01) == 0.0


def test_regularised_gradient_descent_stays_near_the_start(setup):
    ps, sc, W0, q, leaves = setup
    tr = sparse_traces(W0, leaves, 2)
    mask = np.zeros(P.N_WEIGHTS, dtype=bool)
    mask[M.select_weights(["pst_*"], linear_only=True)] = True
    drift = {}
    for reg in (0.0, 1.0):
        st = M.GradientState(W0, M.ADAM, lr=2.0)
        for epoch in range(20):
            M.gradient_epoch(st, tr, ps.results, K, mask, batch_size=64, seed=epoch, reg=reg,
                             W0=W0.astype(float))
        drift[reg] = float(np.abs(st.wf - W0)[mask].mean())
    assert drift[0.0] > 1.0  # 200 positions: the tables wander far
    assert drift[1.0] < drift[0.0] / 3  # the pull toward the start holds them


def test_linear_counts_are_the_positions_a_term_counts_in(setup):
    import chess

    ps, sc, W0, q, leaves = setup
    boards = [chess.Board(" ".join(line.split()[:4]))
              for line in open(DATA / "tuner_quiet_200.epd") if line.strip()]
    assert len(boards) == len(ps)
    counts = M.linear_counts(sparse_traces(W0, ps.rows, 2))

    def differ(piece):
        return sum(len(b.pieces(piece, chess.WHITE)) != len(b.pieces(piece, chess.BLACK))
                   for b in boards)

    for name, piece in (("pawn_value", chess.PAWN), ("rook_value", chess.ROOK),
                        ("queen_value", chess.QUEEN)):
        assert counts[P.weight_index(name, 0, "mg")] == differ(piece)
        assert counts[P.weight_index(name, 0, "eg")] == differ(piece)
    indices = M.select_weights(["*_value"])
    assert list(M.frequent(indices, counts, 0)) == list(indices)
    kept = M.frequent(indices, counts, differ(chess.QUEEN) + 1)
    assert P.weight_index("queen_value", 0, "mg") not in kept
    assert set(kept) == {i for i in indices if counts[i] > differ(chess.QUEEN)}


def test_neighbour_pairs_join_squares_of_one_table_and_smoothing_pulls_them_together():
    labels = [f"pst_knight[{sq}].mg" for sq in range(64)] + ["tempo"] + \
        [f"few[{i}]" for i in range(8)]
    pairs = M.neighbour_pairs(labels)
    assert len(pairs) == 2 * 8 * 7  # files and ranks of one 8x8 table; 'few' is no table
    assert {tuple(p) for p in pairs} >= {(0, 1), (0, 8), (62, 63), (55, 63)}
    assert (7, 8) not in {tuple(p) for p in pairs}  # h1 and a2 are not neighbours
    W0 = np.zeros(len(labels))
    wf = W0.copy()
    wf[27] = 100.0  # one square off its neighbours
    g = M.penalty_gradient(wf, W0, 0.0, 1.0, pairs)
    assert g[27] > 0 and g[26] < 0 and g[19] < 0 and g[0] == 0
    assert M.penalty(wf, W0, 0.0, smooth=1.0, pairs=pairs) == 4.0  # four neighbours, 1 each


def test_default_reg_falls_with_the_positions_a_weight_from_its_cap_to_off():
    """10 / (positions a weight)^2, at most 0.01, 0 from 1,000 positions a weight on."""
    assert M.default_reg(4_000, 1_000) == 1e-2  # 4 a weight: the cap
    assert M.default_reg(36_000, 778) == pytest.approx(10 / (36_000 / 778) ** 2)  # 46: 4.7e-3
    assert M.default_reg(300_000, 1_000) == pytest.approx(10 / 300 ** 2)
    assert M.default_reg(999_000, 1_000) == pytest.approx(10 / 999 ** 2)
    assert M.default_reg(1_000_000, 1_000) == 0.0  # plenty: off, where the warning stops
    per = np.geomspace(1, 2_000, 50)
    values = [M.default_reg(int(p * 100), 100) for p in per]
    assert np.all(np.diff(values) <= 0)


def test_settle_reg_records_the_default_the_given_value_or_none_on_an_old_run():
    from types import SimpleNamespace

    c = SimpleNamespace(reg=None, reg_source="")
    assert M.settle_reg(c, 36_000, 778, starting=True)
    assert c.reg == M.default_reg(36_000, 778)
    assert c.reg_source == "the default for 36000 training positions and 778 tuned weights, " \
                           "46 a weight"
    assert not M.settle_reg(c, 1, 1, starting=True)  # settled once, kept on resume
    given = SimpleNamespace(reg=1e-4, reg_source="")
    M.settle_reg(given, 36_000, 778, starting=True)
    assert (given.reg, given.reg_source) == (1e-4, "-reg")
    old = SimpleNamespace(reg=None, reg_source="")  # a run begun before -reg was recorded
    M.settle_reg(old, 36_000, 778, starting=False)
    assert (old.reg, old.reg_source) == (0.0, "none recorded")
