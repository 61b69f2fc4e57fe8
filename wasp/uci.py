"""The UCI protocol: `wasp` with no arguments reads commands on stdin and answers on stdout.

`uci` is answered at once; numba and the kernels load meanwhile in a thread (`wasp.warmup`,
started by `wasp.cli`) and are ready before the first `readyok`. The search runs in a worker
thread (its kernels release the GIL), so `stop`, `ponderhit`, `isready` and `quit` are
answered while it thinks. Bad input never ends the engine: it gets an `info string` saying
what was wrong.
"""

import sys
import threading
import time

ENGINE_NAME = "Wasp-Py 0.1"
ENGINE_AUTHOR = "the Wasp-Py developers (after John Stanback's Wasp 1.02)"

# Search switches offered as check options: the same names, in the same order, as
# wasp.movepick.FLAG_NAMES (kept here so `uci` needs no numba import; a test pins them).
TECHNIQUES = (
    "Aspiration", "PVS", "TTCutoff", "IID", "Razoring", "StandPat", "NullMove",
    "NullVerify", "Futility", "LMR", "CheckExt", "Pawn7Ext", "FractionalExt", "Killers",
    "Countermove", "History", "QSearchSEE", "DeltaPruning", "MateDistance",
)

HASH_DEFAULT, HASH_MAX = 16, 4096
OVERHEAD_DEFAULT = 30
MULTIPV_MAX = 64
LOG_FILE = "wasp.log"


