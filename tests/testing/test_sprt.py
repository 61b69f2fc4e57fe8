"""Tests for testing.sprt, pinned to values published by fishtest, fastchess and their users.

Count conventions of the module under test: trinomial [L, D, W], pentanomial
[LL, LD, WL+DD, WD, WW]. fastchess's C++ tests build ``Stats(wins, losses, draws)`` and
``Stats(LL, LD, WL, DD, WD, WW)`` (app/src/matchmaking/stats.hpp), converted by ``tri``/``pen``.

Published figures are rounded (mostly to 2 decimals), so a value is checked by asserting that it
rounds to the published digits (``rounds_to``), i.e. to within half a unit of the last digit.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from testing.sprt import (
    NELO_DIVIDED_BY_NT,
    Z95,
    bounds,
    draw_ratio,
    elo,
    format_report,
    format_stat,
    llr,
    llr_fraction,
    nelo,
    pentanomial_from_pairs,
    sprt_decision,
    trinomial_from_results,
)


def tri(wins: int, losses: int, draws: int) -> list[int]:
    """fastchess ``Stats(wins, losses, draws)`` -> [L, D, W]."""
    return [losses, draws, wins]


def pen(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess ``Stats(LL, LD, WL, DD, WD, WW)`` -> [LL, LD, WL+DD, WD, WW]."""
    return [ll, ld, wl + dd, wd, ww]


def rounds_to(value: float, published: float, decimals: int = 2) -> bool:
    return abs(value - published) <= 0.5 * 10.0**-decimals + 1e-9


# ------------------------------------------------------------------- Elo, nElo and LOS ----

