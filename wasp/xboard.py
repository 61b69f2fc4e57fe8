"""The xboard protocol (CECP v2): `wasp` switches to it when the GUI's first word is `xboard`.

The engine thinks in a worker thread (the search kernels release the GIL), so `?`, `force`,
`ping` and `quit` are answered while it thinks. Unknown or malformed commands get an
`Error (...): command` line; nothing a GUI sends ends the engine but `quit`.
"""

import sys
import threading
import time

from wasp.uci import ENGINE_NAME, HASH_DEFAULT, HASH_MAX, wait_for_kernels

MATE_SCORE_XBOARD = 100000  # CECP: mate in N is posted as 100000 + N


class XboardEngine:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.searcher = None
        self.position = None
        self.force = False
        self.engine_side = 1  # black after `new`
        self.post = False
        self.ponder = False
        self.analyzing = False
        self.mps, self.base_ms, self.inc_ms = 0, 5 * 60_000, 0
        self.st_ms = None
        self.sd = None
        self.engine_clock_ms = None
        self.engine_moves = 0
        self.clock_fresh = False  # a `time` came since our last move
        self.line_time = None  # when the last command arrived
        self.lag_ms = 0.0  # clock charged beyond our own thinking (as in wasp.uci)
        self.last_think = None  # [engine_moves, clock, start, sent] of our last move
        self.hash_mb = HASH_DEFAULT
        self.own_book = False
        self.book = None  # a wasp.book.Book once the BookFile option is set
        self.worker = None
        self.stop_event = threading.Event()  # set by _stop: abandon the search, play nothing
        self.search_kind = None  # "think", "ponder" or "analyze"

    # -- plumbing -------------------------------------------------------------------------
    def send(self, text: str) -> None:
        with self.lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    def error(self, kind: str, line: str) -> None:
        self.send(f"Error ({kind}): {line.strip()[:120]}")

    def _load(self):
        if self.searcher is None:
            wait_for_kernels()  # first: they may be loading in a thread
            from wasp.board import Position
            from wasp.driver import Searcher

            self.Position = Position
            self.searcher = Searcher(self.hash_mb)
            self.position = Position()

    # -- searching ------------------------------------------------------------------------
    def _stop(self):
        if self.worker is not None:
            self.stop_event.set()
            self.searcher.stop()
            self.worker.join()
            self.worker = None
            self.search_kind = None

    def _limits(self):
        from wasp.driver import Limits
        from wasp.timeman import allocate

        start = self.line_time or time.monotonic()
        if self.st_ms is not None:
            budget = allocate(movetime=self.st_ms, overhead=20)
        else:
            clock = self.engine_clock_ms if self.engine_clock_ms is not None else self.base_ms
            mtg = self.mps - (self.engine_moves % self.mps) if self.mps else None
            self._observe_lag(clock)
            budget = allocate(clock, self.inc_ms, mtg, overhead=max(30, int(self.lag_ms)))
            self.last_think = [self.engine_moves, clock, start, None]
        self.clock_fresh = False
        return Limits(depth=self.sd, soft_ms=budget.soft, hard_ms=budget.hard, start=start)

    def _observe_lag(self, clock):
        """Learn the lag (`wasp.timeman.learn_lag`) from the `time` sent since our previous
        move."""
        from wasp.timeman import learn_lag

        last, self.last_think = self.last_think, None
        if last is None or last[3] is None or not self.clock_fresh:
            return
        moves, lclock, lstart, lsent = last
        if self.engine_moves != moves + 1 or (self.mps and self.engine_moves % self.mps == 0):
            return  # not our next move, or a new session's time was added
        self.lag_ms = learn_lag(self.lag_ms, lclock, (lsent - lstart) * 1000.0, self.inc_ms,
                                clock)

    def _start(self, kind):
        from wasp.driver import Limits

        self._stop()
        if kind == "think" and self.own_book and self.book is not None:
            move = self.book.choose(self.position)
            if move:
                self.position.push_uci(move)
                self.engine_moves += 1
                self.send(f"move {move}")
                return
        self.stop_event.clear()
        self.search_kind = kind
        limits = self._limits() if kind == "think" else Limits(infinite=True)
        self.worker = threading.Thread(target=self._run, args=(kind, self.position.copy(),
                                                               limits), daemon=True)
        self.worker.start()

    def _post(self, line):
        if not (self.post or self.analyzing):
            return
        score = line.score
        from wasp.driver import MATE, MATE_BOUND

        if abs(score) >= MATE_BOUND:
            moves = (MATE - abs(score) + 1) // 2
            score = MATE_SCORE_XBOARD + moves if score > 0 else -MATE_SCORE_XBOARD - moves
        self.send(f"{line.depth} {score} {line.time_ms // 10} {line.nodes} {' '.join(line.pv)}")

    def _run(self, kind, pos, limits):
        from wasp.driver import Limits

        self.searcher.external_stop = self.stop_event
        try:
            result = self.searcher.search(pos, limits, on_info=self._post)
        except Exception as exc:  # report; xboard then gets a legal move anyway
            self.send(f"telluser search error: {type(exc).__name__}: {exc}")
            result = None
        if kind != "think" or self.stop_event.is_set():
            return  # analysis, or abandoned by force/new/undo/usermove/quit
        best = result.best if result and result.best != "0000" else None
        if best is None:
            legal = self.position.legal_moves()
            if not legal:
                return
            best = legal[0]
        self.position.push_uci(best)
        if self.last_think is not None and self.last_think[0] == self.engine_moves:
            self.last_think[3] = time.monotonic()
        self.engine_moves += 1
        self.send(f"move {best}")
        if self._announce_end():
            return
        if self.ponder and result and result.ponder:
            # Think on the expected reply until the opponent moves; the hash table keeps
            # what was found.
            ponder_position = self.position.copy()
            try:
                ponder_position.push_uci(result.ponder)
            except ValueError:
                return
            self.search_kind = "ponder"
            self.searcher.search(ponder_position, Limits(infinite=True))

    def _announce_end(self) -> bool:
        from wasp.play import game_over

        over = game_over(self.position)
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
            self._stop()
            return False
        handler = COMMANDS.get(cmd)
        if handler is None:
            # Old GUIs send a bare move: accept it as `usermove` when it parses.
            if len(cmd) in (4, 5) and cmd[0] in "abcdefgh" and cmd[1] in "12345678":
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
        self.send(f'feature ping=1 setboard=1 usermove=1 time=1 draw=0 sigint=0 sigterm=0 '
                  f'reuse=1 analyze=1 colors=0 memory=1 myname="{ENGINE_NAME}" '
                  f'option="OwnBook -check 0" option="BookFile -file " done=0')
        self._load()
        self.send("feature done=1")

    def cmd_ignore(self, args, line):
        pass

    def cmd_new(self, args, line):
        self._load()
        self._stop()
        self.position = self.Position()
        self.force = False
        self.engine_side = 1
        self.sd = None
        self.engine_moves = 0
        self.engine_clock_ms = None
        self.last_think = None
        self.searcher.clear()
        if self.analyzing:
            self._start("analyze")

    def cmd_force(self, args, line):
        self._stop()
        self.force = True

    def cmd_go(self, args, line):
        self._load()
        self._stop()
        self.force = False
        self.analyzing = False
        self.engine_side = self.position.turn
        self._start("think")

    def cmd_playother(self, args, line):
        self._load()
        self._stop()
        self.force = False
        self.engine_side = 1 - self.position.turn

    def cmd_usermove(self, args, line):
        self._load()
        if len(args) != 1:
            self.error("usermove needs one move", line)
            return
        text = args[0]
        self._stop()  # a ponder search has warmed the hash table either way
        try:
            code = self.position.parse_uci(text)
        except ValueError:
            from wasp.san import parse_san

            try:
                code = parse_san(self.position, text)
            except ValueError:
                self.send(f"Illegal move: {text}")
                return
        self.position.push(code)
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
        if self.search_kind == "ponder":
            self._stop()

    def cmd_analyze(self, args, line):
        self._load()
        self.analyzing = True
        self.force = True
        self._start("analyze")

    def cmd_exit(self, args, line):
        if self.analyzing:
            self._stop()
            self.analyzing = False

    def cmd_move_now(self, args, line):
        if self.search_kind == "think":
            self.searcher.stop()  # ends the search; unlike _stop, the move is played

    def cmd_ping(self, args, line):
        # Everything sent before `ping` has been handled when we get here.
        self.send(f"pong {args[0] if args else ''}".rstrip())

    def cmd_result(self, args, line):
        self._stop()
        self.force = True

    def cmd_setboard(self, args, line):
        self._load()
        self._stop()
        fen = " ".join(args)
        try:
            position = self.Position(fen)
        except ValueError as exc:
            self.error("invalid FEN", line)
            self.send(f"telluser {exc}")
            return
        self.position = position
        if self.analyzing:
            self._start("analyze")

    def cmd_undo(self, args, line, count=1):
        self._load()
        self._stop()
        for _ in range(count):
            try:
                self.position.pop()
            except IndexError:
                self.error("no moves to take back", line)
                break
        if self.analyzing:
            self._start("analyze")

    def cmd_remove(self, args, line):
        self.cmd_undo(args, line, count=2)

    def cmd_option(self, args, line):
        """`option NAME=VALUE` for the options declared in the feature line."""
        text = line.strip()[len("option"):].strip()
        name, _, value = text.partition("=")
        name = name.strip()
        if name == "OwnBook":
            self.own_book = value.strip() not in ("0", "false", "")
        elif name == "BookFile":
            self._load()  # wasp.book imports the kernels
            from wasp.book import Book

            self.book = None
            if value.strip():
                try:
                    self.book = Book(value.strip())
                except (OSError, ValueError) as exc:
                    self.send(f"telluser BookFile not loaded: {exc}")
        else:
            self.error("unknown option", line)

    def cmd_memory(self, args, line):
        mb = int(args[0])
        if not 1 <= mb <= HASH_MAX:
            raise ValueError(f"memory must be 1..{HASH_MAX} MB")
        self.hash_mb = mb
        if self.searcher is not None:
            self._stop()
            self.searcher.set_hash(mb)


COMMANDS = {
    "xboard": XboardEngine.cmd_xboard,
    "protover": XboardEngine.cmd_protover,
    "accepted": XboardEngine.cmd_ignore,
    "rejected": XboardEngine.cmd_ignore,
    "new": XboardEngine.cmd_new,
    "variant": XboardEngine.cmd_ignore,
    "force": XboardEngine.cmd_force,
    "go": XboardEngine.cmd_go,
    "playother": XboardEngine.cmd_playother,
    "usermove": XboardEngine.cmd_usermove,
    "time": XboardEngine.cmd_time,
    "otim": XboardEngine.cmd_otim,
    "level": XboardEngine.cmd_level,
    "st": XboardEngine.cmd_st,
    "sd": XboardEngine.cmd_sd,
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
    "egtpath": XboardEngine.cmd_ignore,
    ".": XboardEngine.cmd_ignore,
}


def main(lines=None) -> int:
    """Run the protocol on stdin (the `xboard` line may already have been read)."""
    engine = XboardEngine()
    try:
        for line in lines if lines is not None else sys.stdin:
            if not engine.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine._stop()
    return 0



if __name__ == "__main__":
    sys.exit(main())
