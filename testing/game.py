"""One game between two engine processes: clocks, rules, adjudication, termination."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import chess

from .driver import UNLIMITED_MOVE_TIMEOUT, Engine, Limits, SearchFigures
from .openings import Opening
from .process import EngineCrashed, EngineError
from .tablebase import TablebaseAdjudication
from .tablebase import adjudicate as tablebase_result
from .timecontrol import Clock

MATE_SCORE = 32000

# termination -> PGN Termination tag value
PGN_TERMINATION = {
    "checkmate": "normal",
    "stalemate": "normal",
    "repetition": "normal",
    "fifty-moves": "normal",
    "insufficient-material": "normal",
    "resign": "normal",
    "adjudication": "adjudication",
    "max-moves": "adjudication",
    "tablebase": "adjudication",
    "timeout": "time forfeit",
    "illegal-move": "rules infraction",
    "crash": "abandoned",
    "stall": "stalled connection",
}


@dataclass
class DrawAdjudication:
    movenumber: int = 0
    movecount: int = 1
    score: int = 0


@dataclass
class ResignAdjudication:
    movecount: int = 1
    score: int = 1000
    twosided: bool = False


@dataclass
class GameSettings:
    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    maxmoves: int | None = None
    ponder: bool = False
    tb: TablebaseAdjudication | None = None


@dataclass
class MoveInfo(SearchFigures):
    uci: str
    score: int | None  # centipawns, mover's view (mates as +-(MATE_SCORE - plies))
    mate: int | None
    depth: int | None
    elapsed: float
    timeleft: float | None = None  # the mover's clock after the move (seconds)
    latency: float | None = None  # runner time from the previous move to this `go`


@dataclass
class GameRecord:
    white: str
    black: str
    opening: Opening
    result: str = "*"
    termination: str = ""
    reason: str = ""
    moves: list[MoveInfo] = field(default_factory=list)
    white_time: float = 0.0
    black_time: float = 0.0
    start_time: float = 0.0  # wall clock (time.time())
    end_time: float = 0.0
    latencies: list[float] = field(default_factory=list)  # runner time between plies
    failed: list[str] = field(default_factory=list)  # "white"/"black": engine must restart
    time_loss: bool = False
    final_fen: str = ""
    white_left: float | None = None  # clock at the end (seconds); None without a clock
    black_left: float | None = None
    # per side ("white"/"black"): the protocol transcript and the stderr of the game
    transcripts: dict[str, bytes] = field(default_factory=dict)
    stderr: dict[str, bytes] = field(default_factory=dict)

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def duration(self) -> float:
        return self.end_time - self.start_time

    def score_for(self, white: bool) -> float:
        s = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(self.result, 0.5)
        return s if white else 1.0 - s


def _key(board: chess.Board):
    try:
        return board._transposition_key()
    except AttributeError:  # pragma: no cover - other python-chess versions
        return " ".join(board.fen().split()[:4])


def _cp(info: MoveInfo) -> int | None:
    if info.mate is not None:
        return MATE_SCORE - abs(info.mate) if info.mate > 0 else -(MATE_SCORE - abs(info.mate))
    return info.score


_COLOR = {chess.WHITE: "White", chess.BLACK: "Black"}
_WIN = {chess.WHITE: "1-0", chess.BLACK: "0-1"}


def play_game(
    white: Engine, black: Engine, opening: Opening, settings: GameSettings | None = None
) -> GameRecord:
    """Play one game; engine failures are scored, never raised."""
    game = _Game(white, black, opening, settings or GameSettings())
    ending = game.start()
    while ending is None:
        ending = game.ply()
    return game.finish(ending)


# How a game ended: (result, termination, reason); `termination` is a key of PGN_TERMINATION.
Ending = tuple[str, str, str]


def _lose(color: chess.Color, termination: str, reason: str) -> Ending:
    return (_WIN[not color], termination, reason)


def _opening_counts(opening: Opening) -> dict:
    """Position key -> occurrences in the opening's moves (its start position included)."""
    board = opening.board()
    for _ in range(len(board.move_stack)):
        board.pop()
    reps = {_key(board): 1}
    for m in opening.moves:
        board.push_uci(m)
        k = _key(board)
        reps[k] = reps.get(k, 0) + 1
    return reps


