"""The dashboard's reading side: the runs under a directory and what each page shows.

`wasp-match`, `wasp-tune spsa` and `wasp-tune tune` each write a run directory; this module
finds them under the dashboard's root, tells their kind and state, and turns their files into
JSON for the pages. It never writes: SQLite stores are opened read-only (`mode=ro`, so a WAL
reader never blocks the runner), and a run's state comes from its lock (`testing.runlock`).
Games are immutable once stored, so each run's parsed games are cached and only new rows are
read on the next request.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import sqlite3
import threading
import time
from urllib.parse import quote

from testing.runlock import is_running

DB_NAME = "games.sqlite"
SPSA_META = "spsa"  # tuner.spsa_run.META_KEY: the key of an SPSA run's settings
MAX_DEPTH = 4  # run directories are looked for this many levels under the root
RECENT_SECONDS = 120  # a run without a lock (older versions) written this recently is running
PATH_POINTS = 400  # at most this many points in a plotted path
GAMES_PAGE = 200  # at most this many rows of the games table a request
GAME_COLUMNS = ("id", "pair_id", "game_in_pair", "round", "engine1", "engine2", "white",
                "black", "result", "termination", "reason", "plies", "time_loss",
                "start_time", "end_time", "opening_fen", "pgn")
FAILURES = {"timeout": "time_losses", "crash": "crashes", "illegal-move": "illegal_moves",
            "stall": "stalls"}
_COMMENT = re.compile(r"\{\s*([^}]*)\}")
_SCORE = re.compile(r"^([+-]?(?:M\d+|\d+(?:\.\d+)?))/(\d+)\s+([\d.]+)s")


class RunError(Exception):
    """A request for a run that does not exist or cannot be read; status is the HTTP code."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


# -- finding runs --------------------------------------------------------------------------


def _kind(path: str) -> str | None:
    """'match', 'spsa' or 'tuning' for a run directory, None for anything else."""
    if os.path.isfile(os.path.join(path, "run.json")) and \
            os.path.isfile(os.path.join(path, "state.json")):
        return "tuning"
    if os.path.isfile(os.path.join(path, DB_NAME)):
        if os.path.isfile(os.path.join(path, "params.csv")):
            return "spsa"
        return "match"
    return None


def _connect(path: str) -> sqlite3.Connection:
    """A read-only connection. A WAL reader needs the store's -shm file, which SQLite makes
    if it is missing; in a directory this user cannot write, the store is read as it stands
    on disk (`immutable`: games still in another process's WAL are not seen)."""
    db = os.path.join(path, DB_NAME)
    uri = f"file:{quote(os.path.abspath(db))}?mode=ro"
    try:
        try:
            con = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
            con.execute("SELECT 1 FROM meta LIMIT 1")
        except sqlite3.OperationalError:
            if os.access(path, os.W_OK) or not os.access(db, os.R_OK):
                raise
            con = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=5.0,
                                  check_same_thread=False)
            con.execute("SELECT 1 FROM meta LIMIT 1")
    except sqlite3.Error as e:
        raise RunError(f"cannot read {db}: {e}", 500) from None
    return con


def _meta(con: sqlite3.Connection, key: str):
    row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return json.loads(row[0]) if row else None


def _mtime(path: str, names) -> float:
    times = [os.path.getmtime(os.path.join(path, n)) for n in names
             if os.path.exists(os.path.join(path, n))]
    return max(times) if times else 0.0


_WRITTEN = (DB_NAME, DB_NAME + "-wal", "params.csv", "state.json", "history.csv",
            "passes.csv", "summary.json")


def _state(path: str, complete: bool) -> str:
    if is_running(path):
        return "running"
    if complete:
        return "finished"
    if time.time() - _mtime(path, _WRITTEN) < RECENT_SECONDS and \
            not os.path.exists(os.path.join(path, "running.lock")):
        return "running"  # a run by a version without the lock, written moments ago
    return "stopped"


def _limits(engine: dict) -> str:
    for key, fmt in (("tc", "{}"), ("st", "st={}"), ("nodes", "nodes={}"),
                     ("depth", "depth={}")):
        if engine.get(key):
            return fmt.format(engine[key])
    return "?"


