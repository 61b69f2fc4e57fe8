"""The UCI protocol: `wasp` with no arguments reads commands on stdin and answers on stdout.

An adapter over `wasp.engine.Engine`: it parses commands and formats answers, nothing more.
`uci` is answered at once; numba and the kernels load meanwhile in a thread (`wasp.warmup`,
started by `wasp.cli`) and are ready before the first `readyok`. The search runs in the
engine's worker thread, so `stop`, `ponderhit`, `isready` and `quit` are answered while it
thinks. Bad input never ends the engine: it gets an `info string` saying what was wrong.
"""

import sys
import threading
import time

from wasp.engine import ENGINE_AUTHOR, ENGINE_NAME, Engine, parse_bool, score_uci

LOG_FILE = "wasp.log"
GO_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes",
              "mate")
GO_FLAGS = ("infinite", "ponder")


def info_line(line) -> str:
    """A `wasp.driver.Line` as a UCI `info` line."""
    nps = line.nodes * 1000 // max(1, line.time_ms)
    bound = f" {line.bound}" if line.bound else ""
    return (f"info depth {line.depth} seldepth {line.seldepth} multipv {line.multipv} "
            f"score {score_uci(line.score)}{bound} nodes {line.nodes} nps {nps} "
            f"hashfull {line.hashfull} tbhits {line.tbhits} time {line.time_ms} "
            f"pv {' '.join(line.pv)}")


class UciEngine:
    """UCI in, UCI out, over one Engine."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.engine = Engine()
        self.debug = False
        self.log = None

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

    # -- commands ------------------------------------------------------------------------
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
                self.engine.abandon()
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
            *(option.uci() for option in self.engine.options()),
            "option name Log type check default false",
            "uciok",
        ]))

    def cmd_debug(self, args):
        self.debug = bool(args) and args[0] == "on"

    def cmd_isready(self, args):
        self.engine.load()
        self.send("readyok")

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
        try:
            message = self.engine.set_option(name, value)
        except ValueError as exc:
            self.info_string(f"error: {exc}; option unchanged")
            return
        if message:
            self.info_string(message)

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
        try:
            warning = self.engine.set_position(fen, moves)
        except ValueError as exc:
            self.info_string(f"bad FEN, position unchanged: {exc}")
            return
        if warning:
            self.info_string(warning)

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
        self.engine.load()
        white = self.engine.position.white_to_move
        self.engine.go(
            time_left=opts.get("wtime" if white else "btime"),
            inc=opts.get("winc" if white else "binc", 0), movestogo=opts.get("movestogo"),
            movetime=opts.get("movetime"), depth=opts.get("depth"), nodes=opts.get("nodes"),
            mate=opts.get("mate"), infinite=opts.get("infinite", False),
            ponder=opts.get("ponder", False), searchmoves=searchmoves, start=go_time,
            on_info=lambda line: self.send(info_line(line)),
            on_currmove=lambda d, m, k: self.send(
                f"info depth {d} currmove {m} currmovenumber {k}"),
            on_done=self._bestmove, on_error=self.info_string)

    def _bestmove(self, best, ponder, result) -> None:
        if self.engine.move_source == "book":
            self.info_string(f"book move {best}")
        self.send(f"bestmove {best} ponder {ponder}" if ponder else f"bestmove {best}")

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
    engine = UciEngine()
    try:
        for line in lines if lines is not None else sys.stdin:
            if not engine.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine.engine.abandon()
    return 0


if __name__ == "__main__":
    sys.exit(main())
