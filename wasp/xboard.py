"""The xboard protocol (CECP v2): `wasp` switches to it when the GUI's first word is `xboard`.

An adapter over `wasp.engine.Engine`: it parses commands and formats answers. Every engine
option is declared in the `feature` line (`option="Name -spin ..."`, set with `option
Name=value`): EvalFile, SearchFile, MultiPV, the book, the Syzygy tables (also `egtpath
syzygy PATH`), the search switches and parameters. The
engine thinks in its worker thread, so `?`, `force`, `ping` and `quit` are answered while it
thinks. Unknown or malformed commands get an `Error (...): command` line; nothing a GUI sends
ends the engine but `quit`. With a cold kernel cache `feature done=1` comes at once and the
fallback search (`wasp.fallback`) plays until the kernels have compiled (`wasp.background`);
a `#` comment line says how far they are as each move is asked.
"""

import sys
import threading
import time

from wasp.engine import ENGINE_NAME, HASH_MAX, Engine, score_xboard
from wasp.protocol import GuiOutput

# Options that CECP has commands of its own for (hard/easy, memory, cores).
_NOT_DECLARED = ("Ponder", "Threads", "UCI_Chess960")  # Chess960 is `variant fischerandom`
VARIANTS = ("normal", "fischerandom")


def post_line(line) -> str:
    """A `wasp.driver.Line` as a CECP thinking line: ply score time(cs) nodes pv."""
    return (f"{line.depth} {score_xboard(line.score)} {line.time_ms // 10} {line.nodes} "
            f"{' '.join(line.pv)}")


