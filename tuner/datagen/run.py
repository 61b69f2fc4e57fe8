"""`wasp-tune datagen`: self-play games, every position recorded with its search score, for net
trainers (bullet's text form) and the Texel tuner. Wasp-Py plays in-process (both sides'
searches in one process, no UCI text); any UCI engine plays itself through the match runner's
executor (`testing.executor`: local worker processes or Dask). One game loop serves both: only
how a move is searched differs (`WaspMover`, `UciMover`).

A run directory holds ``data.txt`` (``FEN | score | result``) and ``data.moves`` (``game ply
move``, line for line), or with the viriformat data format ``data.vf`` (Viridithas's games: the
same positions in about 4.3 bytes each) in their place; ``games.jsonl`` (a line a game),
``run.json`` (``{"kind": "datagen", ...}``: the settings), ``state.json`` (the commit point)
and, at the end, ``stats.json``. Games are committed whole and in game order; each game is a
function of (seed, game index) alone (its own random generator, search tables cleared, a UCI
engine told `ucinewgame`), so a killed run resumed with ``-resume`` ends with the same files as
an uninterrupted one (for a UCI engine: one that is deterministic at a node limit, such as
Stockfish with Threads=1). `read_run` and `read_records` are the readers.
"""


import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from testing.rundir import mark
from tuner.formats import (
    MATE_SCORE,
    RESULT_PGN,
    Record,
    ViriGame,
    format_line,
    format_side,
    read_text,
    read_viri,
)
from wasp.atomicfile import write_text
from wasp.driver import MATE_BOUND
from wasp.movepick import SD_ROOT_MOVES, SD_ROOT_N
from wasp.types import MOVE_PROMO_SHIFT, MOVE_TO_SHIFT, parse_square

RUN_KIND = "datagen"
RUN_VERSION = 1
# How a game is played from (seed, index): raised whenever a change makes the same seed give
# other games, so that a resume across such a change is told (2: the vetting searcher plays on)
PROCEDURE = 2
RUN_FILE = "run.json"
DATA_FILE = "data.txt"
SIDE_FILE = "data.moves"  # tuner.formats.bullettext.side_path(DATA_FILE)
GAMES_FILE = "games.jsonl"
STATE_FILE = "state.json"
STATS_FILE = "stats.json"
VIRI_FILE = "data.vf"  # the data of a run in viriformat (tuner.formats.viriformat)
COMMITTED = (DATA_FILE, SIDE_FILE, GAMES_FILE)  # appended per game, cut back on resume
DATA_FORMATS = {"text": (DATA_FILE, SIDE_FILE), "viriformat": (VIRI_FILE,)}  # -> data files
PROMOTIONS = {"": 0, "n": 1, "b": 2, "r": 3, "q": 4}  # wasp.board.PROMO_CHARS' codes
MOVE_KEY = (1 << (MOVE_PROMO_SHIFT + 3)) - 1  # a move code's from, to and promotion bits
MAX_START_TRIES = 1000  # openings drawn for one game before it is given up
SCORE_EDGES = list(range(-3000, 3001, 100))  # score histogram: below, between, above these
LENGTH_BIN = 20  # plies a bin of the game-length histogram