def _total_games(cfg: dict) -> int:
    from testing.schedule import make_schedule

    try:
        sched = make_schedule(len(cfg["engines"]), cfg["tournament"], cfg["rounds"],
                              cfg["games"], cfg["repeat"])
    except (KeyError, ValueError, TypeError):
        return 0
    return sum(len(p.games) for p in sched)


class Runs:
    """The runs under `root`, with a cache of each match's parsed games."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        if not os.path.isdir(self.root):
            raise RunError(f"no directory {root!r}", 400)
        self._lock = threading.Lock()
        self._cache: dict[str, _MatchCache] = {}
        self._steal = None  # (time, steal, total) of the previous /proc/stat reading

    # -- paths -----------------------------------------------------------------------------
    def resolve(self, run_id: str) -> str:
        """The directory of `run_id` (a path relative to the root), refusing anything outside
        the root or that is not a run: '..', absolute paths and symlinks out are refused."""
        if not run_id or "\x00" in run_id or run_id.startswith(("/", "\\")):
            raise RunError(f"no run {run_id!r}")
        parts = run_id.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise RunError(f"no run {run_id!r}", 400)
        path = os.path.realpath(os.path.join(self.root, *parts))
        if os.path.commonpath([path, self.root]) != self.root or path == self.root:
            raise RunError(f"{run_id!r} is outside the runs directory", 403)
        if not os.path.isdir(path) or _kind(path) is None:
            raise RunError(f"no run {run_id!r} under {self.root}")
        return path

    def _id(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    # -- the list --------------------------------------------------------------------------
    def list(self) -> dict:
        runs, errors = [], []
        for path in self._walk():
            try:
                runs.append(self.summary(path))
            except (RunError, OSError, ValueError, KeyError, TypeError) as e:
                errors.append({"id": self._id(path), "error": str(e)})
        runs.sort(key=lambda r: -r["started"])
        return {"root": self.root, "runs": runs, "errors": errors, "steal": self.steal()}

    def _walk(self):
        """Run directories under the root; an SPSA run's closing SPRT belongs to its page."""
        stack = [(self.root, 0)]
        while stack:
            path, depth = stack.pop()
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                    continue
                kind = _kind(entry.path)
                if kind is not None:
                    yield entry.path
                    if kind != "spsa":  # its sprt/ is shown on the SPSA page
                        continue
                elif depth + 1 < MAX_DEPTH:
                    stack.append((entry.path, depth + 1))

    def summary(self, path: str) -> dict:
        kind = _kind(path)
        base = {"id": self._id(path), "kind": kind, "name": os.path.basename(path),
                "updated": _mtime(path, _WRITTEN)}
        if kind == "tuning":
            cfg = _json(os.path.join(path, "run.json"))
            state = _json(os.path.join(path, "state.json"))
            passes = _csv_rows(os.path.join(path, "passes.csv"))
            base.update(
                started=os.path.getmtime(os.path.join(path, "run.json")),
                state=_state(path, bool(state.get("done")) or
                             state.get("pass", 0) >= cfg.get("max_passes", math.inf)),
                engines=[], limits=cfg.get("method", "?"),
                progress=f"pass {state.get('pass', 0)} of at most {cfg.get('max_passes', '?')}",
                games=None, resume=f"wasp-tune run -dir {path} --resume")
            if passes:
                base["detail"] = f"validation E {float(passes[-1]['e_valid']):.6f}"
            return base
        con = _connect(path)
        try:
            cfg = _meta(con, "config") or {}
            games = con.execute("SELECT COUNT(*), MIN(start_time) FROM games").fetchone()
            spsa = _meta(con, SPSA_META) if kind == "spsa" else None
            decision = _meta(con, "sprt_decision")
        finally:
            con.close()
        engines = [e.get("name", "?") for e in cfg.get("engines", [])]
        limits = _limits(cfg["engines"][0]) if cfg.get("engines") else "?"
        started = games[1] or os.path.getmtime(os.path.join(path, DB_NAME))
        base.update(engines=engines, limits=limits, games=games[0], started=started)
        if kind == "spsa":
            done = len(_csv_rows(os.path.join(path, "params.csv")))
            n = spsa.get("iterations", 0) if spsa else 0
            sprt_dir = os.path.join(path, "sprt")
            sprt_done = True
            if spsa and spsa.get("then_sprt"):
                sprt_done = False
                if os.path.isfile(os.path.join(sprt_dir, DB_NAME)):
                    con = _connect(sprt_dir)
                    try:
                        sprt_done = _meta(con, "sprt_decision") is not None
                    finally:
                        con.close()
            base.update(state=_state(path, done >= n and sprt_done),
                        progress=f"iteration {done} of {n}",
                        resume=f"wasp-tune spsa -resume {path}")
            return base
        total = _total_games(cfg)
        base.update(state=_state(path, games[0] >= total or decision is not None),
                    progress=f"{games[0]} of {total} games", total=total,
                    resume=f"wasp-match -resume {path}")
        return base

    # -- pages -----------------------------------------------------------------------------
    def detail(self, run_id: str) -> dict:
        path = self.resolve(run_id)
        out = self.summary(path)
        kind = out["kind"]
        if kind == "match":
            out.update(self._match(path))
        elif kind == "spsa":
            out.update(_spsa(path))
            sprt = os.path.join(path, "sprt")
            if os.path.isfile(os.path.join(sprt, DB_NAME)):
                out["sprt"] = self._match(sprt)
                out["sprt"]["id"] = self._id(sprt)
        else:
            out.update(_tuning(path))
        out["steal"] = self.steal()
        return out

    def _match_cache(self, path: str) -> _MatchCache:
        with self._lock:
            cache = self._cache.get(path)
            if cache is None:
                cache = self._cache[path] = _MatchCache(path)
        return cache

    def _match(self, path: str) -> dict:
        return self._match_cache(path).view()

    def games(self, run_id: str, query: dict) -> dict:
        """A page of the games table, newest first, filtered by engine, result, termination."""
        path = self.resolve(run_id)
        if run_id.endswith("/sprt") or _kind(path) == "spsa":
            sprt = os.path.join(path, "sprt") if _kind(path) == "spsa" else path
            if not os.path.isfile(os.path.join(sprt, DB_NAME)):
                raise RunError(f"{run_id!r} has no games table")
            path = sprt
        return self._match_cache(path).table(query)

    def game(self, run_id: str, game_id: str) -> dict:
        path = self.resolve(run_id)
        if _kind(path) == "spsa" and os.path.isfile(os.path.join(path, "sprt", DB_NAME)):
            path = os.path.join(path, "sprt")
        try:
            gid = int(game_id)
        except ValueError:
            raise RunError(f"bad game number {game_id!r}", 400) from None
        con = _connect(path)
        try:
            row = con.execute(f"SELECT {', '.join(GAME_COLUMNS)} FROM games WHERE id=?",
                              (gid,)).fetchone()
        finally:
            con.close()
        if row is None:
            raise RunError(f"no game {gid} in {run_id!r}")
        return _replay(dict(zip(GAME_COLUMNS, row, strict=True)))

    def steal(self) -> float | None:
        """CPU share (%) the hypervisor took from this host since the previous request."""
        from testing.tournament import host_steal

        now = host_steal()
        if now is None:
            return None
        with self._lock:
            prev, self._steal = self._steal, now
        if prev is None or now[1] <= prev[1]:
            return None
        return round(100.0 * (now[0] - prev[0]) / (now[1] - prev[1]), 2)


