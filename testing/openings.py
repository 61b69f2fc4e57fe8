"""Opening books: EPD positions or PGN move sequences, read in a reproducible order."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

import chess
import chess.pgn

from wasp.epd import parse_line

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


def _epd(line: str, chess960: bool) -> tuple[str, str | None]:
    """(FEN, name) of an EPD line (`wasp.epd`): the line's four fields with the move counters
    of its hmvc/fmvn operations (or of a plain 6-field FEN line), and its `id` or `c0`
    operation. Text after the fields that is not EPD operations (a labelled set's result, a
    perft suite's depths) is ignored. ValueError for a bad position."""
    epd = parse_line(line)
    if epd is None:
        raise ValueError(f"not an EPD line: {line[:60]!r}")
    chess.Board(epd.position, chess960=chess960)  # ValueError: a bad position
    ops = epd.operations() if epd.rest else {}
    names = [v for k, v in ops.items() if k in ("id", "c0") and v.strip()]
    return epd.fen(), names[0] if names else None


class _BookHeaders(chess.pgn.Headers):
    """A game's tags; its board is read under the book's rules (standard or Chess960)."""

    chess960 = False

    def variant(self):
        return chess.Board

    def is_chess960(self) -> bool:
        return self.chess960


class _OpeningReader(chess.pgn.BaseVisitor):
    """python-chess's PGN reader, keeping a game's tags and the first `plies` moves of its
    main line (variations, comments and NAGs skipped); a Chess960 game in a standard book is a
    VariantError, an illegal move among the kept ones a ValueError."""

    def __init__(self, plies: int | None, chess960: bool):
        self.plies = plies
        self.headers = _BookHeaders()
        self.headers.chess960 = chess960
        self.moves: list[str] = []
        self.error: Exception | None = None

    def begin_headers(self):
        return self.headers

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.headers[tagname] = tagvalue

    def end_headers(self):
        variant, fen = self.headers.get("Variant", ""), self.headers.get("FEN")
        if not self.headers.chess960:
            if pgn_is_chess960(variant):
                raise VariantError(f"a Chess960 game (Variant {variant!r}): "
                                   f"give -variant fischerandom")
            if fen:
                check_standard(fen)
        return None

    def _full(self) -> bool:
        return self.plies is not None and len(self.moves) >= self.plies

    def begin_variation(self):
        return chess.pgn.SKIP

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        # the moves past the kept ones are not read (as a book cut at `plies` is not)
        return chess.Move.null() if self._full() else board.parse_san(san)

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if not self._full():
            self.moves.append(move.uci())

    def handle_error(self, error: Exception) -> None:
        if self.error is None:
            self.error = error

    def result(self):
        return self


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
            self._items = _split_pgn(text)  # parsed when first used
        if not self._items:
            raise ValueError(f"{path}: no openings in the file")
        self._cache: dict[int, Opening] = {}

    def __len__(self) -> int:
        return len(self._items)

    def where(self, index: int) -> str:
        """Where opening `index` is in the file, for messages: 'PATH:LINE' or 'PATH: game N'."""
        if self.format == "epd":
            return f"{self.path}:{self._lines[index]}"
        return f"{self.path}: game {index + 1}"

    def get(self, index: int) -> Opening:
        op = self._cache.get(index)
        if op is None:
            if self.format == "epd":
                try:
                    fen, name = _epd(self._items[index], self.chess960)
                    if not self.chess960:
                        check_standard(fen)
                except ValueError as e:
                    raise type(e)(f"{self.where(index)}: {e}") from None
                op = Opening(index=index, fen=fen, name=name, chess960=self.chess960)
                if fen.split()[:4] == chess.STARTING_FEN.split()[:4]:
                    op.fen = None
            else:
                try:
                    op = _pgn_game(self._items[index], index, self.plies, self.chess960)
                except ValueError as e:
                    raise type(e)(f"{self.where(index)}: {e}") from None
            self._cache[index] = op
        return op


def _split_pgn(text: str) -> list[str]:
    """The games of a PGN text, each as its own text (python-chess finds where each ends)."""
    handle = io.StringIO(text)  # tell(): a position in `text` (no newline translation)
    starts = []
    while True:
        start = handle.tell()
        if not chess.pgn.skip_game(handle):
            break
        starts.append(start)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def _pgn_game(text: str, index: int, plies: int | None, chess960: bool = False) -> Opening:
    """The opening of one game's PGN text, read by python-chess."""
    game = chess.pgn.read_game(io.StringIO(text),
                               Visitor=lambda: _OpeningReader(plies, chess960))
    if game is None:
        raise ValueError("no game")
    if game.error is not None:
        raise ValueError(str(game.error))
    tags = game.headers
    fen = tags.get("FEN")
    if fen and fen.split()[:4] == chess.STARTING_FEN.split()[:4]:
        fen = None
    name = " ".join(t for t in (tags.get("ECO"), tags.get("Opening"), tags.get("Variation"))
                    if t and t != "?") or None
    return Opening(index=index, fen=fen, moves=game.moves, name=name, chess960=chess960)


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