@dataclass
class DatagenConfig:
    """The settings of a run (all of them decide its games, except where noted)."""

    games: int = 100
    nodes: int = 5000  # per move, hard: the search stops at this node count (UCI `go nodes`)
    random_plies: int = 8  # random legal moves after the start (or the book position)
    openings: str = ""  # a book: EPD/FEN lines or PGN games (their last positions)
    seed: int = 1
    tb: str = ""  # Syzygy directories: adjudicate positions the tables hold
    hash_mb: int = 2  # Wasp-Py: each side's hash table (a UCI engine: its option.Hash=)
    start_nodes: int = 1000  # the short search that vets a start
    start_bound: int = 1000  # a start scored beyond +/- this (cp) is skipped
    win_score: int = 2000  # a win: |White's score| at least this ...
    win_plies: int = 8  # ... for this many plies in a row, one side's way
    draw_ply: int = 80  # a draw: from this ply on ...
    draw_score: int = 10  # ... |score| at most this ...
    draw_plies: int = 16  # ... for this many plies in a row
    max_plies: int = 400  # the game is a draw when its ply reaches this
    eval_file: str = ""  # Wasp-Py's EvalFile (a net or params.txt); "": the hand-written evaluation
    engine: str = "wasp-py"  # the engine's name (recorded)
    uci: dict | None = None  # a UCI engine (testing.engine.EngineConfig's dict); None: Wasp-Py

    def check(self) -> None:
        """ValueError naming the first setting out of range."""
        for name in ("games", "nodes", "hash_mb", "start_nodes", "win_plies", "draw_plies",
                     "max_plies"):
            if getattr(self, name) < 1:
                raise ValueError(f"-{name.replace('_', '-')} must be at least 1")
        for name in ("random_plies", "draw_ply", "draw_score", "start_bound", "win_score"):
            if getattr(self, name) < 0:
                raise ValueError(f"-{name.replace('_', '-')} must not be negative")


@dataclass
class Game:
    """One played game: its positions (results filled in), how it ended, what it cost."""

    index: int
    records: list = field(default_factory=list)
    result: float = 0.5
    reason: str = ""
    book: str = ""  # the book position the random plies started from ("": the start)
    opening: list = field(default_factory=list)  # the random plies (UCI) before `start`
    start: str = ""  # the FEN the searches started from
    skipped: int = 0  # starts rejected by the vetting search
    nodes: int = 0  # nodes searched for the recorded moves
    error: str = ""  # the game could not be played: reported and not recorded

    def summary(self) -> dict:
        d = {"game": self.index, "positions": len(self.records),
             "result": RESULT_PGN[self.result], "reason": self.reason, "book": self.book,
             "opening": self.opening, "start": self.start, "skipped_starts": self.skipped,
             "nodes": self.nodes}
        if self.error:
            d = {"game": self.index, "error": self.error}
        return d


def white_score(score: int, white_to_move: bool) -> int:
    """A search score (side to move's view) as White's, mates as +/- MATE_SCORE."""
    s = score if white_to_move else -score
    if s >= MATE_BOUND:
        return MATE_SCORE
    if s <= -MATE_BOUND:
        return -MATE_SCORE
    return max(-MATE_SCORE + 1, min(MATE_SCORE - 1, s))


def move_code(searcher, uci: str) -> int:
    """The code of a search's UCI move among the legal root moves it searched (standard chess:
    castling as the king's two-square step): int bits compared, no move generation."""
    key = (parse_square(uci[:2]) | parse_square(uci[2:4]) << MOVE_TO_SHIFT
           | PROMOTIONS[uci[4:]] << MOVE_PROMO_SHIFT)
    SD = searcher.SD
    for m in SD[SD_ROOT_MOVES:SD_ROOT_MOVES + int(SD[SD_ROOT_N])].tolist():
        if m & MOVE_KEY == key:
            return m
    raise ValueError(f"the search's move {uci} is not among its legal root moves")


def load_book(path) -> list[str]:
    """The start FENs of a book, read by the match runner's reader: EPD/FEN lines, or the
    positions at the end of a PGN's games. Read whole, once a run, so a bad entry stops the
    run before its first game: ValueError names the file and the line or game."""
    from testing.openings import OpeningBook

    book = OpeningBook(str(path))
    fens = []
    for i in range(len(book)):
        board = book.get(i).board()
        if not board.is_valid():
            raise ValueError(f"{book.where(i)}: not a legal position")
        fens.append(board.fen())
    return fens


@dataclass
class Move:
    """A searched move: its code on the game's Position, White's score (mates as +/-
    MATE_SCORE) and the nodes the search took."""

    code: int
    score: int
    nodes: int


