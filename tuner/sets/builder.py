"""Labelled position sets from games: quiet positions, de-duplicated, capped, split by game.

The recipe (`build`), step by step, for every game of every PGN file:

1. A game that python-chess cannot read cleanly (illegal or unparsable move, bad FEN tag) is
   reported as ``file:line: game N: reason`` and skipped; a game without a result (``*``) has no
   label and is skipped (counted).
2. Every position after a move is a candidate unless: it is within the first `skip_plies` plies
   or was reached by a book move (the match runner comments those ``{book}``); the side to move
   is in check; or the move's engine comment gives a mate score (``{+M5/12 0.1s}``).
3. Quiet: the tuner's quiescence search (`tuner.texel.Scorer`, the same kernel the tuner
   uses) with the evaluation parameters `params` returns the static evaluation itself, as
   zurichess's quiet-labeled set was made.
   With `tb` (Syzygy directories), the quiet positions the tables hold are labelled by them
   (`tb_mode` relabel) or dropped where the game's result contradicts them (`tb_mode` drop);
   see `tuner.sets.tablebase`.
4. De-duplicated by the engine's Zobrist key (the first occurrence is kept), then at most
   `max_per_game` positions per game (a seeded random choice).
5. Split by game: a seeded fraction `valid` of the games goes to the validation set, so no game
   has positions on both sides.

Each position is labelled with its game's result (white's view: 1, 0.5, 0). Output: EPD with
``c9 "1-0";`` (zurichess form) or ``[1.0]`` results, or parquet (needs pyarrow).
"""

import io
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field

import numpy as np
from numba import njit

from tuner.texel import ROW_WIDTH, has_mate_score, pack_board, row_to_fen, unpack_row
from wasp.atomicfile import replacing, write_text
from wasp.types import KEYS

FORMATS = ("c9", "bracket", "parquet")
RESULT_TEXT = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}
_RESULT_VALUE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_RE_SCORE = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)/\d+")
# game phase weights by piece code (wasp.types order PNBRQK pnbrqk, 12 empty): 24 = all pieces
_PHASE_WEIGHT = np.array([0, 1, 1, 2, 4, 0, 0, 1, 1, 2, 4, 0, 0, 0, 0, 0], dtype=np.int64)
MAX_PHASE = 24


@dataclass
class BuildConfig:
    """How positions are chosen (see the module docstring for the order of the steps)."""

    skip_plies: int = 8
    skip_book: bool = True
    quiet: bool = True
    dedupe: bool = True
    max_per_game: int = 0  # 0: no cap
    valid: float = 0.1  # fraction of games
    seed: int = 1
    params: str = ""  # parameter file for the quiet test (default: the built-in values)
    threads: int = 2
    tb: str = ""  # Syzygy directories (':'-separated): endgame labels from the tables
    tb_pieces: int = 0  # probe positions of at most this many pieces (0: the largest table)
    tb_mode: str = "relabel"  # relabel | drop (see tuner.sets.tablebase)


