"""`wasp-tune datagen`: self-play games of Wasp-Py played in-process (both sides' searches in one
process per core, no UCI text), every position recorded with its search score, for net trainers
(bullet's text form) and the Texel tuner.

A run directory holds ``data.txt`` (``FEN | score | result``), ``data.moves`` (``game ply move``,
line for line), ``games.jsonl`` (a line a game), ``run.json`` (``{"kind": "datagen", ...}``: the
settings), ``state.json`` (the commit point) and, at the end, ``stats.json``. Games are committed
whole and in game order; each game is a function of (seed, game index) alone (its own random
generator, search tables cleared), so a killed run resumed with ``-resume`` ends with the same
file as an uninterrupted one. `read_run` and `read_records` are the readers.
"""


import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from testing.rundir import mark
from tuner.bullettext import format_line, format_side, read_text
from tuner.records import MATE_SCORE, RESULT_PGN, Record
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
SIDE_FILE = "data.moves"  # tuner.bullettext.side_path(DATA_FILE)
GAMES_FILE = "games.jsonl"
STATE_FILE = "state.json"
STATS_FILE = "stats.json"
COMMITTED = (DATA_FILE, SIDE_FILE, GAMES_FILE)  # appended per game, cut back on resume
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
    hash_mb: int = 2  # each side's transposition table (plenty for 5,000-node searches)
    start_nodes: int = 1000  # the short search that vets a start
    start_bound: int = 1000  # a start scored beyond +/- this (cp) is skipped
    win_score: int = 2000  # a win: |White's score| at least this ...
    win_plies: int = 8  # ... for this many plies in a row, one side's way
    draw_ply: int = 80  # a draw: from this ply on ...
    draw_score: int = 10  # ... |score| at most this ...
    draw_plies: int = 16  # ... for this many plies in a row
    max_plies: int = 400  # the game is a draw when its ply reaches this
    engine: str = "wasp-py"  # recorded; other engines come through the runner later

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
    """The start FENs of a book: EPD/FEN lines, or the last positions of a PGN's games.
    ValueError names the file and line of a bad one."""
    import chess
    import chess.pgn

    fens = []
    if str(path).lower().endswith(".pgn"):
        with open(path, encoding="utf-8", errors="replace") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                fens.append(game.end().board().fen())
    else:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                fields = line.split()
                try:
                    if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
                        board = chess.Board(" ".join(fields[:6]))
                    else:
                        board, _ = chess.Board.from_epd(line)
                except ValueError as e:
                    raise ValueError(f"{path}:{n}: {e}") from None
                if not board.is_valid():
                    raise ValueError(f"{path}:{n}: not a legal position")
                fens.append(board.fen())
    if not fens:
        raise ValueError(f"{path}: no positions in it")
    return fens