class WaspMover:
    """Moves from Wasp-Py's searches in this process: one Searcher (and hash table) a side,
    each move at a hard node limit."""

    fatal = ()  # errors that stop the run rather than one game

    def __init__(self, hash_mb: int, eval_file: str = ""):
        from wasp.driver import Searcher

        self.searchers = (Searcher(hash_mb), Searcher(hash_mb))
        if eval_file:
            from wasp.engine import load_eval_file

            weights = load_eval_file(eval_file)
            for searcher in self.searchers:
                searcher.set_weights(weights)

    def new_game(self, side: int) -> None:
        self.searchers[side].clear()

    def search(self, side: int, pos, history, nodes: int) -> Move:
        from wasp.driver import Limits

        r = self.searchers[side].search(pos, Limits(nodes=nodes))
        if r.best == "0000":
            raise RuntimeError(f"no move from the search in {pos.fen()}")
        return Move(move_code(self.searchers[side], r.best), white_score(r.score, side == 0),
                    r.nodes)

    def failed(self) -> None:
        """A game failed: nothing to restart (each game clears the tables)."""

    def game_over(self) -> None:
        pass


def uci_white_score(res, white_to_move: bool) -> int | None:
    """A UCI search's last `info ... score` as White's score: cp clamped inside the mate
    scores, `mate N` as +/- MATE_SCORE (N > 0: the side to move mates); None without one."""
    if res.mate is not None:
        s = MATE_SCORE if res.mate > 0 else -MATE_SCORE
    elif res.score is not None:
        s = max(-MATE_SCORE + 1, min(MATE_SCORE - 1, res.score))
    else:
        return None
    return s if white_to_move else -s


class UciMover:
    """Moves from a UCI engine's `go nodes N` searches through the match runner's engine
    processes (`testing.worker.EngineSet`, one process a side, both the same engine): the
    position sent as the game's start FEN and the moves since."""

    def __init__(self, engines):
        from testing.worker import EngineStartError

        self.engines = engines
        self.fatal = (EngineStartError,)  # an engine that cannot start stops the run

    def new_game(self, side: int) -> None:
        self.engines.get(side).new_game(None, side == 0)

    def search(self, side: int, pos, history, nodes: int) -> Move:
        from testing.driver import Limits
        from wasp.board import IllegalMoveError

        start, moves = history
        e = self.engines.get(side)
        res = e.go(start, moves, Limits(nodes=nodes, white=side == 0))
        try:
            code = pos.parse_uci(res.move)
        except IllegalMoveError:
            raise RuntimeError(f"{e.name}: illegal move {res.move!r} in {pos.fen()}") from None
        score = uci_white_score(res, side == 0)
        if score is None:
            raise RuntimeError(f"{e.name}: no score (info ... score cp|mate) before bestmove "
                               f"{res.move} in {pos.fen()}")
        return Move(code, score, res.nodes or 0)

    def failed(self) -> None:
        """A game failed: both processes end, the next game starts fresh ones."""
        self.engines.kill()

    def game_over(self) -> None:
        self.engines.after_game(0)
        self.engines.after_game(1)


def uci_engine(tokens: list[str], nodes: int) -> dict:
    """``-engine KEY=VALUE ...`` items (``wasp-match``'s) as the `uci` of a DatagenConfig: the
    engine's settings (its command looked up) searching `nodes` a move. UsageError (exit 2) for
    a bad item, or for one datagen sets itself (tc=, st=, nodes=, depth=, a proto other than
    uci)."""
    import testing
    from wasp.exitcodes import UsageError

    engine = testing.read_engine(tokens, [f"nodes={nodes}"])
    for key, given in (("tc", engine.tc is not None), ("st", engine.st is not None),
                       ("nodes", engine.nodes != nodes), ("depth", engine.depth is not None),
                       ("proto", engine.proto != "uci")):
        if given:
            raise UsageError(f"-engine: {key}= does not apply: datagen plays UCI engines at "
                             f"'go nodes -nodes'")
    return engine.to_dict()


def check_engine_starts(engine: dict) -> str:
    """Start a UCI engine (an `EngineConfig` dict) once and quit it: its name, or
    RuntimeError saying why it cannot play."""
    from testing.engine import EngineConfig, make_engine
    from testing.process import EngineError

    e = make_engine(EngineConfig.from_dict(engine))
    try:
        e.start()
        return e.id_name or e.name
    except EngineError as err:
        raise RuntimeError(f"engine {e.name!r} failed to start: {err}") from None
    finally:
        e.kill()


