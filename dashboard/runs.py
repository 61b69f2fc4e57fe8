"""The dashboard's reading side: the runs under a directory and what each page shows.

`wasp-match`, `wasp-tune spsa` and `wasp-tune run` each write a run directory and mark its kind
(`testing.rundir`); this module finds them under the dashboard's root and reads each through
the reader its tool ships (`readers`), turning what they say into JSON for the pages. It never
writes, and a run's state comes from its lock (`testing.runlock`). Games are immutable once
stored, so each run's games are cached and only new rows are read on the next request.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time

from testing.rundir import marked_kind
from testing.runlock import LOCK_NAME, is_running

MAX_DEPTH = 4  # run directories are looked for this many levels under the root
RECENT_SECONDS = 120  # a run without a lock (older versions) written this recently is running
PATH_POINTS = 400  # at most this many points in a plotted path
GAMES_PAGE = 200  # at most this many rows of the games table a request
ROW_COLUMNS = ("pair_id", "game_in_pair", "round", "engine1", "engine2", "white", "black",
               "result", "termination", "reason", "plies", "time_loss", "start_time",
               "end_time", "opening_fen", "move_stats")  # the store's columns a row keeps
READ_ERRORS = (OSError, ValueError, KeyError, TypeError, sqlite3.Error)


class RunError(Exception):
    """A request for a run that does not exist or cannot be read; status is the HTTP code."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


# -- finding runs --------------------------------------------------------------------------


def readers() -> dict:
    """Kind -> the reader its tool ships, in the order that tells unmarked (older) runs apart."""
    from testing.store import StoreReader
    from tuner.spsa import SpsaReader
    from tuner.texel import TuningReader

    return {r.KIND: r for r in (TuningReader, SpsaReader, StoreReader)}


def _kind(path: str) -> str | None:
    """The kind its writer marked the run directory with (or, for a run written before the
    mark, the kind whose reader recognises it); None for anything else."""
    kinds = readers()
    kind = marked_kind(path)
    if kind is not None:
        return kind if kind in kinds else None
    return next((k for k, reader in kinds.items() if reader.is_run(path)), None)


def _reader(path: str, kind: str):
    """The reader of the run in `path`; RunError when it cannot be read."""
    try:
        return readers()[kind](path)
    except READ_ERRORS as e:
        raise RunError(f"cannot read {path}: {e}", 500) from None


def _state(path: str, complete: bool, updated: float) -> str:
    if is_running(path):
        return "running"
    if complete:
        return "finished"
    if time.time() - updated < RECENT_SECONDS and \
            not os.path.exists(os.path.join(path, LOCK_NAME)):
        return "running"  # a run by a version without the lock, written moments ago
    return "stopped"


def _limits(engine: dict) -> str:
    for key, fmt in (("tc", "{}"), ("st", "st={}"), ("nodes", "nodes={}"),
                     ("depth", "depth={}")):
        if engine.get(key):
            return fmt.format(engine[key])
    return "?"


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
        reader = _reader(path, kind)
        base = {"id": self._id(path), "kind": kind, "name": os.path.basename(path)}
        try:
            base.update(_SUMMARIES[kind](path, reader))
        except READ_ERRORS as e:
            raise RunError(f"cannot read {path}: {e}", 500) from None
        finally:
            if hasattr(reader, "close"):
                reader.close()
        return base

    # -- pages -----------------------------------------------------------------------------
    def detail(self, run_id: str) -> dict:
        path = self.resolve(run_id)
        out = self.summary(path)
        kind = out["kind"]
        if kind == "match":
            out.update(self._match(path))
        elif kind == "spsa":
            reader = _reader(path, kind)
            out.update(_guard(path, _spsa, reader))
            sprt = reader.sprt_dir()
            if sprt is not None:
                out["sprt"] = self._match(sprt)
                out["sprt"]["id"] = self._id(sprt)
        else:
            out.update(_guard(path, _tuning, _reader(path, kind)))
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

    def _games_of(self, run_id: str) -> str:
        """The match store a run's games table shows: its own, or an SPSA run's SPRT."""
        path = self.resolve(run_id)
        if _kind(path) == "spsa":
            path = _reader(path, "spsa").sprt_dir()
            if path is None:
                raise RunError(f"{run_id!r} has no games table")
        return path

    def games(self, run_id: str, query: dict) -> dict:
        """A page of the games table, newest first, filtered by engine, result, termination."""
        return self._match_cache(self._games_of(run_id)).table(query)

    def game(self, run_id: str, game_id: str) -> dict:
        path = self._games_of(run_id)
        try:
            gid = int(game_id)
        except ValueError:
            raise RunError(f"bad game number {game_id!r}", 400) from None
        with _reader(path, "match") as store:
            row = _guard(path, store.game_by_id, gid, (*ROW_COLUMNS, "pgn"))
        if row is None:
            raise RunError(f"no game {gid} in {run_id!r}")
        return _replay(row)

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


def _guard(path: str, read, *args):
    """read(*args), a run's file that cannot be read being a RunError."""
    try:
        return read(*args)
    except READ_ERRORS as e:
        raise RunError(f"cannot read {path}: {e}", 500) from None


def _match_summary(path: str, store) -> dict:
    cfg = store.meta("config") or {}
    games, total = store.span()[0], store.planned_games()
    updated = store.updated()
    return {"engines": [e.get("name", "?") for e in cfg.get("engines", [])],
            "limits": _limits(cfg["engines"][0]) if cfg.get("engines") else "?",
            "games": games, "total": total, "started": store.started(), "updated": updated,
            "state": _state(path, store.finished(), updated),
            "progress": f"{games} of {total} games", "resume": store.resume_command()}


