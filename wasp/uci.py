"""The UCI protocol: `wasp` with no arguments reads commands on stdin and answers on stdout.

An adapter over `wasp.engine.Engine`: it parses commands and formats answers, nothing more.
`uci` is answered at once; the kernels load meanwhile in a thread (`wasp.background`, started
by `wasp.cli`) and, from a warm cache, are ready before the first `readyok`. With a cold cache
they compile in a child process: `readyok` comes at once, and until they are ready the engine
plays with its fallback search (`wasp.fallback`), saying how far the compile is in an `info
string` at `isready` and `go`. Bad input never ends the engine: it gets an `info string` saying
what was wrong.

Every `go` gets exactly one `bestmove`, in order, however fast a script streams commands:
while a search runs, the reader answers `isready` at once and passes `stop` and `ponderhit`
to it at once; every other command waits in a queue and runs, in order, after the running
search has reported. `quit` stops the search (it reports), answers any queued `go` with a one-ply
search, and exits; at the end of input the queued commands run, a search with a limit runs to
it, an infinite or ponder search is stopped, and then the engine exits.
"""

import sys
import threading
import time
from collections import deque

from wasp.engine import ENGINE_AUTHOR, ENGINE_NAME, Engine, parse_bool, score_uci
from wasp.protocol import GuiOutput

LOG_FILE = "wasp.log"
GO_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes",
              "mate")
GO_FLAGS = ("infinite", "ponder")
GO_LIMITS = ("wtime", "btime", "movetime", "depth", "nodes", "mate")  # a go that ends itself
AT_ONCE = ("stop", "ponderhit")  # act on the running search, ahead of the queue
DURING_SEARCH = (*AT_ONCE, "isready")  # answered at once while a search runs
QUIT, END = object(), object()  # queue markers: `quit` read, end of input
READER, EXECUTOR = "reader", "executor"


def info_line(line) -> str:
    """A `wasp.driver.Line` as a UCI `info` line."""
    nps = line.nodes * 1000 // max(1, line.time_ms)
    bound = f" {line.bound}" if line.bound else ""
    return (f"info depth {line.depth} seldepth {line.seldepth} multipv {line.multipv} "
            f"score {score_uci(line.score)}{bound} nodes {line.nodes} nps {nps} "
            f"hashfull {line.hashfull} tbhits {line.tbhits} time {line.time_ms} "
            f"pv {' '.join(line.pv)}")


class _Await:
    """The queue's head while a search the reader started is out."""

    def __init__(self, thread):
        self.thread = thread