@dataclass
class DataSet:
    """Chosen positions: packed rows with their result, game, ply and engine score."""

    rows: np.ndarray  # uint8 [n, ROW_WIDTH]
    results: np.ndarray  # float64 [n], white's view
    game: np.ndarray  # int64 [n], index into `games`
    ply: np.ndarray  # int64 [n], plies played before the position
    score: np.ndarray  # float64 [n], the engine's score in white's view (cp, nan when none)
    valid: np.ndarray  # bool [n], in the validation set
    games: list = field(default_factory=list)  # one dict per game read (file, number, line, ...)
    bad: list = field(default_factory=list)  # "file:line: game N: reason" of skipped games
    counts: dict = field(default_factory=dict)  # positions dropped at each step
    tablebase: dict = field(default_factory=dict)  # what the tables did (with BuildConfig.tb)

    def __len__(self):
        return len(self.results)

    def __repr__(self):
        return (f"DataSet({len(self)} positions: train {int(np.sum(~self.valid))}, valid "
                f"{int(np.sum(self.valid))}; {len(self.games)} games, {len(self.bad)} bad)")

    def fens(self, index=None):
        rows = self.rows if index is None else self.rows[index]
        return [" ".join(row_to_fen(r).split()[:4]) for r in rows]

    def phases(self) -> np.ndarray:
        return phases(self.rows)

    def summary(self) -> dict:
        """Counts a person or a program can read: positions, W/D/L, phases, drops, bad games."""
        out = {"positions": len(self), "train": int(np.sum(~self.valid)),
               "valid": int(np.sum(self.valid)),
               "games_read": len(self.games),
               "games_used": int(len(np.unique(self.game))),
               "games_bad": len(self.bad),
               "games_unfinished": int(sum(1 for g in self.games if g["result"] is None
                                           and not g["bad"])),
               "games_valid": int(len(np.unique(self.game[self.valid]))),
               "white_wins": int(np.sum(self.results == 1.0)),
               "draws": int(np.sum(self.results == 0.5)),
               "black_wins": int(np.sum(self.results == 0.0)),
               "phase_histogram": np.bincount(self.phases(), minlength=MAX_PHASE + 1).tolist(),
               "dropped": dict(self.counts),
               "bad_games": list(self.bad)}
        if self.tablebase:
            out["tablebase"] = dict(self.tablebase)
        return out


def summary_text(s: dict) -> str:
    """The summary as lines of text (a phase histogram in bars of 3 phase units)."""
    n = max(1, s["positions"])
    lines = [f"positions {s['positions']} (train {s['train']}, valid {s['valid']}) from "
             f"{s['games_used']} games ({s['games_valid']} in valid); games read "
             f"{s['games_read']}, bad {s['games_bad']}, unfinished {s['games_unfinished']}",
             f"results: white wins {s['white_wins']} ({100 * s['white_wins'] / n:.1f}%), draws "
             f"{s['draws']} ({100 * s['draws'] / n:.1f}%), black wins {s['black_wins']} "
             f"({100 * s['black_wins'] / n:.1f}%)",
             "dropped: " + ", ".join(f"{k} {v}" for k, v in s["dropped"].items()),
             *([f"tablebase ({s['tablebase']['mode']}): " + ", ".join(
                 f"{k} {v}" for k, v in s["tablebase"].items() if k != "mode")]
               if s.get("tablebase") else []),
             "phase (24 = all pieces, 0 = pawns and kings):"]
    h = s["phase_histogram"]
    bins = [(lo, min(lo + 2, MAX_PHASE)) for lo in range(0, MAX_PHASE + 1, 3)]
    top = max(1, max(sum(h[a:b + 1]) for a, b in bins))
    for a, b in bins:
        c = sum(h[a:b + 1])
        lines.append(f"  {a:2d}-{b:2d} {c:8d} {'#' * int(round(40 * c / top))}")
    for msg in s["bad_games"][:10]:
        lines.append(f"bad game skipped: {msg}")
    if len(s["bad_games"]) > 10:
        lines.append(f"... and {len(s['bad_games']) - 10} more bad games")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Kernels


@njit(cache=True, nogil=True)
def _keys_kernel(T, S, rows, keys):
    for j in range(rows.shape[0]):
        unpack_row(T, S, rows, np.int64(j), True)
        keys[j] = S.bb[KEYS]