def _spsa_summary(path: str, spsa) -> dict:
    with spsa.store() as store:
        out = _match_summary(path, store)
    settings = spsa.settings()
    del out["total"]
    updated = spsa.updated()
    out.update(updated=updated, state=_state(path, spsa.finished(), updated),
               progress=f"iteration {len(spsa.rows())} of {settings.iterations}",
               resume=spsa.resume_command())
    return out


def _tuning_summary(path: str, tuning) -> dict:
    cfg, state, passes = tuning.config(), tuning.state(), tuning.passes()
    updated = tuning.updated()
    out = {"started": tuning.started(), "updated": updated,
           "state": _state(path, tuning.finished(), updated), "engines": [],
           "limits": cfg.get("method", "?"), "games": None,
           "progress": f"pass {state.get('pass', 0)} of at most {cfg.get('max_passes', '?')}",
           "resume": tuning.resume_command()}
    if passes:
        out["detail"] = f"validation E {float(passes[-1]['e_valid']):.6f}"
    return out


_SUMMARIES = {"match": _match_summary, "spsa": _spsa_summary, "tuning": _tuning_summary}


# -- matches ------------------------------------------------------------------------------


class _MatchCache:
    """A match run's games, read incrementally (games never change once stored)."""

    def __init__(self, path: str):
        from testing.enginestats import EngineTally

        self.path = path
        self.lock = threading.Lock()
        self.rows: list[dict] = []
        self.last_id = 0
        self.cfg: dict = {}
        self.total = 0
        self.decision = None
        self.session: dict = {}
        self.tally = EngineTally()  # each engine's games, failures and per-move figures
        self._view = None
        self._view_key = None

    def _update(self) -> None:
        from testing.store import StoreReader

        try:
            with StoreReader(self.path) as store:
                if not self.cfg:
                    self.cfg = store.meta("config") or {}
                    self.total = store.planned_games()
                self.decision = store.meta("sprt_decision")
                self.session = store.last_session()
                new = store.games_after(self.last_id, ROW_COLUMNS)
        except READ_ERRORS as e:
            raise RunError(f"cannot read {self.path}: {e}", 500) from None
        for row in new:
            self.tally.add(row)
            row.pop("move_stats")
            self.rows.append(row)
            self.last_id = row["id"]

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
        recorded = {r["engine"]: r for r in self.tally.rows()}
        for name in names or sorted(recorded):
            r = recorded.get(name)
            wins = sum(1 for g in self.rows if _won(g, name))
            losses = sum(1 for g in self.rows if _won(g, name, lost=True))
            games = r["games"] if r else 0
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
            if r:
                row.update(mean_depth=_num(r["depth"]), seldepth=_num(r["seldepth"]),
                           nps=_num(r["nps"]), time_median=_num(r["time_median"]),
                           time_p95=_num(r["time_p95"]), clock_left=_num(r["left"]),
                           moves=r["moves"], time_losses=r["time_losses"],
                           crashes=r["crashes"], illegal_moves=r["illegal_moves"],
                           stalls=r["stalls"])
            engines.append(row)
        terminations: dict[str, int] = {}
        for r in self.rows:
            terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
        summary = self.session
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
            "games_stored": len(self.rows), "total": self.total,
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

    from testing.pgn import read_move_comment

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
        said = read_move_comment(node.comment)
        if "depth" in said:
            cp = 100.0 * (30 if said["mate"] > 0 else -30) if "mate" in said \
                else float(said["score"])
            item.update(score=cp if mover_white else -cp, depth=said["depth"],
                        seconds=said["seconds"])
        elif said.get("book"):
            item["book"] = True
        moves.append(item)
    keep = ("id", "white", "black", "result", "termination", "reason", "plies", "round")
    return {**{k: row[k] for k in keep}, "start_fen": start, "moves": moves,
            "pgn": row["pgn"]}


# -- SPSA and tuning runs --------------------------------------------------------------------


def _spsa(spsa) -> dict:
    from tuner.spsa import Schedule

    settings = spsa.settings()
    with spsa.store() as store:
        count, first, last = store.span()
        recent = store.recent_ends(41)
    params = settings.params()
    n = settings.iterations
    schedule = Schedule(n, settings.alpha, settings.gamma, settings.a_ratio)
    rows = spsa.rows()
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
    wall = (last - first) if count else 0.0
    rate_recent = None
    if len(recent) > 1 and recent[0] > recent[-1]:
        rate_recent = (len(recent) - 1) / (recent[0] - recent[-1])
    score = [[int(r["iteration"]), _num(float(r["score"]))] for r in sampled]
    return {"iterations": n, "done": len(rows), "pairs": settings.pairs,
            "schedule": {"alpha": schedule.alpha, "gamma": schedule.gamma, "A": schedule.A},
            "params": out_params, "score": score,
            "games_per_s": _num(count / wall) if wall > 0 else None,
            "games_per_s_recent": _num(rate_recent) if rate_recent else None,
            "then_sprt": settings.then_sprt,
            "version": f"{len(rows)}:{count}"}


def _tuning(tuning) -> dict:
    import numpy as np

    from wasp import params as P

    cfg, state, passes = tuning.config(), tuning.state(), tuning.passes()
    before, after = tuning.start_weights(), tuning.best_weights()
    out = {"method": cfg.get("method"), "k": cfg.get("k"), "data": cfg.get("data"),
           "pass": state.get("pass"), "done": state.get("done"),
           "passes": [{k: _float(v) for k, v in r.items()} for r in passes],
           "steps": tuning.steps(), "version": f"{len(passes)}:{tuning.steps()}"}
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