# -- matches ------------------------------------------------------------------------------


def _moves_stats(pgn: str, white_first: bool):
    """(white's, black's) per-move (depth, seconds) from the runner's ``{score/depth time}``
    comments; book moves ("book") are skipped."""
    stats = ([], [])
    white = white_first
    for text in _COMMENT.findall(pgn.split("\n\n", 1)[-1]):
        m = _SCORE.match(text.strip())
        if m or text.strip().startswith("book"):
            if m:
                stats[0 if white else 1].append((int(m.group(2)), float(m.group(3))))
            white = not white
    return stats


def _white_first(pgn: str) -> bool:
    m = re.search(r'\[FEN "[^"]*? ([wb]) ', pgn)
    return m is None or m.group(1) == "w"


class _MatchCache:
    """A match run's games, read incrementally (games never change once stored)."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.rows: list[dict] = []
        self.last_id = 0
        self.cfg: dict = {}
        self.per_engine: dict[str, dict] = {}
        self.tally = None  # testing.enginestats.EngineTally, for stores with move_stats
        self._view = None
        self._view_key = None

    def _update(self) -> None:
        con = _connect(self.path)
        try:
            if not self.cfg:
                self.cfg = _meta(con, "config") or {}
            self.decision = _meta(con, "sprt_decision")
            have = {r[1] for r in con.execute("PRAGMA table_info(games)")}
            stats = "move_stats" if "move_stats" in have else "''"
            cols = [c for c in GAME_COLUMNS if c != "pgn"]
            new = con.execute(f"SELECT {', '.join(cols)}, pgn, {stats} FROM games "
                              "WHERE id > ? ORDER BY id", (self.last_id,)).fetchall()
        finally:
            con.close()
        for values in new:
            row = dict(zip([*cols, "pgn", "move_stats"], values, strict=True))
            pgn, moves = row.pop("pgn"), row.pop("move_stats")
            self._count(row, pgn)
            if moves:  # the runner's own per-move figures (nodes, seldepth, clock left)
                from testing.enginestats import EngineTally

                if self.tally is None:
                    self.tally = EngineTally()
                self.tally.add({**row, "move_stats": moves})
            self.rows.append(row)
            self.last_id = row["id"]

    def _count(self, row: dict, pgn: str) -> None:
        w_stats, b_stats = _moves_stats(pgn, _white_first(pgn))
        loser = {"1-0": row["black"], "0-1": row["white"]}.get(row["result"])
        for name, moves in ((row["white"], w_stats), (row["black"], b_stats)):
            e = self.per_engine.setdefault(name, {
                "games": 0, "depths": [], "times": [], "time_losses": 0, "crashes": 0,
                "illegal_moves": 0, "stalls": 0})
            e["games"] += 1
            e["depths"].extend(d for d, _ in moves)
            e["times"].extend(t for _, t in moves)
        if loser is not None and row["termination"] in FAILURES:
            self.per_engine[loser][FAILURES[row["termination"]]] += 1

    def view(self) -> dict:
        with self.lock:
            self._update()
            key = (self.last_id, json.dumps(self.decision))
            if self._view_key != key:
                self._view = self._build()
                self._view_key = key
            return self._view

    def _build(self) -> dict:
        from testing.tally import Encounter

        cfg = self.cfg
        names = [e["name"] for e in cfg.get("engines", [])]
        repeat = bool(cfg.get("repeat"))
        pair_games: dict[int, int] = {}
        for r in self.rows:
            pair_games[r["pair_id"]] = pair_games.get(r["pair_id"], 0) + 1
        encounters: dict[tuple[str, str], Encounter] = {}
        paths: dict[tuple[str, str], list] = {}
        sprt_cfg = cfg.get("sprt")
        expected = 2 if repeat else 1
        for r in self.rows:
            key = (r["engine1"], r["engine2"])
            enc = encounters.setdefault(key, Encounter(*key, expected))
            score = _score(r["result"], r["white"] == r["engine1"])
            if enc.add(r["pair_id"], score, expected) and sprt_cfg and repeat:
                paths.setdefault(key, []).append(enc.games)
        out_enc = [_encounter(enc, sprt_cfg, paths.get(key, []), self.rows)
                   for key, enc in encounters.items()]
        engines = []  # each engine's results and statistics
        for name in names or sorted(self.per_engine):
            e = self.per_engine.get(name)
            wins = sum(1 for r in self.rows if _won(r, name))
            losses = sum(1 for r in self.rows if _won(r, name, lost=True))
            games = e["games"] if e else 0
            row = {"name": name, "games": games, "wins": wins, "losses": losses,
                   "draws": games - wins - losses}
            if games:
                from testing import sprt

                row["score"] = (wins + 0.5 * row["draws"]) / games
                try:
                    elo, err, _ = sprt.elo([losses, row["draws"], wins])
                except (ValueError, ZeroDivisionError):
                    elo = err = math.nan
                row["elo"], row["elo_err"] = _num(elo), _num(err)
            if e:
                d, t = e["depths"], sorted(e["times"])
                row.update(mean_depth=_num(sum(d) / len(d)) if d else None,
                           time_median=_pct(t, 0.5), time_p95=_pct(t, 0.95),
                           moves=len(t), time_losses=e["time_losses"], crashes=e["crashes"],
                           illegal_moves=e["illegal_moves"], stalls=e["stalls"])
            engines.append(row)
        recorded = {r["engine"]: r for r in self.tally.rows()} if self.tally else {}
        for row in engines:
            r = recorded.get(row["name"])
            if r:
                row.update(mean_depth=_num(r["depth"]), seldepth=_num(r["seldepth"]),
                           nps=_num(r["nps"]), time_median=_num(r["time_median"]),
                           time_p95=_num(r["time_p95"]), clock_left=_num(r["left"]))
        terminations: dict[str, int] = {}
        for r in self.rows:
            terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
        summary = _json(os.path.join(self.path, "summary.json"), {})
        return {
            "config": {"tournament": cfg.get("tournament"), "rounds": cfg.get("rounds"),
                       "games": cfg.get("games"), "repeat": repeat,
                       "concurrency": cfg.get("concurrency"),
                       "openings": (cfg.get("openings") or {}).get("file"),
                       "sprt": sprt_cfg,
                       "engines": [{"name": e.get("name"), "cmd": " ".join(
                           [e.get("cmd") or "", *(e.get("args") or [])]).strip(),
                                    "options": e.get("options") or {}, "limits": _limits(e)}
                                   for e in cfg.get("engines", [])]},
            "games_stored": len(self.rows), "total": _total_games(cfg),
            "encounters": out_enc, "ratings": engines, "terminations": terminations,
            "decision": self.decision,
            "last_session": {k: summary.get(k) for k in (
                "wall_s", "cpu_steal_pct", "time_losses_this_session", "games_this_session")},
            "version": f"{self.last_id}:{json.dumps(self.decision)}",
        }

    def table(self, query: dict) -> dict:
        with self.lock:
            self._update()
            rows = list(self.rows)

        def arg(name):
            return (query.get(name) or [""])[0]

        engine, result, term = arg("engine"), arg("result"), arg("termination")
        try:
            offset = max(0, int(arg("offset") or 0))
            limit = min(GAMES_PAGE, max(1, int(arg("limit") or 50)))
        except ValueError:
            raise RunError("offset and limit must be whole numbers", 400) from None
        names = {e.get("name") for e in self.cfg.get("engines", [])}
        names |= {r["white"] for r in rows} | {r["black"] for r in rows}
        if engine and engine not in names:
            raise RunError(f"no engine {engine!r} in this run (its engines: "
                           f"{', '.join(sorted(n for n in names if n))})", 400)
        ends = {r["termination"] for r in rows}
        if term and term not in ends:
            raise RunError(f"no game of this run ended by {term!r} (its endings: "
                           f"{', '.join(sorted(ends)) or 'none yet'})", 400)
        if engine:
            rows = [r for r in rows if engine in (r["white"], r["black"])]
        if result:
            if result in ("win", "loss") and engine:
                rows = [r for r in rows if _won(r, engine, lost=result == "loss")]
            elif result == "draw":
                rows = [r for r in rows if r["result"] == "1/2-1/2"]
            elif result in ("1-0", "0-1", "1/2-1/2"):
                rows = [r for r in rows if r["result"] == result]
            else:
                raise RunError(f"unknown result filter {result!r} (1-0, 0-1, 1/2-1/2, draw; "
                               "win or loss with an engine)", 400)
        if term:
            rows = [r for r in rows if r["termination"] == term]
        rows.reverse()
        keep = ("id", "round", "white", "black", "result", "termination", "reason", "plies",
                "time_loss", "end_time")
        return {"count": len(rows), "offset": offset,
                "games": [{k: r[k] for k in keep} for r in rows[offset:offset + limit]]}


def _score(result: str, first_is_white: bool) -> float:
    s = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    return s if first_is_white else 1.0 - s


def _won(row: dict, name: str, lost: bool = False) -> bool:
    winner = {"1-0": row["white"], "0-1": row["black"]}.get(row["result"])
    loser = {"1-0": row["black"], "0-1": row["white"]}.get(row["result"])
    return (loser if lost else winner) == name


def _num(x):
    return None if x is None or not math.isfinite(x) else round(float(x), 3)


def _pct(xs: list, q: float):
    if not xs:
        return None
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 4)


def _encounter(enc, sprt_cfg, pair_ends: list[int], rows: list[dict]) -> dict:
    """W/D/L, Elo, nElo, LOS, pentanomial and (SPRT runs) the LLR path of one encounter."""
    from testing import sprt

    out = {"engine1": enc.e1, "engine2": enc.e2, "wins": enc.wins, "draws": enc.draws,
           "losses": enc.losses, "games": enc.games}
    counts = enc.sprt_counts()
    if counts is None:
        return out
    if enc.pair_scores:
        out["pentanomial"] = counts
    try:
        elo, err, los = sprt.elo(counts)
        nelo, nerr = sprt.nelo(counts)
    except (ValueError, ZeroDivisionError):
        elo = err = los = nelo = nerr = math.nan
    out.update(elo=_num(elo), elo_err=_num(err), los=_num(los), nelo=_num(nelo),
               nelo_err=_num(nerr), draw_ratio=_num(enc.draws / enc.games))
    if sprt_cfg:
        e0, e1 = sprt_cfg["elo0"], sprt_cfg["elo1"]
        alpha, beta = sprt_cfg.get("alpha", 0.05), sprt_cfg.get("beta", 0.05)
        model = sprt_cfg.get("model", "normalized")
        lo, hi = sprt.bounds(alpha, beta)
        out["sprt"] = {"elo0": e0, "elo1": e1, "lower": lo, "upper": hi,
                       "llr": _num(sprt.llr(counts, e0, e1, model))}
        # the LLR after each pair, sampled: the pentanomial of the first k pairs
        scores = enc.pair_scores
        step = max(1, len(scores) // PATH_POINTS)
        points = []
        for k in list(range(step, len(scores), step)) + [len(scores)]:
            if k <= 0:
                continue
            try:
                value = sprt.llr(sprt.pentanomial_from_pairs(scores[:k]), e0, e1, model)
            except (ValueError, ZeroDivisionError):
                continue
            points.append([pair_ends[k - 1] if k - 1 < len(pair_ends) else 2 * k,
                           _num(value)])
        out["sprt"]["path"] = points
    return out


def _replay(row: dict) -> dict:
    """One game move by move: SAN, FEN after it, and the mover's score made White's."""
    import io

    import chess.pgn

    game = chess.pgn.read_game(io.StringIO(row["pgn"]))
    if game is None:
        raise RunError(f"game {row['id']}: unreadable PGN", 500)
    board = game.board()
    start = board.fen()
    moves = []
    for node in game.mainline():
        mover_white = board.turn == chess.WHITE
        san = board.san(node.move)
        board.push(node.move)
        item = {"san": san, "uci": node.move.uci(), "fen": board.fen(),
                "white": mover_white, "comment": node.comment}
        m = _SCORE.match(node.comment.strip())
        if m:
            text = m.group(1)
            if "M" in text:
                mate = int(text.replace("+", "").replace("M", ""))
                cp = 100.0 * (30 if mate > 0 else -30)
            else:
                cp = float(text) * 100.0
            item.update(score=cp if mover_white else -cp, depth=int(m.group(2)),
                        seconds=float(m.group(3)))
        elif node.comment.startswith("book"):
            item["book"] = True
        moves.append(item)
    keep = ("id", "white", "black", "result", "termination", "reason", "plies", "round")
    return {**{k: row[k] for k in keep}, "start_fen": start, "moves": moves,
            "pgn": row["pgn"]}


# -- SPSA and tuning runs --------------------------------------------------------------------


def _spsa(path: str) -> dict:
    con = _connect(path)
    try:
        settings = _meta(con, SPSA_META) or {}
        times = con.execute("SELECT MIN(start_time), MAX(end_time), COUNT(*) FROM games")\
            .fetchone()
        recent = con.execute("SELECT end_time FROM games ORDER BY end_time DESC LIMIT 41")\
            .fetchall()
    finally:
        con.close()
    from tuner.spsa import Schedule, parse_params

    params = parse_params(settings.get("params_text", ""), settings.get("params_source", "?"))
    n = settings.get("iterations", 1)
    schedule = Schedule(n, settings.get("alpha", 0.602), settings.get("gamma", 0.101),
                        settings.get("a_ratio", 0.1))
    rows = _csv_rows(os.path.join(path, "params.csv"))
    step = max(1, len(rows) // PATH_POINTS)
    sampled = rows[step - 1::step] if rows else []
    if rows and sampled[-1] is not rows[-1]:
        sampled.append(rows[-1])
    ks = sorted({1, n, *[max(1, round(n * f / 20)) for f in range(1, 20)]})
    out_params = []
    for p in params:
        path_points = [[0, p.start]] + [[int(r["iteration"]), _num(float(r[p.name]))]
                                        for r in sampled if r.get(p.name) not in (None, "")]
        out_params.append({
            "name": p.name, "type": "float" if p.is_float else "int", "start": p.start,
            "min": p.min, "max": p.max, "c_end": p.c_end, "r_end": p.r_end,
            "value": _num(float(rows[-1][p.name])) if rows else p.start,
            "path": path_points,
            "c_k": [[k, _num(schedule.c_k(p, k))] for k in ks],
            "a_k": [[k, _num(schedule.a_k(p, k))] for k in ks]})
    wall = (times[1] - times[0]) if times[2] else 0.0
    rate_recent = None
    if len(recent) > 1 and recent[0][0] > recent[-1][0]:
        rate_recent = (len(recent) - 1) / (recent[0][0] - recent[-1][0])
    score = [[int(r["iteration"]), _num(float(r["score"]))] for r in sampled]
    return {"iterations": n, "done": len(rows), "pairs": settings.get("pairs"),
            "schedule": {"alpha": schedule.alpha, "gamma": schedule.gamma, "A": schedule.A},
            "params": out_params, "score": score,
            "games_per_s": _num(times[2] / wall) if wall > 0 else None,
            "games_per_s_recent": _num(rate_recent) if rate_recent else None,
            "then_sprt": settings.get("then_sprt"),
            "version": f"{len(rows)}:{times[2]}"}


def _tuning(path: str) -> dict:
    from wasp import params as P

    cfg = _json(os.path.join(path, "run.json"))
    state = _json(os.path.join(path, "state.json"))
    passes = _csv_rows(os.path.join(path, "passes.csv"))
    history = _csv_rows(os.path.join(path, "history.csv"))
    import numpy as np

    before = np.asarray(state.get("W0", state.get("W", [])), dtype=np.float64)
    best_file = os.path.join(path, "params.txt")
    try:
        after = P.load(best_file).astype(np.float64) if os.path.exists(best_file) \
            else np.asarray(state["W"], dtype=np.float64)
    except (OSError, ValueError) as e:
        raise RunError(f"cannot read {best_file}: {e}", 500) from None
    out = {"method": cfg.get("method"), "k": cfg.get("k"), "data": cfg.get("data"),
           "pass": state.get("pass"), "done": state.get("done"),
           "passes": [{k: _float(v) for k, v in r.items()} for r in passes],
           "steps": len(history), "version": f"{len(passes)}:{len(history)}"}
    if len(before) == len(after) == P.N_WEIGHTS:
        diff = after - before
        top = np.argsort(-np.abs(diff), kind="stable")[:20]
        out["moved"] = [{"weight": _label(P, int(i)), "before": float(before[i]),
                         "after": float(after[i])} for i in top if diff[i] != 0]
        out["changed"] = int(np.count_nonzero(diff))
        psts = []
        for piece in ("pawn", "knight", "bishop", "rook", "queen", "king"):
            for phase in ("mg", "eg"):
                try:
                    o = P.weight_index("pst_" + piece, 0, phase)
                except (KeyError, ValueError):
                    continue
                psts.append({"piece": piece, "phase": phase,
                             "after": [float(x) for x in after[o:o + 64]],
                             "change": [float(x) for x in (after - before)[o:o + 64]]})
        out["psts"] = psts
    return out


def _label(P, i: int) -> str:
    p = P.PARAMS[P.PARAM_OF[i]]
    name = p.name + ((".eg" if P.PHASE_OF[i] == 1 else ".mg") if p.phased else "")
    return name if p.size == 1 else f"{name}[{int(P.ELEMENT_OF[i])}]"


def _float(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return v
    return x if math.isfinite(x) else None


def _json(path: str, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        if default is not None:
            return default
        raise RunError(f"{path} is missing", 500) from None
    except (OSError, ValueError) as e:
        if default is not None:
            return default
        raise RunError(f"cannot read {path}: {e}", 500) from None


def _csv_rows(path: str) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return [r for r in csv.DictReader(f) if r]
    except FileNotFoundError:
        return []