def zobrist_keys(rows) -> np.ndarray:
    """The engine's Zobrist key (uint64) of each packed row."""
    from wasp.bitboards import tables
    from wasp.position import new_state

    rows = np.ascontiguousarray(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    keys = np.zeros(len(rows), dtype=np.uint64)
    if len(rows):
        _keys_kernel(tables(), new_state(), rows, keys)
    return keys


def phases(rows) -> np.ndarray:
    """Game phase 0..24 of each packed row (knight, bishop 1, rook 2, queen 4; capped at 24)."""
    rows = np.asarray(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    codes = np.concatenate([rows[:, :32] & 15, rows[:, :32] >> 4], axis=1)
    return np.minimum(_PHASE_WEIGHT[codes].sum(axis=1), MAX_PHASE).astype(np.int64)


# ---------------------------------------------------------------------------
# Reading games


class _Lines(io.TextIOBase):
    """A text handle counting lines, and the line of the first text read since `mark()`."""

    def __init__(self, handle):
        self.handle = handle
        self.lineno = 0
        self.first = None

    def mark(self):
        self.first = None

    def readline(self, *args):
        line = self.handle.readline(*args)
        if line:
            self.lineno += 1
            if self.first is None and line.strip():
                self.first = self.lineno
        return line


def comment_score(comment):
    """(centipawns from the mover's view or None, mate) of an engine comment ``+0.35/12 0.1s``."""
    if not comment:
        return None, False
    if has_mate_score(comment):
        return None, True
    m = _RE_SCORE.match(comment)
    if not m:
        return None, False
    return int(round(float(m.group(1)) * 100)), False


def _every(seconds, call):
    """`call(n)`, at most once every `seconds` (a progress line for a long read)."""
    last = [time.monotonic()]

    def maybe(n):
        now = time.monotonic()
        if now - last[0] >= seconds:
            last[0] = now
            call(n)
    return maybe


def read_pgn(path, skip_plies=8, skip_book=True, on_game=None):
    """Candidate positions of one PGN file (steps 1 and 2 of the module docstring).

    Returns (games, columns, counts): one dict per game (file, number, line, white, black,
    result, plies, bad), the candidates' columns (rows, results, game, ply, score) with game
    numbers local to the file, and the positions dropped by each rule. `on_game(number)`, if
    given, is called as each game is read (progress).
    """
    import logging

    import chess.pgn

    games, rows, results, gidx, plies, scores = [], [], [], [], [], []
    counts = {"opening": 0, "book": 0, "check": 0, "mate_score": 0}
    logger = logging.getLogger("chess.pgn")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # python-chess logs bad games; we report them ourselves
    with open(path, encoding="utf-8", errors="replace") as f, _restore(logger, level):
        handle = _Lines(f)
        number = 0
        while True:
            handle.mark()
            try:
                game = chess.pgn.read_game(handle)
            except (ValueError, KeyError, IndexError) as e:  # python-chess: a stray `)` is an
                # IndexError (text that is not PGN, such as a README)
                number += 1
                games.append(_game_info(path, number, handle.first or handle.lineno, None,
                                        f"unreadable game: {e}"))
                continue
            if game is None:
                break
            number += 1
            if on_game is not None:
                on_game(number)
            line = handle.first or handle.lineno
            tag = game.headers.get("Result", "*").strip()
            result = _RESULT_VALUE.get(tag)
            if game.errors:
                games.append(_game_info(path, number, line, game, str(game.errors[0])))
                continue
            if result is None and tag != "*":
                games.append(_game_info(path, number, line, game, f"bad Result tag {tag!r}"))
                continue
            info = _game_info(path, number, line, game, None)
            info["result"] = result
            games.append(info)
            if result is None:
                continue
            board = game.board()
            g = len(games) - 1
            ply = 0
            for node in game.mainline():
                mover_white = board.turn
                board.push(node.move)
                ply += 1
                comment = node.comment.strip()
                if ply <= skip_plies:
                    counts["opening"] += 1
                    continue
                if skip_book and comment.startswith("book"):
                    counts["book"] += 1
                    continue
                if board.is_check():
                    counts["check"] += 1
                    continue
                cp, mate = comment_score(comment)
                if mate:
                    counts["mate_score"] += 1
                    continue
                rows.append(pack_board(board))
                results.append(result)
                gidx.append(g)
                plies.append(ply)
                scores.append(np.nan if cp is None else (cp if mover_white else -cp))
            info["plies"] = ply
    columns = {"rows": np.array(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH),
               "results": np.array(results, dtype=np.float64),
               "game": np.array(gidx, dtype=np.int64),
               "ply": np.array(plies, dtype=np.int64),
               "score": np.array(scores, dtype=np.float64)}
    return games, columns, counts


class _restore:
    def __init__(self, logger, level):
        self.logger, self.level = logger, level

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.logger.setLevel(self.level)
        return False


def _game_info(path, number, line, game, bad):
    h = game.headers if game is not None else {}
    return {"file": str(path), "number": number, "line": line, "white": h.get("White", "?"),
            "black": h.get("Black", "?"), "result": None, "plies": 0,
            "bad": f"{path}:{line}: game {number}: {bad}" if bad else None}


# ---------------------------------------------------------------------------
# Building


def build(paths, config=None, log=None) -> DataSet:
    """The labelled set of the games in `paths` (one PGN file or several)."""
    config = config or BuildConfig()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    games, parts = [], []
    counts = {"opening": 0, "book": 0, "check": 0, "mate_score": 0}
    for path in paths:
        if log:
            log(f"reading {path}")
        g, cols, c = read_pgn(path, config.skip_plies, config.skip_book,
                              on_game=_every(2.0, lambda n, p=path: log(
                                  f"  {p}: {n} games read so far")) if log else None)
        cols["game"] = cols["game"] + len(games)
        games.extend(g)
        parts.append(cols)
        for k, v in c.items():
            counts[k] += v
    cols = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0)
            for k in ("rows", "results", "game", "ply", "score")}
    rows = cols["rows"].reshape(-1, ROW_WIDTH).astype(np.uint8)
    keep = np.ones(len(rows), dtype=bool)
    if log:
        log(f"{len(rows)} candidate positions from {len(games)} games")

    # 3. quiet: the quiescence score is the static evaluation
    counts["not_quiet"] = 0
    if config.quiet and len(rows):
        from tuner.texel import Scorer
        from wasp import params as P

        W = P.load(config.params) if config.params else P.default_weights()
        sc = Scorer(config.threads)
        q, _ = sc.qsearch_scores(W, rows)
        static = sc.leaf_scores(W, rows)
        quiet = q == static
        counts["not_quiet"] = int(np.sum(~quiet))
        keep &= quiet

    # 3b. endgames the tables hold: their label, or dropped where the game's contradicts it
    tb_counts = {}
    if config.tb and len(rows):
        from . import tablebase
        idx = np.nonzero(keep)[0]
        results, kept = cols["results"][idx].astype(np.float64), np.ones(len(idx), dtype=bool)
        tb_counts = tablebase.apply(results, kept, rows[idx], config.tb, config.tb_pieces,
                                    config.tb_mode)
        cols["results"][idx] = results
        keep[idx[~kept]] = False
        if config.tb_mode == "drop":
            counts["tablebase"] = tb_counts["dropped"]
        if log:
            log("tablebase: " + ", ".join(f"{k} {v}" for k, v in tb_counts.items()))

    # 4. duplicates (first occurrence kept), then the cap per game
    counts["duplicate"] = 0
    if config.dedupe and len(rows):
        keys = zobrist_keys(rows)
        idx = np.nonzero(keep)[0]
        _, first = np.unique(keys[idx], return_index=True)
        unique = np.zeros(len(rows), dtype=bool)
        unique[idx[first]] = True
        counts["duplicate"] = int(np.sum(keep & ~unique))
        keep &= unique
    rng = np.random.default_rng(config.seed)
    counts["over_cap"] = 0
    if config.max_per_game > 0 and len(rows):
        idx = np.nonzero(keep)[0]
        order = idx[np.lexsort((rng.random(len(idx)), cols["game"][idx]))]
        g = cols["game"][order]
        starts = np.r_[0, np.nonzero(np.diff(g))[0] + 1]
        rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        drop = order[rank >= config.max_per_game]
        counts["over_cap"] = len(drop)
        keep[drop] = False

    # 5. split by game
    sel = np.nonzero(keep)[0]
    used = np.unique(cols["game"][sel])
    n_valid = int(round(config.valid * len(used)))
    valid_games = rng.permutation(used)[:n_valid] if n_valid else np.zeros(0, dtype=np.int64)
    ds = DataSet(rows=rows[sel], results=cols["results"][sel].astype(np.float64),
                 game=cols["game"][sel].astype(np.int64), ply=cols["ply"][sel].astype(np.int64),
                 score=cols["score"][sel].astype(np.float64),
                 valid=np.isin(cols["game"][sel], valid_games), games=games,
                 bad=[g["bad"] for g in games if g["bad"]], counts=counts,
                 tablebase=tb_counts)
    return ds


