"""Match runner for engine testing: games, openings, adjudication, PGN, SPRT and Elo."""

__all__ = ["results"]


def results(rundir: str):
    """The games of a run directory as a pandas DataFrame (see ``testing.store.results``)."""
    from .store import results as _results

    return _results(rundir)
