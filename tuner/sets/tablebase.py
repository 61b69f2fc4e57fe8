"""Tablebase labels for the builder (`wasp-tune data -tb`): an endgame position's label is what
the Syzygy tables say it is worth, not the result its game happened to reach.

A position with at most `pieces` pieces (and no castling rights) is probed (WDL, python-chess);
a win or a loss (WDL +-2) is labelled 1-0 or 0-1 from White's view, anything else a draw (the
50-move rule draws the cursed results; the positions carry no 50-move counter, so the tables
are read with it at zero). `relabel` puts the tables' result in place of the game's; `drop`
removes the positions whose game result the tables contradict, keeping the game's labels.
"""

import numpy as np

from tuner.texel import R_CASTLE, R_SIDE, row_to_fen

MODES = ("relabel", "drop")
EMPTY_CODE = 12  # wasp.types' empty square in a packed row


def piece_counts(rows: np.ndarray) -> np.ndarray:
    """Pieces (kings included) of every packed row."""
    squares = rows[:, :32]
    return (np.sum((squares & 15) != EMPTY_CODE, axis=1)
            + np.sum((squares >> 4) != EMPTY_CODE, axis=1))


def tablebase_labels(rows: np.ndarray, paths: str, pieces: int = 0):
    """(labels, probed): White's result (1, 0.5, 0) by the tables for every row they hold,
    NaN elsewhere; `probed` counts the rows probed (a missing table leaves a row NaN)."""
    import chess
    import chess.syzygy

    from wasp.tablebase import open_tables

    tables, _, largest = open_tables(paths, dtz=False)
    cap = largest if not pieces else min(pieces, largest)
    labels = np.full(len(rows), np.nan)
    eligible = np.nonzero((piece_counts(rows) <= cap) & (rows[:, R_CASTLE] == 0))[0]
    missing = 0
    try:
        for i in eligible:
            board = chess.Board(row_to_fen(rows[i]))
            try:
                wdl = tables.probe_wdl(board)
            except (chess.syzygy.MissingTableError, KeyError):
                missing += 1
                continue
            mover = 1.0 if wdl == 2 else 0.0 if wdl == -2 else 0.5
            labels[i] = mover if rows[i, R_SIDE] == 0 else 1.0 - mover
    finally:
        tables.close()
    return labels, len(eligible) - missing, missing


def apply(results: np.ndarray, keep: np.ndarray, rows: np.ndarray, paths: str, pieces: int,
          mode: str) -> dict:
    """Relabel `results` or clear `keep` (in place) by the tables; returns the counts."""
    if mode not in MODES:
        raise ValueError(f"tablebase mode {mode!r} (relabel or drop)")
    labels, probed, missing = tablebase_labels(rows, paths, pieces)
    held = ~np.isnan(labels)
    differ = held & (labels != results)
    if mode == "relabel":
        results[held] = labels[held]
    else:
        keep &= ~differ
    return {"mode": mode, "probed": int(probed), "agreed": int(np.sum(held & ~differ)),
            "relabelled" if mode == "relabel" else "dropped": int(np.sum(differ)),
            "missing_table": int(missing)}