# ---------------------------------------------------------------------------
# Writing


def epd_lines(ds, index, form="c9"):
    """EPD lines (4-field FEN and the result) of the positions `index` of `ds`."""
    out = []
    for fen, r in zip(ds.fens(index), ds.results[index], strict=True):
        if form == "c9":
            out.append(f'{fen} c9 "{RESULT_TEXT[float(r)]}";\n')
        else:
            out.append(f"{fen} [{float(r):.1f}]\n")
    return out


def _have_pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


_FEN_PLACEMENT = re.compile(r"^[pnbrqkPNBRQK1-8]+(?:/[pnbrqkPNBRQK1-8]+){7}\s")


def not_pgn(path, games: int = 10):
    """Why the file `path` holds no PGN games (None when one of its first `games` games reads
    with moves): an EPD or FEN file is named as such, before anything is built from it."""
    import logging

    import chess.pgn

    with open(path, encoding="utf-8", errors="replace") as f:
        first = next((ln for ln in f if ln.strip() and not ln.lstrip().startswith("%")), "")
    if _FEN_PLACEMENT.match(first.lstrip()):
        return (f"{path}: holds EPD/FEN lines, not PGN games (a labelled EPD is a set "
                f"already: give it to wasp-tune run)")
    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)
    with open(path, encoding="utf-8", errors="replace") as f:
        for _ in range(games):
            try:
                game = chess.pgn.read_game(f)
            except (ValueError, IndexError):  # IndexError: python-chess on a stray `)`
                continue
            if game is None:
                break
            if game.next() is not None:
                return None
    return f"{path}: no PGN game with moves in it (expected PGN games)"