class SelfPlay:
    """Plays the games of one configuration: the openings, the vetting of starts, the
    adjudication and the records; the moves come from a mover (`WaspMover` in this process,
    or `UciMover` for any UCI engine)."""

    def __init__(self, config: DatagenConfig, book: Sequence[str] | None = None, mover=None):
        self.config = config
        if mover is None:
            if config.uci:
                raise ValueError("a UCI engine's games need its engine processes (UciMover)")
            mover = WaspMover(config.hash_mb, config.eval_file)
        self.mover = mover
        self.book = book if book is not None else (
            load_book(config.openings) if config.openings else None)
        self.tb = None
        self._history = ("", [])  # the FEN the searches started from, the moves since
        if config.tb:
            from wasp.tablebase import Tablebases

            self.tb = Tablebases(config.tb)

    def warm(self) -> None:
        """Load (or compile) the kernels a game uses: a few short searches and moves."""
        from wasp.board import Position

        pos = Position()
        self._history = (pos.fen(), [])
        for _ in range(4):
            pos.game_over()
            pos.fen()
            m = self._search(pos.turn, pos, 200)
            self._history[1].append(pos.uci(m.code))
            pos.push(m.code)
        for side in (0, 1):
            self.mover.new_game(side)

    def _search(self, side, pos, nodes) -> Move:
        return self.mover.search(side, pos, self._history, nodes)

    def _start(self, rng, game: Game):
        """A vetted start position: book entry and random plies, not over, scored within the
        bound by a short search; (position, book FEN or "", random plies)."""
        from wasp.board import Position

        c = self.config
        for _ in range(MAX_START_TRIES):
            fen = self.book[int(rng.integers(len(self.book)))] if self.book else None
            pos = Position(fen) if fen else Position()
            played = []
            for _ in range(c.random_plies):
                codes = pos.legal_move_codes()
                if not codes:
                    break
                m = codes[int(rng.integers(len(codes)))]
                played.append(pos.uci(m))
                pos.push(m)
            if pos.game_over() is not None:
                game.skipped += 1
                continue
            self.mover.new_game(pos.turn)  # it vets the start, then plays its first move
            self._history = (pos.fen(), [])
            r = self._search(pos.turn, pos, c.start_nodes)
            if abs(r.score) > c.start_bound:
                game.skipped += 1
                continue
            return pos, fen or "", played
        raise RuntimeError(f"no start within +/-{c.start_bound} cp in {MAX_START_TRIES} tries")

    def _tablebase(self, fen):
        """White's result when the tables hold `fen` (a cursed win is a draw), else None."""
        placement = fen.split(" ", 1)[0]
        if sum(ch.isalpha() for ch in placement) > self.tb.largest:
            return None
        import chess

        board = chess.Board(fen)
        if not self.tb.covers(board):
            return None
        wdl = self.tb.wdl(board)
        if wdl is None:
            return None
        stm = 1.0 if wdl == 2 else 0.0 if wdl == -2 else 0.5
        return stm if board.turn == chess.WHITE else 1.0 - stm

    def play(self, index: int) -> Game:
        """Game `index`: a function of (seed, index) alone."""
        game = Game(index)
        try:
            self._play(index, game)
        except self.mover.fatal:
            raise
        except Exception as e:  # noqa: BLE001 - a broken game is reported and skipped
            game.error = f"{type(e).__name__}: {e}"
            game.records = []
            self.mover.failed()
        else:
            self.mover.game_over()
        return game

    def _play(self, index, game):
        c = self.config
        rng = np.random.default_rng([c.seed, index])
        pos, game.book, game.opening = self._start(rng, game)
        self.mover.new_game(1 - pos.turn)
        game.start = pos.fen()
        moves = self._history[1]
        records = game.records
        win_run = draw_run = 0
        while True:
            over = pos.game_over()
            if over is not None:
                game.result = {"1-0": 1.0, "0-1": 0.0}.get(over[0], 0.5)
                game.reason = over[1]
                break
            fen = pos.fen()
            if self.tb is not None:
                tb = self._tablebase(fen)
                if tb is not None:
                    game.result, game.reason = tb, "tablebase"
                    break
            if abs(win_run) >= c.win_plies:
                game.result = 1.0 if win_run > 0 else 0.0
                game.reason = "adjudicated win"
                break
            if draw_run >= c.draw_plies:
                game.result, game.reason = 0.5, "adjudicated draw"
                break
            ply = 2 * (pos.fullmove_number - 1) + pos.turn
            if len(game.opening) + len(records) >= c.max_plies:  # plies from the book
                game.result, game.reason = 0.5, "ply cap"
                break
            side = pos.turn
            r = self._search(side, pos, c.nodes)
            uci = pos.uci(r.code)
            score = r.score
            records.append(Record(fen, score, 0.5, uci, ply, index))
            game.nodes += r.nodes
            pos.push(r.code)
            moves.append(uci)
            if score >= c.win_score:
                win_run = win_run + 1 if win_run > 0 else 1
            elif score <= -c.win_score:
                win_run = win_run - 1 if win_run < 0 else -1
            else:
                win_run = 0
            quiet = ply + 1 >= c.draw_ply and abs(score) <= c.draw_score
            draw_run = draw_run + 1 if quiet else 0
        for rec in records:
            rec.result = game.result
        return game


