"""The engine layer: one `Engine` behind every front end (UCI, xboard, terminal play, the browser
board), as Stockfish's engine.cpp is behind its uci.cpp.

It owns the position and the game's history, the options (hash, MultiPV, Move Overhead, the
evaluation weights of `EvalFile`, the search parameters and `SearchFile`, the technique
switches, the book, the Syzygy tables of `SyzygyPath` and their root probing), the time
budget with the lag it learns from the clocks, the search thread with stop and ponder, the
legal-move fall-back and the score texts. Front ends only parse their input and format their
output.

Importing this module is light (no numba, nor wasp.fen, which imports it): the option list
is known before the kernels load, so a GUI gets `uciok` at once. `Engine.load()` waits for the
kernels of the evaluation in use, unless the engine plays while they compile (`cold_play`, the
protocols' choice): then, until they are ready, the game is kept on python-chess's board and
searched by `wasp.fallback`, and `kernel_news()` says how far the compile is.
"""

import os
import threading
import time
from dataclasses import dataclass

from wasp.searchparams import PARAMS as SEARCH_PARAMS
from wasp.searchparams import SWITCH_DEFAULTS, TECHNIQUES, check_spin, check_value
from wasp.searchparams import defaults as search_defaults

ENGINE_NAME = "Wasp-Py 0.1"
ENGINE_AUTHOR = "the Wasp-Py developers (after John Stanback's Wasp 1.02)"
HASH_DEFAULT, HASH_MAX = 16, 4096
OVERHEAD_DEFAULT, OVERHEAD_MAX = 30, 5000
MULTIPV_MAX = 64
SYZYGY_LIMIT_DEFAULT, SYZYGY_LIMIT_MAX = 7, 7
EMPTY = "<empty>"  # UCI's word for an empty string option
EVALFILES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "evalfiles")
DEFAULT_NET = "wasp-py-3.nnue"  # Wasp-Py's own net, shipped in EVALFILES_DIR (docs/nnue.md)


@dataclass(frozen=True)
class Option:
    """One engine option, as both protocols declare it."""

    name: str
    kind: str  # "spin", "check", "string", "file"/"path" (a file, directories: string in
    # UCI), "button"
    default: object = None
    lo: int | None = None
    hi: int | None = None
    meaning: str = ""

    def uci(self) -> str:
        """`option name ... type ...` (UCI)."""
        if self.kind == "button":
            return f"option name {self.name} type button"
        if self.kind == "check":
            return f"option name {self.name} type check default {str(self.default).lower()}"
        if self.kind in ("string", "file", "path"):
            return f"option name {self.name} type string default {self.default or EMPTY}"
        return (f"option name {self.name} type spin default {self.default} min {self.lo} "
                f"max {self.hi}")

    def xboard(self) -> str:
        """The `option="..."` of a CECP `feature` line."""
        if self.kind == "button":
            return f'option="{self.name} -button"'
        if self.kind == "check":
            return f'option="{self.name} -check {int(bool(self.default))}"'
        if self.kind in ("string", "file", "path"):
            return f'option="{self.name} -{self.kind} {self.default or ""}"'
        return f'option="{self.name} -spin {self.default} {self.lo} {self.hi}"'