class _Game:
    """The state of one game under way: the board, the clocks, the record, the adjudication
    counts; `ply` plays one move and returns the game's ending, if it ended."""

    def __init__(self, white: Engine, black: Engine, opening: Opening, settings: GameSettings):
        self.settings = settings
        self.rec = GameRecord(white=white.name, black=black.name, opening=opening)
        self.rec.start_time = time.time()
        self.board = opening.board()
        self.start_fen = opening.fen
        self.moves = list(opening.moves)
        self.engines = {chess.WHITE: white, chess.BLACK: black}
        self.clocks = {c: (Clock(e.cfg.tc) if e.cfg.tc is not None else None)
                       for c, e in self.engines.items()}
        self.reps = _opening_counts(opening)
        self.last_recv = None  # when the runner read the previous move
        self.draw_run = 0
        self.resign_run = {chess.WHITE: 0, chess.BLACK: 0}
        self.win_run = {chess.WHITE: 0, chess.BLACK: 0}

    def start(self) -> Ending | None:
        """Both engines told of the new game; the ending when one of them fails to answer."""
        for color, eng in self.engines.items():
            try:
                eng.new_game(self.start_fen, color == chess.WHITE)
            except EngineError as e:
                eng.broken = True
                self.rec.failed.append("white" if color else "black")
                kind = "stall" if e.kind == "timeout" else "crash"
                what = "connection stalls" if kind == "stall" else "disconnects"
                return _lose(color, kind, f"{_COLOR[color]}'s {what}")
        return None

    def finish(self, ending: Ending) -> GameRecord:
        rec = self.rec
        rec.result, rec.termination, rec.reason = ending
        rec.final_fen = self.board.fen()
        _end(rec, self.engines, self.clocks)
        return _stamp(rec)

    def ply(self) -> Ending | None:
        """One move of the side to move, from the rules' verdict on the position to the
        adjudication on the engine's score."""
        ending = self._rules_ending()
        if ending is not None:
            return ending
        turn = self.board.turn
        eng, clock = self.engines[turn], self.clocks[turn]
        lim = self._limits(turn)
        try:
            res = eng.go(self.start_fen, self.moves, lim)
        except EngineError as e:
            return self._failed(turn, e, lim.timeout)
        latency = self._charge(turn, res)
        ending = self._forfeit(turn, res)
        if ending is not None:
            return ending
        move = _parse_move(self.board, res.move)
        if move is None:
            return _lose(turn, "illegal-move", f"{_COLOR[turn]} makes an illegal move: {res.move}")
        uci = move.uci()
        info = MoveInfo(uci, res.score, res.mate, res.depth, res.elapsed,
                        clock.remaining if clock is not None and not clock.tc.infinite else None,
                        latency, **res.figures())
        self.rec.moves.append(info)
        self.board.push(move)
        self.moves.append(uci)
        k = _key(self.board)
        self.reps[k] = self.reps.get(k, 0) + 1
        if self.settings.ponder and res.ponder:
            self._ponder(turn, lim, res.ponder)
        return self._adjudicate(turn, _cp(info))

    def _rules_ending(self) -> Ending | None:
        """The game's end by the rules, the tablebases or the move limit, before a move."""
        ending = _rules(self.board, self.reps)
        if ending is None and self.settings.tb is not None:
            ending = tablebase_result(self.board, self.settings.tb)
        if ending is None and self.settings.maxmoves and \
                self.rec.plies >= 2 * self.settings.maxmoves:
            ending = ("1/2-1/2", "max-moves", "Draw by adjudication: maximum moves")
        return ending

    def _limits(self, turn: chess.Color) -> Limits:
        """The mover's search limits: both clocks, a fixed move time, nodes or depth; its
        `timeout` is when the answer is late."""
        cfg = self.engines[turn].cfg
        clock, other = self.clocks[turn], self.clocks[not turn]
        lim = Limits(white=turn == chess.WHITE)
        timeout = UNLIMITED_MOVE_TIMEOUT
        if clock is not None and not clock.tc.infinite:
            own_t = clock.remaining
            opp_t = other.remaining if other is not None and not other.tc.infinite else own_t
            opp_inc = other.tc.inc if other is not None else clock.tc.inc
            if turn == chess.WHITE:
                lim.wtime, lim.btime, lim.winc, lim.binc = own_t, opp_t, clock.tc.inc, opp_inc
            else:
                lim.wtime, lim.btime, lim.winc, lim.binc = opp_t, own_t, opp_inc, clock.tc.inc
            lim.movestogo = clock.moves_to_go()
            timeout = own_t + cfg.margin
        elif cfg.st is not None:
            lim.movetime = cfg.st
            timeout = cfg.st + cfg.margin
        lim.nodes = cfg.nodes
        lim.depth = cfg.depth
        lim.timeout = timeout
        return lim

    def _failed(self, turn: chess.Color, e: EngineError, timeout: float) -> Ending:
        """No move from the engine: a crash, a loss on time (it answered `stop`, late) or a
        stalled connection; the time it had is charged for a loss on time."""
        eng, clock, rec = self.engines[turn], self.clocks[turn], self.rec
        side = "white" if turn else "black"
        if isinstance(e, EngineCrashed):
            eng.broken = True
            rec.failed.append(side)
            return _lose(turn, "crash", f"{_COLOR[turn]} disconnects")
        if eng.stop():
            rec.time_loss = True
            if clock is not None:  # no answer by the flag: charge the time it had
                clock.punch(timeout, eng.cfg.margin)
            if turn == chess.WHITE:
                rec.white_time += timeout
            else:
                rec.black_time += timeout
            return _lose(turn, "timeout", f"{_COLOR[turn]} loses on time")
        eng.broken = True
        rec.failed.append(side)
        return _lose(turn, "stall", f"{_COLOR[turn]}'s connection stalls")

    def _charge(self, turn: chess.Color, res) -> float | None:
        """Record the move's thinking time and the runner's latency since the previous move
        (returned; None for the first move)."""
        eng, rec = self.engines[turn], self.rec
        t_sent = eng.p.last_read - res.elapsed if eng.p is not None else 0.0
        latency = None
        if self.last_recv is not None:
            latency = t_sent - self.last_recv
            rec.latencies.append(latency)
        self.last_recv = eng.p.last_read if eng.p is not None else None
        if turn == chess.WHITE:
            rec.white_time += res.elapsed
        else:
            rec.black_time += res.elapsed
        return latency

    def _forfeit(self, turn: chess.Color, res) -> Ending | None:
        """A resignation, or a loss on time: the clock's flag fell or the move time was
        overstepped by more than the margin."""
        cfg, clock = self.engines[turn].cfg, self.clocks[turn]
        if res.resign:
            return _lose(turn, "resign", f"{_COLOR[turn]} resigns")
        if clock is not None:
            late = not clock.punch(res.elapsed, cfg.margin)
        else:
            late = cfg.st is not None and res.elapsed > cfg.st + cfg.margin
        if late:
            self.rec.time_loss = True
            return _lose(turn, "timeout", f"{_COLOR[turn]} loses on time")
        return None

    def _ponder(self, turn: chess.Color, lim: Limits, ponder_move: str) -> None:
        """Let the mover think on the opponent's time, from its expected reply."""
        eng, clock = self.engines[turn], self.clocks[turn]
        ponder_lim = Limits(**lim.__dict__)
        if clock is not None and not clock.tc.infinite:
            if turn == chess.WHITE:
                ponder_lim.wtime = clock.remaining
            else:
                ponder_lim.btime = clock.remaining
            ponder_lim.white = not turn
        try:
            eng.ponder(self.start_fen, self.moves + [ponder_move], ponder_lim)
        except EngineError:
            eng.broken = True

    def _adjudicate(self, turn: chess.Color, cp: int | None) -> Ending | None:
        """Draw and resign adjudication on the engines' own scores (`cp`: the mover's)."""
        settings = self.settings
        if settings.draw is not None:
            d = settings.draw
            self.draw_run = self.draw_run + 1 if cp is not None and abs(cp) <= d.score else 0
            if self.draw_run >= 2 * d.movecount and self.board.fullmove_number >= d.movenumber:
                return ("1/2-1/2", "adjudication", "Draw by adjudication")
        if settings.resign is not None:
            r = settings.resign
            lost, won = self.resign_run, self.win_run
            lost[turn] = lost[turn] + 1 if cp is not None and cp <= -r.score else 0
            won[turn] = won[turn] + 1 if cp is not None and cp >= r.score else 0
            if lost[turn] >= r.movecount and (not r.twosided or won[not turn] >= r.movecount):
                winner = not turn
                return (_WIN[winner], "adjudication", f"{_COLOR[winner]} wins by adjudication")
        return None