# -- statistics ------------------------------------------------------------------------

def new_stats() -> dict:
    return {"games": 0, "errors": 0, "positions": 0, "nodes": 0, "skipped_starts": 0,
            "results": {"1-0": 0, "1/2-1/2": 0, "0-1": 0}, "reasons": {},
            "length": {"sum": 0, "min": None, "max": 0, "bin": LENGTH_BIN, "hist": []},
            "score": {"edges": SCORE_EDGES, "hist": [0] * (len(SCORE_EDGES) + 1),
                      "abs_sum": 0, "mates": 0}}


def add_game(stats: dict, game: Game) -> None:
    """Count a committed game in `stats` (a dict from `new_stats`)."""
    if game.error:
        stats["errors"] += 1
        return
    n = len(game.records)
    stats["games"] += 1
    stats["positions"] += n
    stats["nodes"] += game.nodes
    stats["skipped_starts"] += game.skipped
    stats["results"][RESULT_PGN[game.result]] += 1
    stats["reasons"][game.reason] = stats["reasons"].get(game.reason, 0) + 1
    ln = stats["length"]
    ln["sum"] += n
    ln["min"] = n if ln["min"] is None else min(ln["min"], n)
    ln["max"] = max(ln["max"], n)
    b = n // LENGTH_BIN
    ln["hist"] += [0] * (b + 1 - len(ln["hist"]))
    ln["hist"][b] += 1
    sc = stats["score"]
    scores = np.array([r.score for r in game.records], dtype=np.int64)
    if n:
        idx = np.searchsorted(np.array(SCORE_EDGES), scores, side="right")
        for i, k in zip(*np.unique(idx, return_counts=True), strict=True):
            sc["hist"][int(i)] += int(k)
        sc["abs_sum"] += int(np.abs(scores).sum())
        sc["mates"] += int(np.sum(np.abs(scores) >= MATE_SCORE))


