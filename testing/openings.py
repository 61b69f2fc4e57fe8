"""Opening books: EPD positions or PGN move sequences, read in a reproducible order."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import chess

from .variant import VariantError, check_standard, pgn_is_chess960
from .variant import board as variant_board


@dataclass
class Opening:
    index: int  # position in the file (0-based); -1 for the standard start
    fen: str | None = None  # None: the standard starting position
    moves: list[str] = field(default_factory=list)  # UCI moves played from `fen`
    name: str | None = None  # EPD `id`/`c0` opcode, PGN Opening (or ECO) tag
    chess960: bool = False  # castling as king-takes-rook; `fen` as the book wrote it

    def board(self) -> chess.Board:
        board = variant_board(self.fen, self.chess960)
        for m in self.moves:
            board.push_uci(m)
        return board


STARTPOS = Opening(index=-1)
STARTPOS_960 = Opening(index=-1, chess960=True)  # position 518 under Chess960 rules


def _epd_fen(line: str) -> str:
    """FEN of an EPD line; the move counters come from hmvc/fmvn when present."""
    parts = line.split()
    if len(parts) < 4:
        raise ValueError(f"not an EPD line: {line[:60]!r}")
    board_part = " ".join(parts[:4])
    rest = " ".join(parts[4:])
    hm = re.search(r"\bhmvc\s+(\d+)", rest)
    fm = re.search(r"\bfmvn\s+(\d+)", rest)
    # Plain 6-field FEN lines are accepted too.
    if len(parts) >= 6 and parts[4].isdigit() and parts[5].isdigit() and not hm and not fm:
        return " ".join(parts[:6])
    return f"{board_part} {hm.group(1) if hm else 0} {fm.group(1) if fm else 1}"


_NAME_RE = re.compile(r'\b(?:id|c0)\s+"([^"]*)"')


def _epd_name(line: str) -> str | None:
    """The opening's name in an EPD line: its `id` or `c0` operation."""
    m = _NAME_RE.search(line)
    return m.group(1) if m and m.group(1).strip() else None


_TAG_RE = re.compile(r'^\[(\w+)\s+"(.*)"\]\s*$')
_COMMENT_RE = re.compile(r"\{[^}]*\}|;[^\n]*|\([^()]*\)")
_MOVENUM_RE = re.compile(r"^\d+\.+")


class OpeningBook:
    """An EPD or PGN file read into memory (PGN games are parsed when first used).

    ``chess960``: read positions under Chess960 rules (X-FEN or Shredder-FEN castling);
    without it, a position whose castling only makes sense in Chess960 raises VariantError.
    """

    def __init__(self, path: str, fmt: str | None = None, plies: int | None = None,
                 chess960: bool = False):
        self.path = path
        self.chess960 = chess960
        fmt = fmt or ("pgn" if path.lower().endswith(".pgn") else "epd")
        if fmt not in ("epd", "pgn"):
            raise ValueError(f"unknown openings format {fmt!r} (epd or pgn)")
        self.format = fmt
        self.plies = plies
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        self._lines: list[int] = []  # EPD: the line number of each item
        if fmt == "epd":  # blank lines and `#` comments are skipped, as `wasp epd` does
            self._items = []
            for number, ln in enumerate(text.splitlines(), 1):
                ln = ln.strip()
                if ln and not ln.startswith("#"):
                    self._items.append(ln)
                    self._lines.append(number)
        else:
            self._items = _split_pgn(text)
        if not self._items:
            raise ValueError(f"{path}: no openings in the file")
        self._cache: dict[int, Opening] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, index: int) -> Opening:
        op = self._cache.get(index)
        if op is None:
            if self.format == "epd":
                try:
                    fen = _epd_fen(self._items[index])
                    variant_board(fen, self.chess960)  # validate
                    if not self.chess960:
                        check_standard(fen)
                except ValueError as e:
                    raise type(e)(f"{self.path}:{self._lines[index]}: {e}") from None
                op = Opening(index=index, fen=fen, name=_epd_name(self._items[index]),
                             chess960=self.chess960)
                if fen.split()[:4] == chess.STARTING_FEN.split()[:4]:
                    op.fen = None
            else:
                try:
                    op = _parse_pgn_game(self._items[index], index, self.plies, self.chess960)
                except ValueError as e:
                    raise type(e)(f"{self.path}: game {index + 1}: {e}") from None
            self._cache[index] = op
        return op


def _split_pgn(text: str) -> list[str]:
    games: list[str] = []
    cur: list[str] = []
    in_moves = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("[") and in_moves:
            games.append("\n".join(cur))
            cur, in_moves = [], False
        if s and not s.startswith("["):
            in_moves = True
        if s or cur:
            cur.append(line)
    if cur and any(ln.strip() for ln in cur):
        games.append("\n".join(cur))
    return games


def _parse_pgn_game(text: str, index: int, plies: int | None, chess960: bool = False) -> Opening:
    fen = None
    tags = {}
    movetext = []
    for line in text.splitlines():
        m = _TAG_RE.match(line.strip())
        if m:
            tags[m.group(1)] = m.group(2)
            if m.group(1) == "FEN":
                fen = m.group(2)
            elif m.group(1) == "Variant" and pgn_is_chess960(m.group(2)) and not chess960:
                raise VariantError(f"a Chess960 game (Variant {m.group(2)!r}): "
                                   f"give -variant fischerandom")
        else:
            movetext.append(line)
    body = " ".join(movetext)
    prev = None
    while prev != body:  # nested variations and comments
        prev, body = body, _COMMENT_RE.sub(" ", body)
    if fen and not chess960:
        check_standard(fen)
    board = variant_board(fen, chess960)
    moves = []
    for tok in body.split():
        tok = _MOVENUM_RE.sub("", tok)
        if not tok or tok in ("1-0", "0-1", "1/2-1/2", "*") or tok.startswith("$"):
            continue
        if plies is not None and len(moves) >= plies:
            break
        move = board.parse_san(tok)
        moves.append(move.uci())
        board.push(move)
    if fen and fen.split()[:4] == chess.STARTING_FEN.split()[:4]:
        fen = None
    name = " ".join(t for t in (tags.get("ECO"), tags.get("Opening"), tags.get("Variation"))
                    if t and t != "?") or None
    return Opening(index=index, fen=fen, moves=moves, name=name, chess960=chess960)


class OpeningSequence:
    """The run's openings in play order: sequential from ``start`` or a seeded shuffle.

    The order depends only on (file, order, start, seed), so a resumed run gets
    the same sequence.
    """

    def __init__(
        self,
        book: OpeningBook | None,
        order: str = "sequential",
        start: int = 1,
        seed: int = 0,
        chess960: bool = False,
    ):
        if order not in ("sequential", "random"):
            raise ValueError(f"unknown openings order {order!r} (sequential or random)")
        self.book = book
        self.order = order
        self.start = start
        self.seed = seed
        self.chess960 = chess960 if book is None else book.chess960
        self._perm: list[int] | None = None
        if book is not None:
            if not 1 <= start <= len(book):
                raise ValueError(f"openings start={start} outside 1..{len(book)}")
            if order == "random":
                perm = list(range(len(book)))
                random.Random(seed).shuffle(perm)
                self._perm = perm

    def __getitem__(self, k: int) -> Opening:
        """The k-th opening of the run (0-based), wrapping around the book."""
        if self.book is None:
            return STARTPOS_960 if self.chess960 else STARTPOS
        n = len(self.book)
        pos = (self.start - 1 + k) % n
        idx = self._perm[pos] if self._perm is not None else pos
        return self.book.get(idx)