class SelfPlay:
    """Plays the games of one configuration: two Searchers (one a side), the book, the tables."""

    def __init__(self, config: DatagenConfig, book: list[str] | None = None):
        from wasp.driver import Searcher

        self.config = config
        self.searchers = (Searcher(config.hash_mb), Searcher(config.hash_mb))
        self.book = book if book is not None else (
            load_book(config.openings) if config.openings else None)
        self.tb = None
        if config.tb:
            from wasp.tablebase import Tablebases

            self.tb = Tablebases(config.tb)

    def warm(self) -> None:
        """Load (or compile) the kernels a game uses: a few short searches and moves."""
        from wasp.board import Position

        pos = Position()
        for _ in range(4):
            pos.game_over()
            pos.fen()
            pos.push_uci(self._search(pos.turn, pos, 200).best)
        for s in self.searchers:
            s.clear()

    def _search(self, side, pos, nodes):
        from wasp.driver import Limits

        return self.searchers[side].search(pos, Limits(nodes=nodes))

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
            self.searchers[pos.turn].clear()  # it vets the start, then plays its first move
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
        except Exception as e:  # noqa: BLE001 - a broken game is reported and skipped
            game.error = f"{type(e).__name__}: {e}"
            game.records = []
        return game

    def _play(self, index, game):
        c = self.config
        rng = np.random.default_rng([c.seed, index])
        pos, game.book, game.opening = self._start(rng, game)
        self.searchers[1 - pos.turn].clear()
        game.start = pos.fen()
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
            if r.best == "0000":
                raise RuntimeError(f"no move from the search in {fen}")
            score = white_score(r.score, side == 0)
            records.append(Record(fen, score, 0.5, r.best, ply, index))
            game.nodes += r.nodes
            pos.push(move_code(self.searchers[side], r.best))
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
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class DatagenRun:
    """A run directory: creates or resumes it and commits games to it, whole and in order."""

    def __init__(self, path, config: DatagenConfig, state: dict):
        self.path = str(path)
        self.config = config
        self.state = state  # {"games": committed, "bytes": {file: size}, "stats": {...}}

    def __repr__(self):
        return (f"DatagenRun({self.path!r}, {self.state['games']}/{self.config.games} games, "
                f"{self.state['stats']['positions']} positions)")

    def file(self, name) -> str:
        return os.path.join(self.path, name)

    @classmethod
    def create(cls, path, config: DatagenConfig, command=None) -> "DatagenRun":
        config.check()
        if os.path.exists(os.path.join(path, STATE_FILE)):
            raise RunError(f"{path} already holds a run: resume it with -resume {path}")
        os.makedirs(path, exist_ok=True)
        mark(path, RUN_KIND)
        run = cls(path, config, {"games": 0, "bytes": dict.fromkeys(COMMITTED, 0),
                                 "stats": new_stats()})
        _write_json(run.file(RUN_FILE), {"kind": RUN_KIND, "version": RUN_VERSION,
                                         "procedure": PROCEDURE, "config": asdict(config),
                                         "command": command or [],
                                         "files": {"data": DATA_FILE, "side": SIDE_FILE,
                                                   "games": GAMES_FILE, "stats": STATS_FILE}})
        for name in COMMITTED:
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
        for name in COMMITTED:
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
        chunks = {DATA_FILE: "".join(format_line(r) for r in game.records),
                  SIDE_FILE: "".join(format_side(r) for r in game.records),
                  GAMES_FILE: json.dumps(game.summary()) + "\n"}
        for name, text in chunks.items():
            data = text.encode()
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
    """The committed records of a run (move, ply and game included), in order."""
    state = read_state(path)
    limit = state["stats"]["positions"]
    for i, r in enumerate(read_text(os.path.join(path, DATA_FILE))):
        if i >= limit:  # lines past the commit point belong to a game that did not finish
            break
        yield r


def read_games(path) -> list[dict]:
    """The committed games' summaries (games.jsonl)."""
    state = read_state(path)
    with open(os.path.join(path, GAMES_FILE), encoding="utf-8") as f:
        return [json.loads(line) for line in f][:state["games"]]


# -- playing --------------------------------------------------------------------------

_WORKER = None


def _init_worker(config: dict, book) -> None:
    global _WORKER
    _WORKER = SelfPlay(DatagenConfig(**config), book)


def _play(index: int) -> Game:
    return _WORKER.play(index)


def generate(run: DatagenRun, concurrency: int = 1, progress: bool = True, log=print) -> dict:
    """Play the run's remaining games (in `concurrency` processes) and commit them in order;
    returns the statistics."""
    from tqdm import tqdm

    c = run.config
    first = run.state["games"]
    book = load_book(c.openings) if c.openings else None
    todo = range(first, c.games)
    stats = run.state["stats"]
    t0 = time.monotonic()
    pos0 = stats["positions"]
    bar = tqdm(total=c.games, initial=first, unit="game", disable=not progress,
               dynamic_ncols=True, smoothing=0.05)
    pool = None
    try:
        if concurrency <= 1 or len(todo) <= 1:
            player = SelfPlay(c, book)
            player.warm()
            games = (player.play(i) for i in todo)
        else:
            import multiprocessing as mp

            SelfPlay(c, book).warm()  # compile once here, not in every worker
            pool = mp.get_context("spawn").Pool(concurrency, _init_worker, (asdict(c), book))
            games = pool.imap(_play, todo)
        for game in games:
            run.commit(game)
            if game.error:
                bar.write(f"game {game.index}: {game.error} (skipped)")
            dt = max(time.monotonic() - t0, 1e-9)
            bar.set_postfix_str(f"{stats['positions']} pos, "
                                f"{(stats['positions'] - pos0) / dt:.0f} pos/s", refresh=False)
            bar.update(1)
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()
    return run.finish()