def check_pgn(path):
    """Raise ValueError unless the first game of the PGN file `path` reads with moves."""
    import logging

    import chess.pgn

    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)
    with open(path, encoding="utf-8", errors="replace") as f:
        try:
            game = chess.pgn.read_game(f)
        except (ValueError, IndexError):  # IndexError: python-chess on a stray `)`
            game = None
    if game is None or game.errors or game.next() is None:
        raise ValueError(f"PGN file {path}: its first game has no readable moves: not PGN "
                         f"games")


def check_format(form):
    """Raise ValueError for an unknown format, or parquet without pyarrow."""
    if form not in FORMATS:
        raise ValueError(f"unknown format {form!r} (one of {', '.join(FORMATS)})")
    if form == "parquet" and not _have_pyarrow():
        raise ValueError("format parquet needs pyarrow (pip install pyarrow); use -format c9 "
                         "or bracket for EPD")


def write(ds, out_dir, form="c9", config=None) -> dict:
    """Write ``train`` and ``valid`` files (``.epd`` or ``.parquet``) and ``summary.json``
    (written last: its presence means the set is complete). Returns the summary."""
    check_format(form)
    os.makedirs(out_dir, exist_ok=True)
    ext = "parquet" if form == "parquet" else "epd"
    files = {}
    for name, index in (("train", np.nonzero(~ds.valid)[0]), ("valid", np.nonzero(ds.valid)[0])):
        path = os.path.join(out_dir, f"{name}.{ext}")
        files[name] = os.path.basename(path)  # beside summary.json
        if form == "parquet":
            import pandas as pd

            df = pd.DataFrame({"fen": ds.fens(index), "result": ds.results[index],
                               "game": ds.game[index], "ply": ds.ply[index],
                               "score": ds.score[index], "phase": ds.phases()[index]})
            with replacing(path, ".parquet") as tmp:
                df.to_parquet(tmp, engine="pyarrow", index=False)
        else:
            write_text(path, "".join(epd_lines(ds, index, form)))
    s = ds.summary()
    s["files"] = files
    s["format"] = form
    if config is not None:
        s["config"] = asdict(config)
    write_text(os.path.join(out_dir, "summary.json"), json.dumps(s, indent=2) + "\n")
    return s
