"""`Position`: the friendly Python face over the position and move-generation kernels."""

import numpy as np

from wasp.bitboards import tables
from wasp.fen import STARTING_FEN, parse_fen, to_fen
from wasp.movegen import generate
from wasp.position import (
    checkers,
    copy_state,
    current_key,
    gives_check,
    history_keys,
    insufficient_material,
    is_repetition,
    make_move,
    unmake_move,
)
from wasp.types import (
    CASTLING_ROOK,
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    GEN_ALL,
    HISTORY_KEEP,
    KEYS,
    MAILBOX,
    MAX_HISTORY,
    MAX_MOVES,
    MAX_PLY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_UNDO,
    PIECE_CHARS,
    ST_CHESS960,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    UNDO,
    UNDO_MOVE,
    WHITE,
    square_name,
)

PROMO_CHARS = " nbrq"


def move_to_uci(m: int, S=None) -> str:
    """UCI text of an encoded move: castling as the king's two-square step, or as the king
    taking its own rook when `S` (the game's State, any ply) is a Chess960 game."""
    m = int(m)
    if m == 0:
        return "0000"
    if m & FLAG_CASTLE and S is not None and S.st[ST_CHESS960]:
        return king_takes_rook(m, S)
    text = square_name(m & MOVE_FROM_MASK) + square_name((m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK)
    promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    return text + PROMO_CHARS[promo] if promo else text


def king_takes_rook(m: int, S) -> str:
    """Castling move `m` as UCI text in Chess960's form, the king taking its own rook."""
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    right = 2 * (to >> 5) + (0 if to & 7 == 6 else 1)  # to >> 5: 0 on rank 1, 1 on rank 8
    return square_name(m & MOVE_FROM_MASK) + square_name(int(S.st[CASTLING_ROOK + right]))


class IllegalMoveError(ValueError):
    """A move that is malformed or not legal in the position."""


class Position:
    """A chess position with its game history.

    >>> p = Position()
    >>> p.push_uci("e2e4")
    >>> p.fen()
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'
    """

    def __init__(self, fen: str = STARTING_FEN, chess960: bool = False):
        self.T = tables()
        self.S = parse_fen(fen, self.T, chess960)
        self._moves = np.zeros(MAX_MOVES, dtype=np.int32)

    @classmethod
    def from_fen(cls, fen: str, chess960: bool = False) -> "Position":
        return cls(fen, chess960)

    @property
    def chess960(self) -> bool:
        """True when castling is written king-takes-rook: asked for, or the start position
        can only be Chess960 (its castling field names a file, or king or rook stands off
        standard chess's squares)."""
        return bool(self.S.st[ST_CHESS960])

    @chess960.setter
    def chess960(self, on: bool) -> None:
        self.S.st[ST_CHESS960] = int(bool(on))

    def copy(self) -> "Position":
        other = object.__new__(Position)
        other.T = self.T
        other.S = copy_state(self.S)
        other._moves = np.zeros(MAX_MOVES, dtype=np.int32)
        return other

    # -- text ---------------------------------------------------------------
    def fen(self, shredder: bool = False) -> str:
        """FEN with an X-FEN castling field (standard "KQkq" in standard chess), or
        Shredder-FEN's rook files with `shredder`."""
        return to_fen(self.S, self.T, shredder=shredder)

    def epd(self) -> str:
        """The first four FEN fields, as EPD records start."""
        return to_fen(self.S, self.T, epd=True)

    def __repr__(self) -> str:
        if self.chess960:
            return f"Position({self.fen()!r}, chess960=True)"
        return f"Position({self.fen()!r})"

    def __str__(self) -> str:
        rows = []
        for rank in range(7, -1, -1):
            cells = []
            for file in range(8):
                p = int(self.S.st[MAILBOX + rank * 8 + file])
                cells.append("." if p == EMPTY else PIECE_CHARS[p])
            rows.append(" ".join(cells))
        return "\n".join(rows)

    # -- state ----------------------------------------------------------------
    @property
    def turn(self) -> int:
        """0 for white, 1 for black."""
        return int(self.S.st[ST_SIDE])

    @property
    def key(self) -> int:
        """Polyglot Zobrist key (equals chess.polyglot.zobrist_hash)."""
        return int(current_key(self.S))

    @property
    def halfmove_clock(self) -> int:
        return int(self.S.st[ST_HALFMOVE])

    @property
    def fullmove_number(self) -> int:
        return int(self.S.st[ST_FULLMOVE])

    def piece_at(self, square: int) -> str | None:
        p = int(self.S.st[MAILBOX + square])
        return None if p == EMPTY else PIECE_CHARS[p]

    # -- moves ------------------------------------------------------------------
    def legal_move_codes(self, mode: int = GEN_ALL) -> list[int]:
        n = generate(self.T, self.S, self._moves, mode, True)
        return [int(m) for m in self._moves[:n]]

    def legal_moves(self) -> list[str]:
        """Legal moves as UCI strings."""
        return [self.uci(m) for m in self.legal_move_codes()]

    def uci(self, move: int) -> str:
        """UCI text of an encoded move in this game's castling convention."""
        return move_to_uci(move, self.S)

    def parse_uci(self, text: str) -> int:
        """The encoded legal move for UCI text; IllegalMoveError says why not.

        Castling is read in either form, the king taking its own rook (Chess960's) or the
        king's two-square step (standard chess's), when that is no other legal move."""
        if not isinstance(text, str) or len(text) not in (4, 5):
            raise IllegalMoveError(f"not a UCI move: {text!r}")
        codes = self.legal_move_codes()
        castles = []
        for m in codes:
            if m & FLAG_CASTLE:
                castles.append(m)
            elif move_to_uci(m) == text:
                return m
        for m in castles:
            if text in (king_takes_rook(m, self.S), move_to_uci(m)):
                return m
        raise IllegalMoveError(f"illegal move {text!r} in {self.fen()}")

    def push(self, move: int) -> None:
        """Play an encoded legal move (from legal_move_codes)."""
        if self.S.st[ST_PLY] >= MAX_HISTORY - MAX_PLY - 1:
            self._compact_history()
        make_move(self.T, self.S, move)

    def push_uci(self, text: str) -> None:
        self.push(self.parse_uci(text))

    def pop(self) -> str:
        """Take back the last move and return it as UCI text."""
        ply = int(self.S.st[ST_PLY])
        if ply == 0:
            raise IndexError("pop from a position with no moves")
        m = int(self.S.st[UNDO + (ply - 1) * N_UNDO + UNDO_MOVE])
        unmake_move(self.T, self.S)
        return self.uci(m)

    def move_stack(self) -> list[str]:
        ply = int(self.S.st[ST_PLY])
        return [self.uci(int(m)) for m in self.S.st[UNDO + UNDO_MOVE:UNDO + ply * N_UNDO:N_UNDO]]

    def _compact_history(self) -> None:
        """Forget all but the last HISTORY_KEEP plies (older ones cannot repeat)."""
        S = self.S
        ply = int(S.st[ST_PLY])
        drop = ply - HISTORY_KEEP
        S.bb[KEYS:KEYS + HISTORY_KEEP + 1] = S.bb[KEYS + drop:KEYS + ply + 1].copy()
        kept = S.st[UNDO + drop * N_UNDO:UNDO + ply * N_UNDO].copy()
        S.st[UNDO:UNDO + HISTORY_KEEP * N_UNDO] = kept
        S.st[ST_PLY] = HISTORY_KEEP

    # -- queries ------------------------------------------------------------------
    def is_check(self) -> bool:
        return bool(checkers(self.T, self.S))

    def gives_check(self, text: str) -> bool:
        return bool(gives_check(self.T, self.S, self.parse_uci(text)))

    def is_checkmate(self) -> bool:
        return self.is_check() and not self.legal_move_codes()

    def is_stalemate(self) -> bool:
        return not self.is_check() and not self.legal_move_codes()

    def is_insufficient_material(self) -> bool:
        return bool(insufficient_material(self.S))

    def is_repetition(self, count: int = 3) -> bool:
        """True when the position has occurred `count` times (this one included)."""
        return bool(is_repetition(self.S, count - 1))

    def has_repeated(self) -> bool:
        """Has any position since the last capture or pawn move occurred twice? (Stockfish's
        Position::has_repeated: its tablebase ranking then makes the win progress by DTZ.)"""
        keys = history_keys(self.S)
        n = min(int(self.halfmove_clock), len(keys) - 1) + 1
        recent = keys[len(keys) - n:]
        return len(set(recent.tolist())) < n

    def is_fifty_moves(self) -> bool:
        return self.halfmove_clock >= 100

    def game_over(self) -> tuple[str, str] | None:
        """(result, reason) when the game has ended by the rules, else None."""
        if not self.legal_move_codes():
            if self.is_check():
                winner = "Black" if self.turn == WHITE else "White"
                return ("0-1" if winner == "Black" else "1-0"), f"checkmate, {winner} wins"
            return "1/2-1/2", "stalemate"
        if self.is_insufficient_material():
            return "1/2-1/2", "draw by insufficient material"
        if self.is_repetition(3):
            return "1/2-1/2", "draw by threefold repetition"
        if self.is_fifty_moves():
            return "1/2-1/2", "draw by the fifty-move rule"
        return None

    def is_capture(self, text: str) -> bool:
        m = self.parse_uci(text)
        to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
        if m & FLAG_CASTLE:
            return False
        return bool(m & FLAG_EP) or int(self.S.st[MAILBOX + to]) != EMPTY

    def is_castling(self, text: str) -> bool:
        return bool(self.parse_uci(text) & FLAG_CASTLE)

    @property
    def white_to_move(self) -> bool:
        return self.turn == WHITE
