"""viriformat, Viridithas's game-by-game binpack (what bullet's `ViriBinpackLoader` reads):
reader and writer, a game view (`ViriGame`), the tools' `Record` view, and the fast path into
bulletformat's 32-byte records for the net trainer (`decode_boards`, by the kernels of
`tuner.formats.virikernels`).

A file is games one after another, each a 32-byte header (marlinformat's PackedBoard: the
position the game starts from and its result), a 4-byte (move, score) pair for every position
played from, and four zero bytes. Integers are little-endian, squares a1 = 0 .. h8 = 63.

- Header: ``occ`` u64; ``pieces`` 16 bytes, a nibble for each piece of ``occ`` in ascending
  square order, low nibble first: ``colour << 3 | code``, code 0..5 pawn .. king, 6 a rook that
  can still castle (its king's right on that side), 7 never; ``stm_ep`` u8, bit 7 set when
  Black is to move, the low seven bits the en-passant square or 64; ``halfmove`` u8;
  ``fullmove`` u16; ``score`` i16 (unused by a game: 0); ``wdl`` u8, White's result, 0 loss,
  1 draw, 2 win; ``extra`` u8 (unused: 0).
- Move u16: ``from | to << 6 | promotion << 12 | type << 14``; promotion knight, bishop, rook,
  queen = 0..3; type 1 en passant, 2 castling, written king takes rook (e1h1 for White's king
  side, Chess960 alike), 3 promotion, 0 any other move. Score i16: White's, of the position
  the move is played from.
"""

import os
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .records import MATE_SCORE, Record, check_score, fen_ply
from .virikernels import (
    ERRORS,
    F_MAX_SCORE,
    F_MIN_PLY,
    F_NO_CAPTURE,
    F_NO_CHECK,
    HEADER_SIZE,
    I_AT,
    I_BYTES,
    I_ERROR,
    I_GAMES,
    I_MOVE,
    I_RECORDS,
    MOVE_SIZE,
    N_FILTER,
    N_INFO,
    NO_EP,
    NO_SCORE_CAP,
    PROMO_MASK,
    PROMO_SHIFT,
    SQUARE_MASK,
    STM_BLACK,
    TO_SHIFT,
    TYPE_CASTLE,
    TYPE_EP,
    TYPE_PROMO,
    TYPE_SHIFT,
    UNMOVED_ROOK,
)

SUFFIX = ".vf"
CHUNK = 1 << 22  # bytes a kernel call reads
TERMINATOR = bytes(MOVE_SIZE)
RESULT_WDL = {0.0: 0, 0.5: 1, 1.0: 2}  # White's result -> the header's wdl
KINDS = "PNBRQK"
PROMOTIONS = {"": 0, "n": 1, "b": 2, "r": 3, "q": 4}  # UCI's suffix -> the engine's code
FILES = "abcdefgh"


class ViriFormatError(ValueError):
    """A viriformat file, game or record that cannot be read or written: the message names the
    file, the game and the move."""


def is_viri(path) -> bool:
    return str(path).lower().endswith(SUFFIX)


# -- the header ---------------------------------------------------------------------------