def describe_stats(stats: dict) -> str:
    """The statistics as a few lines of text."""
    g, n = stats["games"], stats["positions"]
    res = stats["results"]
    pct = (lambda k: 100.0 * k / g) if g else (lambda k: 0.0)
    lines = [f"games {g} ({stats['errors']} failed), positions {n}, "
             f"{stats['skipped_starts']} starts skipped",
             f"results: 1-0 {res['1-0']} ({pct(res['1-0']):.1f} %), 1/2 {res['1/2-1/2']} "
             f"({pct(res['1/2-1/2']):.1f} %), 0-1 {res['0-1']} ({pct(res['0-1']):.1f} %)",
             "endings: " + ", ".join(f"{k} {v}" for k, v in sorted(stats["reasons"].items()))]
    if g:
        ln = stats["length"]
        lines.append(f"positions a game: mean {ln['sum'] / g:.1f}, min {ln['min']}, "
                     f"max {ln['max']}")
    if n:
        sc = stats["score"]
        hist = np.array(sc["hist"])
        edges = np.array(sc["edges"])
        # hist[i] counts scores in [edges[i-1], edges[i]): within +/-x is edges -x .. x
        within = {x: int(hist[np.searchsorted(edges, -x, "right"):
                              np.searchsorted(edges, x, "right")].sum()) for x in (100, 500, 1000)}
        lines.append(f"scores: mean |score| {sc['abs_sum'] / n:.0f} cp, "
                     + ", ".join(f"|s| < {x}: {100 * k / n:.1f} %" for x, k in within.items())
                     + f", mates {sc['mates']}")
        lines.append(f"nodes a position: {stats['nodes'] / n:.0f}")
    return "\n".join(lines)


# -- the run directory -------------------------------------------------------------------

class RunError(ValueError):
    """A run directory that cannot be created or resumed: the message says why."""


def _write_json(path, obj) -> None:
    write_text(path, json.dumps(obj, indent=1))


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class DatagenRun:
    """A run directory: creates or resumes it and commits games to it, whole and in order."""

    def __init__(self, path, config: DatagenConfig, state: dict):
        self.path = str(path)
        self.config = config
        self.state = state  # {"games": committed, "bytes": {file: size}, "stats": {...}}

    @property
    def data_format(self) -> str:
        """"text" (data.txt and data.moves) or "viriformat" (data.vf): the committed files say."""
        return "viriformat" if VIRI_FILE in self.state["bytes"] else "text"

    @property
    def data_file(self) -> str:
        """The path of the run's positions (data.txt or data.vf)."""
        return self.file(DATA_FORMATS[self.data_format][0])

    def __repr__(self):
        return (f"DatagenRun({self.path!r}, {self.state['games']}/{self.config.games} games, "
                f"{self.state['stats']['positions']} positions)")

    def file(self, name) -> str:
        return os.path.join(self.path, name)

    @classmethod
    def create(cls, path, config: DatagenConfig, command=None,
               data_format: str = "text") -> "DatagenRun":
        """A new run in `path`; `data_format` "text" (data.txt with data.moves) or
        "viriformat" (data.vf)."""
        config.check()
        if data_format not in DATA_FORMATS:
            raise ValueError(f"data format {data_format!r} (text or viriformat)")
        if os.path.exists(os.path.join(path, STATE_FILE)):
            raise RunError(f"{path} already holds a run: resume it with -resume {path}")
        os.makedirs(path, exist_ok=True)
        mark(path, RUN_KIND)
        committed = (*DATA_FORMATS[data_format], GAMES_FILE)
        run = cls(path, config, {"games": 0, "bytes": dict.fromkeys(committed, 0),
                                 "stats": new_stats()})
        files = {"data": DATA_FILE, "side": SIDE_FILE} if data_format == "text" else \
            {"data": VIRI_FILE}
        _write_json(run.file(RUN_FILE), {"kind": RUN_KIND, "version": RUN_VERSION,
                                         "procedure": PROCEDURE, "config": asdict(config),
                                         "command": command or [],
                                         "files": {**files, "games": GAMES_FILE,
                                                   "stats": STATS_FILE}})
        for name in committed:
            open(run.file(name), "wb").close()
        _write_json(run.file(STATE_FILE), run.state)
        return run

    @classmethod
    def open(cls, path, games: int | None = None, log=print) -> "DatagenRun":
        """Resume the run in `path`: files cut back to the last committed game. `games` may
        raise the number of games (the extra ones are those a longer run would play)."""
        info = read_run(path)
        if info.get("procedure", 1) != PROCEDURE:
            log(f"note: {path} was started by another version of datagen; the games from here "
                f"on are not those an uninterrupted run would have played (the data are as "
                f"good)")
        config = DatagenConfig(**info["config"])
        if games is not None:
            config.games = games
        state = _read_json(os.path.join(path, STATE_FILE))
        run = cls(path, config, state)
        for name in state["bytes"]:  # the files the run commits: cut back to the commit point
            p = run.file(name)
            size = state["bytes"][name]
            if not os.path.exists(p) or os.path.getsize(p) < size:
                raise RunError(f"{p}: shorter than its committed {size} bytes")
            os.truncate(p, size)
        return run

    def commit(self, game: Game) -> None:
        """Append one game to the files, then move the commit point past it."""
        if game.index != self.state["games"]:
            raise RuntimeError(f"game {game.index} committed out of order")
        if self.data_format == "text":
            chunks = {DATA_FILE: "".join(format_line(r) for r in game.records).encode(),
                      SIDE_FILE: "".join(format_side(r) for r in game.records).encode()}
        else:
            chunks = {VIRI_FILE: ViriGame.from_records(game.records).to_bytes()
                      if game.records else b""}
        chunks[GAMES_FILE] = (json.dumps(game.summary()) + "\n").encode()
        for name, data in chunks.items():
            with open(self.file(name), "ab", buffering=0) as f:
                f.write(data)
            self.state["bytes"][name] += len(data)
        self.state["games"] += 1
        add_game(self.state["stats"], game)
        _write_json(self.file(STATE_FILE), self.state)

    def finish(self) -> dict:
        stats = dict(self.state["stats"], finished=self.state["games"] >= self.config.games)
        _write_json(self.file(STATS_FILE), stats)
        return stats


