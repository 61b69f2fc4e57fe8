"""The engine's board and moves while its kernels compile (a cold cache): python-chess's board
behind `Position`'s face, and a small alpha-beta search in pure Python, so that a GUI gets
legal moves within the clock from the first `go`.

The search is weak (a few thousand nodes a second: material, piece-square tables, captures
first, a quiescence search of captures) and serves only until the kernels are ready; nothing
here imports numba or a kernel module.
"""

import threading
import time

import chess

from wasp.types import MATE, MAX_PLY

STARTING_FEN = chess.STARTING_FEN
VALUES = {chess.PAWN: 100, chess.KNIGHT: 320, chess.BISHOP: 330, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}
CHECK_EVERY = 32  # nodes between looks at the clock and the stop flag
MAX_DEPTH = 32  # iterations at most (an infinite search then waits for `stop`)


def _table(rows):
    """A piece-square table from White's view, rows from rank 8 down to rank 1 (as it reads),
    as a list indexed by square (a1 = 0)."""
    flat = [v for row in rows for v in row]
    return [flat[(7 - sq // 8) * 8 + sq % 8] for sq in range(64)]


_CENTRE = [[-20, -10, -10, -10, -10, -10, -10, -20],
           [-10, 0, 0, 0, 0, 0, 0, -10],
           [-10, 0, 5, 10, 10, 5, 0, -10],
           [-10, 5, 10, 15, 15, 10, 5, -10],
           [-10, 0, 10, 15, 15, 10, 0, -10],
           [-10, 5, 5, 10, 10, 5, 5, -10],
           [-10, 0, 0, 0, 0, 0, 0, -10],
           [-20, -10, -10, -10, -10, -10, -10, -20]]
PST = {
    chess.PAWN: _table([[0] * 8, [50] * 8, [10, 10, 20, 30, 30, 20, 10, 10],
                        [5, 5, 10, 25, 25, 10, 5, 5], [0, 0, 0, 20, 20, 0, 0, 0],
                        [5, -5, -10, 0, 0, -10, -5, 5], [5, 10, 10, -20, -20, 10, 10, 5],
                        [0] * 8]),
    chess.KNIGHT: _table([[2 * v for v in row] for row in _CENTRE]),
    chess.BISHOP: _table(_CENTRE),
    chess.ROOK: _table([[0] * 8, [5, 10, 10, 10, 10, 10, 10, 5]] + [[0] * 8] * 5
                       + [[0, 0, 0, 5, 5, 0, 0, 0]]),
    chess.QUEEN: _table([[v // 2 for v in row] for row in _CENTRE]),
    chess.KING: _table([[-30] * 8] * 5 + [[-20] * 8, [10, 10, -10, -20, -20, -10, 10, 10],
                                          [20, 30, 10, 0, 0, 10, 30, 20]]),
}


class Board:
    """A game on python-chess's board with the part of `wasp.board.Position`'s face that the
    engine layer uses (moves as UCI text; castling read in either form)."""

    def __init__(self, fen: str | None = None, chess960: bool = False):
        try:
            self.board = chess.Board(fen or STARTING_FEN, chess960=chess960)
        except ValueError as exc:
            raise ValueError(f"invalid fen: {fen!r} ({exc})") from None
        status = self.board.status()
        if status & ~(chess.STATUS_VALID | chess.STATUS_IMPOSSIBLE_CHECK):
            raise ValueError(f"impossible position: {fen!r}")
        self._uci = []  # the moves as played, in this game's castling form

    def __str__(self) -> str:
        return str(self.board)

    @property
    def chess960(self) -> bool:
        return self.board.chess960

    @chess960.setter
    def chess960(self, on: bool) -> None:
        self.board.chess960 = bool(on)

    @property
    def turn(self) -> int:
        """0 for white, 1 for black (as `Position.turn`)."""
        return 0 if self.board.turn == chess.WHITE else 1

    @property
    def white_to_move(self) -> bool:
        return self.board.turn == chess.WHITE

    def fen(self) -> str:
        return self.board.fen()

    def copy(self) -> "Board":
        other = object.__new__(Board)
        other.board = self.board.copy()
        other._uci = list(self._uci)
        return other

    def legal_moves(self) -> list[str]:
        return [self.board.uci(m) for m in self.board.legal_moves]

    def _move(self, text: str) -> chess.Move:
        try:
            move = self.board.parse_uci(text)
        except ValueError:
            move = None
        if move is None:  # castling in the other form: e1g1 in Chess960, king takes rook
            for m in self.board.legal_moves:
                if self.board.is_castling(m) and text in (m.uci(), self._two_step(m)):
                    return m
            raise ValueError(f"illegal move {text!r} in {self.fen()}")
        return move

    def _two_step(self, move) -> str:
        side = 6 if self.board.is_kingside_castling(move) else 2
        return chess.square_name(move.from_square) + chess.square_name(
            chess.square(side, chess.square_rank(move.from_square)))

    def push_uci(self, text: str) -> None:
        move = self._move(text)
        self._uci.append(self.board.uci(move))
        self.board.push(move)

    def push_san(self, text: str) -> None:
        try:
            move = self.board.parse_san(text)
        except ValueError as exc:
            raise ValueError(f"illegal move {text!r} in {self.fen()}: {exc}") from None
        self._uci.append(self.board.uci(move))
        self.board.push(move)

    def pop(self) -> str:
        if not self._uci:
            raise IndexError("pop from a position with no moves")
        self.board.pop()
        return self._uci.pop()

    def move_stack(self) -> list[str]:
        return list(self._uci)

    def is_castling(self, text: str) -> bool:
        return self.board.is_castling(self._move(text))

    def game_over(self) -> tuple[str, str] | None:
        """(result, reason) when the game has ended by the rules, as `Position.game_over`."""
        board = self.board
        if not any(board.generate_legal_moves()):
            if board.is_check():
                winner = "Black" if board.turn == chess.WHITE else "White"
                return ("0-1" if winner == "Black" else "1-0"), f"checkmate, {winner} wins"
            return "1/2-1/2", "stalemate"
        if board.is_insufficient_material():
            return "1/2-1/2", "draw by insufficient material"
        if board.is_repetition(3):
            return "1/2-1/2", "draw by threefold repetition"
        if board.halfmove_clock >= 100:
            return "1/2-1/2", "draw by the fifty-move rule"
        return None


class _Stop(Exception):
    """The clock, a node limit or `stop` ended the search."""


class Search:
    """Iterative deepening alpha-beta on a copy of a `Board`; `run()` returns (best, ponder,
    score, depth, nodes, pv) with moves as UCI text. Limits: `depth`, `nodes`, `soft`/`hard`
    (seconds after `start`, time.monotonic()), `stop` (a threading.Event), `infinite` (the
    search then waits for `stop` before it returns)."""

    def __init__(self, board: Board, *, depth=None, nodes=None, soft=None, hard=None, start=None,
                 stop=None, infinite=False, searchmoves=(), on_info=None):
        self.game = board.copy()
        self.board = self.game.board
        self.depth = min(depth or MAX_DEPTH, MAX_DEPTH)
        self.max_nodes = nodes
        self.start = time.monotonic() if start is None else start
        self.soft, self.hard = soft, hard
        self.stop = stop or threading.Event()
        self.infinite = infinite
        self.searchmoves = set(searchmoves)
        self.on_info = on_info
        self.nodes = 0

    def _tick(self):
        self.nodes += 1
        if self.nodes % CHECK_EVERY == 0:
            if self.stop.is_set() or (
                    self.hard is not None and time.monotonic() - self.start >= self.hard):
                raise _Stop
        if self.max_nodes is not None and self.nodes >= self.max_nodes:
            raise _Stop

    def evaluate(self) -> int:
        """Material and piece-square tables, from the side to move's view."""
        score = 0
        for square, piece in self.board.piece_map().items():
            if piece.color == chess.WHITE:
                score += VALUES[piece.piece_type] + PST[piece.piece_type][square]
            else:
                score -= VALUES[piece.piece_type] + PST[piece.piece_type][square ^ 56]
        return score if self.board.turn == chess.WHITE else -score

    def _ordered(self, moves, first=None):
        board = self.board

        def key(move):
            if move == first:
                return -100000
            victim = board.piece_type_at(move.to_square)
            if victim is None and board.is_en_passant(move):
                victim = chess.PAWN
            gain = VALUES.get(victim, 0) * 10 - VALUES[board.piece_type_at(move.from_square)] \
                if victim else 0
            if move.promotion:
                gain += VALUES[move.promotion]
            return -gain if gain else 1

        return sorted(moves, key=key)

    def _quiesce(self, alpha, beta, ply):
        self._tick()
        stand = self.evaluate()
        if stand >= beta or ply >= MAX_PLY - 1:
            return stand
        alpha = max(alpha, stand)
        for move in self._ordered(self.board.generate_legal_captures()):
            self.board.push(move)
            score = -self._quiesce(-beta, -alpha, ply + 1)
            self.board.pop()
            if score >= beta:
                return score
            alpha = max(alpha, score)
        return alpha

    def _negamax(self, depth, alpha, beta, ply, line):
        """The score of the position; `line` gets its principal variation."""
        self._tick()
        board = self.board
        if board.is_repetition(2) or board.halfmove_clock >= 100 \
                or board.is_insufficient_material():
            return 0
        moves = list(board.legal_moves)
        if not moves:
            return -MATE + ply if board.is_check() else 0
        if depth <= 0:
            return self._quiesce(alpha, beta, ply)
        best = -MATE - 1
        for move in self._ordered(moves):
            board.push(move)
            child = []
            score = -self._negamax(depth - 1, -beta, -alpha, ply + 1, child)
            board.pop()
            if score > best:
                best = score
                line[:] = [move, *child]
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best

    def _root(self, depth, moves, pv):
        """One iteration over the root moves (the last best first); (score, pv)."""
        alpha, beta, best, line = -MATE - 1, MATE + 1, -MATE - 1, []
        first = pv[0] if pv else None
        for move in self._ordered(moves, first):
            self.board.push(move)
            child = []
            score = -self._negamax(depth - 1, -beta, -alpha, 1, child)
            self.board.pop()
            if score > best:
                best, line = score, [move, *child]
                alpha = max(alpha, score)
        return best, line

    def run(self):
        board = self.board
        moves = [m for m in board.legal_moves
                 if not self.searchmoves or board.uci(m) in self.searchmoves]
        if not moves:
            return "0000", None, 0, 0, 0, []
        pv, score, done = [moves[0]], 0, 0
        root_plies = len(board.move_stack)
        try:
            for depth in range(1, self.depth + 1):
                score, line = self._root(depth, moves, pv)
                pv, done = line, depth
                if self.on_info is not None:
                    self.on_info(depth, score, self.nodes, self.elapsed_ms(), self._text(pv))
                if self.soft is not None and time.monotonic() - self.start >= self.soft:
                    break
                if len(moves) == 1 and self.soft is not None:
                    break
                if abs(score) >= MATE - MAX_PLY and not self.infinite:
                    break
        except _Stop:  # the search ended inside the tree: back to the root
            while len(board.move_stack) > root_plies:
                board.pop()
        while self.infinite and not self.stop.wait(0.05):  # until stop (or ponderhit)
            pass
        text = self._text(pv)
        return text[0], text[1] if len(text) > 1 else None, score, done, self.nodes, text

    def elapsed_ms(self) -> int:
        """Milliseconds since the search's clock started."""
        return int((time.monotonic() - self.start) * 1000)

    def _text(self, pv) -> list[str]:
        board, out = self.board.copy(stack=False), []
        for move in pv:
            out.append(board.uci(move))
            board.push(move)
        return out
