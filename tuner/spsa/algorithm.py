"""SPSA over engine options, the pure part: the OpenBench input format, the gain schedule, one
iteration's perturbation and the update from a game pair's result, and a simulated match.

Nothing here plays a game: `tuner.spsa.run` plays the pairs and calls these functions.

The schedule and the update follow OpenBench (``AndyGrant/OpenBench``,
``OpenBench/spsa_utils.py``: ``create_spsa_run``, ``spsa_workload_assignment_dict``;
``Client/worker.py``: the delta; ``OpenBench/utils.py``: the clipped update) and fishtest
(``official-stockfish/fishtest``, ``server/fishtest/spsa_handler.py`` and
``server/fishtest/spsa_workflow.py``; ``worker/games.py``: the rounding). For N iterations,
per parameter::

    c   = c_end * N^gamma                       c_k = c / k^gamma
    a   = r_end * c_end^2 * (A + N)^alpha       a_k = a / (A + k)^alpha,   R_k = a_k / c_k^2
    A   = a_ratio * N                           k = 1, 2, ..., N

so that c_N = c_end and R_N = r_end exactly. Iteration k plays theta + c_k * flip against
theta - c_k * flip (flip = +-1 per parameter) and moves theta by
``R_k * c_k * (W - L) * flip = a_k / c_k * (W - L) * flip``, W and L counted from the plus
side's view, then clips it to [min, max].

Where the two differ (this module follows OpenBench unless said otherwise):

- Unit of k: OpenBench counts iterations of ``pairs_per`` game pairs (``1 + games / (2 *
  pairs_per)``); fishtest counts single game pairs (``iter + 1``, N = games / 2). Here k counts
  iterations of ``-pairs`` pairs, as OpenBench; ``-pairs 1`` gives fishtest's unit. Both
  servers take k from the games finished when a worker asks for work (a float in OpenBench),
  so with work in flight k lags; here k is the iteration's own number and the lag is explicit
  (``-in-flight``: iteration k starts from theta after iteration k - L).
- A: OpenBench ``a_ratio * iterations`` (a float); fishtest ``int(A_ratio * num_games / 2)``
  (truncated to an integer). Here the float.
- c_k of an integer parameter: OpenBench never lets it fall below 0.5; fishtest has no floor.
  Here OpenBench's floor.
- Integer values sent to the engine: fishtest clips theta +- c_k to [min, max] and then rounds
  stochastically, ``floor(x + U)`` with U uniform in [0, 1), drawing U separately for the plus
  and the minus engine; OpenBench rounds first with one U shared by both sides, then clips.
  Here fishtest's way, as issue #17 asks: the expected value sent is then exactly the clipped
  theta +- c_k.
- Input: OpenBench ``name, int|float, start, min, max, c_end, r_end``; fishtest has no type
  column (``name, start, min, max, c_end, r_end``, every value an integer option). Here
  OpenBench's seven fields.

The defaults are both projects' (their forms' initial values): alpha 0.602, gamma 0.101,
A = 10 % of the iterations.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from wasp.paramfile import finite_number

ALPHA = 0.602
GAMMA = 0.101
A_RATIO = 0.1
INT_C_FLOOR = 0.5  # OpenBench: an integer parameter's c_k never falls below half a unit

HEADER = "# name, int|float, start, min, max, c_end, r_end   (OpenBench's SPSA input)"


class SpsaInputError(ValueError):
    """A bad parameter line: the message is ``FILE:LINE: what is wrong``."""


@dataclass(frozen=True)
class Param:
    """One tuned option, as a line of OpenBench's SPSA input."""

    name: str
    is_float: bool
    start: float
    min: float
    max: float
    c_end: float
    r_end: float

    def line(self) -> str:
        """The OpenBench input line (``name, int|float, start, min, max, c_end, r_end``)."""
        num = _fmt if self.is_float else _fmt_int
        return ", ".join([self.name, "float" if self.is_float else "int", num(self.start),
                          num(self.min), num(self.max), _fmt(self.c_end), _fmt(self.r_end)])

    def value_text(self, x: float) -> str:
        """How `x` is sent to the engine (``setoption``) and written in result.txt."""
        return _fmt(float(x)) if self.is_float else str(int(round(x)))


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _fmt_int(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else _fmt(x)


def parse_params(text: str, source: str = "<input>") -> list[Param]:
    """Parameters from OpenBench-format text; blank lines and ``#`` comments are skipped.

    SpsaInputError names the first bad line as ``SOURCE:LINE: why``.
    """
    params: list[Param] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue

        def bad(why: str, lineno=lineno) -> SpsaInputError:
            return SpsaInputError(f"{source}:{lineno}: {why}")

        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 7:
            raise bad(f"expected 7 comma-separated fields (name, int|float, start, min, max, "
                      f"c_end, r_end), got {len(fields)}: {raw.strip()!r}")
        name, kind = fields[0], fields[1].lower()
        if not name:
            raise bad("empty parameter name")
        if kind not in ("int", "float"):
            raise bad(f"type must be int or float, got {fields[1]!r}")
        nums = []
        for what, f in zip(("start", "min", "max", "c_end", "r_end"), fields[2:], strict=True):
            try:
                nums.append(finite_number(f))
            except ValueError as e:
                raise bad(f"{what} is {e}: {f!r}") from None
        start, lo, hi, c_end, r_end = nums
        if kind == "int":
            for what, x in (("start", start), ("min", lo), ("max", hi)):
                if not x.is_integer():
                    raise bad(f"{what} of an int parameter must be an integer, got {x:g}")
        if lo >= hi:
            raise bad(f"min ({lo:g}) must be below max ({hi:g})")
        if not lo <= start <= hi:
            raise bad(f"start ({start:g}) is outside [min, max] = [{lo:g}, {hi:g}]")
        if c_end <= 0:
            raise bad(f"c_end must be positive, got {c_end:g}")
        if r_end < 0:
            raise bad(f"r_end must not be negative, got {r_end:g}")
        key = name.lower()  # UCI option names are case-insensitive
        if key in seen:
            raise bad(f"{name} given twice (also line {seen[key]})")
        seen[key] = lineno
        params.append(Param(name, kind == "float", start, lo, hi, c_end, r_end))
    if not params:
        raise SpsaInputError(f"{source}: no parameters (one 'name, int|float, start, min, max, "
                             f"c_end, r_end' a line)")
    return params


def load_params(path: str) -> list[Param]:
    """`parse_params` of a file (errors name it and the line)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return parse_params(text, os.fspath(path))


@dataclass(frozen=True)
class Schedule:
    """The gains of a run of `iterations` iterations: c_k and a_k of every parameter."""

    iterations: int
    alpha: float = ALPHA
    gamma: float = GAMMA
    a_ratio: float = A_RATIO

    def __post_init__(self):
        if self.iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {self.iterations}")

    @property
    def A(self) -> float:  # noqa: N802 - the name of the literature and of both projects
        """The stability constant: ``a_ratio * N`` (OpenBench keeps the float)."""
        return self.a_ratio * self.iterations

    def c(self, p: Param) -> float:
        """``c = c_end * N^gamma``: c_k reaches c_end at k = N."""
        return p.c_end * self.iterations ** self.gamma

    def a(self, p: Param) -> float:
        """``a = r_end * c_end^2 * (A + N)^alpha``: a_N / c_N^2 = r_end."""
        return p.r_end * p.c_end ** 2 * (self.A + self.iterations) ** self.alpha

    def c_k(self, p: Param, k: float) -> float:
        """``c / k^gamma``, at least 0.5 for an int parameter (OpenBench)."""
        c = self.c(p) / k ** self.gamma
        return c if p.is_float else max(c, INT_C_FLOOR)

    def a_k(self, p: Param, k: float) -> float:
        """``a / (A + k)^alpha``."""
        return self.a(p) / (self.A + k) ** self.alpha

    def r_k(self, p: Param, k: float) -> float:
        """OpenBench's and fishtest's R: ``a_k / c_k^2`` (the step per unit of c_k * result)."""
        return self.a_k(p, k) / self.c_k(p, k) ** 2


def iteration_rng(seed: int, k: int) -> np.random.Generator:
    """The random numbers of iteration k: a function of (seed, k) only, so a resumed run
    draws the same flips and roundings as an uninterrupted one."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(k)])


def stochastic_round(x: float, u: float) -> int:
    """fishtest's rounding of an int option: ``floor(x + u)``, u uniform in [0, 1), so N.p is
    N with probability 1 - p and N + 1 with probability p (its mean is x)."""
    return int(math.floor(x + u))


@dataclass
class Step:
    """Iteration k's perturbation: what the plus and the minus engine play with."""

    k: int
    flips: list[int]
    c: list[float]  # c_k of each parameter
    a: list[float]  # a_k of each parameter
    plus: list[float]  # the values sent to the engines (ints rounded, all clipped)
    minus: list[float]

    def options(self, params: list[Param], side: int) -> dict[str, str]:
        """``{option name: value text}`` of the plus (side +1) or the minus (-1) engine."""
        values = self.plus if side > 0 else self.minus
        return {p.name: p.value_text(v) for p, v in zip(params, values, strict=True)}


def perturb(params: list[Param], schedule: Schedule, theta, k: int, seed: int) -> Step:
    """Iteration k: a +-1 flip per parameter, theta +- c_k * flip clipped to [min, max], the
    ints rounded stochastically (fishtest: after the clip, one draw per side)."""
    rng = iteration_rng(seed, k)
    n = len(params)
    flips = [int(f) for f in rng.choice(np.array([-1, 1]), size=n)]
    u = rng.random((2, n))
    step = Step(k, flips, [], [], [], [])
    for i, p in enumerate(params):
        c = schedule.c_k(p, k)
        step.c.append(c)
        step.a.append(schedule.a_k(p, k))
        for side, out in ((1, step.plus), (-1, step.minus)):
            x = clip(p, theta[i] + side * c * flips[i])
            out.append(x if p.is_float else stochastic_round(x, u[0 if side > 0 else 1, i]))
    return step


def clip(p: Param, x: float) -> float:
    return min(max(x, p.min), p.max)


def update(params: list[Param], theta, step: Step, wins: int, losses: int) -> list[float]:
    """theta after iteration `step`: ``theta + a_k / c_k * (W - L) * flip``, clipped, with W
    and L the plus engine's wins and losses over the iteration's games (OpenBench's
    ``r * c * result * flip`` with ``r = a_k / c_k^2``; fishtest's ``R * c * result * flip``)."""
    result = wins - losses
    return [clip(p, theta[i] + step.a[i] / step.c[i] * result * step.flips[i])
            for i, p in enumerate(params)]


# -- a simulated match ----------------------------------------------------------------------


def expected_score(elo_diff: float) -> float:
    """The logistic expectation of a player `elo_diff` Elo stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo_diff / 400.0))


@dataclass
class SimResult:
    """A simulated run: theta after each iteration (row 0: the start) and the W-D-L."""

    thetas: np.ndarray
    wdl: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def final(self) -> np.ndarray:
        return self.thetas[-1]


def simulate(params: list[Param], schedule: Schedule, elo, pairs: int = 1, seed: int = 1,
             draw_rate: float = 0.3) -> SimResult:
    """SPSA against a simulated match: ``elo(values)`` is the strength (Elo) of an engine
    playing with `values`; each game's result is drawn from the logistic expectation of the
    two sides' difference with `draw_rate` draws. A pure function of its arguments."""
    theta = [p.start for p in params]
    thetas = [list(theta)]
    wdl = []
    games_rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 2**31])
    for k in range(1, schedule.iterations + 1):
        step = perturb(params, schedule, theta, k, seed)
        s = expected_score(elo(step.plus) - elo(step.minus))
        p_win = max(0.0, min(1.0 - draw_rate, s - draw_rate / 2))
        p_loss = max(0.0, 1.0 - draw_rate - p_win)
        outcome = games_rng.choice(3, size=2 * pairs, p=[p_win, 1.0 - p_win - p_loss, p_loss])
        w, d, l_ = (int(np.sum(outcome == j)) for j in range(3))
        theta = update(params, theta, step, w, l_)
        thetas.append(list(theta))
        wdl.append((w, d, l_))
    return SimResult(np.array(thetas), wdl)