OPTIONS = (
    Option("Hash", "spin", HASH_DEFAULT, 1, HASH_MAX, "transposition table size (MB)"),
    Option("Threads", "spin", 1, 1, 1, "search threads (Wasp-Py searches with one)"),
    Option("MultiPV", "spin", 1, 1, MULTIPV_MAX, "principal variations to report"),
    Option("Ponder", "check", False, meaning="the GUI may let the engine ponder"),
    Option("Clear Hash", "button", meaning="forget the transposition table and history"),
    Option("Move Overhead", "spin", OVERHEAD_DEFAULT, 0, OVERHEAD_MAX,
           "milliseconds kept back per move for the GUI and the pipes"),
    Option("EvalFile", "file", DEFAULT_NET,
           meaning="a net (bullet's layout; default: Wasp-Py's own) or an evaluation parameter "
                   "file (wasp.params format); empty: the hand-written evaluation"),
    Option("SearchFile", "file", "", meaning="search parameter file (Name = value lines)"),
    Option("OwnBook", "check", False, meaning="play book moves from BookFile"),
    Option("BookFile", "file", "", meaning="a Polyglot opening book"),
    Option("SyzygyPath", "path", "", meaning="Syzygy tablebase directories, ':'-separated"),
    Option("SyzygyProbeLimit", "spin", SYZYGY_LIMIT_DEFAULT, 0, SYZYGY_LIMIT_MAX,
           "probe the tables only with this many pieces or fewer (0: never)"),
    Option("Syzygy50MoveRule", "check", True,
           meaning="a win the 50-move rule draws (cursed) counts as a draw"),
    Option("UCI_Chess960", "check", False,
           meaning="Chess960: castling written as the king taking its own rook"),
    *(Option(name, "check", SWITCH_DEFAULTS[name], meaning=f"search technique {name}")
      for name in TECHNIQUES),
    *(Option(p.name, "spin", p.default, p.lo, p.hi, p.meaning) for p in SEARCH_PARAMS),
)
_BY_NAME = {o.name.lower(): o for o in OPTIONS}
_SEARCH_PARAM_NAMES = {p.name for p in SEARCH_PARAMS}


def _binary(path) -> bool:
    """A file with a NUL byte in its head: not text (EvalFile: then it can only be a net)."""
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(4096)
    except OSError:
        return False


def eval_file_path(value: str) -> str:
    """The file an EvalFile value names: the path as given, or else, for a bare name, the file
    of that name shipped in wasp/evalfiles (as Stockfish finds its default net by name)."""
    if os.path.exists(value) or os.path.dirname(value):
        return value
    shipped = os.path.join(EVALFILES_DIR, value)
    return shipped if os.path.exists(shipped) else value


def load_eval_file(path):
    """An EvalFile's evaluation: a net (`wasp.nnue.netfile.read_net`), told by its NET.json or
    its content, or the hand-written evaluation's weight vector from a params file; ValueError
    in one line."""
    from wasp import params
    from wasp.nnue import arch as _arch
    from wasp.nnue import netfile

    path = eval_file_path(path)
    try:
        if _arch.arch_of(path) is not None or netfile.looks_like_net(path) or _binary(path):
            return netfile.read_net(path)  # a net (ValueError: no net has that size)
        return params.load(path)  # ValueError names the file, line and parameter
    except (OSError, ValueError) as exc:
        raise ValueError(f"EvalFile not loaded: {exc}") from None