def header_fen(header: bytes) -> tuple[str, float, int, int]:
    """(FEN, White's result, score, extra) of a 32-byte header; the FEN's castling field is
    X-FEN (a file letter only for a rook with another castling-side rook outside it), its
    counters as stored. ValueError says what is wrong with it (the position itself is checked
    where it is set up)."""
    occ = int.from_bytes(header[0:8], "little")
    board = [""] * 64
    unmoved = []
    kings = {}
    for i, sq in enumerate(sq for sq in range(64) if occ >> sq & 1):
        if i == 32:
            raise ValueError("more than 32 pieces")
        nib = header[8 + i // 2] >> 4 * (i & 1) & 15
        colour, code = nib >> 3, nib & 7
        if code == 7:
            raise ValueError("a piece code of 7 (no piece type)")
        if code == UNMOVED_ROOK:
            unmoved.append((colour, sq))
            code = 3
        if code == 5:
            kings.setdefault(colour, sq)
        board[sq] = KINDS[code].lower() if colour else KINDS[code]
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for p in board[8 * rank:8 * rank + 8]:
            if not p:
                empty += 1
                continue
            row += (str(empty) if empty else "") + p
            empty = 0
        rows.append(row + (str(empty) if empty else ""))
    rights = {}
    for colour, sq in unmoved:
        king = kings.get(colour)
        if king is None or sq >> 3 != 7 * colour or king >> 3 != sq >> 3:
            raise ValueError("an unmoved (castling) rook off its king's back rank")
        side = "k" if sq > king else "q"
        if (colour, side) in rights:
            raise ValueError("two unmoved (castling) rooks on one side of a king")
        rook = "r" if colour else "R"
        outer = range(sq + 1, 8 * (sq >> 3) + 8) if side == "k" else range(8 * (sq >> 3), sq)
        letter = FILES[sq & 7] if any(board[s] == rook for s in outer) else side
        rights[colour, side] = letter if colour else letter.upper()
    castling = "".join(rights[key] for key in ((0, "k"), (0, "q"), (1, "k"), (1, "q"))
                       if key in rights) or "-"
    ep = header[24] & 0x7F
    if ep > NO_EP:
        raise ValueError(f"en-passant field {ep} (a square 0..63, or 64 for none)")
    wdl = header[30]
    if wdl > 2:
        raise ValueError(f"game result {wdl} (0, 1 or 2)")
    fen = " ".join(["/".join(rows), "b" if header[24] & STM_BLACK else "w", castling,
                    "-" if ep == NO_EP else FILES[ep & 7] + str(ep // 8 + 1), str(header[25]),
                    str(int.from_bytes(header[26:28], "little"))])
    score = int.from_bytes(header[28:30], "little", signed=True)
    return fen, wdl / 2, score, header[31]


def pack_header(fen: str, result: float, score: int = 0, extra: int = 0) -> bytes:
    """The 32-byte header of a game starting at `fen` with White's `result`; ValueError for a
    FEN that is not a legal position or whose counters do not fit (halfmove u8, fullmove
    u16). Castling rights mark their rooks; the en-passant square is the FEN's."""
    from wasp.types import CASTLING_ROOK, EMPTY, MAILBOX, NO_SQUARE, ST_CASTLE, parse_square

    S = _position(fen).S
    fields = fen.split()
    occ = 0
    nibbles = []
    rooks = {int(S.st[CASTLING_ROOK + i]) for i in range(4)
             if int(S.st[ST_CASTLE]) >> i & 1 and S.st[CASTLING_ROOK + i] != NO_SQUARE}
    for sq in range(64):
        p = int(S.st[MAILBOX + sq])
        if p == EMPTY:
            continue
        occ |= 1 << sq
        code = UNMOVED_ROOK if sq in rooks else p % 6
        nibbles.append((8 if p >= 6 else 0) | code)
    pieces = bytearray(16)
    for i, nib in enumerate(nibbles):
        pieces[i // 2] |= nib << 4 * (i & 1)
    ep = NO_EP if fields[3] == "-" else parse_square(fields[3])
    halfmove = int(fields[4]) if len(fields) > 4 else 0
    fullmove = int(fields[5]) if len(fields) > 5 else 1
    if not 0 <= halfmove <= 255:
        raise ValueError(f"halfmove clock {halfmove} does not fit the header's byte")
    if not 0 <= fullmove <= 65535:
        raise ValueError(f"fullmove number {fullmove} does not fit the header's u16")
    if result not in RESULT_WDL:
        raise ValueError(f"result {result!r} (1.0, 0.5 or 0.0)")
    return (occ.to_bytes(8, "little") + bytes(pieces)
            + bytes([(STM_BLACK if fields[1] == "b" else 0) | ep, halfmove])
            + fullmove.to_bytes(2, "little") + check_score(score).to_bytes(2, "little", signed=True)
            + bytes([RESULT_WDL[result], extra]))


# -- moves --------------------------------------------------------------------------------

def _position(fen: str):
    """The engine's Position of `fen` (ValueError for an illegal one)."""
    from wasp.board import Position

    return Position(fen)


def engine_code(pos, mv: int, moves=None) -> int:
    """The legal engine move (`wasp.types` code) of viriformat move `mv` in `pos`; ValueError
    when there is none. `moves`: room for the legal moves (int32 [256]) to reuse."""
    from .virikernels import legal_code

    frm, to, kind = mv & SQUARE_MASK, mv >> TO_SHIFT & SQUARE_MASK, mv >> TYPE_SHIFT
    promo = (mv >> PROMO_SHIFT & PROMO_MASK) + 1 if kind == TYPE_PROMO else 0
    code = legal_code(pos.T, pos.S, _room(moves), frm, to, promo, kind)
    if code < 0:
        raise ValueError(f"move {mv:#06x} ({FILES[frm & 7]}{frm // 8 + 1}{FILES[to & 7]}"
                         f"{to // 8 + 1}, type {kind}) is not legal in {pos.fen()}")
    return code


def _room(moves):
    from wasp.types import MAX_MOVES

    return np.zeros(MAX_MOVES, dtype=np.int32) if moves is None else moves


def viri_move(pos, code: int) -> int:
    """Viriformat's u16 of legal engine move `code` in `pos` (castling as king takes rook)."""
    from wasp.types import (
        CASTLING_ROOK,
        FLAG_CASTLE,
        FLAG_EP,
        MOVE_PROMO_MASK,
        MOVE_PROMO_SHIFT,
        MOVE_TO_SHIFT,
    )

    frm, to = code & SQUARE_MASK, code >> MOVE_TO_SHIFT & SQUARE_MASK
    if code & FLAG_CASTLE:
        rook = int(pos.S.st[CASTLING_ROOK + 2 * pos.turn + (0 if to & 7 == 6 else 1)])
        return frm | rook << TO_SHIFT | TYPE_CASTLE << TYPE_SHIFT
    if code & FLAG_EP:
        return frm | to << TO_SHIFT | TYPE_EP << TYPE_SHIFT
    promo = code >> MOVE_PROMO_SHIFT & MOVE_PROMO_MASK
    if promo:
        return frm | to << TO_SHIFT | (promo - 1) << PROMO_SHIFT | TYPE_PROMO << TYPE_SHIFT
    return frm | to << TO_SHIFT


def uci_code(pos, text: str, moves=None) -> int:
    """The legal engine move of UCI `text` in `pos`, castling in either form (the king's
    two-square step or the king taking its own rook); ValueError when there is none. `moves`:
    room for the legal moves (int32 [256]) to reuse."""
    from wasp.types import parse_square

    from .virikernels import ANY_TYPE, legal_code

    if not isinstance(text, str) or len(text) not in (4, 5) or text[4:] not in PROMOTIONS:
        raise ValueError(f"not a UCI move: {text!r}")
    try:
        frm, to = parse_square(text[:2]), parse_square(text[2:4])
    except ValueError:
        raise ValueError(f"not a UCI move: {text!r}") from None
    code = legal_code(pos.T, pos.S, _room(moves), frm, to, PROMOTIONS[text[4:]], ANY_TYPE)
    if code < 0:
        raise ValueError(f"illegal move {text!r} in {pos.fen()}")
    return code


# -- games ----------------------------------------------------------------------------------

@dataclass
class ViriGame:
    """One game of a viriformat file: the FEN it starts from, the moves played (UCI, castling
    as the engine writes it for that start: the king's two-square step in standard chess, king
    takes rook in Chess960) each with White's score of the position it is played from, and
    White's result. `score` and `extra` are the header's own fields (0 as Viridithas writes
    them)."""

    start: str
    moves: list = field(default_factory=list)  # [(UCI, White's score)]
    result: float = 0.5
    score: int = 0
    extra: int = 0

    def __len__(self) -> int:
        return len(self.moves)

    def __repr__(self) -> str:
        return (f"ViriGame({self.start!r}, {len(self.moves)} moves, "
                f"result {self.result})")

    @classmethod
    def from_records(cls, records) -> "ViriGame":
        """The game of consecutive records of one game (each the position the previous one's
        move leads to), as datagen keeps them."""
        records = list(records)
        return cls(records[0].fen, [(r.move, r.score) for r in records], records[0].result)

    def records(self, game: int | None = None):
        """Its positions as Records (move, ply and `game` set); ValueError for a move that is
        not legal where it is played."""
        pos, room = _position(self.start), _room(None)
        for uci, score in self.moves:
            fen = pos.fen()
            code = uci_code(pos, uci, room)
            yield Record(fen, score, self.result, pos.uci(code), fen_ply(fen), game)
            pos.push(code)

    def to_bytes(self) -> bytes:
        """The game as viriformat bytes: header, moves, terminator. ValueError for what the
        format cannot hold (an illegal move, a score outside i16, a counter too big)."""
        pos, room = _position(self.start), _room(None)
        out = bytearray(pack_header(self.start, self.result, self.score, self.extra))
        for uci, score in self.moves:
            code = uci_code(pos, uci, room)
            out += viri_move(pos, code).to_bytes(2, "little")
            out += check_score(score).to_bytes(2, "little", signed=True)
            pos.push(code)
        return bytes(out + TERMINATOR)

    @classmethod
    def from_bytes(cls, data: bytes) -> "ViriGame":
        """The game of its bytes (one whole game); ValueError says what is wrong."""
        if len(data) < HEADER_SIZE + MOVE_SIZE or (len(data) - HEADER_SIZE) % MOVE_SIZE or \
                data[-MOVE_SIZE:] != TERMINATOR:
            raise ValueError("not one game: a 32-byte header, 4-byte moves, 4 zero bytes")
        moves = np.frombuffer(data[HEADER_SIZE:-MOVE_SIZE], dtype="<u2").reshape(-1, 2)
        return _game(data[:HEADER_SIZE], moves)


def _game(header: bytes, moves: np.ndarray, with_fens: bool = False):
    """A ViriGame of a header and its (move, score) u16 pairs; with `with_fens`, (game, the FEN
    of each position) instead. ValueError for a bad header or move."""
    fen, result, score, extra = header_fen(header)
    pos, room = _position(fen), _room(None)
    game = ViriGame(fen, [], result, score, extra)
    fens = []
    for k, (mv, raw) in enumerate(moves.tolist()):
        if mv == 0:
            raise ValueError(f"move {k + 1}: a null move (move 0 with a score)")
        if with_fens:
            fens.append(pos.fen())
        try:
            code = engine_code(pos, mv, room)
        except ValueError as e:
            raise ValueError(f"move {k + 1}: {e}") from None
        game.moves.append((pos.uci(code), raw - 65536 if raw >= 32768 else raw))
        pos.push(code)
    return (game, fens) if with_fens else game


def _raw_games(path):
    """(game index, byte offset, header bytes, moves uint16 [n, 2]) of each game of a file;
    ViriFormatError for a file that ends inside a game."""
    from .virikernels import scan_games

    info = np.zeros(N_INFO, dtype=np.int64)
    g = offset = 0
    rest = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(CHUNK)
            data = rest + block
            buf = np.frombuffer(data, dtype=np.uint8)
            most = len(buf) // (HEADER_SIZE + MOVE_SIZE) + 1
            starts = np.empty(most, dtype=np.int64)
            counts = np.empty(most, dtype=np.int64)
            scan_games(buf, starts, counts, info)
            for at, n in zip(starts[:info[I_GAMES]].tolist(), counts[:info[I_GAMES]].tolist(),
                             strict=True):
                moves = buf[at + HEADER_SIZE:at + HEADER_SIZE + MOVE_SIZE * n].view("<u2")
                yield g, offset + at, data[at:at + HEADER_SIZE], moves.reshape(-1, 2)
                g += 1
            used = int(info[I_BYTES])
            rest = data[used:]
            offset += used
            if not block:
                if rest:
                    raise ViriFormatError(f"{path}: ends inside game {g + 1} (byte {offset}): "
                                          f"{len(rest)} bytes without the terminator")
                return


def read_games(path):
    """The games of a viriformat file, in order (`ViriGame`); ViriFormatError names the file,
    the game and the move of a bad one."""
    for g, offset, header, moves in _raw_games(path):
        try:
            yield _game(header, moves)
        except ValueError as e:
            raise ViriFormatError(f"{path}: game {g + 1} (byte {offset}): {e}") from None


def read_viri(path):
    """The Records of a viriformat file (move, ply and the game's index in the file set), in
    order; ViriFormatError names the file, the game and the move of a bad one."""
    for g, offset, header, moves in _raw_games(path):
        try:
            game, fens = _game(header, moves, with_fens=True)
        except ValueError as e:
            raise ViriFormatError(f"{path}: game {g + 1} (byte {offset}): {e}") from None
        for fen, (uci, score) in zip(fens, game.moves, strict=True):
            yield Record(fen, score, game.result, uci, fen_ply(fen), g)


def count_games(path) -> tuple[int, int]:
    """(games, positions) of a viriformat file, from its layout alone."""
    games = positions = 0
    for _, _, _, moves in _raw_games(path):
        games += 1
        positions += len(moves)
    return games, positions


class ViriWriter:
    """Writes a viriformat file: whole games (`write_game`), or Records (`write`) gathered into
    games, a record continuing the game before it when it is the position that game's last move
    leads to, with the same game index and result (so datagen's records become their games
    again); any other record starts a game. Records must have their move."""

    def __init__(self, path):
        self.path = str(path)
        self.f = open(path, "wb")
        self.games = self.positions = 0
        self._pos = None  # the position after the open game's last move
        self._buf = bytearray()
        self._room = _room(None)
        self._game = self._result = None

    def write_game(self, game: ViriGame) -> None:
        self._end()
        try:
            data = game.to_bytes()
        except ValueError as e:
            raise ViriFormatError(f"{self.path}: game {self.games + 1}: {e}") from None
        self.f.write(data)
        self.games += 1
        self.positions += len(game)

    def write(self, r: Record) -> None:
        if r.move is None:
            raise ViriFormatError(f"{self.path}: a record without its move ({r.fen}): "
                                  f"viriformat keeps games as their moves (a .txt file keeps "
                                  f"them in its .moves side record)")
        try:
            if (self._pos is None or r.game != self._game or r.result != self._result
                    or self._pos.fen() != r.fen):
                self._end()
                self._buf += pack_header(r.fen, r.result)
                self._pos = _position(r.fen)
                self._game, self._result = r.game, r.result
            code = uci_code(self._pos, r.move, self._room)
            self._buf += viri_move(self._pos, code).to_bytes(2, "little")
            self._buf += check_score(r.score).to_bytes(2, "little", signed=True)
            self._pos.push(code)
        except ValueError as e:
            raise ViriFormatError(f"{self.path}: game {self.games + 1}: {e}") from None
        self.positions += 1

    def _end(self) -> None:
        if self._pos is not None:
            self.f.write(self._buf + TERMINATOR)
            self.games += 1
            self._buf = bytearray()
            self._pos = None

    def close(self) -> None:
        self._end()
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- the trainer's path: bulletformat records by the kernel ------------------------------------

class Batch(NamedTuple):
    """Records decoded from a run of whole games: `boards` uint8 [n, 32] (bulletformat), the
    game of each (`games`, int64 [n], its index in the file), and `read`, the positions those
    games hold before filtering."""

    boards: np.ndarray
    games: np.ndarray
    read: int


def filter_array(filters=None) -> np.ndarray:
    """The kernel's filter of `filters` (`tuner.formats.Filters`: min_ply, no_check, no_capture,
    no_mate, max_score; None keeps every position)."""
    flt = np.zeros(N_FILTER, dtype=np.int64)
    flt[F_MAX_SCORE] = NO_SCORE_CAP
    if filters is not None:
        flt[F_MIN_PLY] = filters.min_ply
        flt[F_NO_CHECK] = bool(filters.no_check)
        flt[F_NO_CAPTURE] = bool(filters.no_capture)
        if getattr(filters, "no_mate", False):
            flt[F_MAX_SCORE] = MATE_SCORE - 1
        if getattr(filters, "max_score", None) is not None:
            flt[F_MAX_SCORE] = min(flt[F_MAX_SCORE], filters.max_score)
    return flt


def decode_boards(path, filters=None, chunk_bytes: int = CHUNK, progress: bool = False):
    """The positions of a viriformat file as bulletformat records, a `Batch` for every chunk
    of whole games, replayed by the kernel (`tuner.formats.virikernels.decode_games`), keeping
    those that pass `filters` (see `filter_array`). ViriFormatError names the file, the game and
    the move of a bad one."""
    from tqdm import tqdm

    from wasp.bitboards import tables
    from wasp.position import new_state

    from .virikernels import decode_games

    T = tables()
    S = new_state()
    flt = filter_array(filters)
    info = np.zeros(N_INFO, dtype=np.int64)
    first = offset = 0
    rest = b""
    with open(path, "rb") as f, tqdm(total=os.path.getsize(path), unit="B", unit_scale=True,
                                      leave=False, desc=f"decoding {os.path.basename(path)}",
                                      disable=not progress) as bar:
        while True:
            block = f.read(chunk_bytes)
            data = rest + block
            buf = np.frombuffer(data, dtype=np.uint8)
            room = len(buf) // MOVE_SIZE + 1
            out = np.empty((room, 32), dtype=np.uint8)
            games = np.empty(room, dtype=np.int64)
            decode_games(buf, T, S, flt, out, games, first, info)
            if info[I_ERROR]:
                g = first + int(info[I_GAMES])
                where = "header" if info[I_MOVE] < 0 else f"move {int(info[I_MOVE]) + 1}"
                raise ViriFormatError(f"{path}: game {g + 1} (byte {offset + int(info[I_AT])}), "
                                      f"{where}: {ERRORS[int(info[I_ERROR])]}")
            used = int(info[I_BYTES])
            n = int(info[I_RECORDS])
            if info[I_GAMES]:
                read = (used - int(info[I_GAMES]) * (HEADER_SIZE + MOVE_SIZE)) // MOVE_SIZE
                if 4 * n < 3 * room:  # a heavy filter: keep only what is used
                    yield Batch(out[:n].copy(), games[:n].copy(), read)
                else:
                    yield Batch(out[:n], games[:n], read)
            first += int(info[I_GAMES])
            rest = data[used:]
            offset += used
            bar.update(len(block))
            if not block:
                if rest:
                    raise ViriFormatError(f"{path}: ends inside game {first + 1} (byte "
                                          f"{offset}): {len(rest)} bytes without the terminator")
                return
