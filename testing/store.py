"""The run store: a SQLite database (WAL) in the run directory.

Each finished game is committed with its pair before it counts, so a run that
is killed can be resumed without losing a game or counting one twice.
"""

from __future__ import annotations

import json
import lzma
import os
import sqlite3
import threading
import zlib
from urllib.parse import quote

DB_NAME = "games.sqlite"
SUMMARY_NAME = "summary.json"  # the runner's figures of its last session (testing.tournament)

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
CREATE TABLE IF NOT EXISTS game_logs (
    pair_id INTEGER NOT NULL,
    game_in_pair INTEGER NOT NULL,
    side TEXT NOT NULL,
    engine TEXT NOT NULL,
    kind TEXT NOT NULL,
    codec TEXT NOT NULL,
    raw_size INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (pair_id, game_in_pair, side, kind)
);
"""

# columns added after the first stores were written: (name, SQL type and default)
_ADDED = [
    ("number", "INTEGER"),  # the game's number in the schedule (the PGN Round tag)
    ("move_stats", "TEXT NOT NULL DEFAULT ''"),  # JSON, see testing.enginestats
]
LOG_KINDS = ("transcript", "stderr")

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
    "number",
    "move_stats",
]


def compress(data: bytes) -> tuple[str, bytes]:
    """(codec, blob): zlib level 6 packs protocol text about 8:1 in a few ms a game."""
    return "zlib", zlib.compress(data, 6)


def decompress(codec: str, blob: bytes) -> bytes:
    if codec == "zlib":
        return zlib.decompress(blob)
    if codec == "lzma":
        return lzma.decompress(blob)
    if codec == "raw":
        return bytes(blob)
    raise ValueError(f"unknown codec {codec!r} in the run store")


def log_rows(names: dict[str, str], transcripts: dict, stderr: dict) -> list[tuple]:
    """The game_logs rows of one game (without its key): side, engine, kind, codec,
    raw size, blob."""
    out = []
    for side, engine in names.items():
        for kind, texts in (("transcript", transcripts), ("stderr", stderr)):
            data = texts.get(side, b"")
            codec, blob = compress(data)
            out.append((side, engine, kind, codec, len(data), blob))
    return out


class RunStore:
    """Thread-safe access to ``DIR/games.sqlite``."""

    def __init__(self, rundir: str, kind: str = "match"):
        """Open the store of `rundir`, creating it (and marking the directory as a run of
        `kind`, see `testing.rundir`) when there is none."""
        os.makedirs(rundir, exist_ok=True)
        self.rundir = rundir
        self.path = os.path.join(rundir, DB_NAME)
        if not os.path.exists(self.path):
            from .rundir import mark

            mark(rundir, kind)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        have = {r[1] for r in self._db.execute("PRAGMA table_info(games)")}
        for name, decl in _ADDED:
            if name not in have:  # a store written before the column existed
                self._db.execute(f"ALTER TABLE games ADD COLUMN {name} {decl}")

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
        """Commit one game with its transcripts and stderr (``row["_logs"]``) in one
        transaction; False when (pair_id, game_in_pair) is already stored."""
        values = [row.get(c) if c == "number" else row.get(c, "") if c == "move_stats"
                  else row[c] for c in COLUMNS]
        sql = (
            f"INSERT OR IGNORE INTO games ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(COLUMNS))})"
        )
        key = (row["pair_id"], row["game_in_pair"])
        logs = [key + tuple(r) for r in row.get("_logs", ())]
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                added = db.execute(sql, values).rowcount == 1
                if added and logs:
                    db.executemany("INSERT OR REPLACE INTO game_logs VALUES (?,?,?,?,?,?,?,?)",
                                   logs)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return added

    def game_key(self, game) -> tuple[int, int]:
        """(pair_id, game_in_pair) of a game given as its number (``7``, ``"7"``, the PGN
        Round) or as ``"PAIR.G"`` (the runner's error messages); ValueError if not stored."""
        text = str(game).strip()
        with self._lock:
            if "." in text:
                a, _, b = text.partition(".")
                try:
                    key = (int(a), int(b))
                except ValueError:
                    raise ValueError(f"game {text!r}: expected a number or PAIR.G") from None
                row = self._db.execute(
                    "SELECT pair_id, game_in_pair FROM games WHERE pair_id=? AND game_in_pair=?",
                    key).fetchone()
            else:
                try:
                    n = int(text)
                except ValueError:
                    raise ValueError(f"game {text!r}: expected a number or PAIR.G") from None
                row = self._db.execute(
                    "SELECT pair_id, game_in_pair FROM games WHERE number=?", (n,)).fetchone()
        if row is None:
            raise ValueError(f"game {text}: not in the run store")
        return row[0], row[1]

    def game(self, key: tuple[int, int]) -> dict:
        with self._lock:
            cur = self._db.execute(
                "SELECT * FROM games WHERE pair_id=? AND game_in_pair=?", key)
            names = [d[0] for d in cur.description]
            return dict(zip(names, cur.fetchone(), strict=True))

    def logs(self, key: tuple[int, int], kind: str) -> dict[str, bytes]:
        """{side: text} of one game's ``kind`` ("transcript" or "stderr")."""
        with self._lock:
            rows = self._db.execute(
                "SELECT side, codec, data FROM game_logs WHERE pair_id=? AND game_in_pair=? "
                "AND kind=?", (*key, kind)).fetchall()
        return {side: decompress(codec, blob) for side, codec, blob in rows}

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


def is_store(rundir: str) -> bool:
    """`rundir` holds a run store (a match, or the games of an SPSA run)."""
    return os.path.isfile(os.path.join(rundir, DB_NAME))


def _open_ro(rundir: str) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``: a WAL reader never blocks the runner). A WAL reader
    needs the store's -shm file, which SQLite makes if it is missing; in a directory this user
    cannot write, the store is read as it stands on disk (``immutable``: games still in
    another process's WAL are not seen)."""
    path = os.path.join(rundir, DB_NAME)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no run store in {rundir!r} ({DB_NAME} missing)")
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
        db.execute("SELECT 1 FROM meta LIMIT 1")
    except sqlite3.OperationalError:
        if os.access(rundir, os.W_OK) or not os.access(path, os.R_OK):
            raise
        db = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=5.0,
                             check_same_thread=False)
        db.execute("SELECT 1 FROM meta LIMIT 1")
    return db


