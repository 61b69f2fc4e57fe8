"""One game on the browser board: the position, who plays each side, and the engine's thread.

The HTTP handlers only call the methods here; each takes the game's lock, so a move, an undo
and the engine's answer never interleave. The engine (a `wasp.engine.Engine`, with the options
`wasp gui` was started with: book, EvalFile, SearchFile, Hash, search parameters) searches a
copy of the position outside the lock; an answer that arrives after the game moved on (undo,
new settings) is dropped.
"""

import datetime
import threading
import time
from dataclasses import dataclass

from wasp.board import IllegalMoveError, Position, move_to_uci
from wasp.engine import Engine, score_white
from wasp.fen import STARTING_FEN
from wasp.pgn import pgn_text
from wasp.san import line_to_san, to_san
from wasp.san import numbered as san_numbered
from wasp.types import FLAG_CASTLE

MOVETIME_RANGE = (50, 600_000)  # milliseconds per move
DEPTH_RANGE = (1, 40)
DEFAULT_MOVETIME = 1000
INFO_INTERVAL = 0.25  # seconds between live-search updates to the page
ENGINE_GAP = 0.4  # at least this many seconds between moves of engine against engine


class RequestError(ValueError):
    """A request the game refuses; `status` is the HTTP code to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class Player:
    """Who plays a side: a human at the board or the engine with a time or depth limit."""

    kind: str = "human"  # "human" or "engine"
    movetime: int | None = None  # milliseconds per move (engine)
    depth: int | None = None  # fixed depth instead of time (engine)

    @classmethod
    def from_json(cls, data, side: str) -> "Player":
        if data is None:
            return cls()
        if isinstance(data, str):
            data = {"type": data}
        if not isinstance(data, dict):
            raise RequestError(f"{side}: expected an object like {{\"type\": \"engine\"}}")
        kind = data.get("type", "human")
        if kind not in ("human", "engine"):
            raise RequestError(f"{side}: type must be 'human' or 'engine', got {kind!r}")
        if kind == "human":
            return cls()
        movetime, depth = data.get("movetime"), data.get("depth")
        if movetime is not None and depth is not None:
            raise RequestError(f"{side}: give movetime or depth, not both")
        if depth is not None:
            return cls("engine", depth=_int_in(depth, DEPTH_RANGE, f"{side} depth"))
        if movetime is None:
            movetime = DEFAULT_MOVETIME
        return cls("engine", movetime=_int_in(movetime, MOVETIME_RANGE, f"{side} movetime (ms)"))

    def to_json(self) -> dict:
        out = {"type": self.kind}
        if self.kind == "engine":
            out.update({"movetime": self.movetime} if self.depth is None else {"depth": self.depth})
        return out

    def label(self) -> str:
        """The PGN player name."""
        if self.kind == "human":
            return "Human"
        if self.depth is not None:
            return f"Wasp-Py (depth {self.depth})"
        return f"Wasp-Py ({self.movetime / 1000:g} s/move)"

    def limits(self) -> dict:
        """The engine's `go` limits for this player."""
        return {"depth": self.depth} if self.depth is not None else {"movetime": self.movetime}


def _int_in(value, bounds, name) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise RequestError(f"{name} must be a whole number, got {value!r}")
    lo, hi = bounds
    if not lo <= int(value) <= hi:
        raise RequestError(f"{name} must be between {lo} and {hi}, got {int(value)}")
    return int(value)


def check_fen(fen) -> Position:
    """The position for a FEN a user typed; RequestError names what is wrong."""
    if not isinstance(fen, str) or not fen.strip():
        raise RequestError("fen must be a non-empty string")
    fen = " ".join(fen.split())
    try:
        return Position(fen)
    except ValueError as e:  # the parser names the problem
        raise RequestError(str(e)) from None


def clickable_moves(position: Position) -> list[str]:
    """The legal moves in UCI, as the board offers them: in Chess960 a user castles by moving
    the king onto its rook, or two squares toward it when no other move is written so."""
    moves = position.legal_moves()
    if position.chess960:
        for code in position.legal_move_codes():
            step = move_to_uci(code)
            if code & FLAG_CASTLE and abs(ord(step[0]) - ord(step[2])) == 2 and step not in moves:
                moves.append(step)
    return moves


def numbered(position: Position, sans: list[str]) -> str:
    """A line of SAN moves with move numbers, from `position`: '12... Nf6 13. e5'."""
    return " ".join(san_numbered(position, sans))


def pv_san(position: Position, pv: list[str]) -> list[str]:
    """SAN of a principal variation given in UCI, cut at the first move that is not legal."""
    codes, probe = [], position.copy()
    for text in pv:
        try:
            code = probe.parse_uci(text)
        except IllegalMoveError:
            break
        codes.append(code)
        probe.push(code)
    return line_to_san(position, codes)


