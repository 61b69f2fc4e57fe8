"""Match runner for engine testing: games, openings, adjudication, PGN, SPRT and Elo.

A match from Python: ``testing.run_match(config, rundir)`` with a ``testing.MatchConfig`` or
``wasp-match``'s arguments (planned once by ``testing.plan_match``); its games:
``testing.results(rundir)``. The command line's language for other tools: ``read_flags``
(``wasp-match``'s flags as objects) and ``read_engine`` (``-engine`` items as an EngineConfig).
"""

__all__ = ["EngineConfig", "MatchConfig", "MatchFlags", "MatchPlan", "MatchResult", "UsageError",
           "engine_stats", "plan_match", "read_engine", "read_flags", "results", "run_match",
           "stderr", "transcript"]


def __getattr__(name: str):
    """The API's classes, imported on first use (``import testing`` stays light)."""
    if name in ("MatchConfig", "UsageError"):
        from . import config

        return getattr(config, name)
    if name == "EngineConfig":
        from .engine import EngineConfig

        return EngineConfig
    if name == "MatchFlags":
        from .args import MatchFlags

        return MatchFlags
    if name == "MatchPlan":
        from .plan import MatchPlan

        return MatchPlan
    if name == "MatchResult":
        from .match import MatchResult

        return MatchResult
    raise AttributeError(f"module 'testing' has no attribute {name!r}")


def plan_match(config=None, rundir: str | None = None, *, session: dict | None = None,
               new: bool = False, spsa: bool = False):
    """The `MatchPlan` of a match (a MatchConfig, ``wasp-match``'s arguments, or None to
    resume the run in `rundir` with `session` changes): validated, seeded, its openings read,
    its run directory chosen, new or resumed. See ``testing.plan.plan_match``."""
    from .plan import plan_match as _plan_match

    return _plan_match(config, rundir, session=session, new=new, spsa=spsa)


def run_match(config, rundir: str | None = None, *, out=None, err=None):
    """Play the match `config` (a MatchPlan, a MatchConfig, or the arguments ``wasp-match``
    takes) into `rundir` (created if absent; one holding this match resumes it) and return its
    `MatchResult`: games, W/D/L, score, pentanomial, Elo and the SPRT state. See
    ``testing.match.run_match``."""
    from .match import run_match as _run_match

    return _run_match(config, rundir, out=out, err=err)


def read_flags(argv: list[str], count_engines: bool = True):
    """``wasp-match``'s flags as a `MatchFlags` (the MatchConfig, not planned; or the run to
    resume and the session settings given); `count_engines` false lets a tool that tunes one
    engine read one. Raises UsageError. See ``testing.args.read``."""
    from .args import read

    return read(argv, count_engines)


def read_engine(tokens: list[str], each: list[str] = ()):
    """``-engine KEY=VALUE ...`` items (over ``-each`` items) as a checked EngineConfig, its
    command looked up. Raises UsageError. See ``testing.args.read_engine``."""
    from .args import read_engine as _read_engine

    return _read_engine(tokens, each)


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