def read_run(path) -> dict:
    """run.json of a datagen run directory; RunError when it is not one."""
    p = os.path.join(path, RUN_FILE)
    if not os.path.exists(p) or not os.path.exists(os.path.join(path, STATE_FILE)):
        raise RunError(f"{path}: not a datagen run directory (no {RUN_FILE} or {STATE_FILE})")
    info = _read_json(p)
    if info.get("kind") != RUN_KIND:
        raise RunError(f"{path}: a run of kind {info.get('kind')!r}, not {RUN_KIND!r}")
    return info


def read_state(path) -> dict:
    """The commit point and running statistics of a run."""
    read_run(path)
    return _read_json(os.path.join(path, STATE_FILE))


def read_records(path):
    """The committed records of a run (move, ply and game included), in order. A viriformat
    run's games are numbered by their place in data.vf (a failed game has none)."""
    state = read_state(path)
    limit = state["stats"]["positions"]
    viri = VIRI_FILE in state["bytes"]
    records = read_viri(os.path.join(path, VIRI_FILE)) if viri else \
        read_text(os.path.join(path, DATA_FILE))
    for i, r in enumerate(records):
        if i >= limit:  # records past the commit point belong to a game that did not finish
            break
        yield r


def read_games(path) -> list[dict]:
    """The committed games' summaries (games.jsonl)."""
    state = read_state(path)
    with open(os.path.join(path, GAMES_FILE), encoding="utf-8") as f:
        return [json.loads(line) for line in f][:state["games"]]


# -- playing --------------------------------------------------------------------------

@dataclass(frozen=True)
class DatagenTask:
    """Game `index` as a task of the match runner's executor (`testing.executor`): played by
    `play` in a worker process or on a Dask worker, with that worker's engine processes."""

    index: int
    config: dict  # DatagenConfig's fields
    book: tuple | None = None
    options = None  # no per-game engine options (the executor asks)

    @property
    def key(self) -> str:
        return f"datagen-{self.index}"

    def play(self, cfg, engines) -> list[Game]:
        return [_player(self.config, self.book, engines).play(self.index)]


_players = threading.local()
# (openings path, FENs): the book as the driver read it, set before it forks local workers,
# which find it here instead of in every task (a big book is megabytes a game to pickle)
_forked_book: tuple[str, tuple] | None = None


def _player(config: dict, book, engines) -> SelfPlay:
    """This thread's SelfPlay for `config` (kept between games: searchers, tables, book)."""
    key = (json.dumps(config, sort_keys=True), id(engines))
    if getattr(_players, "key", None) != key:
        c = DatagenConfig(**config)
        mover = UciMover(engines) if c.uci else None
        if book is None and _forked_book is not None and _forked_book[0] == c.openings:
            book = _forked_book[1]
        _players.player = SelfPlay(c, book or None, mover)
        _players.key = key
    return _players.player