class UciEngine:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.searcher = None  # built by _load (imports numba)
        self.position = None
        self.position_spec = ("startpos", [])
        self.hash_mb = HASH_DEFAULT
        self.multipv = 1
        self.overhead = OVERHEAD_DEFAULT
        self.ponder_option = False
        self.debug = False
        self.log = None
        self.pending_techniques = {}
        self.own_book = False
        self.book = None  # a wasp.book.Book once BookFile is set
        self.worker = None
        self.limits = None
        self.ponder_budget = None
        self.release = threading.Event()  # set by stop / ponderhit: bestmove may be sent
        self.external_stop = threading.Event()
        self.waiting_release = False
        # Lag: clock time lost outside our own thinking (pipes, the GUI, a loaded machine),
        # learnt from the clocks the GUI sends; see _observe_lag.
        self.lag_ms = 0.0
        self.last_go = None  # (spec, moves, clock, inc, go_time, bestmove_time) of our last move

    # -- output --------------------------------------------------------------------------
    def send(self, text: str) -> None:
        with self.lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass
            if self.log is not None:
                for line in text.split("\n"):
                    self._log(">> " + line)

    def _log(self, text: str) -> None:
        try:
            self.log.write(f"{time.strftime('%H:%M:%S')} {text}\n")
            self.log.flush()
        except (OSError, ValueError):
            pass

    def info_string(self, text: str) -> None:
        self.send("info string " + text.replace("\n", " "))

    # -- loading ---------------------------------------------------------------------------
    def _load(self) -> None:
        if self.searcher is not None:
            return
        wait_for_kernels()
        from wasp.board import Position
        from wasp.driver import Searcher

        self.searcher = Searcher(self.hash_mb)
        self.searcher.multipv = self.multipv
        for name, on in self.pending_techniques.items():
            self.searcher.set_technique(name, on)
        self.pending_techniques.clear()
        self.Position = Position
        self._set_position(*self.position_spec)

    # -- commands ------------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Run one command line; False after `quit`."""
        if self.log is not None:
            with self.lock:
                self._log("<< " + line)
        tokens = line.strip().split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        try:
            if cmd == "quit":
                self._stop_search()
                return False
            handler = COMMANDS.get(cmd)
            if handler is None:
                self.info_string(f"unknown command: {line.strip()[:80]}")
            else:
                handler(self, args)
        except Exception as exc:  # the engine never dies on bad input
            self.info_string(f"error in '{line.strip()[:80]}': {type(exc).__name__}: {exc}")
        return True

    def cmd_uci(self, args):
        # One write: a thread loading the kernels holds the GIL between writes.
        self.send("\n".join([
            f"id name {ENGINE_NAME}",
            f"id author {ENGINE_AUTHOR}",
            f"option name Hash type spin default {HASH_DEFAULT} min 1 max {HASH_MAX}",
            "option name Threads type spin default 1 min 1 max 1",
            f"option name MultiPV type spin default 1 min 1 max {MULTIPV_MAX}",
            "option name Ponder type check default false",
            "option name Log type check default false",
            "option name Clear Hash type button",
            f"option name Move Overhead type spin default {OVERHEAD_DEFAULT} min 0 max 5000",
            "option name EvalFile type string default <empty>",
            "option name OwnBook type check default false",
            "option name BookFile type string default <empty>",
            *(f"option name {name} type check default true" for name in TECHNIQUES),
            "uciok",
        ]))

    def cmd_debug(self, args):
        self.debug = bool(args) and args[0] == "on"

    def cmd_isready(self, args):
        self._load()
        self.send("readyok")

    def cmd_ucinewgame(self, args):
        self._stop_search()
        self._load()
        self.searcher.clear()
        self.last_go = None

    def _observe_lag(self, clock):
        """Learn the lag (`wasp.timeman.learn_lag`) when this `go` is the next move of the
        game our previous `go` was in."""
        from wasp.timeman import learn_lag

        last, self.last_go = self.last_go, None
        spec, moves = self.position_spec
        if last is None or clock is None or last[5] is None:
            return
        lspec, lmoves, lclock, linc, lgo, lsent = last
        if spec != lspec or len(moves) != len(lmoves) + 2 or moves[:len(lmoves)] != lmoves:
            return  # not the next move of the same game
        self.lag_ms = learn_lag(self.lag_ms, lclock, (lsent - lgo) * 1000.0, linc, clock)

    def cmd_setoption(self, args):
        if not args or args[0] != "name":
            self.info_string("usage: setoption name <id> [value <x>]")
            return
        if "value" in args:
            i = args.index("value")
            name, value = " ".join(args[1:i]), " ".join(args[i + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        key = name.lower()
        if self._searching() and key not in ("ponder", "log"):
            self.info_string(f"option {name} ignored while searching")
            return
        if key == "hash":
            mb = int(value)
            if not 1 <= mb <= HASH_MAX:
                raise ValueError(f"Hash must be 1..{HASH_MAX}")
            self.hash_mb = mb
            if self.searcher is not None:
                self.searcher.set_hash(mb)
        elif key == "threads":
            if int(value) != 1:
                self.info_string("Wasp-Py searches with one thread; Threads stays 1")
        elif key == "multipv":
            k = int(value)
            if not 1 <= k <= MULTIPV_MAX:
                raise ValueError(f"MultiPV must be 1..{MULTIPV_MAX}")
            self.multipv = k
            if self.searcher is not None:
                self.searcher.multipv = k
        elif key == "ponder":
            self.ponder_option = _parse_bool(value)
        elif key == "log":
            self._set_log(_parse_bool(value))
        elif key == "clear hash":
            if self.searcher is not None:
                self.searcher.clear()
        elif key == "move overhead":
            v = int(value)
            if not 0 <= v <= 5000:
                raise ValueError("Move Overhead must be 0..5000")
            self.overhead = v
        elif key == "evalfile":
            self._eval_file(value)
        elif key == "ownbook":
            self.own_book = _parse_bool(value)
        elif key == "bookfile":
            self.book = None
            if value and value != "<empty>":
                wait_for_kernels()  # wasp.book imports them
                from wasp.book import Book

                try:
                    self.book = Book(value)
                except (OSError, ValueError) as exc:
                    self.info_string(f"BookFile not loaded: {exc}")
                    return
                self.info_string(f"BookFile {value}: {len(self.book)} entries")
        else:
            names = {t.lower(): t for t in TECHNIQUES}
            if key in names:
                on = _parse_bool(value)
                if self.searcher is None:
                    self.pending_techniques[names[key]] = on
                else:
                    self.searcher.set_technique(names[key], on)
            else:
                self.info_string(f"unknown option: {name}")

    def _set_log(self, on: bool) -> None:
        if on and self.log is None:
            try:
                self.log = open(LOG_FILE, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                self.info_string(f"cannot open log file: {exc}")
        elif not on and self.log is not None:
            self.log.close()
            self.log = None

    def _eval_file(self, path: str) -> None:
        if not path or path == "<empty>":
            return
        self._load()
        try:
            from wasp import params
        except ImportError:
            self.info_string("EvalFile is not supported by this build (no wasp.params)")
            return
        import numpy as np

        W = np.asarray(params.load(path), dtype=np.int64)
        if W.shape != self.searcher.W.shape:
            self.info_string(f"EvalFile {path}: {W.size} weights, the evaluation in use takes "
                             f"{self.searcher.W.size}; not loaded")
            return
        self.searcher.set_weights(W)
        self.info_string(f"EvalFile {path} loaded")

    def cmd_position(self, args):
        if not args:
            raise ValueError("position needs startpos or fen")
        moves = []
        if "moves" in args:
            i = args.index("moves")
            args, moves = args[:i], args[i + 1:]
        if args[0] == "startpos":
            spec = "startpos"
        elif args[0] == "fen":
            spec = " ".join(args[1:])
        else:
            raise ValueError(f"position: expected startpos or fen, got {args[0]!r}")
        self._stop_search()
        self._load()
        self._set_position(spec, moves)

    def _set_position(self, spec, moves):
        from wasp.fen import STARTING_FEN

        fen = STARTING_FEN if spec == "startpos" else spec
        try:
            pos = self.Position(fen)
        except ValueError as exc:
            self.info_string(f"bad FEN, position unchanged: {exc}")
            return
        for text in moves:
            try:
                pos.push_uci(text)
            except ValueError:
                self.info_string(f"illegal move {text}: position set up to the move before it")
                break
        self.position = pos
        self.position_spec = (spec, moves)

    def cmd_go(self, args):
        go_time = time.monotonic()  # the budget runs from here: the GUI's clock already does
        self._stop_search()
        self._load()
        from wasp.driver import Limits
        from wasp.timeman import allocate

        opts = {}
        searchmoves = []
        i = 0
        numeric = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes",
                   "mate"}
        while i < len(args):
            a = args[i]
            if a in numeric and i + 1 < len(args):
                try:
                    opts[a] = int(args[i + 1])
                except ValueError:
                    self.info_string(f"go: {a} needs a number, got {args[i + 1]!r}")
                i += 2
            elif a in ("infinite", "ponder"):
                opts[a] = True
                i += 1
            elif a == "searchmoves":
                i += 1
                while i < len(args) and args[i] not in numeric | {"infinite", "ponder"}:
                    searchmoves.append(args[i])
                    i += 1
            else:
                self.info_string(f"go: ignored {a!r}")
                i += 1
        pos = self.position
        white = pos.white_to_move
        clock = opts.get("wtime" if white else "btime")
        inc = opts.get("winc" if white else "binc", 0)
        ponder = opts.get("ponder", False)
        self._observe_lag(clock)
        overhead = max(self.overhead, int(self.lag_ms))
        budget = allocate(clock, inc, opts.get("movestogo"), opts.get("movetime"),
                          overhead, infinite=opts.get("infinite", False))
        if clock is not None and not ponder and not opts.get("infinite"):
            spec, moves = self.position_spec
            self.last_go = [spec, list(moves), clock, inc, go_time, None]
        if self.own_book and self.book is not None and not ponder and not opts.get("infinite"):
            move = self.book.choose(pos)
            if move and (not searchmoves or move in searchmoves):
                self.info_string(f"book move {move}")
                self.send(f"bestmove {move}")
                return
        depth = opts.get("depth")
        if depth is not None:
            depth = max(1, depth)
        mate = opts.get("mate")
        if mate is not None and depth is None and clock is None and "movetime" not in opts:
            depth = min(2 * max(1, mate) + 8, 100)
        nodes = opts.get("nodes")
        limits = Limits(depth=depth, nodes=max(1, nodes) if nodes is not None else None,
                        movetime=None, mate=mate,
                        infinite=opts.get("infinite", False) or ponder, ponder=ponder,
                        searchmoves=searchmoves, start=go_time)
        if ponder:
            self.ponder_budget = budget
        else:
            limits.soft_ms, limits.hard_ms = budget.soft, budget.hard
        self.limits = limits
        self.release.clear()
        self.external_stop.clear()
        self.waiting_release = limits.infinite
        self.worker = threading.Thread(target=self._run_search,
                                       args=(pos.copy(), limits, go_time), daemon=True)
        self.worker.start()

    def _run_search(self, pos, limits, go_time=None):
        searcher = self.searcher
        result = None
        try:
            searcher.external_stop = self.external_stop
            searcher.on_currmove = lambda d, m, k: self.send(
                f"info depth {d} currmove {m} currmovenumber {k}")
            result = searcher.search(pos, limits, on_info=lambda ln: self.send(ln.uci()))
        except Exception as exc:  # report, and still answer with a legal move
            self.info_string(f"search error: {type(exc).__name__}: {exc}")
        if self.waiting_release:
            self.release.wait()
        if result is None or result.best == "0000":
            legal = pos.legal_moves()
            if result is None and legal:
                self.send(f"bestmove {legal[0]}")
            else:
                self.send("bestmove 0000")
            return
        if self.last_go is not None and self.last_go[4] == go_time:
            self.last_go[5] = time.monotonic()
        if result.ponder:
            self.send(f"bestmove {result.best} ponder {result.ponder}")
        else:
            self.send(f"bestmove {result.best}")

    def _searching(self) -> bool:
        return self.worker is not None and self.worker.is_alive()

    def _stop_search(self) -> None:
        if self.worker is None:
            return
        self.external_stop.set()
        if self.searcher is not None:
            self.searcher.stop()
        self.release.set()
        self.worker.join()
        self.worker = None

    def cmd_stop(self, args):
        self._stop_search()

    def cmd_ponderhit(self, args):
        if not self._searching() or self.limits is None or not self.limits.ponder:
            return
        budget = self.ponder_budget
        searcher = self.searcher
        now = time.monotonic()
        limits = self.limits
        # our clock runs from ponderhit; the search measures soft_ms from limits.start
        elapsed = (now - (limits.start or searcher.search_start or now)) * 1000
        limits.ponder = False
        limits.infinite = False
        self.waiting_release = False
        if budget is not None and budget.hard is not None:
            limits.soft_ms = elapsed + budget.soft
            searcher.hard_deadline = now + budget.hard / 1000.0
        self.release.set()

    def cmd_d(self, args):
        if self.position is not None:
            self.send(str(self.position))
            self.send(f"Fen: {self.position.fen()}")


def wait_for_kernels() -> None:
    """Wait for the kernels (loading them here if no thread does): first, so that no
    kernel module is imported by two threads at once."""
    from wasp.warmup import warmup

    warmup(kernels="engine")


def _parse_bool(value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "on", "1", "yes"):
        return True
    if v in ("false", "off", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


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


def main() -> int:
    engine = UciEngine()
    try:
        for line in sys.stdin:
            if line.strip() == "xboard" and engine.searcher is None:
                from wasp.xboard import main as xboard_main  # the GUI speaks CECP

                return xboard_main()
            if not engine.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine._stop_search()
    return 0


if __name__ == "__main__":
    sys.exit(main())