class UciEngine(GuiOutput):
    """UCI in, UCI out, over one Engine."""

    def __init__(self, out=None):
        super().__init__(out)
        self.engine = Engine()
        self.engine.cold_play = True  # readyok and moves at once, whatever compiles
        self._cold_told = False  # an info string said the kernels were not ready
        self.debug = False
        self._cv = threading.Condition()
        self._queue = deque()  # commands (and the QUIT/END markers) in the order read
        self._owner = None  # who runs commands now: None, READER, or EXECUTOR (a search
        # that is out, then the commands queued behind it)
        self._live = None  # the threading.Event of the go whose bestmove is still due
        self._live_unlimited = False  # that search ends only when stopped
        self._ending = None  # QUIT or END once read
        self._executor = None

    # -- output (send: GuiOutput) ----------------------------------------------------------
    def info_string(self, text: str) -> None:
        self.send("info string " + text.replace("\n", " "))

    # -- the reader: commands in, in order ------------------------------------------------
    def handle(self, line: str) -> bool:
        """Take one command line as read; False after `quit` (once the engine has finished).

        While a search runs, `isready` is answered and `stop` and `ponderhit` act on it
        here, at once; everything else runs in order in the executor thread, each command
        after the previous search has reported (so an `isready` after a `setoption` still
        answers once the option is set)."""
        self.log_in(line)
        tokens = line.split()
        if not tokens:
            return True
        cmd = tokens[0]
        if cmd == "quit":
            self._end(QUIT)
            return False
        with self._cv:
            searching = self._live is not None and not self._live.is_set()
            idle = self._owner is None
            if cmd in DURING_SEARCH and searching:
                run = "now"
            elif cmd in AT_ONCE and idle:
                return True  # nothing to stop
            elif idle:
                run, self._owner = "here", READER
            else:  # behind the running search (a stop there reaches the next search)
                self._queue.append(line)
                self._cv.notify_all()
                return True
        if run == "now":
            self.execute(line)
            return True
        thread = self.execute(line)
        with self._cv:
            if self._live is not None:  # a search is out: the executor waits for it
                self._owner = EXECUTOR
                self._queue.appendleft(_Await(thread))
                self._start_executor()
            else:
                self._owner = None
            self._cv.notify_all()
        return True

    def finish(self) -> None:
        """End of input: run what is queued, let limited searches end, stop the others."""
        self._end(END)

    def _end(self, marker) -> None:
        with self._cv:
            self._ending = marker
            if self._owner is not None:
                self._queue.append(marker)
                self._cv.notify_all()
            while self._owner is not None:
                self._cv.wait()

    def _start_executor(self) -> None:
        if self._executor is None:
            self._executor = threading.Thread(target=self._work, name="wasp-uci", daemon=True)
            self._executor.start()

    # -- the executor: a search that is out, then what was queued behind it ----------------
    def _work(self) -> None:
        while True:
            with self._cv:
                while not (self._owner == EXECUTOR and self._queue):
                    self._cv.wait()
                item = self._queue.popleft()
                if item is QUIT or item is END:
                    self._queue.clear()
            if isinstance(item, _Await):
                self._await_search(item.thread)
            elif isinstance(item, str):
                thread = self.execute(item)
                if self._live is not None:
                    self._await_search(thread)
            with self._cv:
                if self._owner == EXECUTOR and not self._queue:
                    self._owner = None
                self._cv.notify_all()

    def _await_search(self, thread) -> None:
        """Wait for the running go's bestmove; meanwhile apply a `stop`, `ponderhit` or
        `isready` queued behind it, and stop it when the input has ended (`quit`; an
        unlimited search at the end of input)."""
        done, cut = self._live, False
        while done is not None and not done.is_set():
            line = None
            with self._cv:
                if self._queue and isinstance(self._queue[0], str) and \
                        self._queue[0].split()[0] in DURING_SEARCH:
                    line = self._queue.popleft()
                elif not cut and (self._ending is QUIT
                                  or self._ending is END and self._live_unlimited):
                    line, cut = "stop", True
                elif thread is not None and not thread.is_alive():
                    break  # the search thread ended without a move: answered below
                else:
                    self._cv.wait(0.5)
                    continue
            self.execute(line)
        if done is not None and not done.is_set():
            self._bestmove(self._fallback_move(), None, None, done)

    def execute(self, line: str):
        """Run one command now; returns a `go`'s search thread (None for the rest)."""
        tokens = line.strip().split()
        if not tokens:
            return None
        cmd, args = tokens[0], tokens[1:]
        try:
            handler = COMMANDS.get(cmd)
            if handler is None:
                self.info_string(f"unknown command: {line.strip()[:80]}")
            else:
                return handler(self, args)
        except Exception as exc:  # the engine never dies on bad input
            self.info_string(f"error in '{line.strip()[:80]}': {type(exc).__name__}: {exc}")
        return None

    def _fallback_move(self) -> str:
        """A legal move when a go cannot search (its bestmove is still due)."""
        position = self.engine.position
        legal = position.legal_moves() if position is not None else []
        return legal[0] if legal else "0000"

    def cmd_uci(self, args):
        # One write: a thread loading the kernels holds the GIL between writes.
        self.send("\n".join([
            f"id name {ENGINE_NAME}",
            f"id author {ENGINE_AUTHOR}",
            *(option.uci() for option in self.engine.options()),
            "option name Log type check default false",
            "uciok",
        ]))

    def cmd_debug(self, args):
        self.debug = bool(args) and args[0] == "on"

    def cmd_isready(self, args):
        self.engine.load()
        self._kernel_news(again=False)
        self.send("readyok")

    def _kernel_news(self, again: bool = True) -> None:
        """An info string while the kernels are not ready (`again`: also when one said so
        before), and one when they become so."""
        news = self.engine.kernel_news()
        if news is not None:
            if again or not self._cold_told:
                self.info_string(news)
            self._cold_told = True
        elif self._cold_told:
            self.info_string("kernels ready: the full-speed search plays from here")
            self._cold_told = False

    def cmd_ucinewgame(self, args):
        self.engine.new_game()

    def cmd_setoption(self, args):
        if not args or args[0] != "name":
            self.info_string("usage: setoption name <id> [value <x>]")
            return
        if "value" in args:
            i = args.index("value")
            name, value = " ".join(args[1:i]), " ".join(args[i + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        if name.lower() == "log":
            self._set_log(parse_bool(value))
            return
        self._apply(lambda: self.engine.set_option(name, value), "error: {}; option unchanged")

    def _apply(self, change, unchanged: str) -> None:
        """Run `change` (an Engine call that returns a note or None) and tell its note, or the
        ValueError it raised through the `unchanged` template, as an info string."""
        try:
            note = change()
        except ValueError as exc:
            self.info_string(unchanged.format(exc))
            return
        if note:
            self.info_string(note)

    def _set_log(self, on: bool) -> None:
        if on and self.log is None:
            try:
                self.log = open(LOG_FILE, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                self.info_string(f"cannot open log file: {exc}")
        elif not on and self.log is not None:
            self.log.close()
            self.log = None

    def cmd_position(self, args):
        if not args:
            raise ValueError("position needs startpos or fen")
        moves = []
        if "moves" in args:
            i = args.index("moves")
            args, moves = args[:i], args[i + 1:]
        if args[0] == "startpos":
            fen = None
        elif args[0] == "fen":
            fen = " ".join(args[1:])
        else:
            raise ValueError(f"position: expected startpos or fen, got {args[0]!r}")
        self.engine.abandon()
        self._apply(lambda: self.engine.set_position(fen, moves),
                    "bad FEN, position unchanged: {}")

    def cmd_go(self, args):
        go_time = time.monotonic()  # the budget runs from here: the GUI's clock already does
        opts, searchmoves, i = {}, [], 0
        while i < len(args):
            a = args[i]
            if a in GO_NUMBERS and i + 1 < len(args):
                try:
                    opts[a] = int(args[i + 1])
                except ValueError:
                    self.info_string(f"go: {a} needs a number, got {args[i + 1]!r}")
                i += 2
            elif a in GO_FLAGS:
                opts[a] = True
                i += 1
            elif a == "searchmoves":
                i += 1
                while i < len(args) and args[i] not in GO_NUMBERS + GO_FLAGS:
                    searchmoves.append(args[i])
                    i += 1
            else:
                self.info_string(f"go: ignored {a!r}")
                i += 1
        if self._ending is QUIT:  # answered, as briefly as a legal answer can be
            opts = {"depth": 1}
        done = threading.Event()
        self._live_unlimited = (opts.get("infinite", False) or opts.get("ponder", False)
                                or not any(k in opts for k in GO_LIMITS))
        try:
            self.engine.load()
            self._kernel_news()
            white = self.engine.position.white_to_move
            thread = self.engine.go(
                time_left=opts.get("wtime" if white else "btime"),
                inc=opts.get("winc" if white else "binc", 0), movestogo=opts.get("movestogo"),
                movetime=opts.get("movetime"), depth=opts.get("depth"), nodes=opts.get("nodes"),
                mate=opts.get("mate"), infinite=opts.get("infinite", False),
                ponder=opts.get("ponder", False), searchmoves=searchmoves, start=go_time,
                on_info=lambda line: self.send(info_line(line)),
                on_currmove=lambda d, m, k: self.send(
                    f"info depth {d} currmove {m} currmovenumber {k}"),
                on_done=lambda best, ponder, result: self._bestmove(best, ponder, result, done),
                on_error=self.info_string)
        except Exception as exc:  # still one bestmove for this go
            self.info_string(f"go failed: {type(exc).__name__}: {exc}")
            if not done.is_set():
                self._bestmove(self._fallback_move(), None, None, done)
            return None
        with self._cv:  # from here a `stop` read reaches this search at once
            if not done.is_set():
                self._live = done
        return thread

    def _bestmove(self, best, ponder, result, done) -> None:
        if self.engine.move_source == "book":
            self.info_string(f"book move {best}")
        self.send(f"bestmove {best} ponder {ponder}" if ponder else f"bestmove {best}")
        with self._cv:
            done.set()
            if self._live is done:
                self._live = None
                if self._owner == EXECUTOR and not self._queue:
                    self._owner = None  # nothing waits: the next command runs at once
            self._cv.notify_all()

    def cmd_stop(self, args):
        self.engine.stop()

    def cmd_ponderhit(self, args):
        self.engine.ponderhit()

    def cmd_d(self, args):
        position = self.engine.position
        if position is not None:
            self.send(str(position))
            self.send(f"Fen: {position.fen()}")


COMMANDS = {
    "uci": UciEngine.cmd_uci,
    "debug": UciEngine.cmd_debug,
    "isready": UciEngine.cmd_isready,
    "ucinewgame": UciEngine.cmd_ucinewgame,
    "setoption": UciEngine.cmd_setoption,
    "position": UciEngine.cmd_position,
    "go": UciEngine.cmd_go,
    "stop": UciEngine.cmd_stop,
    "ponderhit": UciEngine.cmd_ponderhit,
    "d": UciEngine.cmd_d,
}


def main(lines=None) -> int:
    """Run UCI on stdin (or the given lines); returns the exit code. The protocol switch to
    xboard happens in `wasp.cli`, which reads the first word."""
    return UciEngine().serve(lines)


if __name__ == "__main__":
    sys.exit(main())