class StoreReader:
    """Read-only access to ``DIR/games.sqlite`` for the dashboard and notebooks: it never
    writes, and the runner goes on writing while it reads. Raises FileNotFoundError without
    a store, sqlite3.Error when it cannot be read."""

    KIND = "match"

    def __init__(self, rundir: str):
        self.rundir = rundir
        self._db = _open_ro(rundir)
        self._have = {r[1] for r in self._db.execute("PRAGMA table_info(games)")}

    def __repr__(self) -> str:
        return f"StoreReader({self.rundir!r})"

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def is_run(rundir: str) -> bool:
        """A match run, also one written before runs were marked (`testing.rundir`)."""
        return is_store(rundir)

    def started(self) -> float:
        """When the first game started (the store's time before any game)."""
        first = self.span()[1]
        return first if first is not None else os.path.getmtime(os.path.join(self.rundir,
                                                                             DB_NAME))

    def updated(self) -> float:
        """When the runner last wrote (the store, its WAL, the session summary)."""
        from .rundir import last_write

        return last_write(self.rundir, (DB_NAME, DB_NAME + "-wal", SUMMARY_NAME))

    def finished(self) -> bool:
        """Every planned game stored, or the SPRT decided."""
        return self.meta("sprt_decision") is not None or \
            self.span()[0] >= self.planned_games()

    def last_session(self) -> dict:
        """The runner's figures of its last session (summary.json), {} before it wrote one."""
        try:
            with open(os.path.join(self.rundir, SUMMARY_NAME), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def resume_command(self) -> str:
        return f"wasp-match -resume {self.rundir}"

    def meta(self, key: str, default=None):
        """A value the runner saved (``config``, ``sprt_decision``, a tool's own keys)."""
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def planned_games(self) -> int:
        """The games the run's schedule holds (0 when its configuration cannot say)."""
        from .schedule import make_schedule

        cfg = self.meta("config") or {}
        try:
            sched = make_schedule(len(cfg["engines"]), cfg["tournament"], cfg["rounds"],
                                  cfg["games"], cfg["repeat"])
        except (KeyError, ValueError, TypeError):
            return 0
        return sum(len(p.games) for p in sched)

    def span(self) -> tuple[int, float | None, float | None]:
        """(games stored, first start time, last end time)."""
        n, first, last = self._db.execute(
            "SELECT COUNT(*), MIN(start_time), MAX(end_time) FROM games").fetchone()
        return n, first, last

    def recent_ends(self, n: int) -> list[float]:
        """The end times of the last `n` games stored, newest first."""
        return [r[0] for r in self._db.execute(
            "SELECT end_time FROM games ORDER BY end_time DESC LIMIT ?", (n,))]

    def _select(self, columns) -> str:
        cols = ["id", *(c for c in columns or COLUMNS if c != "id")]
        return ", ".join(c if c in self._have else f"'' AS {c}" for c in cols)

    def games_after(self, last_id: int = 0, columns=None) -> list[dict]:
        """The games stored after row `last_id` (the ``id`` of each row), in that order, with
        `columns` (default all; one the store predates reads as '')."""
        cur = self._db.execute(f"SELECT {self._select(columns)} FROM games WHERE id > ? "
                               "ORDER BY id", (last_id,))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def game_by_id(self, game_id: int, columns=None) -> dict | None:
        """The game of row `game_id`, or None."""
        cur = self._db.execute(f"SELECT {self._select(columns)} FROM games WHERE id=?",
                               (game_id,))
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row,
                                                 strict=True))


