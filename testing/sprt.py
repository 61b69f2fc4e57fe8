"""Match statistics: Elo, normalized Elo, LOS, GSPRT log-likelihood ratio and the fastchess report.

Everything here is a plain function of count arrays, modelled on fishtest's
``server/fishtest/stats/LLRcalc.py`` / ``stat_util.py`` and on fastchess's
``elo_wdl.cpp`` / ``elo_pentanomial.cpp`` / ``sprt.cpp`` / ``output_fastchess.hpp``.
The code is an independent implementation of the published formulas.

Count conventions (always from the point of view of the first / tested engine):

* trinomial  ``[L, D, W]``                     -- losses, draws, wins;
* pentanomial ``[LL, LD, WL+DD, WD, WW]``       -- game pairs, index = pair score in half points.

Any function taking ``counts`` accepts either form (a length-3 or length-5 sequence). Outcome
``i`` of a length-``k`` vector has the score ``a_i = i / (k - 1)`` on the ``[0, 1]`` scale (a
pair's score is its points divided by 2), so both forms share one set of formulas.

Notation used in the docstrings: ``N = sum(counts)`` (games or pairs), ``p_i = counts_i / N``,
``mu = sum p_i a_i``, ``var = sum p_i (a_i - mu)^2``, ``z = Phi^-1(0.975)``,
``C = 800 / ln 10`` (nElo per unit t-value) and ``elo(s) = -400 log10(1/s - 1)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist

import numpy as np

__all__ = [
    "NELO_DIVIDED_BY_NT",
    "Z95",
    "REGULARIZATION",
    "pentanomial_from_pairs",
    "trinomial_from_results",
    "elo",
    "nelo",
    "llr",
    "bounds",
    "sprt_decision",
    "llr_fraction",
    "draw_ratio",
    "format_report",
]

#: nElo per unit of t-value: 800 / ln(10) = 347.43558552260146 (fishtest ``nelo_divided_by_nt``).
NELO_DIVIDED_BY_NT = 800.0 / math.log(10.0)
#: Two-sided 95 % normal quantile, Phi^-1(0.975) = 1.959963984540054.
Z95 = NormalDist().inv_cdf(0.975)  # stdlib: scipy loads only for the LLR solver
#: Value substituted for a zero count before the LLR is computed (fishtest ``regularize``).
REGULARIZATION = 1e-3

_MODELS = ("normalized", "logistic")
_SECULAR_EPSILON = 1e-9  # distance kept from the poles when bracketing the secular root
# t-value MLE iteration, all three as in fishtest's MLE_t_value: stopping rule, step cap and
# the final check that the t-value was reached.
_MLE_TOLERANCE = 1e-9
_MLE_MAX_ITERATIONS = 10
_MLE_T_CHECK = 1e-5


# --------------------------------------------------------------------------- validation ----


def _is_real(x: object) -> bool:
    return isinstance(x, (numbers.Real, np.number)) and not isinstance(x, (bool, np.bool_))


def _as_counts(counts: Sequence[float], name: str = "counts") -> np.ndarray:
    """Validate ``counts`` and return it as a float64 array of length 3 or 5."""
    if isinstance(counts, (str, bytes, Mapping)):
        raise ValueError(
            f"{name} must be a sequence of 3 or 5 numbers, got {type(counts).__name__}"
        )
    try:
        items = list(counts)
    except TypeError:
        raise ValueError(
            f"{name} must be a sequence of 3 or 5 numbers, got {type(counts).__name__}"
        ) from None
    if len(items) not in (3, 5):
        raise ValueError(
            f"{name} must have length 3 ([L, D, W]) or 5 ([LL, LD, WL+DD, WD, WW]), "
            f"got length {len(items)}"
        )
    for i, x in enumerate(items):
        if not _is_real(x):
            raise ValueError(f"{name}[{i}] must be a real number, got {x!r}")
        if not math.isfinite(float(x)):
            raise ValueError(f"{name}[{i}] must be finite, got {x!r}")
        if x < 0:
            raise ValueError(f"{name} must be non-negative, got {x!r} at index {i}")
    return np.asarray(items, dtype=np.float64)


def _nonempty(c: np.ndarray, name: str = "counts") -> float:
    total = float(c.sum())
    if total <= 0:
        raise ValueError(f"{name} is empty (all zero): no games to compute statistics from")
    return total


def _scores(k: int) -> np.ndarray:
    """Outcome scores ``a_i = i / (k - 1)`` on the [0, 1] scale."""
    return np.linspace(0.0, 1.0, k)


def _mean_var(a: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    mu = float(np.dot(p, a))
    var = float(np.dot(p, (a - mu) ** 2))
    return mu, var


# ------------------------------------------------------------------------------ helpers ----


def pentanomial_from_pairs(pair_scores: Iterable[float]) -> list[int]:
    """Aggregate game-pair scores into ``[LL, LD, WL+DD, WD, WW]``.

    Each pair score is the first engine's points over the two games of the pair, one of
    ``0, 0.5, 1, 1.5, 2``; it lands in bin ``2 * score``.
    """
    out = [0] * 5
    for j, s in enumerate(pair_scores):
        if not _is_real(s) or float(s) * 2 not in (0.0, 1.0, 2.0, 3.0, 4.0):
            raise ValueError(
                f"pair score #{j} must be one of 0, 0.5, 1, 1.5, 2 (first engine's points "
                f"in the pair), got {s!r}"
            )
        out[int(float(s) * 2)] += 1
    return out


def trinomial_from_results(results: Iterable[float]) -> list[int]:
    """Aggregate single-game results (first engine's points: 0, 0.5 or 1) into ``[L, D, W]``."""
    out = [0] * 3
    for j, r in enumerate(results):
        if not _is_real(r) or float(r) * 2 not in (0.0, 1.0, 2.0):
            raise ValueError(f"result #{j} must be one of 0, 0.5, 1, got {r!r}")
        out[int(float(r) * 2)] += 1
    return out


# ------------------------------------------------------------------------ Elo and nElo ----


def _score_to_elo(s: float) -> float:
    """``elo(s) = -400 log10(1/s - 1)`` with IEEE semantics (s=0 -> -inf, s=1 -> inf).

    A score outside [0, 1] (an error-bar end after very few games) has no Elo: ``nan``, and a
    positive one, as glibc's ``log10`` of a negative number gives (fastchess prints ``nan``).
    """
    x = 1.0 / s - 1.0 if s != 0 else math.inf
    if x < 0 or math.isnan(x):
        return math.nan
    if x == 0:
        return math.inf
    return -400.0 * math.log10(x)


def _div(x: float, y: float) -> float:
    """IEEE division (x/0 -> +-inf, 0/0 -> nan) like the C++ double arithmetic of fastchess."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(x) / np.float64(y))


def _score_stats(counts: Sequence[float]) -> tuple[np.ndarray, float, float, float]:
    c = _as_counts(counts)
    n = _nonempty(c)
    mu, var = _mean_var(_scores(len(c)), c / n)
    return c, n, mu, var


def elo(counts: Sequence[float]) -> tuple[float, float, float]:
    """Logistic Elo, its 95 % error bar (half-width) and the LOS.

    With ``N``, ``mu``, ``var`` as in the module docstring (``N`` games for trinomial, ``N``
    pairs for pentanomial, where ``mu``/``var`` are those of the pair score / 2)::

        se   = sqrt(var / N)
        elo  = elo(mu)
        err  = (elo(mu + z se) - elo(mu - z se)) / 2
        los  = Phi((mu - 0.5) / se) = (1 - erf(-(mu - 0.5) / sqrt(2 se^2))) / 2

    This is fishtest ``stat_util.get_elo`` and fastchess ``EloWDL`` / ``EloPentanomial``.
    Like fastchess (and unlike fishtest's ``get_elo``) zero counts are *not* regularised here,
    so degenerate samples give IEEE values: a score of 0 or 1 gives ``-inf``/``inf``, an
    interval reaching outside (0, 1) gives a ``nan`` error bar.

    Raises ``ValueError`` for malformed counts or an empty sample.
    """
    _, n, mu, var = _score_stats(counts)
    se = math.sqrt(var / n)
    lo, hi = mu - Z95 * se, mu + Z95 * se
    e = _score_to_elo(mu)
    with np.errstate(invalid="ignore"):
        err = float((np.float64(_score_to_elo(hi)) - np.float64(_score_to_elo(lo))) / 2.0)
    x = _div(-(mu - 0.5), math.sqrt(2.0) * se)
    los = float((1.0 - math.erf(x)) / 2.0)
    return e, err, los


def nelo(counts: Sequence[float]) -> tuple[float, float]:
    """Normalized Elo and its 95 % error bar (half-width), as fastchess/fishtest define it.

    ``nElo = C * t`` where ``t = (mu - 0.5) / sigma`` and ``C = 800 / ln 10``, with::

        trinomial:   sigma = sqrt(var)          (per-game standard deviation)
        pentanomial: sigma = sqrt(2 var)        (per-pair sd of pair score / 2, times sqrt 2)

    The error bar is fastchess's ``(nElo(mu + z se) - nElo(mu - z se)) / 2`` with
    ``se = sqrt(var / N)``, i.e. ``z C / sqrt(N)`` (trinomial) or ``z C / sqrt(2 N)``
    (pentanomial). No regularisation (see :func:`elo`); raises ``ValueError`` on bad input.
    """
    c, n, mu, var = _score_stats(counts)
    sigma = math.sqrt(2.0 * var) if len(c) == 5 else math.sqrt(var)
    se = math.sqrt(var / n)
    lo, hi = mu - Z95 * se, mu + Z95 * se
    ne = _div(mu - 0.5, sigma) * NELO_DIVIDED_BY_NT
    with np.errstate(invalid="ignore"):
        err = float(
            (np.float64(_div(hi - 0.5, sigma)) - np.float64(_div(lo - 0.5, sigma)))
            * NELO_DIVIDED_BY_NT
            / 2.0
        )
    return ne, err


# ----------------------------------------------------------------------------- the LLR ----


def _regularize(c: np.ndarray) -> np.ndarray:
    """Replace every zero count by 1e-3 (fishtest ``LLRcalc.regularize``)."""
    out = c.copy()
    out[out == 0] = REGULARIZATION
    return out


def _secular(a: np.ndarray, p: np.ndarray) -> float:
    """Root ``x`` of ``sum_i p_i a_i / (1 + x a_i) = 0`` with ``1 + x a_i > 0`` for all ``i``.

    Needs ``min a < 0 < max a``; the root is bracketed in ``(-1/max a, -1/min a)`` and the
    left-hand side is strictly decreasing there (fishtest ``secular``).
    """
    v, w = float(a.min()), float(a.max())
    if not v < 0.0 < w:
        raise ValueError(
            "no maximum-likelihood distribution exists for these hypotheses (the target lies "
            "outside the range of possible outcomes); check elo0/elo1"
        )

    def f(x: float) -> float:
        return float(np.sum(p * a / (1.0 + x * a)))

    from scipy.optimize import brentq  # lazy: importing scipy costs about a second

    return float(brentq(f, -1.0 / w + _SECULAR_EPSILON, -1.0 / v - _SECULAR_EPSILON))


def _mle_expected(a: np.ndarray, phat: np.ndarray, s: float) -> np.ndarray:
    """MLE of a distribution on ``a`` with expectation ``s`` given the empirical ``phat``.

    ``p_i = phat_i / (1 + x (a_i - s))`` where ``x`` solves the secular equation
    ``sum phat_i (a_i - s) / (1 + x (a_i - s)) = 0`` (Van den Bergh, *support_MLE_multinomial*,
    Prop. 1.1; fishtest ``MLE_expected``).
    """
    d = a - s
    x = _secular(d, phat)
    return phat / (1.0 + x * d)


def _mle_t_value(
    a: np.ndarray, phat: np.ndarray, ref: float, t: float, start: np.ndarray | None = None
) -> np.ndarray:
    """MLE of a distribution on ``a`` with t-value ``(mu - ref) / sigma = t`` given ``phat``.

    Fixed-point iteration (Van den Bergh, *normalized_elo_practical*, S4.1; fishtest
    ``MLE_t_value``): with ``mu``, ``sigma`` of the current estimate ``p``::

        phi_i = a_i - ref - t sigma (1 + ((mu - a_i) / sigma)^2) / 2
        p_i  <- phat_i / (1 + x phi_i),   sum phat_i phi_i / (1 + x phi_i) = 0

    for at most 10 steps or until ``max |p_new - p| < 1e-9``, starting from ``start``
    (fishtest: the uniform distribution, the default). As in fishtest the result is accepted
    only if its t-value is within 1e-5 of ``t``; otherwise ``ValueError`` is raised.
    """
    p = np.full(len(a), 1.0 / len(a)) if start is None else start.copy()
    for _ in range(_MLE_MAX_ITERATIONS):
        mu, var = _mean_var(a, p)
        sigma = math.sqrt(var)
        phi = a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0
        x = _secular(phi, phat)
        p_new = phat / (1.0 + x * phi)
        done = float(np.max(np.abs(p_new - p))) < _MLE_TOLERANCE
        p = p_new
        if done:
            break
    mu, var = _mean_var(a, p)
    if not abs(t - (mu - ref) / math.sqrt(var)) < _MLE_T_CHECK:
        raise ValueError("the t-value maximum-likelihood iteration did not converge")
    return p


def _mle_t_value_robust(a: np.ndarray, phat: np.ndarray, ref: float, t: float) -> np.ndarray:
    """:func:`_mle_t_value` from the uniform start (fishtest); if that fails, from ``phat``.

    For very one-sided samples tested against extreme bounds the uniform start can leave the
    secular equation without a root (fishtest then fails an assertion; fastchess issue #879).
    Restarting from the empirical distribution reaches the same MLE whenever both converge
    and rescues those cases, as proposed in fastchess PR #882.
    """
    try:
        return _mle_t_value(a, phat, ref, t)
    except ValueError:
        return _mle_t_value(a, phat, ref, t, start=phat)


def _logistic_score(e: float) -> float:
    """``L(elo) = 1 / (1 + 10^(-elo/400))``: expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-e / 400.0))


def llr(counts: Sequence[float], elo0: float, elo1: float, model: str = "normalized") -> float:
    """Generalized SPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    Zero counts are first replaced by 1e-3; then with ``N``, ``phat = counts / N`` and the
    outcome scores ``a_i``::

        LLR = N * sum_i phat_i (ln p1_i - ln p0_i)

    where ``p0``/``p1`` are the maximum-likelihood distributions under each hypothesis:

    * ``model="logistic"`` (fishtest ``LLR_logistic``): elo0/elo1 are logistic Elo and the
      hypotheses fix the expected score ``s_j = L(elo_j)``; ``p_j = MLE_expected(phat, s_j)``.
    * ``model="normalized"`` (fishtest ``LLR_normalized``): elo0/elo1 are nElo and the hypotheses
      fix the t-value ``t_j = elo_j / C`` (times ``sqrt 2`` for pentanomial, as the score is per
      pair); ``p_j = MLE_t_value(phat, ref=1/2, t_j)``, iterated from the uniform distribution
      as fishtest does, or -- only where that fails -- from ``phat`` (see
      :func:`_mle_t_value_robust`).

    Raises ``ValueError`` for malformed counts, an unknown model or unreachable hypotheses.
    """
    c = _as_counts(counts)
    if model not in _MODELS:
        raise ValueError(f"model must be 'normalized' or 'logistic', got {model!r}")
    for name, v in (("elo0", elo0), ("elo1", elo1)):
        if not _is_real(v) or not math.isfinite(float(v)):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    r = _regularize(c)
    n = float(r.sum())
    phat = r / n
    a = _scores(len(r))
    if model == "logistic":
        p0 = _mle_expected(a, phat, _logistic_score(float(elo0)))
        p1 = _mle_expected(a, phat, _logistic_score(float(elo1)))
    else:
        scale = math.sqrt(2.0) if len(r) == 5 else 1.0
        t0 = float(elo0) / NELO_DIVIDED_BY_NT * scale
        t1 = float(elo1) / NELO_DIVIDED_BY_NT * scale
        p0 = _mle_t_value_robust(a, phat, 0.5, t0)
        p1 = _mle_t_value_robust(a, phat, 0.5, t1)
    return n * float(np.dot(phat, np.log(p1) - np.log(p0)))


# ---------------------------------------------------------------------- SPRT decisions ----


def _check_alpha_beta(alpha: float, beta: float) -> None:
    for name, v in (("alpha", alpha), ("beta", beta)):
        if not _is_real(v) or not 0.0 < float(v) < 1.0:
            raise ValueError(f"{name} must be a number strictly between 0 and 1, got {v!r}")
    if alpha + beta >= 1.0:
        raise ValueError(f"alpha + beta must be less than 1, got {alpha} + {beta}")


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's SPRT stopping bounds ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``."""
    _check_alpha_beta(alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt_decision(llr_value: float, alpha: float = 0.05, beta: float = 0.05) -> str | None:
    """``"H1"`` if ``LLR >= upper``, ``"H0"`` if ``LLR <= lower``, else ``None`` (continue).

    Inclusive comparisons as in fastchess ``SPRT::getResult``; a NaN LLR never stops the test.
    """
    lower, upper = bounds(alpha, beta)
    if llr_value >= upper:
        return "H1"
    if llr_value <= lower:
        return "H0"
    return None


def llr_fraction(llr_value: float, alpha: float = 0.05, beta: float = 0.05) -> float:
    """Progress towards the bound being approached, in percent, as fastchess prints it.

    fastchess ``SPRT::getFraction`` times 100: ``100 * LLR / upper`` if ``LLR >= 0`` else
    ``-100 * LLR / lower`` (negative when heading to H0; +-100 means the bound is reached).
    """
    lower, upper = bounds(alpha, beta)
    if llr_value >= 0:
        return 100.0 * llr_value / upper
    return -100.0 * llr_value / lower


def draw_ratio(counts: Sequence[float]) -> float:
    """Draw ratio in percent, as fastchess reports it.

    Trinomial: ``100 D / (L + D + W)`` (``Stats::drawRatio``). Pentanomial: the share of drawn
    *pairs*, ``100 (WL + DD) / pairs`` (``Stats::drawRatioPenta``).
    """
    c = _as_counts(counts)
    n = _nonempty(c)
    mid = 1 if len(c) == 3 else 2
    return 100.0 * float(c[mid]) / n


# --------------------------------------------------------------------------- reporting ----


UNDEFINED = "undefined"


def format_stat(x: float, spec: str) -> str:
    """`x` formatted by `spec`, or the word ``undefined`` for a statistic the sample leaves
    undefined (NaN: 0/0, a zero spread, an error bar reaching outside scores 0..1); a zero
    prints without a sign."""
    x = float(x)
    return UNDEFINED if math.isnan(x) else format(x + 0.0, spec)


def why_undefined(counts: Sequence[float]) -> str:
    """Why nElo and the LOS are undefined for `counts` with no spread (every pair, or every
    game, scored the same): the words shown after ``undefined``."""
    c = _as_counts(counts)
    if np.count_nonzero(c) == 1 and c[len(c) // 2] > 0:
        return "no decisive pairs" if len(c) == 5 else "every game drawn"
    return "every pair scored the same" if len(c) == 5 else "every game had the same result"


def elo_lines(counts: Sequence[float], draw_ratio_text: str) -> list[str]:
    """The Elo/nElo line and the LOS line (ending with `draw_ratio_text`) of a report, with
    undefined figures in words."""
    e, err, los = elo(counts)
    ne, nerr = nelo(counts)
    if math.isnan(ne):
        nelo_text = f"nElo: {UNDEFINED} ({why_undefined(counts)})"
    else:
        nelo_text = f"nElo: {format_stat(ne, '.2f')} +/- {format_stat(nerr, '.2f')}"
    return [f"Elo: {format_stat(e, '.2f')} +/- {format_stat(err, '.2f')}, {nelo_text}",
            f"LOS: {format_stat(los * 100.0, '.2f')}{'' if math.isnan(los) else ' %'}, "
            f"{draw_ratio_text}"]


def _as_int_counts(values: Sequence[float], name: str, length: int) -> list[int]:
    items = list(values)
    if len(items) != length:
        raise ValueError(f"{name} must have length {length}, got length {len(items)}")
    out = []
    for i, x in enumerate(items):
        if not _is_real(x) or float(x) != int(x):
            raise ValueError(f"{name}[{i}] must be a whole number, got {x!r}")
        if x < 0:
            raise ValueError(f"{name} must be non-negative, got {x!r} at index {i}")
        out.append(int(x))
    return out


def _parse_wdl(wdl: object) -> tuple[int, int, int]:
    if isinstance(wdl, Mapping):
        missing = {"wins", "draws", "losses"} - set(wdl)
        if missing:
            raise ValueError(f"wdl mapping is missing {sorted(missing)}")
        seq = [wdl["wins"], wdl["draws"], wdl["losses"]]
    elif isinstance(wdl, (str, bytes)):
        raise ValueError("wdl must be (wins, draws, losses) or a mapping, got a string")
    else:
        seq = wdl  # type: ignore[assignment]
    w, d, lo = _as_int_counts(seq, "wdl (wins, draws, losses)", 3)
    return w, d, lo


def format_report(
    counts_penta: Sequence[int],
    elo0: float | None = None,
    elo1: float | None = None,
    alpha: float = 0.05,
    beta: float = 0.05,
    model: str = "normalized",
    games: int | None = None,
    wdl: Sequence[int] | Mapping[str, int] | None = None,
    wl_dd: tuple[int, int] | None = None,
) -> str:
    """The statistics block fastchess prints (``-report penta=true``), without the header line.

    ::

        Elo: {elo:.2f} +/- {err:.2f}, nElo: {nelo:.2f} +/- {nerr:.2f}
        LOS: {100 los:.2f} %, DrawRatio: {penta draw ratio:.2f} %, PairsRatio: {ratio:.2f}
        Games: {n}, Wins: {W}, Losses: {L}, Draws: {D}, Points: {pts:.1f} ({100 pts/n:.2f} %)
        Ptnml(0-2): [LL, LD, WL+DD, WD, WW], WL/DD Ratio: {WL/DD:.2f}
        LLR: {llr:.2f} ({fraction:.1f}%) ({lower:.2f}, {upper:.2f}) [{elo0:.2f}, {elo1:.2f}]

    Elo, nElo and LOS come from the pentanomial counts (:func:`elo`, :func:`nelo`);
    ``PairsRatio = (WD + WW) / (LL + LD)``; the LLR line is present only when ``elo0`` and
    ``elo1`` are given (``model`` as in :func:`llr`). Divisions by zero print ``inf`` as
    fastchess does, and where fastchess prints ``nan`` this prints ``undefined`` (nElo with
    the reason, :func:`why_undefined`). Lines are joined by ``"\\n"`` with no trailing newline.

    ``wdl`` is the trinomial game count as ``(wins, draws, losses)`` -- note the order, which
    follows the parameter's name -- or a mapping with keys ``wins``/``draws``/``losses``.
    Without it the W/L/D fields are left out (they cannot be recovered from pair counts) and
    points are taken from the pairs. ``games`` defaults to ``W + D + L`` (or ``2 * pairs``)
    and must agree with it. When every game is paired (``W + D + L == 2 * pairs``) the WL/DD
    split is derived as ``WL = W - 2 WW - WD``; otherwise pass ``wl_dd=(WL, DD)`` or the ratio
    is omitted. A ``wdl`` inconsistent with the pairs raises ``ValueError``.
    """
    ll, ld, mid, wd, ww = _as_int_counts(counts_penta, "counts_penta", 5)
    pairs = ll + ld + mid + wd + ww
    if pairs == 0:
        raise ValueError("counts_penta is empty (all zero): no game pairs to report on")
    if model not in _MODELS:
        raise ValueError(f"model must be 'normalized' or 'logistic', got {model!r}")
    if (elo0 is None) != (elo1 is None):
        raise ValueError("give both elo0 and elo1 (or neither, for no LLR line)")
    penta = [ll, ld, mid, wd, ww]

    if wdl is not None:
        w, d, lo = _parse_wdl(wdl)
        n_games = w + d + lo
        points = w + 0.5 * d
        if n_games == 2 * pairs:
            wl = w - 2 * ww - wd
            if not (0 <= wl <= mid and lo == 2 * ll + ld + wl and d == ld + wd + 2 * (mid - wl)):
                raise ValueError(
                    f"wdl={list(wdl) if not isinstance(wdl, Mapping) else dict(wdl)} is "
                    f"inconsistent with counts_penta={penta}; wdl must be (wins, draws, losses)"
                )
            if wl_dd is None:
                wl_dd = (wl, mid - wl)
        elif n_games < 2 * pairs:
            raise ValueError(
                f"wdl counts {n_games} games but counts_penta has {pairs} pairs ({2 * pairs} games)"
            )
    else:
        w = d = lo = None
        n_games = 2 * pairs
        points = sum(i * c for i, c in enumerate(penta)) / 2.0
    if games is not None and games != n_games:
        raise ValueError(
            f"games={games} disagrees with the {n_games} games in "
            f"{'wdl' if wdl is not None else 'counts_penta'}"
        )

    pairs_ratio = _div(wd + ww, ll + ld)
    lines = elo_lines(penta, f"DrawRatio: {format_stat(draw_ratio(penta), '.2f')} %, "
                             f"PairsRatio: {format_stat(pairs_ratio, '.2f')}")
    tail = f"Points: {points:.1f} ({format_stat(points / n_games * 100.0, '.2f')} %)"
    if w is not None:
        lines.append(f"Games: {n_games}, Wins: {w}, Losses: {lo}, Draws: {d}, {tail}")
    else:
        lines.append(f"Games: {n_games}, {tail}")
    ptnml = f"Ptnml(0-2): [{ll}, {ld}, {mid}, {wd}, {ww}]"
    if wl_dd is not None:
        wl_, dd_ = _as_int_counts(wl_dd, "wl_dd (WL, DD)", 2)
        if wl_ + dd_ != mid:
            raise ValueError(f"wl_dd={tuple(wl_dd)} must add up to counts_penta[2]={mid}")
        ptnml += f", WL/DD Ratio: {format_stat(_div(wl_, dd_), '.2f')}"
    lines.append(ptnml)
    if elo0 is not None and elo1 is not None:
        lower, upper = bounds(alpha, beta)
        value = llr(penta, elo0, elo1, model)
        lines.append(
            f"LLR: {format_stat(value, '.2f')} "
            f"({format_stat(llr_fraction(value, alpha, beta), '.1f')}%) "
            f"({lower:.2f}, {upper:.2f}) [{float(elo0):.2f}, {float(elo1):.2f}]"
        )
    return "\n".join(lines)
