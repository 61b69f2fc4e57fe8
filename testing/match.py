"""A match played in-process: `run_match(plan)` plays (or resumes) a run directory planned by
`testing.plan_match` and returns its `MatchResult`; ``wasp-match`` is this function behind a
command line."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .plan import MatchPlan, plan_match


@dataclass
class MatchResult:
    """What a run holds after `run_match`: the counts, Elo and SPRT state of its first
    encounter (the first engine against the second, from the first's view).

    `status` is the command line's exit status: 0 done, 1 an engine failed or another process
    holds the run (`error` says which), 130 interrupted (the stored games are kept: run it
    again to resume)."""

    rundir: str
    status: int
    error: str | None
    engines: list[str]
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    score: float | None = None  # points / games
    pentanomial: list[int] | None = None  # pair scores 0, 0.5, 1, 1.5, 2 (with -repeat)
    elo: float | None = None
    elo_error: float | None = None  # 95 % half-width
    sprt: dict | None = None  # elo0, elo1, alpha, beta, model, llr, bounds, decision
    summary: dict = field(default_factory=dict, repr=False)  # summary.json

    @property
    def ok(self) -> bool:
        return self.status == 0

    def __repr__(self) -> str:
        if not self.games:
            return f"MatchResult({self.rundir!r}, no games, status {self.status})"
        elo = f", Elo {self.elo:+.1f} +/- {self.elo_error:.1f}" if self.elo is not None else ""
        sprt = ""
        if self.sprt is not None:
            sprt = f", LLR {self.sprt['llr']:.2f} ({self.sprt['decision'] or 'no decision'})"
        return (f"MatchResult({self.rundir!r}, {self.games} games, +{self.wins} ={self.draws} "
                f"-{self.losses}{elo}{sprt}, status {self.status})")


def run_match(config, rundir: str | None = None, *, out=None, err=None) -> MatchResult:
    """Play the match `config` into `rundir` (created if absent) and return its result.

    `config` is a `MatchPlan` (`plan_match`'s; `rundir` then None or the plan's), or what
    `plan_match` takes, planned here: a `MatchConfig` or the list of arguments ``wasp-match``
    takes (``["-engine", "cmd=stockfish", ...]``, ``["-resume", DIR]``). A `rundir` that
    already holds this match resumes it; one that holds another is refused. Every game is
    committed to ``rundir/games.sqlite`` as it ends; the progress and the reports go to `out`
    (default stdout) and `err` (default stderr). Raises UsageError (a ValueError) for a bad
    setting before any game starts.

    >>> r = run_match(["-engine", "cmd=stockfish", "-engine", "cmd=stockfish",
    ...                "-each", "nodes=1000", "-games", "2"], "runs/two")  # doctest: +SKIP
    >>> r.games, r.score  # doctest: +SKIP
    (2, 0.5)
    """
    if isinstance(config, MatchPlan):
        plan = config
        if rundir is not None and str(rundir) != plan.rundir:
            raise ValueError(f"rundir={str(rundir)!r}: the plan plays into {plan.rundir!r}")
    else:
        plan = plan_match(config, rundir)
    os.makedirs(plan.rundir, exist_ok=True)
    from .tournament import Runner

    runner = Runner(plan.config, plan.rundir, resume=plan.resume, out=out, err=err)
    status = runner.run()
    return result_of(runner, status)


def result_of(runner, status: int) -> MatchResult:
    """The `MatchResult` of a `Runner` that has run."""
    from . import sprt as S

    cfg = runner.cfg
    error = runner.fatal if status == 1 else None
    if status == 1 and error is None:
        error = f"{runner.rundir} is in use by another process"
    res = MatchResult(runner.rundir, status, error, list(runner.names),
                      games=getattr(runner, "games_done", 0),
                      summary=getattr(runner, "last_summary", {}))
    enc = getattr(runner, "encounters", {}).get((0, 1))
    if enc is None or not enc.games:
        return res
    res.wins, res.draws, res.losses = enc.wins, enc.draws, enc.losses
    res.score = (enc.wins + enc.draws / 2) / enc.games
    res.pentanomial = enc.pentanomial() if enc.pair_scores else None
    counts = enc.sprt_counts()
    try:
        res.elo, res.elo_error, _ = S.elo(counts)
    except ValueError:
        pass
    if cfg.sprt is not None:
        s = cfg.sprt
        decision = runner.decision
        res.sprt = {"elo0": s.elo0, "elo1": s.elo1, "alpha": s.alpha, "beta": s.beta,
                    "model": s.model,
                    "llr": 0.0 if counts is None else S.llr(counts, s.elo0, s.elo1, s.model),
                    "bounds": list(S.bounds(s.alpha, s.beta)),
                    "decision": decision["decision"] if decision else None}
    return res