def results(rundir: str):
    """The games of a run directory as a pandas DataFrame (one row per game).

    Columns: pair_id, game_in_pair, round, number, engine1, engine2, white, black,
    opening_index, opening_fen, opening_moves, result, termination, reason, plies,
    white_time, black_time, time_loss, start_time, end_time, ``score`` (engine1's
    points in the game); per side (``white_``/``black_``): depth and seldepth (means),
    nps, time_median and time_p95 (seconds a move), left (clock at the end), and the
    sizes of its transcript and stderr (``transcript_bytes``, ``stderr_bytes``: as
    text; ``logs_stored_bytes``: the game's compressed logs in the store).
    """
    import pandas as pd

    from .enginestats import side_summary

    db = _open_ro(rundir)
    try:
        have = {r[1] for r in db.execute("PRAGMA table_info(games)")}
        cols = [c for c in COLUMNS if c not in ("pgn", "moves", "final_fen") and c in have]
        df = pd.read_sql_query(
            f"SELECT {', '.join(cols)} FROM games ORDER BY pair_id, game_in_pair", db
        )
        logs = {}
        if db.execute("SELECT 1 FROM sqlite_master WHERE name='game_logs'").fetchone():
            for p, g, side, kind, raw, stored in db.execute(
                    "SELECT pair_id, game_in_pair, side, kind, raw_size, length(data) "
                    "FROM game_logs"):
                d = logs.setdefault((p, g), {})
                d[f"{side}_{kind}_bytes"] = raw
                d["logs_stored_bytes"] = d.get("logs_stored_bytes", 0) + stored
    finally:
        db.close()
    white_pts = df["result"].map({"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5})
    df["score"] = white_pts.where(df["white"] == df["engine1"], 1.0 - white_pts)
    df["time_loss"] = df["time_loss"].astype(bool)
    stats = df.pop("move_stats") if "move_stats" in df else pd.Series([""] * len(df))
    extra = []
    for ms in stats:
        try:
            d = json.loads(ms) if ms else {}
        except ValueError:
            d = {}
        row = {}
        for side in ("white", "black"):
            for k, v in side_summary(d.get(side, {})).items():
                row[f"{side}_{k}"] = v
        extra.append(row)
    sizes = [logs.get((p, g), {}) for p, g in zip(df["pair_id"], df["game_in_pair"],
                                                  strict=True)]
    size_cols = [f"{s}_{k}_bytes" for s in ("white", "black") for k in LOG_KINDS]
    size_cols.append("logs_stored_bytes")
    extra_df = pd.DataFrame(extra, index=df.index,
                            columns=[f"{s}_{k}" for s in ("white", "black")
                                     for k in ("depth", "seldepth", "nps", "time_median",
                                               "time_p95", "left")])
    size_df = pd.DataFrame(sizes, index=df.index, columns=size_cols).fillna(0).astype(int)
    return pd.concat([df, extra_df, size_df], axis=1)


def moves(rundir: str):
    """Every engine move of a run as a pandas DataFrame (one row per move, book moves left
    out): number and pair_id of the game, engine, side, move (the engine's 1st, 2nd, ... of
    the game), depth and seldepth (NaN when it saw a mate or did not say), nodes, seconds.
    From the runner's per-move figures (``move_stats``; stores older than them give none)."""
    import pandas as pd

    cols = ["number", "pair_id", "engine", "side", "move", "depth", "seldepth", "nodes",
            "seconds"]
    out = []
    with StoreReader(rundir) as store:
        games = store.games_after(0, ["number", "pair_id", "white", "black", "move_stats"])
    for g in games:
        try:
            stats = json.loads(g["move_stats"] or "{}")
        except ValueError:
            continue
        for side in ("white", "black"):
            s = stats.get(side) or {}
            times = s.get("time", [])
            for i, t in enumerate(times):
                out.append([g["number"], g["pair_id"], g[side], side, i + 1,
                            *(_at(s.get(k), i) for k in ("depth", "seldepth", "nodes")), t])
    return pd.DataFrame(out, columns=cols).astype(
        {"depth": float, "seldepth": float, "nodes": float})


def _at(values, i):
    return values[i] if values is not None and i < len(values) and values[i] is not None \
        else float("nan")


def engine_stats(rundir: str):
    """Per-engine statistics of a run as a pandas DataFrame (one row per engine): games,
    mean depth and seldepth, nps, time per move (median, p95), mean clock left at the end,
    time losses, crashes, stalls and illegal moves."""
    import pandas as pd

    from .enginestats import EngineTally

    db = _open_ro(rundir)
    try:
        have = {r[1] for r in db.execute("PRAGMA table_info(games)")}
        ms = "move_stats" if "move_stats" in have else "''"
        rows = db.execute(f"SELECT white, black, result, termination, {ms} FROM games "
                          "ORDER BY pair_id, game_in_pair").fetchall()
    finally:
        db.close()
    tally = EngineTally()
    for w, b, r, t, m in rows:
        tally.add({"white": w, "black": b, "result": r, "termination": t, "move_stats": m})
    return pd.DataFrame(tally.rows()).set_index("engine") if rows else pd.DataFrame()


def _game_logs(rundir: str, game, kind: str, side: str | None):
    if side not in (None, "white", "black"):
        raise ValueError(f"side={side!r} (expected 'white', 'black' or None)")
    if not os.path.exists(os.path.join(rundir, DB_NAME)):
        raise FileNotFoundError(f"no run store in {rundir!r} ({DB_NAME} missing)")
    store = RunStore(rundir)
    try:
        if isinstance(game, tuple):
            game = f"{game[0]}.{game[1]}"
        texts = store.logs(store.game_key(game), kind)
    finally:
        store.close()
    out = {s: t.decode(errors="replace") for s, t in texts.items()}
    return out.get(side, "") if side else out


def transcript(rundir: str, game, side: str | None = None):
    """The protocol transcript of a game (its number, ``"PAIR.G"`` or ``(pair, g)``):
    ``{"white": text, "black": text}``, or one side's text. Each line is
    ``SECONDS DIR TEXT``: seconds from the first line (monotonic clock), ``>`` sent to
    the engine, ``<`` received from it."""
    return _game_logs(rundir, game, "transcript", side)


def stderr(rundir: str, game, side: str | None = None):
    """What the engines of a game wrote to stderr during it (as ``transcript``)."""
    return _game_logs(rundir, game, "stderr", side)