class XboardEngine(GuiOutput):
    """CECP in, CECP out, over one Engine."""

    def __init__(self, out=None):
        super().__init__(out)
        self.engine = Engine()
        self.engine.cold_play = True  # done=1 and moves at once, whatever compiles
        self.force = False
        self.engine_side = 1  # black after `new`
        self.post = False
        self.ponder = False
        self.analyzing = False
        self.mps, self.base_ms, self.inc_ms = 0, 5 * 60_000, 0
        self.st_ms = None
        self.sd = None
        self.nps = None  # CECP `nps N`: time is nodes / N, so `st S` means S * N nodes
        self.engine_clock_ms = None
        self.engine_moves = 0
        self.clock_fresh = False  # a `time` came since our last move
        self.line_time = None  # when the last command arrived
        self.thinking = False  # our move is due: a `ping` is answered after it (CECP)
        self.pongs = []  # those pings
        self.pong_lock = threading.Lock()

    # -- plumbing -------------------------------------------------------------------------
    def error(self, kind: str, line: str) -> None:
        self.send(f"Error ({kind}): {line.strip()[:120]}")

    @property
    def position(self):
        self.engine.load()
        return self.engine.position

    # -- searching ------------------------------------------------------------------------
    def _abandon(self) -> None:
        """Drop the search without its move (CECP: new, force, result, ...); pings that
        waited for the move are answered now."""
        self.engine.abandon()
        self._moved()

    def _start(self, kind):
        engine = self.engine
        self._abandon()
        if kind == "analyze":
            engine.go(analyze=True, on_info=self._post)
            return
        start = self.line_time or time.monotonic()
        if self.nps is not None and self.st_ms is not None:  # node-counted time
            clock = dict(nodes=max(1, self.st_ms * self.nps // 1000))
        elif self.st_ms is not None:
            clock = dict(movetime=self.st_ms)
        else:
            left = self.engine_clock_ms if self.engine_clock_ms is not None else self.base_ms
            mtg = self.mps - (self.engine_moves % self.mps) if self.mps else None
            clock = dict(time_left=left, inc=self.inc_ms, movestogo=mtg)
        news = engine.kernel_news()
        if news is not None:
            self.send(f"# {news}")
        with self.pong_lock:
            self.thinking = True
        engine.go(**clock, depth=self.sd, start=start, on_info=self._post,
                  on_done=self._play, on_error=lambda text: self.send(f"telluser {text}"),
                  ponder_after=self.ponder, learn_lag=self.clock_fresh)
        self.clock_fresh = False

    def _post(self, line):
        if self.post or self.analyzing:
            self.send(post_line(line))

    def _play(self, best, ponder, result):
        """The worker's move: on the board, then to the GUI (then it may ponder)."""
        if best == "0000":
            self._moved()
            return
        position = self.engine.position
        castles = self.engine.chess960 and position.is_castling(best)
        position.push_uci(best)
        if castles:  # CECP writes Chess960 castling as O-O / O-O-O (UCI: king takes rook)
            best = "O-O" if best[2] > best[0] else "O-O-O"
        self.engine_moves += 1
        self._moved(f"move {best}")
        if self._announce_end():
            self.engine.stop()  # no pondering after the last move

    def _moved(self, move=None) -> None:
        """Our move is out (or no longer due): send it, then the pings that waited for it."""
        with self.pong_lock:
            if move is not None:
                self.send(move)
            self.thinking = False
            pongs, self.pongs = self.pongs, []
        for pong in pongs:
            self.send(pong)

    def finish(self) -> None:
        """End of input: a move being thought about is still played (its clock or limit ends
        the search); analysis and pondering stop."""
        while self.thinking and self.engine.search_kind() == "think":
            self.engine.wait(0.05)
        self._abandon()

    def _announce_end(self) -> bool:
        over = self.engine.game_over()
        if over:
            result, reason = over
            self.send(f"{result} {{{reason}}}")
            return True
        return False

    def _engine_to_move(self) -> bool:
        return not self.force and not self.analyzing and self.position.turn == self.engine_side

    # -- commands -------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        self.line_time = time.monotonic()  # a move's clock runs from the command that asks it
        tokens = line.strip().split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        if cmd == "quit":
            self._abandon()
            return False
        handler = COMMANDS.get(cmd)
        if handler is None:
            # GUIs without `usermove=1` send a bare move, castling as O-O/O-O-O in Chess960.
            if (len(cmd) in (4, 5) and cmd[0] in "abcdefgh" and cmd[1] in "12345678"
                    or cmd in BARE_CASTLING):
                handler, args = XboardEngine.cmd_usermove, [cmd]
            else:
                self.error("unknown command", line)
                return True
        try:
            handler(self, args, line)
        except Exception as exc:  # never die on GUI input
            self.error(f"{type(exc).__name__}: {exc}", line)
        return True

    def cmd_xboard(self, args, line):
        pass

    def cmd_protover(self, args, line):
        # One line for the protocol features, then one per option (short lines for GUIs
        # with small input buffers), and done=1 once the kernels are loaded.
        self.send("\n".join([
            f'feature ping=1 setboard=1 usermove=1 time=1 draw=0 sigint=0 sigterm=0 reuse=1 '
            f'analyze=1 colors=0 memory=1 egt="syzygy" myname="{ENGINE_NAME}" '
            f'variants="{",".join(VARIANTS)}" done=0',
            *(f"feature {o.xboard()}" for o in self.engine.options()
              if o.name not in _NOT_DECLARED)]))
        self.engine.load()
        self.send("feature done=1")

    def cmd_ignore(self, args, line):
        pass

    def cmd_new(self, args, line):
        self._abandon()
        self.engine.set_option("UCI_Chess960", "false")  # `new` starts a normal game
        self.engine.new_game()
        self.force = False
        self.engine_side = 1
        self.sd = None
        self.engine_moves = 0
        self.engine_clock_ms = None
        if self.analyzing:
            self._start("analyze")

    def cmd_variant(self, args, line):
        if len(args) != 1 or args[0] not in VARIANTS:
            self.error("unsupported variant", line)
            return
        self._abandon()
        self.engine.set_option("UCI_Chess960", str(args[0] == "fischerandom"))
        self.engine.set_position()  # the GUI sends the start position with setboard

    def cmd_force(self, args, line):
        self._abandon()
        self.force = True

    def cmd_go(self, args, line):
        self._abandon()
        self.force = False
        self.analyzing = False
        self.engine_side = self.position.turn
        self._start("think")

    def cmd_playother(self, args, line):
        self._abandon()
        self.force = False
        self.engine_side = 1 - self.position.turn

    def cmd_usermove(self, args, line):
        if len(args) != 1:
            self.error("usermove needs one move", line)
            return
        self._abandon()  # a ponder search has warmed the hash table either way
        try:
            self.engine.push_move(args[0])
        except ValueError:
            self.send(f"Illegal move: {args[0]}")
            return
        if self.analyzing:
            self._start("analyze")
            return
        if self._announce_end():
            return
        if self._engine_to_move():
            self._start("think")

    def cmd_time(self, args, line):
        self.engine_clock_ms = int(args[0]) * 10  # centiseconds
        self.clock_fresh = True

    def cmd_otim(self, args, line):
        int(args[0])

    def cmd_level(self, args, line):
        if len(args) != 3:
            raise ValueError("level MPS BASE INC")
        mps = int(args[0])
        if ":" in args[1]:
            minutes, seconds = args[1].split(":")
            base = int(minutes) * 60_000 + int(seconds) * 1000
        else:
            base = int(float(args[1]) * 60_000)
        inc = int(float(args[2]) * 1000)
        if mps < 0 or base < 0 or inc < 0:
            raise ValueError("negative time control")
        self.mps, self.base_ms, self.inc_ms, self.st_ms = mps, base, inc, None

    def cmd_st(self, args, line):
        seconds = float(args[0])
        if seconds <= 0:
            raise ValueError("st needs a positive number of seconds")
        self.st_ms = int(seconds * 1000)

    def cmd_nps(self, args, line):
        """With `st S`, S * N nodes a move (how GUIs and match runners ask for node-limited
        games); with a `level` clock the wall clock still rules. `nps 0`: back to it."""
        rate = int(args[0])
        if rate < 0:
            raise ValueError("nps needs a node rate of at least 0")
        self.nps = rate or None

    def cmd_sd(self, args, line):
        depth = int(args[0])
        if depth < 1:
            raise ValueError("sd needs a depth of at least 1")
        self.sd = depth

    def cmd_post(self, args, line):
        self.post = True

    def cmd_nopost(self, args, line):
        self.post = False

    def cmd_hard(self, args, line):
        self.ponder = True

    def cmd_easy(self, args, line):
        self.ponder = False
        if self.engine.search_kind() == "ponder":
            self._abandon()

    def cmd_analyze(self, args, line):
        self.analyzing = True
        self.force = True
        self._start("analyze")

    def cmd_exit(self, args, line):
        if self.analyzing:
            self._abandon()
            self.analyzing = False

    def cmd_move_now(self, args, line):
        self.engine.move_now()  # ends the thinking; the move is played

    def cmd_ping(self, args, line):
        """Everything sent before `ping` has been handled when we get here; while our move
        is due, `pong` follows the move (CECP), while pondering it comes at once."""
        pong = f"pong {args[0] if args else ''}".rstrip()
        with self.pong_lock:
            if self.thinking:
                self.pongs.append(pong)
                return
        self.send(pong)

    def cmd_result(self, args, line):
        self._abandon()
        self.force = True

    def cmd_setboard(self, args, line):
        self._abandon()
        fen = " ".join(args)
        try:
            self.engine.set_position(fen)
        except ValueError as exc:
            self.error("invalid FEN", line)
            self.send(f"telluser {exc}")
            return
        if self.analyzing:
            self._start("analyze")

    def cmd_undo(self, args, line, count=1):
        self._abandon()
        for _ in range(count):
            try:
                self.engine.undo()
            except IndexError:
                self.error("no moves to take back", line)
                break
        if self.analyzing:
            self._start("analyze")

    def cmd_remove(self, args, line):
        self.cmd_undo(args, line, count=2)

    def cmd_option(self, args, line):
        """`option NAME=VALUE` (`option NAME` for a button), for the declared options."""
        text = line.strip()[len("option"):].strip()
        name, _, value = text.partition("=")
        analyzing = self.engine.search_kind() == "analyze"
        if self.engine.search_kind() in ("ponder", "analyze"):
            self._abandon()  # options change between searches; analysis goes on after
        try:
            message = self.engine.set_option(name.strip(), value.strip())
        except ValueError as exc:
            self.error(str(exc), line)
            return
        finally:
            if analyzing:
                self._start("analyze")
        if message:
            self.send(f"telluser {message}")

    def cmd_egtpath(self, args, line):
        """`egtpath syzygy PATH`: the Syzygy tables (other kinds of tables are not used)."""
        if len(args) < 2:
            raise ValueError("egtpath TYPE PATH")
        if args[0].lower() != "syzygy":
            return
        self._abandon()
        message = self.engine.set_option("SyzygyPath", line.strip().split(None, 2)[2])
        if message:
            self.send(f"telluser {message}")

    def cmd_memory(self, args, line):
        mb = int(args[0])
        if not 1 <= mb <= HASH_MAX:
            raise ValueError(f"memory must be 1..{HASH_MAX} MB")
        self._abandon()
        self.engine.set_option("Hash", str(mb))


BARE_CASTLING = ("O-O", "O-O-O", "0-0", "0-0-0")

COMMANDS = {
    "xboard": XboardEngine.cmd_xboard,
    "protover": XboardEngine.cmd_protover,
    "accepted": XboardEngine.cmd_ignore,
    "rejected": XboardEngine.cmd_ignore,
    "new": XboardEngine.cmd_new,
    "variant": XboardEngine.cmd_variant,
    "force": XboardEngine.cmd_force,
    "go": XboardEngine.cmd_go,
    "playother": XboardEngine.cmd_playother,
    "usermove": XboardEngine.cmd_usermove,
    "time": XboardEngine.cmd_time,
    "otim": XboardEngine.cmd_otim,
    "level": XboardEngine.cmd_level,
    "st": XboardEngine.cmd_st,
    "sd": XboardEngine.cmd_sd,
    "nps": XboardEngine.cmd_nps,
    "post": XboardEngine.cmd_post,
    "nopost": XboardEngine.cmd_nopost,
    "hard": XboardEngine.cmd_hard,
    "easy": XboardEngine.cmd_easy,
    "analyze": XboardEngine.cmd_analyze,
    "exit": XboardEngine.cmd_exit,
    "?": XboardEngine.cmd_move_now,
    "ping": XboardEngine.cmd_ping,
    "result": XboardEngine.cmd_result,
    "setboard": XboardEngine.cmd_setboard,
    "undo": XboardEngine.cmd_undo,
    "remove": XboardEngine.cmd_remove,
    "memory": XboardEngine.cmd_memory,
    "option": XboardEngine.cmd_option,
    # Accepted and ignored: information the engine does not use.
    "random": XboardEngine.cmd_ignore,
    "computer": XboardEngine.cmd_ignore,
    "name": XboardEngine.cmd_ignore,
    "rating": XboardEngine.cmd_ignore,
    "ics": XboardEngine.cmd_ignore,
    "draw": XboardEngine.cmd_ignore,
    "hint": XboardEngine.cmd_ignore,
    "bk": XboardEngine.cmd_ignore,
    "cores": XboardEngine.cmd_ignore,
    "egtpath": XboardEngine.cmd_egtpath,
    ".": XboardEngine.cmd_ignore,
}


def main(lines=None) -> int:
    """Run the protocol on stdin (or the given lines)."""
    engine = XboardEngine()
    try:
        return engine.serve(lines)
    finally:
        engine.engine.abandon()


if __name__ == "__main__":
    sys.exit(main())
