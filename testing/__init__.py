"""Match runner for engine testing: games, openings, adjudication, PGN, SPRT and Elo.

A match from Python: ``testing.run_match(config, rundir)`` with a ``testing.MatchConfig`` or
``wasp-match``'s arguments; its games: ``testing.results(rundir)``.
"""

__all__ = ["MatchConfig", "MatchResult", "UsageError", "engine_stats", "results", "run_match",
           "stderr", "transcript"]


def __getattr__(name: str):
    """The API's classes, imported on first use (``import testing`` stays light)."""
    if name in ("MatchConfig", "UsageError"):
        from . import config

        return getattr(config, name)
    if name == "MatchResult":
        from .match import MatchResult

        return MatchResult
    raise AttributeError(f"module 'testing' has no attribute {name!r}")


def run_match(config, rundir: str | None = None, *, out=None, err=None):
    """Play the match `config` (a MatchConfig, or the arguments ``wasp-match`` takes) into
    `rundir` (created if absent; one holding this match resumes it) and return its
    `MatchResult`: games, W/D/L, score, pentanomial, Elo and the SPRT state. See
    ``testing.match.run_match``."""
    from .match import run_match as _run_match

    return _run_match(config, rundir, out=out, err=err)


def results(rundir: str):
    """The games of a run directory as a pandas DataFrame (see ``testing.store.results``)."""
    from .store import results as _results

    return _results(rundir)


def engine_stats(rundir: str):
    """Per-engine statistics of a run as a DataFrame (see ``testing.store.engine_stats``)."""
    from .store import engine_stats as _engine_stats

    return _engine_stats(rundir)


def transcript(rundir: str, game, side: str | None = None):
    """A game's protocol transcripts (see ``testing.store.transcript``)."""
    from .store import transcript as _transcript

    return _transcript(rundir, game, side)


def stderr(rundir: str, game, side: str | None = None):
    """A game's engine stderr (see ``testing.store.stderr``)."""
    from .store import stderr as _stderr

    return _stderr(rundir, game, side)
