"""Tablebase adjudication (fastchess's `-tb`, `-tbpieces`, `-tbignore50`, `-tbadjudicate`): a
game reaching a position the Syzygy tables hold ends at once with the tables' result.

As fastchess, the WDL tables are probed only where their verdict is exact: the 50-move counter
at zero (the move into the position was a capture or a pawn move, or the game starts there) and
no castling rights. A win the 50-move rule turns into a draw (cursed, WDL +1/-1) is a draw,
unless `-tbignore50`. `BOTH` adjudicates wins, losses and draws; `WIN_LOSS` only decided
positions; `DRAW` only drawn ones.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import chess
import chess.syzygy

from wasp import tablebase as wasp_tablebase

MODES = ("BOTH", "WIN_LOSS", "DRAW")
_ALIASES = {"WON_LOST": "WIN_LOSS", "WIN_LOST": "WIN_LOSS", "WON_LOSS": "WIN_LOSS"}
TERMINATION = "tablebase"  # GameRecord.termination of a tablebase adjudication
_COLOR = {chess.WHITE: "White", chess.BLACK: "Black"}


@dataclass
class TablebaseAdjudication:
    """The `-tb` settings of a run (saved with it, so a resumed run adjudicates alike)."""

    paths: str  # directories, ':'-separated (';' on Windows)
    pieces: int = 0  # adjudicate only with this many pieces or fewer (0: what the tables hold)
    ignore50: bool = False
    adjudicate: str = "BOTH"


def parse_mode(text: str) -> str:
    """`-tbadjudicate`'s value (any case; fastchess's older WON_LOST too); ValueError if not."""
    mode = _ALIASES.get(str(text).upper(), str(text).upper())
    if mode not in MODES:
        raise ValueError(f"{text!r} (expected BOTH, WIN_LOSS or DRAW)")
    return mode


def open_tables(paths: str):
    """(a chess.syzygy.Tablebase of every directory, the most pieces a table has): the WDL
    tables of `wasp.tablebase.open_tables`; ValueError naming a path that is missing or holds no
    WDL table."""
    tables, _, largest = wasp_tablebase.open_tables(paths, dtz=False)
    return tables, largest


_OPEN: dict = {}  # (process id, paths) -> (tables, largest): one set of open files a process
_LOCK = threading.Lock()


def _tables(paths: str):
    key = (os.getpid(), paths)
    with _LOCK:
        if key not in _OPEN:
            _OPEN[key] = open_tables(paths)
        return _OPEN[key]


def adjudicate(board: chess.Board, tb: TablebaseAdjudication):
    """(result, termination, reason) when the tables decide `board`, else None."""
    if board.halfmove_clock != 0 or board.castling_rights:
        return None
    tables, largest = _tables(tb.paths)
    pieces = chess.popcount(board.occupied)
    if pieces > largest or (tb.pieces and pieces > tb.pieces):
        return None
    with _LOCK:
        try:
            wdl = tables.probe_wdl(board)
        except (chess.syzygy.MissingTableError, KeyError):
            return None
    return verdict(wdl, board.turn, tb, chess.syzygy.calc_key(board))


def verdict(wdl: int, turn: chess.Color, tb: TablebaseAdjudication, material: str = "?"):
    """(result, termination, reason) of a probed WDL (-2..2, for the side to move `turn`)
    under `tb`'s rules, or None when `tb.adjudicate` leaves such a result to the game."""
    value = wdl if tb.ignore50 else (wdl if abs(wdl) == 2 else 0)
    note = f"SyzygyTB: {material}, WDL {wdl:+d} with {_COLOR[turn]} to move"
    if value == 0:
        if tb.adjudicate == "WIN_LOSS":
            return None
        return ("1/2-1/2", TERMINATION, f"Draw by adjudication: {note}")
    if tb.adjudicate == "DRAW":
        return None
    winner = turn if value > 0 else not turn
    return ("1-0" if winner == chess.WHITE else "0-1", TERMINATION,
            f"{_COLOR[winner]} wins by adjudication: {note}")