# fastchess app/tests/elo_test.cpp (Disservin/fastchess, TEST_SUITE "Elo Model"):
# (counts, nElo, nElo error, Elo or None, Elo error or None, LOS string or None)
FASTCHESS_ELO_CASES = [
    (tri(76, 89, 123), -20.76, 40.13, None, None, "15.53 %"),  # EloWDL 1
    (tri(136, 96, 111), 49.77, 36.77, 40.70, 30.43, "99.60 %"),  # EloWDL 2
    (tri(34, 356, 0), -508.44, 34.48, None, None, None),  # EloWDL 3
    (pen(34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, "100.00 %"),  # EloPentanomial 1
    (pen(332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, "5.05 %"),  # EloPentanomial 2
    (pen(7895, 8757, 5485, 200, 568, 9999), -19.01, 2.65, -21.04, 2.95, None),  # EloPentanomial 3
]


@pytest.mark.parametrize("counts, ne, ne_err, e, e_err, los", FASTCHESS_ELO_CASES)
def test_elo_and_nelo_match_fastchess_unit_tests(counts, ne, ne_err, e, e_err, los):
    got_ne, got_ne_err = nelo(counts)
    assert rounds_to(got_ne, ne)
    assert rounds_to(got_ne_err, ne_err)
    got_e, got_err, got_los = elo(counts)
    if e is not None:
        assert rounds_to(got_e, e)
        assert rounds_to(got_err, e_err)
    if los is not None:
        assert f"{got_los * 100:.2f} %" == los


@pytest.mark.parametrize(
    "counts, published",
    [
        # fastchess tests/elo_test.cpp (older layout; Elo(wins, losses, draws)), checked there
        # with a 1 % tolerance. Its error bars came from an earlier, slightly different formula,
        # and -315.34 is -315.348 cut to 2 decimals, so the Elo is pinned to within 0.01.
        (tri(0, 36, 14), -315.34),
        (tri(859, 772, 1329), 10.21),
        (tri(1164, 1267, 3049), -6.53),
    ],
)
def test_trinomial_elo_old_fastchess_tests(counts, published):
    assert abs(elo(counts)[0] - published) < 0.01


def test_trinomial_elo_matches_cutechess_issue_543():
    # cutechess/cutechess#543: "880 - 759 - 1863 ... Elo difference: 12.0 +/- 7.9,
    # LOS: 99.9 %, DrawRatio: 53.2 %" (W - L - D).
    counts = tri(880, 759, 1863)
    e, err, los = elo(counts)
    assert rounds_to(e, 12.0, 1) and rounds_to(err, 7.9, 1) and rounds_to(100 * los, 99.9, 1)
    assert rounds_to(draw_ratio(counts), 53.2, 1)


def test_elo_formula_details():
    # A single pair-score distribution computed by hand: pentanomial [1, 0, 2, 0, 1] has pair
    # scores 0, .5, .5, 1 -> mu = 0.5, var = 1/8, N = 4; Elo 0, symmetric error bar, LOS 1/2.
    e, err, los = elo([1, 0, 2, 0, 1])
    se = math.sqrt(1 / 8 / 4)
    hi = 0.5 + Z95 * se
    assert e == 0.0
    assert err == pytest.approx(-400 * math.log10(1 / hi - 1))
    assert los == pytest.approx(0.5)
    ne, ne_err = nelo([1, 0, 2, 0, 1])
    assert ne == 0.0
    assert ne_err == pytest.approx(Z95 * NELO_DIVIDED_BY_NT / math.sqrt(2 * 4))
    assert NELO_DIVIDED_BY_NT == pytest.approx(347.43558552260146)  # fishtest LLRcalc


def test_elo_degenerate_samples_follow_ieee_like_fastchess():
    e, err, los = elo([1, 0, 0, 0, 0])  # one lost pair: score 0
    assert e == -math.inf and math.isnan(err) and los == 0.0
    e, err, los = elo([0, 0, 5])  # five wins: score 1
    assert e == math.inf and math.isnan(err) and los == 1.0


@given(st.lists(st.integers(0, 500), min_size=5, max_size=5).filter(lambda c: 0 < c[2] < sum(c)))
@settings(max_examples=50, deadline=None)
def test_elo_is_antisymmetric_under_colour_swap(counts):
    e, err, los = elo(counts)
    assume(math.isfinite(err))  # tiny samples: the 95 % interval leaves (0, 1), err is nan
    e2, err2, los2 = elo(counts[::-1])
    assert e2 == pytest.approx(-e, abs=1e-9)
    assert err2 == pytest.approx(err)
    assert los2 == pytest.approx(1 - los, abs=1e-12)


# --------------------------------------------------------------------------------- LLR ----

# fastchess app/tests/sprt_test.cpp (TEST_SUITE "SPRT"); the counts are fishtest tests, quoted
# with their expected LLRs in fastchess PR #426 ("sprt test case results (rounded to 2 decimals)").
# The suite's degenerate cases (all wins / all draws) target fastchess's own approximations of
# the time and differ between fastchess versions, so they are not used.
FASTCHESS_LLR_CASES = [
    (tri(36433, 36027, 68692), 0, 2, "normalized", 0.92),
    (tri(10871, 10650, 20431), -1.75, 0.25, "normalized", 2.30),
    (tri(21404, 21184, 40708), 0.5, 2.5, "logistic", -1.57),
    (tri(57433, 57030, 106593), 0, 2, "logistic", -2.59),
    (pen(365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
    (pen(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    (pen(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    (pen(871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
]

# Final LLRs of fishtest SPRTs as quoted in official-stockfish/Stockfish pull requests
# ("LLR: x (-2.94,2.94) <elo0,elo1>" = normalized Elo, "{elo0,elo1}" = logistic Elo;
# "Ptnml(0-2)" = pentanomial counts).
STOCKFISH_LLR_CASES = [
    ([831, 31795, 68460, 32448, 834], 0.0, 2.0, "normalized", 2.93),  # PR #5712 STC
    ([307, 54901, 140959, 56230, 281], 0.5, 2.5, "normalized", 2.95),  # PR #5712 LTC
    ([371, 10263, 24989, 10642, 379], 0.0, 2.0, "normalized", 2.95),  # PR #4194 STC
    ([47, 8181, 25234, 8575, 47], 0.5, 2.5, "normalized", 2.94),  # PR #4194 LTC
    ([264, 5737, 31270, 5964, 269], -0.5, 2.5, "normalized", 2.97),  # PR #3514 STC
    ([29, 2205, 35000, 2392, 34], 0.5, 3.5, "normalized", 2.94),  # PR #3514 LTC
    ([253, 4282, 17604, 4431, 286], -0.25, 1.25, "logistic", 2.94),  # PR #3209 STC
    ([58, 3302, 33130, 3518, 84], 0.25, 1.25, "logistic", 2.97),  # PR #3209 LTC
    ([115, 2196, 11328, 2317, 136], -0.25, 1.25, "logistic", 2.94),  # PR #3331 STC
    ([14, 1030, 14318, 1163, 19], 0.25, 1.25, "logistic", 2.93),  # PR #3331 LTC
    ([491, 7345, 29693, 7670, 465], -0.25, 1.25, "logistic", 2.96),  # PR #3098 STC
    ([53, 2220, 21459, 2445, 47], 0.25, 1.25, "logistic", 2.97),  # PR #3098 LTC
    ([424, 2948, 5832, 3045, 460], -1.0, 3.0, "logistic", 2.94),  # PR #2493 STC
    ([1284, 17437, 55536, 18085, 1292], 0.0, 2.0, "logistic", 2.94),  # PR #2493 LTC
]


@pytest.mark.parametrize("counts, elo0, elo1, model, published", FASTCHESS_LLR_CASES)
def test_llr_matches_fastchess_unit_tests(counts, elo0, elo1, model, published):
    assert rounds_to(llr(counts, elo0, elo1, model), published)


@pytest.mark.parametrize("counts, elo0, elo1, model, published", STOCKFISH_LLR_CASES)
def test_llr_matches_fishtest_results_quoted_in_stockfish_prs(counts, elo0, elo1, model, published):
    assert rounds_to(llr(counts, elo0, elo1, model), published)


def test_llr_logistic_trinomial_matches_sprt_elo_py():
    # cutechess/cutechess#543: vdbergh's sprt_elo.py --elo0 0 --elo1 5 -W 880 -L 759 -D 1863
    # --logistic prints "LLR [u,l] : 2.95".
    assert rounds_to(llr(tri(880, 759, 1863), 0, 5, "logistic"), 2.95)


def test_llr_normalized_pentanomial_matches_fastchess_cli():
    # fastchess PR #783: "--sprt 379 10170 21828 10640 343 elo=0 elo1=2 model=normalized"
    # prints "Normalized Elo: 3.05 +/- 2.31" and "LLR: 2.94598". fastchess stops its MLE
    # iteration at 1e-4 (fishtest: 1e-9), hence the 1e-3 tolerance on the 5-decimal figure.
    counts = [379, 10170, 21828, 10640, 343]
    assert llr(counts, 0, 2) == pytest.approx(2.94598, abs=1e-3)
    ne, ne_err = nelo(counts)
    assert rounds_to(ne, 3.05) and rounds_to(ne_err, 2.31)


def test_llr_zero_counts_regularised_like_fishtest():
    # SH11235/rshogi PR #1065 ran the fishtest LLRcalc source on [0, 84, 840, 126, 0] with
    # nElo bounds [0, 10] (zero counts regularised to 1e-3): LLR 2.960172391.
    assert llr([0, 84, 840, 126, 0], 0, 10) == pytest.approx(2.960172391, abs=1e-9)
    # ... and the regularisation is exactly "replace each zero by 1e-3" (N includes it).
    for model in ("normalized", "logistic"):
        assert llr([0, 84, 840, 126, 0], 0, 10, model) == llr(
            [1e-3, 84, 840, 126, 1e-3], 0, 10, model
        )
        assert llr([0, 5, 0], -5, 5, model) == llr([1e-3, 5, 1e-3], -5, 5, model)
    # An empty sample is all prior: an LLR of essentially zero rather than an error.
    assert abs(llr([0, 0, 0, 0, 0], 0, 5)) < 1e-5


@pytest.mark.parametrize(
    "counts, published",
    [
        # fastchess PR #882 (normalized, [-1000, -500], alpha = beta = 0.05): extreme one-sided
        # samples where fishtest's uniform start fails; "LLR: -2.95 (-100.3%)" / "-2.97 (-100.7%)".
        ([77, 1, 0, 0, 0], -2.95),
        ([72, 10, 0, 0, 0], -2.97),
    ],
)
def test_llr_extreme_samples_match_fastchess_pr_882(counts, published):
    value = llr(counts, -1000, -500)
    assert rounds_to(value, published)


@given(
    st.lists(st.integers(0, 300), min_size=5, max_size=5).filter(lambda c: sum(c) > 0),
    st.sampled_from(["normalized", "logistic"]),
)
@settings(max_examples=25, deadline=None)
def test_llr_colour_swap_symmetry(counts, model):
    # Mirroring the sample and the hypotheses swaps H0 and H1.
    assert llr(counts[::-1], -5, 0, model) == pytest.approx(-llr(counts, 0, 5, model), abs=1e-7)


def test_llr_rejects_bad_arguments():
    with pytest.raises(ValueError, match="model"):
        llr([1, 2, 3], 0, 5, model="bayesian")
    with pytest.raises(ValueError, match="elo1"):
        llr([1, 2, 3], 0, math.nan)


# ------------------------------------------------------------ bounds and SPRT decisions ----


def test_bounds():
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95)) and upper == pytest.approx(math.log(19))
    # As printed by fastchess: "(-2.94, 2.94)" and, for beta = 0.10, "(-2.25, 2.89)".
    assert f"({lower:.2f}, {upper:.2f})" == "(-2.94, 2.94)"
    assert "({:.2f}, {:.2f})".format(*bounds(0.05, 0.10)) == "(-2.25, 2.89)"
    assert bounds() == bounds(0.05, 0.05)


@pytest.mark.parametrize("alpha, beta", [(0, 0.05), (0.05, 1), (-0.1, 0.05), (0.6, 0.5)])
def test_bounds_reject_bad_error_rates(alpha, beta):
    with pytest.raises(ValueError):
        bounds(alpha, beta)


def test_sprt_decision():
    lower, upper = bounds(0.05, 0.10)
    assert sprt_decision(upper, 0.05, 0.10) == "H1"
    assert sprt_decision(upper - 1e-9, 0.05, 0.10) is None
    assert sprt_decision(lower, 0.05, 0.10) == "H0"
    assert sprt_decision(0.0, 0.05, 0.10) is None
    assert sprt_decision(math.nan) is None
    assert sprt_decision(3.0) == "H1" and sprt_decision(-3.0) == "H0"


def test_llr_fraction():
    lower, upper = bounds()
    assert llr_fraction(upper) == pytest.approx(100.0)
    assert llr_fraction(lower) == pytest.approx(-100.0)
    assert llr_fraction(0.0) == 0.0
    # fastchess PR #882: LLR -2.952426... is printed as "(-100.3%)".
    assert f"{llr_fraction(llr([77, 1, 0, 0, 0], -1000, -500)):.1f}" == "-100.3"
    assert llr_fraction(1.445, 0.05, 0.10) == pytest.approx(100 * 1.445 / math.log(18))


def test_draw_ratio():
    assert draw_ratio([50, 287, 610, 387, 73]) == pytest.approx(100 * 610 / 1407)  # pairs
    assert draw_ratio([2, 7, 1]) == pytest.approx(70.0)  # games


# ---------------------------------------------------------------------------- helpers ----


def test_pentanomial_from_pairs():
    assert pentanomial_from_pairs([0, 0.5, 1, 1, 1.5, 2, 2, 2]) == [1, 1, 2, 1, 3]
    assert pentanomial_from_pairs(np.array([2.0, 1.0])) == [0, 0, 1, 0, 1]
    assert pentanomial_from_pairs([]) == [0, 0, 0, 0, 0]
    for bad in ([0.25], [2.5], [-0.5], ["1"], [None], [math.nan]):
        with pytest.raises(ValueError, match="pair score"):
            pentanomial_from_pairs(bad)


def test_trinomial_from_results():
    assert trinomial_from_results([1, 0.5, 0, 1, 1]) == [1, 1, 3]
    for bad in ([2], [0.25], ["1-0"], [True]):
        with pytest.raises(ValueError, match="result"):
            trinomial_from_results(bad)


# --------------------------------------------------------------------------- validation ----


@pytest.mark.parametrize("func", [elo, nelo, draw_ratio, lambda c: llr(c, 0, 5)])
@pytest.mark.parametrize(
    "counts, message",
    [
        ([], "length 3"),
        ([1, 2], "length 3"),
        ([1, 2, 3, 4], "got length 4"),
        ([1, 2, 3, 4, 5, 6], "got length 6"),
        ([1, -1, 3], "non-negative"),
        ([1, 2, 3, 4, -5], "non-negative"),
        ([1, math.nan, 3], "finite"),
        ([1, math.inf, 3], "finite"),
        ([1, "2", 3], "real number"),
        ("LDW", "sequence"),
        (5, "sequence"),
    ],
)
def test_counts_validation(func, counts, message):
    with pytest.raises(ValueError, match=message):
        func(counts)


def test_empty_sample_has_no_elo():
    with pytest.raises(ValueError, match="empty"):
        elo([0, 0, 0])
    with pytest.raises(ValueError, match="empty"):
        nelo([0, 0, 0, 0, 0])


# ------------------------------------------------------------------------------ report ----


def _in_words(text: str) -> str:
    """A fastchess block as we print it: its NaNs ("nan", or "-nan" on most CPUs) as the
    word "undefined"."""
    return re.sub(r"-?nan\b", "undefined", text)


# Complete blocks printed by fastchess (-report penta=true, default model "normalized"), minus
# the "Results of ..." header. (counts_penta, (wins, draws, losses), elo0, elo1, alpha, beta, text)
# fmt: off
FASTCHESS_BLOCKS = [
    (  # brunocodutra/cinder PR #802
        [363, 3205, 5861, 3376, 414], (7039, 12633, 6766), 0, 3, 0.05, 0.10,
        "Elo: 3.59 +/- 2.53, nElo: 5.93 +/- 4.19\n"
        "LOS: 99.72 %, DrawRatio: 44.34 %, PairsRatio: 1.06\n"
        "Games: 26438, Wins: 7039, Losses: 6766, Draws: 12633, Points: 13355.5 (50.52 %)\n"
        "Ptnml(0-2): [363, 3205, 5861, 3376, 414], WL/DD Ratio: 0.94\n"
        "LLR: 2.91 (100.6%) (-2.25, 2.89) [0.00, 3.00]",
    ),
    (  # brunocodutra/cinder PR #836
        [835, 6884, 13116, 7201, 852], (15367, 27393, 15016), 0, 3, 0.05, 0.10,
        "Elo: 2.11 +/- 1.70, nElo: 3.52 +/- 2.83\n"
        "LOS: 99.25 %, DrawRatio: 45.40 %, PairsRatio: 1.04\n"
        "Games: 57776, Wins: 15367, Losses: 15016, Draws: 27393, Points: 29063.5 (50.30 %)\n"
        "Ptnml(0-2): [835, 6884, 13116, 7201, 852], WL/DD Ratio: 0.97\n"
        "LLR: 2.89 (100.1%) (-2.25, 2.89) [0.00, 3.00]",
    ),
    (  # brunocodutra/cinder PR #879
        [115, 1156, 2443, 1233, 141], (2740, 4825, 2611), -3, 1, 0.05, 0.10,
        "Elo: 4.40 +/- 3.91, nElo: 7.61 +/- 6.75\n"
        "LOS: 98.64 %, DrawRatio: 48.01 %, PairsRatio: 1.08\n"
        "Games: 10176, Wins: 2740, Losses: 2611, Draws: 4825, Points: 5152.5 (50.63 %)\n"
        "Ptnml(0-2): [115, 1156, 2443, 1233, 141], WL/DD Ratio: 1.01\n"
        "LLR: 2.90 (100.4%) (-2.25, 2.89) [-3.00, 1.00]",
    ),
    (  # brunocodutra/cinder PR #795
        [1447, 13972, 26437, 14412, 1441], (29545, 56756, 29117), 0, 3, 0.05, 0.10,
        "Elo: 1.29 +/- 1.18, nElo: 2.19 +/- 2.00\n"
        "LOS: 98.39 %, DrawRatio: 45.81 %, PairsRatio: 1.03\n"
        "Games: 115418, Wins: 29545, Losses: 29117, Draws: 56756, Points: 57923.0 (50.19 %)\n"
        "Ptnml(0-2): [1447, 13972, 26437, 14412, 1441], WL/DD Ratio: 0.86\n"
        "LLR: 1.98 (68.5%) (-2.25, 2.89) [0.00, 3.00]",
    ),
    (  # brunocodutra/cinder PR #835
        [423, 3637, 6484, 3702, 450], (7847, 13817, 7728), -3, 1, 0.05, 0.10,
        "Elo: 1.41 +/- 2.41, nElo: 2.32 +/- 3.97\n"
        "LOS: 87.36 %, DrawRatio: 44.12 %, PairsRatio: 1.02\n"
        "Games: 29392, Wins: 7847, Losses: 7728, Draws: 13817, Points: 14755.5 (50.20 %)\n"
        "Ptnml(0-2): [423, 3637, 6484, 3702, 450], WL/DD Ratio: 1.00\n"
        "LLR: 3.23 (111.8%) (-2.25, 2.89) [-3.00, 1.00]",
    ),
    (  # ijccrl.com "fastchess test sprt wordfish base vs wordfish dev"
        [5, 109, 748, 134, 4], (182, 1659, 159), 0, 2.5, 0.05, 0.05,
        "Elo: 4.00 +/- 5.68, nElo: 10.71 +/- 15.23\n"
        "LOS: 91.59 %, DrawRatio: 74.80 %, PairsRatio: 1.21\n"
        "Games: 2000, Wins: 182, Losses: 159, Draws: 1659, Points: 1011.5 (50.58 %)\n"
        "Ptnml(0-2): [5, 109, 748, 134, 4], WL/DD Ratio: 0.06\n"
        "LLR: 0.39 (13.3%) (-2.94, 2.94) [0.00, 2.50]",
    ),
    (  # fastchess PR #882 (extreme match, fallback start of the t-value MLE)
        [77, 1, 0, 0, 0], (0, 1, 155), -1000, -500, 0.05, 0.05,
        "Elo: -997.10 +/- nan, nElo: -4339.56 +/- 54.52\n"
        "LOS: 0.00 %, DrawRatio: 0.00 %, PairsRatio: 0.00\n"
        "Games: 156, Wins: 0, Losses: 155, Draws: 1, Points: 0.5 (0.32 %)\n"
        "Ptnml(0-2): [77, 1, 0, 0, 0], WL/DD Ratio: -nan\n"
        "LLR: -2.95 (-100.3%) (-2.94, 2.94) [-1000.00, -500.00]",
    ),
    (  # fastchess PR #882
        [72, 10, 0, 0, 0], (0, 10, 154), -1000, -500, 0.05, 0.05,
        "Elo: -600.97 +/- 118.46, nElo: -1409.98 +/- 53.17\n"
        "LOS: 0.00 %, DrawRatio: 0.00 %, PairsRatio: 0.00\n"
        "Games: 164, Wins: 0, Losses: 154, Draws: 10, Points: 5.0 (3.05 %)\n"
        "Ptnml(0-2): [72, 10, 0, 0, 0], WL/DD Ratio: -nan\n"
        "LLR: -2.97 (-100.7%) (-2.94, 2.94) [-1000.00, -500.00]",
    ),
    # Blocks whose LLR line is left out: no SPRT, or an LLR from a fastchess build under repair.
    (  # fastchess PR #515 (first appearance of WL/DD Ratio)
        [0, 1, 4, 0, 0], (1, 7, 2), None, None, 0.05, 0.05,
        "Elo: -34.86 +/- 62.20, nElo: -122.84 +/- 215.34\n"
        "LOS: 13.18 %, DrawRatio: 80.00 %, PairsRatio: 0.00\n"
        "Games: 10, Wins: 1, Losses: 2, Draws: 7, Points: 4.5 (45.00 %)\n"
        "Ptnml(0-2): [0, 1, 4, 0, 0], WL/DD Ratio: 0.33",
    ),
    (  # fastchess issue #807
        [30, 6, 18, 0, 6], (30, 6, 84), None, None, 0.05, 0.05,
        "Elo: -168.40 +/- 73.37, nElo: -170.08 +/- 62.16\n"
        "LOS: 0.00 %, DrawRatio: 30.00 %, PairsRatio: 0.17\n"
        "Games: 120, Wins: 30, Losses: 84, Draws: 6, Points: 33.0 (27.50 %)\n"
        "Ptnml(0-2): [30, 6, 18, 0, 6], WL/DD Ratio: inf",
    ),
    (  # fastchess PR #881
        [549, 54, 33, 1, 0], (32, 59, 1183), None, None, 0.05, 0.05,
        "Elo: -517.92 +/- 38.60, nElo: -856.15 +/- 19.08\n"
        "LOS: 0.00 %, DrawRatio: 5.18 %, PairsRatio: 0.00\n"
        "Games: 1274, Wins: 32, Losses: 1183, Draws: 59, Points: 61.5 (4.83 %)\n"
        "Ptnml(0-2): [549, 54, 33, 1, 0], WL/DD Ratio: 15.50",
    ),
    (  # fastchess PR #881 (a single lost pair)
        [1, 0, 0, 0, 0], (0, 0, 2), None, None, 0.05, 0.05,
        "Elo: -inf +/- -nan, nElo: -inf +/- -nan\n"
        "LOS: 0.00 %, DrawRatio: 0.00 %, PairsRatio: 0.00\n"
        "Games: 2, Wins: 0, Losses: 2, Draws: 0, Points: 0.0 (0.00 %)\n"
        "Ptnml(0-2): [1, 0, 0, 0, 0], WL/DD Ratio: -nan",
    ),
    (  # fastchess issue #879
        [144, 3, 1, 0, 0], (1, 3, 292), None, None, 0.05, 0.05,
        "Elo: -827.87 +/- nan, nElo: -2248.42 +/- 39.58\n"
        "LOS: 0.00 %, DrawRatio: 0.68 %, PairsRatio: 0.00\n"
        "Games: 296, Wins: 1, Losses: 292, Draws: 3, Points: 2.5 (0.84 %)\n"
        "Ptnml(0-2): [144, 3, 1, 0, 0], WL/DD Ratio: inf",
    ),
]
# fmt: on


@pytest.mark.parametrize("penta, wdl, elo0, elo1, alpha, beta, text", FASTCHESS_BLOCKS)
def test_report_reproduces_published_fastchess_blocks(penta, wdl, elo0, elo1, alpha, beta, text):
    got = format_report(penta, elo0, elo1, alpha, beta, "normalized", wdl=wdl)
    assert got == _in_words(text)


def test_report_llr_value_of_older_block_without_percentage():
    # brunocodutra/cinder PR #727 (fastchess before the percentage was added):
    # "LLR: 2.97 (-2.94, 2.94) [0.00, 5.00]"; the rest of the block is as now.
    got = format_report([50, 287, 610, 387, 73], 0, 5, wdl=(816, 1328, 670)).splitlines()
    assert got[0] == "Elo: 18.04 +/- 8.23, nElo: 28.19 +/- 12.84"
    assert got[1] == "LOS: 100.00 %, DrawRatio: 43.35 %, PairsRatio: 1.36"
    assert got[3] == "Ptnml(0-2): [50, 287, 610, 387, 73], WL/DD Ratio: 0.87"
    assert got[4].startswith("LLR: 2.97 (") and got[4].endswith(") (-2.94, 2.94) [0.00, 5.00]")


def test_report_variants():
    penta = [363, 3205, 5861, 3376, 414]
    full = format_report(penta, 0, 3, 0.05, 0.10, wdl=(7039, 12633, 6766)).splitlines()
    # wdl as a mapping; games given and consistent
    assert (
        format_report(
            penta,
            0,
            3,
            0.05,
            0.10,
            games=26438,
            wdl={"wins": 7039, "draws": 12633, "losses": 6766},
        ).splitlines()
        == full
    )
    # without wdl: no W/L/D, points from the pairs, no WL/DD split unless given
    bare = format_report(penta).splitlines()
    assert bare[:2] == full[:2]
    assert bare[2] == "Games: 26438, Points: 13355.5 (50.52 %)"
    assert bare[3] == "Ptnml(0-2): [363, 3205, 5861, 3376, 414]"
    assert len(bare) == 4  # no SPRT -> no LLR line
    assert format_report(penta, wl_dd=(2835, 3026)).splitlines()[3] == full[3]
    # an unpaired game in progress: the WL/DD split cannot be derived
    partial = format_report(penta, wdl=(7040, 12633, 6766)).splitlines()
    assert partial[2].startswith("Games: 26439, Wins: 7040,")
    assert partial[3] == "Ptnml(0-2): [363, 3205, 5861, 3376, 414]"
    # the logistic model is honoured
    logistic = format_report(penta, 0, 3, model="logistic").splitlines()[-1]
    value = llr(penta, 0, 3, "logistic")
    assert logistic == f"LLR: {value:.2f} ({llr_fraction(value):.1f}%) (-2.94, 2.94) [0.00, 3.00]"


def test_report_validation():
    penta = [0, 1, 4, 0, 0]
    with pytest.raises(ValueError, match="length 5"):
        format_report([2, 7, 1])
    with pytest.raises(ValueError, match="non-negative"):
        format_report([0, 1, -4, 0, 0])
    with pytest.raises(ValueError, match="empty"):
        format_report([0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="inconsistent"):
        format_report(penta, wdl=(2, 7, 1))  # (losses, draws, wins) passed by mistake
    with pytest.raises(ValueError, match="games"):
        format_report(penta, games=11, wdl=(1, 7, 2))
    with pytest.raises(ValueError, match="games"):
        format_report(penta, games=12)
    with pytest.raises(ValueError, match="wdl counts"):
        format_report(penta, wdl=(1, 6, 2))  # fewer games than the pairs hold
    with pytest.raises(ValueError, match="both elo0 and elo1"):
        format_report(penta, elo0=0)
    with pytest.raises(ValueError, match="model"):
        format_report(penta, 0, 5, model="bayesian")
    with pytest.raises(ValueError, match="add up"):
        format_report(penta, wl_dd=(1, 2))
    with pytest.raises(ValueError, match="wdl"):
        format_report(penta, wdl={"wins": 1, "draws": 7})


def test_undefined_statistics_print_as_words():
    assert format_stat(math.copysign(math.nan, -1.0), ".2f") == "undefined"
    assert format_stat(math.nan, ".2f") == "undefined"
    assert format_stat(-math.inf, ".2f") == "-inf"
    assert format_stat(-0.0, ".2f") == "0.00"
    assert format_stat(1.005, ".2f") == format(1.005, ".2f")


def test_report_of_all_drawn_pairs_says_why_nelo_is_undefined():
    text = format_report([0, 0, 4, 0, 0], 0, 10)
    assert "nan" not in text
    assert text.splitlines()[:2] == [
        "Elo: 0.00 +/- 0.00, nElo: undefined (no decisive pairs)",
        "LOS: undefined, DrawRatio: 100.00 %, PairsRatio: undefined"]


def test_report_of_all_won_pairs_has_no_error_bar():
    text = format_report([0, 0, 0, 0, 3], 0, 10, wdl=(6, 0, 0))
    assert "nan" not in text
    assert text.splitlines()[0] == "Elo: inf +/- undefined, nElo: inf +/- undefined"
    assert "WL/DD Ratio: undefined" in text
