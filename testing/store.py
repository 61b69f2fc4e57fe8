"""The run store: a SQLite database (WAL) in the run directory.

Each finished game is committed with its pair before it counts, so a run that
is killed can be resumed without losing a game or counting one twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading

DB_NAME = "games.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    pair_id INTEGER NOT NULL,
    game_in_pair INTEGER NOT NULL,
    round INTEGER NOT NULL,
    engine1 TEXT NOT NULL,
    engine2 TEXT NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    opening_index INTEGER NOT NULL,
    opening_fen TEXT,
    opening_moves TEXT NOT NULL,
    result TEXT NOT NULL,
    termination TEXT NOT NULL,
    reason TEXT NOT NULL,
    plies INTEGER NOT NULL,
    white_time REAL NOT NULL,
    black_time REAL NOT NULL,
    time_loss INTEGER NOT NULL,
    start_time REAL NOT NULL,
    end_time REAL NOT NULL,
    moves TEXT NOT NULL,
    final_fen TEXT NOT NULL,
    pgn TEXT NOT NULL,
    UNIQUE (pair_id, game_in_pair)
);
"""

COLUMNS = [
    "pair_id",
    "game_in_pair",
    "round",
    "engine1",
    "engine2",
    "white",
    "black",
    "opening_index",
    "opening_fen",
    "opening_moves",
    "result",
    "termination",
    "reason",
    "plies",
    "white_time",
    "black_time",
    "time_loss",
    "start_time",
    "end_time",
    "moves",
    "final_fen",
    "pgn",
]


class RunStore:
    """Thread-safe access to ``DIR/games.sqlite``."""

    def __init__(self, rundir: str):
        os.makedirs(rundir, exist_ok=True)
        self.rundir = rundir
        self.path = os.path.join(rundir, DB_NAME)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- metadata -----------------------------------------------------------
    def get_meta(self, key: str, default=None):
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value))
            )

    # -- games --------------------------------------------------------------
    def add_game(self, row: dict) -> bool:
        """Commit one game; False when (pair_id, game_in_pair) is already stored."""
        values = [row[c] for c in COLUMNS]
        sql = (
            f"INSERT OR IGNORE INTO games ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(COLUMNS))})"
        )
        with self._lock:
            cur = self._db.execute(sql, values)
        return cur.rowcount == 1

    def games(self, columns: list[str] | None = None) -> list[dict]:
        cols = columns or COLUMNS
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join(cols)} FROM games ORDER BY pair_id, game_in_pair"
            ).fetchall()
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def done_games(self) -> set[tuple[int, int]]:
        with self._lock:
            rows = self._db.execute("SELECT pair_id, game_in_pair FROM games").fetchall()
        return {(a, b) for a, b in rows}

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]


def results(rundir: str):
    """The games of a run directory as a pandas DataFrame (one row per game).

    Columns: pair_id, game_in_pair, round, engine1, engine2, white, black,
    opening_index, opening_fen, opening_moves, result, termination, reason,
    plies, white_time, black_time, time_loss, start_time, end_time, and
    ``score`` (engine1's points in the game).
    """
    import pandas as pd

    path = os.path.join(rundir, DB_NAME)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no run store in {rundir!r} ({DB_NAME} missing)")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        cols = [c for c in COLUMNS if c not in ("pgn", "moves", "final_fen")]
        df = pd.read_sql_query(
            f"SELECT {', '.join(cols)} FROM games ORDER BY pair_id, game_in_pair", db
        )
    finally:
        db.close()
    white_pts = df["result"].map({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5})
    df["score"] = white_pts.where(df["white"] == df["engine1"], 1.0 - white_pts)
    df["time_loss"] = df["time_loss"].astype(bool)
    return df