def match_config(config: DatagenConfig, concurrency: int = 1, dask: str | None = None):
    """The executor's settings for a run: the UCI engine twice (one process a side), or no
    engine (Wasp-Py searches in the worker itself)."""
    from testing.config import MatchConfig
    from testing.engine import EngineConfig

    engines = []
    if config.uci:
        e = EngineConfig.from_dict(config.uci)
        engines = [e, EngineConfig.from_dict(config.uci)]
    return MatchConfig(engines=engines, concurrency=concurrency, dask=dask or None,
                       recover=True)


class TaskFailed(RuntimeError):
    """A game task that returned no game (an engine that cannot start, a worker lost): the run
    stops, the games committed so far kept."""


def _serial(run, book):
    """Wasp-Py's games in this process, in order."""
    player = SelfPlay(run.config, book)
    player.warm()
    return (player.play(i) for i in range(run.state["games"], run.config.games))


def _executed(run, book, executor):
    """The games played by the executor's workers, yielded in game order (finished games
    wait for those before them; at most a few per worker are ahead). `book` goes with every
    task (None: the workers have it)."""
    c = run.config
    nxt = submitted = run.state["games"]
    config = asdict(c)
    book = tuple(book) if book else None
    finished: dict[int, Game] = {}
    while nxt < c.games:
        ahead = 4 * executor.slots()
        while (submitted < c.games and executor.in_flight() < executor.slots()
               and submitted - nxt < ahead):
            executor.submit(DatagenTask(submitted, config, book))
            submitted += 1
        for done in executor.wait():
            if done.error or not done.rows:
                raise TaskFailed(f"game {done.task.index} ({done.worker}): "
                                 f"{done.error or 'no game came back'}")
            finished[done.task.index] = done.rows[0]
        while nxt in finished:
            yield finished.pop(nxt)
            nxt += 1


def generate(run: DatagenRun, concurrency: int = 1, progress: bool = True, log=print,
             dask: str | None = None, book: Sequence[str] | None = None) -> dict:
    """Play the run's remaining games and commit them in order; returns the statistics.

    Wasp-Py with one process plays here; otherwise the games are tasks of the match runner's
    executor: `concurrency` local worker processes, or the Dask scheduler at `dask`. `book`:
    the run's openings if the caller has read them already. Raises TaskFailed (ExecutorError
    with Dask) when a game cannot be played at all."""
    global _forked_book
    from tqdm import tqdm

    from testing.executor import make_executor

    c = run.config
    first = run.state["games"]
    if book is None and c.openings:
        book = load_book(c.openings)
    book = tuple(book) if book else None
    stats = run.state["stats"]
    executor = None
    if c.uci or concurrency > 1 or dask:
        if not c.uci and not dask:
            SelfPlay(c, book).warm()  # compile once here: the forked workers inherit it
        _forked_book = (c.openings, book) if book and not dask else None
        try:
            executor = make_executor(match_config(c, concurrency, dask), concurrency,
                                     resume_command=f"wasp-tune datagen -resume {run.path}")
        finally:
            _forked_book = None  # the workers are forked: they hold their copies
        games = _executed(run, book if dask else None, executor)
    else:
        games = _serial(run, book)
    t0 = time.monotonic()
    pos0 = stats["positions"]
    bar = tqdm(total=c.games, initial=first, unit="game", disable=not progress,
               dynamic_ncols=True, smoothing=0.05)
    ok = False
    try:
        for game in games:
            run.commit(game)
            if game.error:
                bar.write(f"game {game.index}: {game.error} (skipped)")
            dt = max(time.monotonic() - t0, 1e-9)
            bar.set_postfix_str(f"{stats['positions']} pos, "
                                f"{(stats['positions'] - pos0) / dt:.0f} pos/s", refresh=False)
            bar.update(1)
        ok = True
    finally:
        bar.close()
        if executor is not None:
            executor.close(kill=not ok)
    return run.finish()