def parse_bool(value) -> bool:
    v = str(value).strip().lower()
    if v in ("true", "on", "1", "yes"):
        return True
    if v in ("false", "off", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def wait_for_kernels(group: str = "net") -> None:
    """Wait for a kernel group (`wasp.warmup`; loading it here if no thread does): first, so
    that no kernel module is imported by two threads at once."""
    from wasp.warmup import warmup

    warmup(kernels=group)


# ---------------------------------------------------------------------------
# Score texts (scores are centipawns from the side to move's view)


def _mate_moves(score: int) -> int | None:
    """Moves to mate (negative: being mated), or None for a centipawn score."""
    from wasp.types import MATE, MATE_BOUND

    if abs(score) < MATE_BOUND:
        return None
    moves = (MATE - abs(score) + 1) // 2
    return moves if score > 0 else -moves


def score_uci(score: int) -> str:
    """`cp 35` or `mate 3` / `mate -2` (UCI)."""
    mate = _mate_moves(score)
    return f"cp {score}" if mate is None else f"mate {mate}"


XBOARD_MATE = 100000  # CECP: mate in N is posted as 100000 + N


def score_xboard(score: int) -> int:
    """The score of a CECP thinking line: centipawns, or +-(100000 + N) for mate in N."""
    mate = _mate_moves(score)
    if mate is None:
        return score
    return XBOARD_MATE + mate if mate > 0 else -XBOARD_MATE + mate


def score_white(score: int, turn: int) -> str:
    """The score as White sees it, for people: +0.35, #3, #-2."""
    white = score if turn == 0 else -score
    mate = _mate_moves(white)
    if mate is None:
        return f"{white / 100:+.2f}"
    return f"#{mate}"


def _tablebase_info(on_info, probe):
    """`on_info` with the tables' score (unless the search found a mate) and their hits."""
    if on_info is None:
        return None
    from wasp.types import MATE_BOUND

    def info(line):
        if line.pv:
            score = probe.score(line.pv[0], line.score, MATE_BOUND)
            if score != line.score:
                line.score, line.bound = score, ""
        line.tbhits = probe.hits
        on_info(line)

    return info


# ---------------------------------------------------------------------------


@dataclass
class _Callbacks:
    """What a search tells its front end: info lines, the current move, the move, errors."""

    on_info: object = None
    on_currmove: object = None
    on_done: object = None
    on_error: object = None


class _Search:
    """One running search: its own stop and release events."""

    def __init__(self, kind: str):
        self.kind = kind  # "think", "ponder" (UCI go ponder) or "analyze"
        self.stop = threading.Event()  # the search should end
        self.release = threading.Event()  # a held result (infinite, ponder) may be delivered
        self.abandoned = False  # end without delivering the result
        self.delivered = False  # the result is out: the thread is only finishing (or pondering)
        self.thread: threading.Thread | None = None
        self.limits = None
        self.budget = None  # the clock budget a ponder search gets at ponderhit
        self.probe = None  # wasp.tablebase.RootProbe when the tables cover the root
        self.fallback = None  # wasp.fallback.Search while the kernels compile


class Engine:
    """The engine behind the front ends.

    >>> e = Engine(); e.load()
    >>> e.set_option("RazorMargin1", "150"); e.set_position(moves=["e2e4"])
    >>> e.go(depth=6, on_done=lambda best, ponder, result: print(best))
    >>> e.wait()
    """

    def __init__(self):
        self.hash_mb = HASH_DEFAULT
        self.multipv = 1
        self.overhead = OVERHEAD_DEFAULT
        self.ponder_allowed = False
        self.own_book = False
        self.chess960 = False  # UCI_Chess960, or xboard's variant fischerandom
        self.book = None  # wasp.book.Book
        self.tablebases = None  # wasp.tablebase.Tablebases of SyzygyPath
        self.probe_limit = SYZYGY_LIMIT_DEFAULT
        self.syzygy_50 = True
        self.eval_file = DEFAULT_NET  # "": the hand-written evaluation's built-in weights
        self.search_file = ""
        self._W = None  # EvalFile's net or weights once read (the default net: at first use)
        self.search_values = search_defaults()
        self.techniques = dict(SWITCH_DEFAULTS)
        self.searcher = None  # wasp.driver.Searcher, built by load()
        self.position = None  # wasp.board.Position, with the game's moves
        self.start_fen = None  # the game's first position: a FEN, None for the start position
        self.lag_ms = 0.0  # clock lost outside our own thinking, learnt from the GUI's clocks
        self.last_think = None  # [start_fen, moves, clock, inc, go_time, done_time]
        self._search: _Search | None = None
        self.move_source = None  # where the last delivered move came from: book, search,
        # fallback (the search of wasp.fallback, while the kernels compile), legal
        self.cold_play = False  # play with wasp.fallback while the kernels compile (protocols)
        self.kernel_group = None  # the wasp.warmup group the searcher was built for
        self._lock = threading.Lock()  # guards _search

    def __repr__(self):
        state = "searching" if self.searching() else "idle"
        fen = self.position.fen() if self.position is not None else self.start_fen or "startpos"
        return f"<Engine {state} hash={self.hash_mb}MB multipv={self.multipv} fen={fen!r}>"

    # -- loading -------------------------------------------------------------------------
    @property
    def W(self):
        """EvalFile's evaluation: a net (`wasp.nnue.netfile.read_net`), the hand-written
        evaluation's weights, or None for its built-in ones. The default net is read at first
        use, so that `uci` is answered before any file is read."""
        if self._W is None and self.eval_file:
            self._W = load_eval_file(self.eval_file)
        return self._W

    def evaluation_group(self) -> str:
        """The kernel group (`wasp.warmup`) of EvalFile's evaluation: "net" or "hand" (the
        default net is known to be one without reading it, which imports numba)."""
        if self._W is None and self.eval_file == DEFAULT_NET:
            return "net"
        W = self.W
        if W is None:
            return "hand"
        from wasp.nnue.netfile import is_net

        return "net" if is_net(W) else "hand"

    def kernels_ready(self, wait=False) -> bool:
        """Can the kernel search serve the next command? Without `cold_play` it always can
        (after a wait for the kernels); with it, once the background has them
        (`wasp.background`; a load from a warm cache is waited for, a compile only with
        `wait`)."""
        group = self.evaluation_group()
        if not self.cold_play:
            wait_for_kernels(group)
            return True
        from wasp import background

        background.request(group)
        return background.wait_ready(group) if wait else background.wait_loaded(group)

    def kernel_news(self) -> str | None:
        """What the kernels of the evaluation in use are doing, while they are not ready
        (`cold_play`); None once they are."""
        if not self.cold_play:
            return None
        from wasp import background

        return background.status(self.evaluation_group())

    def load(self, wait=False) -> bool:
        """Build the searcher (and the position on the kernels' board) when their kernels
        are ready, waiting for them unless `cold_play` (and through a compile with `wait`); the
        options set so far apply. False: they are not ready, and the game is on
        `wasp.fallback`'s board."""
        group = self.evaluation_group() if self.searcher is not None else None
        if self.searcher is not None and group == self.kernel_group:
            return True
        if not self.kernels_ready(wait):
            self.searcher = None  # another evaluation's searcher (EvalFile changed)
            self.position = self._board(self.position, cold=True)
            return False
        from wasp.driver import Searcher

        searcher = Searcher(self.hash_mb)
        searcher.multipv = self.multipv
        for name, on in self.techniques.items():
            searcher.set_technique(name, on)
        searcher.set_search_params(self.search_values)
        if self.W is not None:
            searcher.set_weights(self.W)
        self.searcher, self.kernel_group = searcher, self.evaluation_group()
        self.position = self._board(self.position, cold=False)
        return True

    def _board(self, game, cold: bool):
        """The game `game` (None: this game's start) on the kernels' board
        (`wasp.board.Position`), or with `cold` on python-chess's (`wasp.fallback.Board`);
        `game` itself when it is on that board already."""
        if cold:
            from wasp.fallback import Board
        else:
            from wasp.board import Position as Board
        if isinstance(game, Board):
            return game
        from wasp.fallback import STARTING_FEN

        board = Board(self.start_fen or STARTING_FEN, self.chess960)
        for text in game.move_stack() if game is not None else ():
            board.push_uci(text)
        return board

    # -- options -------------------------------------------------------------------------
    @staticmethod
    def options() -> tuple[Option, ...]:
        return OPTIONS

    def set_option(self, name: str, value="") -> str | None:
        """Set an option by name (any case); returns a message to show, or None.

        ValueError names what is wrong (unknown option, a value out of range, a file that
        cannot be read) and nothing changes.
        """
        option = _BY_NAME.get(name.strip().lower())
        if option is None:
            raise ValueError(f"unknown option: {name}")
        name = option.name
        value = str(value).strip()
        if self.searching() and name not in ("Ponder",):
            raise ValueError(f"option {name} ignored while searching")
        if option.kind == "spin" and name in _SEARCH_PARAM_NAMES:
            i, v = check_value(name, value)
            self.search_values[i] = v
            if self.searcher is not None:
                self.searcher.set_search_param(name, v)
            return None
        if option.kind == "check" and name in self.techniques:
            on = parse_bool(value)
            self.techniques[name] = on
            if self.searcher is not None:
                self.searcher.set_technique(name, on)
            return None
        setter = getattr(self, "_set_" + name.lower().replace(" ", "_"))
        return setter(option, value)

    def configure(self, settings) -> list[str]:
        """Set options from (name, value) pairs in order (a command line's); returns their
        messages. ValueError names the first bad one."""
        return [m for name, value in settings if (m := self.set_option(name, value))]

    @staticmethod
    def _spin(option: Option, value: str) -> int:
        return check_spin(option.name, value, option.lo, option.hi)

    def _set_hash(self, option, value):
        self.hash_mb = self._spin(option, value)
        if self.searcher is not None:
            self.searcher.set_hash(self.hash_mb)

    def _set_threads(self, option, value):
        self._spin(option, value)

    def _set_multipv(self, option, value):
        self.multipv = self._spin(option, value)
        if self.searcher is not None:
            self.searcher.multipv = self.multipv

    def _set_ponder(self, option, value):
        self.ponder_allowed = parse_bool(value)

    def _set_clear_hash(self, option, value):
        if self.searcher is not None:
            self.searcher.clear()

    def _set_move_overhead(self, option, value):
        self.overhead = self._spin(option, value)

    def _set_evalfile(self, option, value):
        if not value or value == EMPTY:
            self.eval_file, self._W = "", None
            if self.searcher is not None:
                from wasp.evaluate import default_weights

                self.searcher.set_weights(default_weights())
            return "EvalFile: the hand-written evaluation, its built-in weights"
        from wasp.nnue import netfile

        W = load_eval_file(value)
        self.eval_file, self._W = value, W
        if self.searcher is not None:
            self.searcher.set_weights(W)
        if netfile.is_net(W):
            return f"EvalFile {value} loaded: a net, {netfile.describe(W)}"
        return f"EvalFile {value} loaded"

    def _set_searchfile(self, option, value):
        from wasp import searchparams

        if not value or value == EMPTY:
            values = searchparams.defaults()
            message = "SearchFile: the default search parameters"
        else:
            try:
                values = searchparams.load(value)
            except OSError as exc:
                raise ValueError(f"SearchFile not loaded: {exc}") from None
            message = f"SearchFile {value} loaded"
        self.search_file = "" if not value or value == EMPTY else value
        self.search_values = values
        if self.searcher is not None:
            self.searcher.set_search_params(values)
        return message

    def _set_ownbook(self, option, value):
        self.own_book = parse_bool(value)

    def _set_uci_chess960(self, option, value):
        self.chess960 = parse_bool(value)
        if self.position is not None and self.chess960:
            self.position.chess960 = True  # a standard-looking game now castles king-takes-rook

    def _set_bookfile(self, option, value):
        if not value or value == EMPTY:
            self.book = None
            return None
        wait_for_kernels(self.evaluation_group())  # wasp.book imports them
        from wasp.book import Book

        try:
            book = Book(value)
        except (OSError, ValueError) as exc:
            raise ValueError(f"BookFile not loaded: {exc}") from None
        self.book = book
        return f"BookFile {value}: {len(book)} entries"

    def _set_syzygypath(self, option, value):
        from wasp.tablebase import Tablebases

        if not value or value == EMPTY:
            if self.tablebases is not None:
                self.tablebases.close()
            self.tablebases = None
            return "SyzygyPath: no tables"
        try:
            tables = Tablebases(value)  # lists the files; they open at the first probe
        except ValueError as exc:
            raise ValueError(f"SyzygyPath not set: {exc}") from None
        if self.tablebases is not None:
            self.tablebases.close()
        self.tablebases = tables
        return f"SyzygyPath {value}: {tables.files} table files, up to {tables.largest} pieces"

    def _set_syzygyprobelimit(self, option, value):
        self.probe_limit = self._spin(option, value)

    def _set_syzygy50moverule(self, option, value):
        self.syzygy_50 = parse_bool(value)

    def root_probe(self, position=None, searchmoves=()):
        """The tables' verdict on the root moves (a wasp.tablebase.RootProbe), or None when
        no tables cover the position."""
        position = position if position is not None else self.position
        if self.tablebases is None or self.probe_limit == 0 or self._cold(position):
            return None
        return self.tablebases.root_probe(position, self.probe_limit, self.syzygy_50,
                                          set(searchmoves))

    # -- the game ------------------------------------------------------------------------
    def new_game(self) -> None:
        """Forget the game and what was learnt (`ucinewgame`, xboard `new`)."""
        self.abandon()
        if self.load():
            self.searcher.clear()
        self.last_think = None
        self.set_position()

    def set_position(self, fen: str | None = None, moves=()) -> str | None:
        """The position after `moves` (UCI) from `fen` (None: the start position).

        A bad FEN raises ValueError and leaves the position as it was; at an illegal move the
        position stays at the move before it, and the returned warning names the move.
        """
        if self.load():
            from wasp.board import Position
        else:
            from wasp.fallback import Board as Position
        from wasp.fallback import STARTING_FEN

        position = Position(fen or STARTING_FEN, self.chess960)
        error = None
        for text in moves:
            try:
                position.push_uci(text)
            except ValueError:
                error = f"illegal move {text}: position set up to the move before it"
                break
        self.start_fen, self.position = fen, position
        return error

    def push_move(self, text: str) -> str:
        """Play a move given in UCI or SAN; returns it in UCI (ValueError if neither)."""
        if not self.load():
            try:
                self.position.push_uci(text)
            except ValueError:
                self.position.push_san(text)  # ValueError says why
            return self.position.move_stack()[-1]
        from wasp.board import IllegalMoveError

        try:
            code = self.position.parse_uci(text)
        except IllegalMoveError:
            from wasp.san import parse_san

            code = parse_san(self.position, text)  # IllegalMoveError says why
        self.position.push(code)
        return self.position.move_stack()[-1]

    @staticmethod
    def _cold(position) -> bool:
        """Is `position` missing, or on the fallback's board (the kernels not ready)?"""
        from wasp.fallback import Board

        return position is None or isinstance(position, Board)

    def undo(self) -> str:
        """Take back the last move (IndexError when there is none)."""
        self.load()
        return self.position.pop()

    def game_over(self):
        """(result, reason) when the game has ended, else None."""
        return self.position.game_over()

    def book_move(self, rng=None) -> str | None:
        """A move from the book for the current position, when OwnBook is on."""
        if not self.own_book or self.book is None or self._cold(self.position):
            return None
        return self.book.choose(self.position, rng)

    # -- thinking ------------------------------------------------------------------------
    def go(self, *, time_left=None, inc=0, movestogo=None, movetime=None, depth=None,
           nodes=None, mate=None, infinite=False, ponder=False, analyze=False,
           searchmoves=(), start=None, on_info=None, on_currmove=None, on_done=None,
           on_error=None, ponder_after=False, use_book=True, learn_lag=True):
        """Think about the current position in a worker thread; returns that thread (None
        when the move came from the book, delivered before this returns).

        The clock arguments are the side to move's, in milliseconds (`start`: when the
        GUI's command arrived, time.monotonic(); the budget counts from there). `on_done(best,
        ponder, result)` gets the move (a book move with result None; a legal move if the
        search failed; "0000" with no legal move). An infinite or `ponder` search holds its
        result until `stop()` or `ponderhit()`; `analyze` never delivers one. A search that
        fails tells `on_error(text)` why (and a legal move is still delivered). With
        `ponder_after` the thread then thinks on the expected reply until stopped. With
        `learn_lag` False (the GUI sent no fresh clock) this move teaches the lag nothing.
        """
        from wasp.timeman import allocate

        start = time.monotonic() if start is None else start
        self.abandon()
        # With no clock (depth, nodes or mate alone) nothing is lost by waiting for the
        # kernels, and the move is the kernel search's, as a warm engine's would be.
        clockless = (time_left is None and movetime is None
                     and not (infinite or analyze or ponder))
        kernels = self.load(wait=clockless)
        position = self.position.copy()
        self._observe_lag(time_left if learn_lag else None)
        budget = allocate(time_left, inc, movestogo, movetime,
                          max(self.overhead, int(self.lag_ms)), infinite=infinite or analyze)
        thinking = not (ponder or infinite or analyze)
        if time_left is not None and thinking:
            self.last_think = [self.start_fen, self.position.move_stack(), time_left, inc,
                                start, None]
        calls = _Callbacks(on_info, on_currmove, on_done, on_error)
        if use_book and thinking and self._book_reply(searchmoves, calls):
            return None
        probe, searchmoves = self._root_tables(position, searchmoves, calls)
        limits = self._limits(depth, nodes, mate, time_left, movetime, thinking, ponder,
                              searchmoves, start, budget)
        search = _Search("analyze" if analyze else "ponder" if ponder else "think")
        search.limits, search.budget, search.probe = limits, budget, probe
        if thinking:
            search.release.set()
        search.thread = threading.Thread(
            target=self._run if kernels else self._run_fallback,
            args=(search, position, calls, ponder_after), name="wasp-search", daemon=True)
        with self._lock:
            self._search = search
        search.thread.start()
        return search.thread

    def _book_reply(self, searchmoves, calls) -> bool:
        """Deliver a book move (OwnBook) when there is one among `searchmoves`."""
        move = self.book_move()
        if not move or searchmoves and move not in searchmoves:
            return False
        self.move_source = "book"
        if calls.on_done is not None:
            calls.on_done(move, None, None)
        return True

    def _root_tables(self, position, searchmoves, calls):
        """The tables' verdict on the root (None when they do not cover it) and the moves to
        search: only those that keep the best result. `calls.on_info` then reports the
        tables' score."""
        try:
            probe = self.root_probe(position, searchmoves)
        except Exception as exc:  # a damaged table file: search without the tables
            if calls.on_error is not None:
                calls.on_error(f"tablebase probe failed: {type(exc).__name__}: {exc}")
            probe = None
        if probe is None:
            return None, searchmoves
        calls.on_info = _tablebase_info(calls.on_info, probe)
        return probe, probe.moves

    @staticmethod
    def _limits(depth, nodes, mate, time_left, movetime, thinking, ponder, searchmoves, start,
                budget):
        """The driver's limits of one go (a mate search without a clock gets a depth)."""
        from wasp.limits import Limits

        if depth is not None:
            depth = max(1, int(depth))
        if mate is not None and depth is None and time_left is None and movetime is None:
            depth = min(2 * max(1, mate) + 8, 100)
        limits = Limits(depth=depth, nodes=max(1, nodes) if nodes is not None else None,
                        mate=mate, infinite=not thinking, ponder=ponder,
                        searchmoves=list(searchmoves), start=start)
        if not ponder:
            limits.soft_ms, limits.hard_ms = budget.soft, budget.hard
        return limits

    def _run(self, search, position, calls, ponder_after):
        searcher = self.searcher
        searcher.external_stop = search.stop
        searcher.on_currmove = calls.on_currmove
        on_done = calls.on_done
        result = None
        try:
            result = searcher.search(position, search.limits, on_info=calls.on_info)
        except Exception as exc:  # reported; a legal move is still played
            if calls.on_error is not None:
                calls.on_error(f"search error: {type(exc).__name__}: {exc}")
        finally:
            searcher.on_currmove = None
        if result is not None and search.probe is not None and result.best != "0000":
            from wasp.types import MATE_BOUND

            result.score = search.probe.score(result.best, result.score, MATE_BOUND)
        if not self._deliver(search, position, on_done, result, "search"):
            return
        if ponder_after and result.ponder and not search.stop.is_set():
            from wasp.driver import Limits

            expected = position.copy()
            try:
                expected.push_uci(result.best)
                expected.push_uci(result.ponder)
            except ValueError:
                return
            search.kind, search.delivered = "ponder", False  # the hash table keeps what it finds
            if not search.stop.is_set():
                searcher.search(expected, Limits(infinite=True))

    def _deliver(self, search, position, on_done, result, source) -> bool:
        """Hand a search's move to `on_done` once it may go (a legal move when the search
        found none); True when `result`'s own move went out."""
        search.release.wait()
        if search.abandoned or search.kind == "analyze" or on_done is None:
            return False
        if self.last_think is not None and self.last_think[4] == search.limits.start:
            self.last_think[5] = time.monotonic()
        search.delivered = True
        if result is None or result.best == "0000":
            legal = position.legal_moves()
            best = legal[0] if legal else "0000"
            self.move_source = "legal"
            on_done(best, None, result)
            return False
        self.move_source = source
        on_done(result.best, result.ponder, result)
        return True

    def _run_fallback(self, search, position, calls, ponder_after):
        """`_run` while the kernels compile: `wasp.fallback`'s search on its board (no
        pondering after the move)."""
        from wasp.fallback import Search
        from wasp.limits import Line, Result

        limits, on_info = search.limits, calls.on_info

        def info(depth, score, nodes, time_ms, pv):
            if on_info is not None:
                on_info(Line(depth, depth, 1, score, "", nodes, time_ms, pv))

        seconds = {k: None if v is None else v / 1000.0
                   for k, v in (("soft", limits.soft_ms), ("hard", limits.hard_ms))}
        fallback = Search(position, depth=limits.depth, nodes=limits.nodes, start=limits.start,
                          stop=search.stop, infinite=limits.infinite or limits.ponder,
                          searchmoves=limits.searchmoves, on_info=info, **seconds)
        search.fallback = fallback
        result = None
        try:
            best, ponder, score, depth, nodes, pv = fallback.run()
            result = Result(best, ponder, score, depth, nodes, fallback.elapsed_ms(), pv)
        except Exception as exc:  # reported; a legal move is still played
            if calls.on_error is not None:
                calls.on_error(f"fallback search error: {type(exc).__name__}: {exc}")
        self._deliver(search, position, calls.on_done, result, "fallback")

    def searching(self) -> bool:
        """Is a search running (a delivered one that is only winding up is not)?"""
        s = self._search
        return (s is not None and s.thread is not None and s.thread.is_alive()
                and not s.delivered)

    def search_kind(self) -> str | None:
        return self._search.kind if self.searching() else None

    def stop(self, wait: bool = True) -> None:
        """End the search; its result is delivered (UCI `stop`, xboard `?`). With `wait`
        False this returns at once (the board's threads, which hold a lock the search's
        callbacks take, use `wait()` later)."""
        with self._lock:
            search = self._search
            if wait:
                self._search = None
        if search is None:
            return
        search.stop.set()
        if self.searcher is not None:
            self.searcher.stop()
        search.release.set()
        if wait and search.thread is not threading.current_thread():
            search.thread.join()

    def move_now(self) -> None:
        """Play the best move so far, without waiting here for it."""
        search = self._search
        if search is None or search.kind != "think":
            return
        if search.fallback is not None:
            search.stop.set()
        elif self.searcher is not None:
            self.searcher.stop()

    def abandon(self) -> None:
        """End the search without delivering its result (a new position, force, quit)."""
        search = self._search
        if search is not None:
            search.abandoned = True
        self.stop()

    def wait(self, timeout=None) -> bool:
        """Wait for the search thread to end; False if it still runs after `timeout`."""
        search = self._search
        if search is None or search.thread is None:
            return True
        search.thread.join(timeout)
        return not search.thread.is_alive()

    def ponderhit(self) -> None:
        """The expected move was played: the ponder search goes on as a timed one."""
        search = self._search
        if search is None or search.kind != "ponder" or not self.searching():
            return
        now = time.monotonic()
        limits, budget, searcher = search.limits, search.budget, self.searcher
        limits.ponder = limits.infinite = False
        search.kind = "think"
        fallback = search.fallback
        if fallback is not None:  # its clock starts now
            if budget is not None and budget.hard is not None:
                fallback.soft = now - fallback.start + budget.soft / 1000.0
                fallback.hard = now - fallback.start + budget.hard / 1000.0
            fallback.infinite = False
            search.release.set()
            return
        elapsed = (now - (limits.start or searcher.search_start or now)) * 1000
        if budget is not None and budget.hard is not None:
            limits.soft_ms = elapsed + budget.soft
            searcher.hard_deadline = now + budget.hard / 1000.0
        search.release.set()

    def _observe_lag(self, clock) -> None:
        """Learn the lag (`wasp.timeman.learn_lag`) when this move is our next one in the
        game of our previous timed move (two plies on)."""
        from wasp.timeman import learn_lag

        last, self.last_think = self.last_think, None
        if last is None or clock is None or last[5] is None:
            return
        fen, moves, lclock, linc, lgo, ldone = last
        now = self.position.move_stack()
        if fen != self.start_fen or len(now) != len(moves) + 2 or now[:len(moves)] != moves:
            return
        self.lag_ms = learn_lag(self.lag_ms, lclock, (ldone - lgo) * 1000.0, linc, clock)

    def close(self) -> None:
        self.abandon()

