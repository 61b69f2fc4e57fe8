"""Running counts of a run: per-encounter W/D/L, game pairs, and the reports printed from them."""

from __future__ import annotations

import math


class Encounter:
    """Counts of one encounter from its first engine's view."""

    def __init__(self, e1: str, e2: str, pair_size: int):
        self.e1, self.e2 = e1, e2
        self.pair_size = pair_size
        self.wins = self.draws = self.losses = 0
        self._open: dict[int, list[float]] = {}
        self.pair_scores: list[float] = []

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, pair_id: int, score: float, pair_games: int) -> bool:
        """Count one game; True when it completed its pair."""
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        scores = self._open.setdefault(pair_id, [])
        scores.append(score)
        if len(scores) == pair_games:
            del self._open[pair_id]
            if pair_games == 2:
                self.pair_scores.append(sum(scores))
            return True
        return False

    def trinomial(self) -> list[int]:
        return [self.losses, self.draws, self.wins]

    def pentanomial(self) -> list[int]:
        from . import sprt

        return sprt.pentanomial_from_pairs(self.pair_scores)

    def sprt_counts(self) -> list[int] | None:
        """Pentanomial counts with ``-repeat``, trinomial otherwise; None when empty."""
        if self.pair_size == 2:
            return self.pentanomial() if self.pair_scores else None
        return self.trinomial() if self.games else None

    def report(self, sprt_cfg=None) -> str:
        from . import sprt

        kw = {}
        if sprt_cfg is not None:
            kw = dict(
                elo0=sprt_cfg.elo0,
                elo1=sprt_cfg.elo1,
                alpha=sprt_cfg.alpha,
                beta=sprt_cfg.beta,
                model=sprt_cfg.model,
            )
        if self.pair_scores:
            return sprt.format_report(
                self.pentanomial(), wdl=(self.wins, self.draws, self.losses), **kw
            )
        if not self.games:
            return "No games yet"
        tri = self.trinomial()
        pts = self.wins + 0.5 * self.draws
        lines = [
            *sprt.elo_lines(tri, f"DrawRatio: {100.0 * self.draws / self.games:.2f} %"),
            f"Games: {self.games}, Wins: {self.wins}, Losses: {self.losses}, "
            f"Draws: {self.draws}, Points: {pts:.1f} ({100.0 * pts / self.games:.2f} %)",
        ]
        if sprt_cfg is not None:
            value = sprt.llr(tri, sprt_cfg.elo0, sprt_cfg.elo1, sprt_cfg.model)
            lo, hi = sprt.bounds(sprt_cfg.alpha, sprt_cfg.beta)
            frac = sprt.llr_fraction(value, sprt_cfg.alpha, sprt_cfg.beta)
            lines.append(
                f"LLR: {sprt.format_stat(value, '.2f')} ({sprt.format_stat(frac, '.1f')}%) "
                f"({lo:.2f}, {hi:.2f}) "
                f"[{sprt_cfg.elo0:.2f}, {sprt_cfg.elo1:.2f}]"
            )
        return "\n".join(lines)


def _f(x: float, spec: str = ".1f") -> str:
    """A table cell: inf as such, NaN as the word undefined."""
    from .sprt import format_stat

    return format_stat(x, spec) if not math.isinf(x) else str(x)


def rating_table(names: list[str], encounters: dict[tuple[int, int], Encounter]) -> str:
    """Elo and nElo of every engine relative to the first, from their games against it."""
    from . import sprt

    head = (
        f"{'Rank':>4} {'Name':<24} {'Elo':>8} {'+/-':>7} {'nElo':>8} {'+/-':>7} "
        f"{'Games':>6} {'Score':>7} {'Draw':>7}  Ptnml(0-2)"
    )
    rows = []
    ref = names[0]
    for j in range(1, len(names)):
        enc = encounters.get((0, j))
        if enc is None or not enc.games:
            rows.append((-math.inf, j, None))
            continue
        # From engine j's view: flip the reference engine's counts.
        if enc.pair_scores:
            counts = enc.pentanomial()[::-1]
        else:
            counts = enc.trinomial()[::-1]
        try:
            e, err, _ = sprt.elo(counts)
            ne, nerr = sprt.nelo(counts)
        except ValueError:
            e = err = ne = nerr = math.nan
        score = (enc.losses + 0.5 * enc.draws) / enc.games
        ptnml = str(counts) if enc.pair_scores else "-"
        rows.append(
            (
                e if math.isfinite(e) else (math.copysign(1e9, e) if not math.isnan(e) else -1e9),
                j,
                (e, err, ne, nerr, enc.games, score, enc.draws / enc.games, ptnml),
            )
        )
    rows.sort(key=lambda r: -r[0])
    lines = [head, f"{'':>4} {ref:<24} {'0.0':>8} {'(ref)':>7}"]
    for rank, (_, j, vals) in enumerate(rows, 1):
        if vals is None:
            lines.append(f"{rank:>4} {names[j]:<24} {'-':>8}")
            continue
        e, err, ne, nerr, g, score, draws, ptnml = vals
        lines.append(
            f"{rank:>4} {names[j]:<24} {_f(e):>8} {_f(err):>7} {_f(ne):>8} {_f(nerr):>7} "
            f"{g:>6} {100 * score:>6.1f}% {100 * draws:>6.1f}%  {ptnml}"
        )
    return "\n".join(lines)


def score_table(names: list[str], encounters: dict[tuple[int, int], Encounter]) -> str:
    """Total points of every engine over all its games (round robins)."""
    pts = [0.0] * len(names)
    games = [0] * len(names)
    for (i, j), enc in encounters.items():
        pts[i] += enc.wins + 0.5 * enc.draws
        pts[j] += enc.losses + 0.5 * enc.draws
        games[i] += enc.games
        games[j] += enc.games
    order = sorted(range(len(names)), key=lambda k: -(pts[k] / games[k] if games[k] else 0))
    lines = [f"{'Name':<24} {'Points':>8} {'Games':>6} {'Score':>7}"]
    for k in order:
        sc = 100 * pts[k] / games[k] if games[k] else 0.0
        lines.append(f"{names[k]:<24} {pts[k]:>8.1f} {games[k]:>6} {sc:>6.1f}%")
    return "\n".join(lines)