def _stamp(rec: GameRecord) -> GameRecord:
    rec.end_time = time.time()
    return rec


def _end(rec: GameRecord, engines, clocks) -> None:
    for color, eng in engines.items():
        if not eng.broken:
            try:
                eng.end_game()
            except EngineError:
                eng.broken = True
        side = "white" if color else "black"
        rec.transcripts[side], rec.stderr[side] = eng.take_recording()
    for color, clock in clocks.items():
        if clock is not None and not clock.tc.infinite:
            if color:
                rec.white_left = clock.remaining
            else:
                rec.black_left = clock.remaining


def _parse_move(board: chess.Board, text: str) -> chess.Move | None:
    try:
        move = chess.Move.from_uci(text)
    except ValueError:
        try:
            return board.parse_san(text)
        except ValueError:
            return None
    if board.is_legal(move):
        return move
    return None


def _rules(board: chess.Board, reps: dict):
    """(result, termination, reason) when the rules end the game, else None."""
    if not any(board.generate_legal_moves()):
        if board.is_check():
            winner = not board.turn
            return (_WIN[winner], "checkmate", f"{_COLOR[winner]} mates")
        return ("1/2-1/2", "stalemate", "Draw by stalemate")
    if board.is_insufficient_material():
        return ("1/2-1/2", "insufficient-material", "Draw by insufficient mating material")
    if board.halfmove_clock >= 100:
        return ("1/2-1/2", "fifty-moves", "Draw by fifty moves rule")
    if reps.get(_key(board), 0) >= 3:
        return ("1/2-1/2", "repetition", "Draw by 3-fold repetition")
    return None
