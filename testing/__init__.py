"""Match runner for engine testing: games, openings, adjudication, PGN, SPRT and Elo."""

__all__ = ["engine_stats", "results", "stderr", "transcript"]


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
