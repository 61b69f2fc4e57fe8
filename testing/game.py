"""One game between two engine processes: clocks, rules, adjudication, termination."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import chess

from .engine import UNLIMITED_MOVE_TIMEOUT, Engine, EngineCrashed, EngineError, Limits
from .openings import Opening
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
class MoveInfo:
    uci: str
    score: int | None  # centipawns, mover's view (mates as +-(MATE_SCORE - plies))
    mate: int | None
    depth: int | None
    elapsed: float
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    hashfull: int | None = None
    tbhits: int | None = None
    pv: str | None = None
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
    settings = settings or GameSettings()
    rec = GameRecord(white=white.name, black=black.name, opening=opening)
    rec.start_time = time.time()
    board = opening.board()
    start_fen = opening.fen
    moves = list(opening.moves)
    engines = {chess.WHITE: white, chess.BLACK: black}
    clocks = {c: (Clock(e.cfg.tc) if e.cfg.tc is not None else None) for c, e in engines.items()}
    reps: dict = {}
    replay = opening.board()
    for _ in range(len(replay.move_stack)):
        replay.pop()
    reps[_key(replay)] = 1
    for m in opening.moves:
        replay.push_uci(m)
        k = _key(replay)
        reps[k] = reps.get(k, 0) + 1

    def finish(result: str, termination: str, reason: str) -> GameRecord:
        rec.result, rec.termination, rec.reason = result, termination, reason
        return rec

    def lose(color: chess.Color, termination: str, reason: str) -> GameRecord:
        return finish(_WIN[not color], termination, reason)

    for color, eng in engines.items():
        try:
            eng.new_game(start_fen, color == chess.WHITE)
        except EngineError as e:
            eng.broken = True
            rec.failed.append("white" if color else "black")
            kind = "stall" if e.kind == "timeout" else "crash"
            what = "connection stalls" if kind == "stall" else "disconnects"
            _end(rec, engines, clocks)
            rec.final_fen = board.fen()
            return _stamp(lose(color, kind, f"{_COLOR[color]}'s {what}"))

    draw_run = 0
    resign_run = {chess.WHITE: 0, chess.BLACK: 0}
    win_run = {chess.WHITE: 0, chess.BLACK: 0}
    last_recv = None
    result = None
    while result is None:
        result = _rules(board, reps)
        if result is None and settings.tb is not None:
            result = tablebase_result(board, settings.tb)
        if result is not None:
            break
        if settings.maxmoves and rec.plies >= 2 * settings.maxmoves:
            result = finish("1/2-1/2", "max-moves", "Draw by adjudication: maximum moves")
            break
        turn = board.turn
        eng = engines[turn]
        cfg = eng.cfg
        clock = clocks[turn]
        other = clocks[not turn]
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
        try:
            res = eng.go(start_fen, moves, lim)
        except EngineError as e:
            side = "white" if turn else "black"
            if isinstance(e, EngineCrashed):
                eng.broken = True
                rec.failed.append(side)
                result = lose(turn, "crash", f"{_COLOR[turn]} disconnects")
            elif eng.stop():
                rec.time_loss = True
                if clock is not None:  # no answer by the flag: charge the time it had
                    clock.punch(timeout, cfg.margin)
                if turn == chess.WHITE:
                    rec.white_time += timeout
                else:
                    rec.black_time += timeout
                result = lose(turn, "timeout", f"{_COLOR[turn]} loses on time")
            else:
                eng.broken = True
                rec.failed.append(side)
                result = lose(turn, "stall", f"{_COLOR[turn]}'s connection stalls")
            break
        t_sent = eng.p.last_read - res.elapsed if eng.p is not None else 0.0
        latency = None
        if last_recv is not None:
            latency = t_sent - last_recv
            rec.latencies.append(latency)
        last_recv = eng.p.last_read if eng.p is not None else None
        if turn == chess.WHITE:
            rec.white_time += res.elapsed
        else:
            rec.black_time += res.elapsed
        if res.resign:
            result = lose(turn, "resign", f"{_COLOR[turn]} resigns")
            break
        if clock is not None:
            if not clock.punch(res.elapsed, cfg.margin):
                rec.time_loss = True
                result = lose(turn, "timeout", f"{_COLOR[turn]} loses on time")
                break
        elif cfg.st is not None and res.elapsed > cfg.st + cfg.margin:
            rec.time_loss = True
            result = lose(turn, "timeout", f"{_COLOR[turn]} loses on time")
            break
        move = _parse_move(board, res.move)
        if move is None:
            result = lose(turn, "illegal-move", f"{_COLOR[turn]} makes an illegal move: {res.move}")
            break
        uci = move.uci()
        info = MoveInfo(uci, res.score, res.mate, res.depth, res.elapsed, res.seldepth,
                        res.nodes, res.nps, res.hashfull, res.tbhits, res.pv,
                        clock.remaining if clock is not None and not clock.tc.infinite else None,
                        latency)
        rec.moves.append(info)
        board.push(move)
        moves.append(uci)
        k = _key(board)
        reps[k] = reps.get(k, 0) + 1
        if settings.ponder and res.ponder:
            ponder_lim = Limits(**lim.__dict__)
            if clock is not None and not clock.tc.infinite:
                if turn == chess.WHITE:
                    ponder_lim.wtime = clock.remaining
                else:
                    ponder_lim.btime = clock.remaining
                ponder_lim.white = not turn
            try:
                eng.ponder(start_fen, moves + [res.ponder], ponder_lim)
            except EngineError:
                eng.broken = True
        # Adjudication on the engines' own scores.
        cp = _cp(info)
        if settings.draw is not None:
            d = settings.draw
            draw_run = draw_run + 1 if cp is not None and abs(cp) <= d.score else 0
            if draw_run >= 2 * d.movecount and board.fullmove_number >= d.movenumber:
                result = finish("1/2-1/2", "adjudication", "Draw by adjudication")
                break
        if settings.resign is not None:
            r = settings.resign
            resign_run[turn] = resign_run[turn] + 1 if cp is not None and cp <= -r.score else 0
            win_run[turn] = win_run[turn] + 1 if cp is not None and cp >= r.score else 0
            if resign_run[turn] >= r.movecount and (
                not r.twosided or win_run[not turn] >= r.movecount
            ):
                winner = not turn
                result = finish(
                    _WIN[winner], "adjudication", f"{_COLOR[winner]} wins by adjudication"
                )
                break
    if isinstance(result, tuple):
        finish(*result)
    rec.final_fen = board.fen()
    _end(rec, engines, clocks)
    return _stamp(rec)


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