class Game:
    """A game: position, history in SAN with the engine's analysis, players, engine thread."""

    def __init__(self, game_id: str, fen: str = STARTING_FEN, white=None, black=None,
                 engine_settings=()):
        start = check_fen(fen)
        self.id = game_id
        self.start_fen = start.fen()
        self.position = start.copy()
        self._start = start
        self.players = [Player.from_json(white, "white"), Player.from_json(black, "black")]
        self.moves: list[dict] = []  # {uci, san, by, analysis}
        self.paused = False
        self.version = 1  # bumped on every change; the page long-polls on it
        self.epoch = 0  # bumped when a running search's answer would no longer fit
        self.thinking = False
        self.live: dict | None = None  # the running search's latest line
        self.engine_error: str | None = None
        self.created = datetime.datetime.now()
        self.last_seen = time.monotonic()
        self.closed = False
        self._last_push = 0.0
        self.cond = threading.Condition()
        self.engine_settings = list(engine_settings)
        self._engine = None  # built by the engine thread when first needed
        self._thread = threading.Thread(target=self._engine_loop, name=f"wasp-gui-{game_id}",
                                        daemon=True)
        self._thread.start()

    # -- state -------------------------------------------------------------------------
    def _changed(self) -> None:
        self.version += 1
        self.cond.notify_all()

    def over(self):
        return self.position.game_over()

    def _engine_to_move(self) -> bool:
        return (not self.closed and not self.paused and self.over() is None
                and self.players[self.position.turn].kind == "engine")

    def state(self) -> dict:
        """Everything the page draws, as JSON."""
        with self.cond:
            self.last_seen = time.monotonic()
            position, start = self.position, self._start
            over = self.over()
            turn = position.turn
            check_square = None
            if position.is_check():
                king = "K" if turn == 0 else "k"
                for sq in range(64):
                    if position.piece_at(sq) == king:
                        check_square = "abcdefgh"[sq & 7] + str(sq // 8 + 1)
            human_turn = over is None and self.players[turn].kind == "human"
            return {
                "id": self.id,
                "version": self.version,
                "fen": position.fen(),
                "start_fen": self.start_fen,
                "turn": "w" if turn == 0 else "b",
                "legal": clickable_moves(position) if human_turn else [],
                "human_to_move": human_turn,
                "check": check_square,
                "last_move": self.moves[-1]["uci"] if self.moves else None,
                "moves": self.moves,
                "first_move_number": start.fullmove_number,
                "first_turn": "w" if start.turn == 0 else "b",
                "players": {"white": self.players[0].to_json(),
                            "black": self.players[1].to_json()},
                "paused": self.paused,
                "thinking": self.thinking,
                "live": self.live if self.thinking else None,
                "engine_error": self.engine_error,
                "result": ({"result": over[0], "reason": over[1]} if over else None),
            }

    def wait_for_change(self, since: int, timeout: float) -> None:
        """Block until the version passes `since` or `timeout` seconds go by."""
        with self.cond:
            self.cond.wait_for(lambda: self.version > since or self.closed, timeout)

    # -- requests ----------------------------------------------------------------------
    def human_move(self, uci) -> None:
        with self.cond:
            if not isinstance(uci, str):
                raise RequestError("move must be a string in UCI form, like 'e2e4' or 'e7e8q'")
            over = self.over()
            if over is not None:
                raise RequestError(f"the game is over ({over[0]}, {over[1]})", 409)
            side = "white" if self.position.turn == 0 else "black"
            if self.players[self.position.turn].kind != "human":
                raise RequestError(f"it is the engine's turn ({side} to move)", 409)
            try:
                code = self.position.parse_uci(uci.strip())
            except IllegalMoveError as e:
                raise RequestError(f"{e} ({side} to move)") from None
            self._push(code, "human", None)

    def _push(self, code: int, by: str, analysis) -> None:
        san = to_san(self.position, code)
        self.moves.append({"uci": self.position.uci(code), "san": san, "by": by,
                           "analysis": analysis})
        self.position.push(code)
        self._last_push = time.monotonic()
        self.epoch += 1
        self._changed()

    def undo(self) -> int:
        """Take back one move, or with one human against the engine back to the human's turn.

        Engine against engine pauses, so the engine does not replay at once. Returns the
        number of moves taken back.
        """
        with self.cond:
            if not self.moves:
                raise RequestError("nothing to undo", 409)
            self._stop_search()
            kinds = [p.kind for p in self.players]
            taken = 0
            while self.moves:
                self.position.pop()
                self.moves.pop()
                taken += 1
                if "human" not in kinds or self.players[self.position.turn].kind == "human":
                    break
            if "human" not in kinds:
                self.paused = True
            self._changed()
            return taken

    def configure(self, white=None, black=None, paused=None) -> None:
        """New players or strength mid-game, and pause or resume the engine."""
        with self.cond:
            players = list(self.players)
            if white is not None:
                players[0] = Player.from_json(white, "white")
            if black is not None:
                players[1] = Player.from_json(black, "black")
            if paused is not None and not isinstance(paused, bool):
                raise RequestError("paused must be true or false")
            if players != self.players:
                self._stop_search()
            self.players = players
            if paused is not None:
                if paused:
                    self._stop_search()
                self.paused = paused
            self._changed()

    def move_now(self) -> None:
        """Ask the thinking engine to play its best move so far."""
        with self.cond:
            if not self.thinking:
                raise RequestError("the engine is not thinking", 409)
            if self._engine is not None:
                self._engine.move_now()

    def pgn(self) -> str:
        with self.cond:
            over = self.over()
            headers = {
                "Event": "Wasp-Py board",
                "Site": "127.0.0.1",
                "Date": self.created.strftime("%Y.%m.%d"),
                "Round": "-",
                "White": self.players[0].label(),
                "Black": self.players[1].label(),
                "Result": over[0] if over else "*",
            }
            return pgn_text(self.start_fen, [m["san"] for m in self.moves], headers)

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self._stop_search()
            self._changed()

    # -- the engine --------------------------------------------------------------------
    def _stop_search(self) -> None:
        """Drop the running search's answer (caller holds the lock)."""
        self.epoch += 1
        if self.thinking and self._engine is not None:
            self._engine.stop(wait=False)
        self.thinking, self.live = False, None

    def _engine_loop(self) -> None:
        while True:
            with self.cond:
                self.cond.wait_for(lambda: self.closed or self._engine_to_move())
                if self.closed:
                    return
                if all(p.kind == "engine" for p in self.players):
                    gap = self._last_push + ENGINE_GAP - time.monotonic()
                    if gap > 0:  # engine against engine: slow enough to watch
                        self.cond.wait(gap)
                        continue
                epoch = self.epoch
                snapshot = self.position.copy()
                moves = [m["uci"] for m in self.moves]
                player = self.players[snapshot.turn]
                self.thinking, self.live, self.engine_error = True, None, None
                self._changed()
            answer, errors = [], []
            try:
                engine = self._engine_for_game()
                engine.set_position(self.start_fen, moves)
                engine.go(**player.limits(), on_info=self._info_callback(snapshot, epoch),
                          on_done=lambda best, ponder, result, out=answer: out.append(
                              (best, result)),
                          on_error=errors.append)
                engine.wait()
            except Exception as e:  # shown on the page; the server keeps serving
                errors.append(f"engine failed: {type(e).__name__}: {e}")
            best, result = answer[0] if answer else ("0000", None)
            error = errors[0] if errors else None
            with self.cond:
                self.thinking, self.live = False, None
                if epoch != self.epoch:
                    self._changed()
                    continue
                if error is None:
                    try:
                        code = self.position.parse_uci(best)
                    except IllegalMoveError:
                        error = f"engine returned an illegal move {best!r}"
                if error is not None:
                    self.engine_error = error
                    self.paused = True
                    self._changed()
                    continue
                if result is None:  # a book move
                    analysis = {"score": "book", "depth": 0, "nodes": 0, "time_ms": 0,
                                "pv": [to_san(self.position, code)], "pv_text": "book"}
                else:
                    pv = pv_san(self.position, result.pv)
                    analysis = {"score": score_white(result.score, self.position.turn),
                                "depth": result.depth, "nodes": result.nodes,
                                "time_ms": result.time_ms, "pv": pv,
                                "pv_text": numbered(self.position, pv)}
                self._push(code, "engine", analysis)

    def _engine_for_game(self) -> Engine:
        """The game's engine, configured as the server was told (once)."""
        if self._engine is None:
            engine = Engine()
            engine.configure(self.engine_settings)
            self._engine = engine
        return self._engine

    def _info_callback(self, snapshot: Position, epoch: int):
        last = [0.0]

        def on_info(line):
            now = time.monotonic()
            if epoch != self.epoch:
                self._engine.stop(wait=False)
                return
            if line.bound or now - last[0] < INFO_INTERVAL:
                return
            last[0] = now
            pv = pv_san(snapshot, line.pv)
            live = {"score": score_white(line.score, snapshot.turn), "depth": line.depth,
                    "nodes": line.nodes, "time_ms": line.time_ms,
                    "pv_text": numbered(snapshot, pv)}
            with self.cond:
                if epoch != self.epoch:  # undone or reconfigured: a stop may have been missed
                    self._engine.stop(wait=False)
                elif self.thinking:
                    self.live = live
                    self._changed()

        return on_info
