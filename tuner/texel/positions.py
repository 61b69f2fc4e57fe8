"""Labelled positions for tuning: EPD and PGN loading, the packed row form, and the load cache.

A position is stored as one packed row of `ROW_WIDTH` uint8 (layout in `tuner.texel.rows`;
`pack_fen` here, `unpack_row` in `tuner.texel.kernels`).

Results are white's score: 1, 0.5 or 0. EPD lines carry them as ``c9 "1-0";``,
``c9 "1/2-1/2";``, ``[1.0]``, ``[0.5]``, ``[0.0]`` or a trailing ``1-0``; PGN positions take
their game's result; parquet sets (`wasp-tune data -format parquet`) hold them in a
``result`` column beside ``fen``. A bad line raises `DataError` naming the file and line, unless
``skip_bad=True`` (then it is counted in `PositionSet.bad` and summarised).
"""

import hashlib
import io
import os
import re
from dataclasses import dataclass, field

import numpy as np

from wasp.atomicfile import replacing
from wasp.epd import numbered_lines, parse_line

from .rows import NO_EP, R_CASTLE, R_EP, R_SIDE, ROW_WIDTH

CACHE_VERSION = 2

# the row's piece codes (wasp.types): white pawn..king 0..5, black 6..11, empty 12
_PIECE_ORDER = [(color, piece) for color in (True, False) for piece in range(1, 7)]
EMPTY_CODE = 12
_CASTLE_BITS = {"K": 1, "Q": 2, "k": 4, "q": 8}
_RESULT_TEXT = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_RE_MATE = re.compile(r"(?:[+-]?M\d+|#-?\d+)")


class DataError(ValueError):
    """A bad input line: the message names the file and line number."""


@dataclass
class PositionSet:
    """Packed positions (uint8 [n, ROW_WIDTH]) with white's results (float64 [n])."""

    rows: np.ndarray
    results: np.ndarray
    bad: int = 0
    sources: list = field(default_factory=list)
    bad_examples: list = field(default_factory=list)

    def __len__(self):
        return len(self.results)

    def __repr__(self):
        return f"PositionSet({len(self)} positions, {self.bad} bad lines skipped)"

    def subset(self, index):
        return PositionSet(self.rows[index], self.results[index], 0, list(self.sources))

    def summary(self) -> str:
        wins = int(np.sum(self.results == 1.0))
        draws = int(np.sum(self.results == 0.5))
        text = (f"{len(self)} positions (white wins {wins}, draws {draws}, "
                f"black wins {len(self) - wins - draws})")
        if self.bad:
            text += f"; {self.bad} bad lines skipped"
            if self.bad_examples:
                text += " (first: " + self.bad_examples[0] + ")"
        return text

    @staticmethod
    def concat(sets):
        sets = list(sets)
        if not sets:
            return PositionSet(np.zeros((0, ROW_WIDTH), np.uint8), np.zeros(0))
        return PositionSet(np.concatenate([s.rows for s in sets]),
                           np.concatenate([s.results for s in sets]),
                           sum(s.bad for s in sets), [x for s in sets for x in s.sources],
                           [x for s in sets for x in s.bad_examples])


# ---------------------------------------------------------------------------
# FEN packing: python-chess reads the FEN, the row keeps what standard chess makes of it


def read_fen(fen):
    """The python-chess board of a FEN's first four fields (the clocks are not kept in a row);
    ValueError saying what is wrong: python-chess's reading, one king a side, no pawn on the
    first or last rank, an en-passant square on the third or sixth rank."""
    import chess

    fields = fen.split()
    if len(fields) < 4:
        raise ValueError(f"expected at least 4 FEN fields, got {len(fields)}")
    try:
        board = chess.Board(" ".join(fields[:4]))
    except ValueError as e:  # "...: 'FEN'": the bad line is quoted beside the message anyway
        raise ValueError(str(e).rsplit(": '", 1)[0]) from None
    status = board.status()
    if status & (chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
                 | chess.STATUS_TOO_MANY_KINGS):
        raise ValueError("each side needs exactly one king")
    if status & chess.STATUS_PAWNS_ON_BACKRANK:
        raise ValueError("pawns on the first or last rank")
    if status & chess.STATUS_INVALID_EP_SQUARE:
        if chess.square_rank(board.ep_square) not in (2, 5):
            raise ValueError(f"bad en-passant square {fields[3]!r}")
        board.ep_square = None  # no pawn just passed it: not a real en-passant square
    return board


def pack_board(board) -> np.ndarray:
    """One packed row (uint8 [ROW_WIDTH]) of a python-chess board: the castling rights standard
    chess reads in it (a Chess960 right the row cannot hold is dropped: the tuner never
    castles), the en-passant square when a capture there is legal."""
    import chess

    codes = bytearray(bytes([EMPTY_CODE]) * 64)
    for code, (color, piece) in enumerate(_PIECE_ORDER):
        mask = board.pieces_mask(piece, color)
        while mask:
            codes[(mask & -mask).bit_length() - 1] = code
            mask &= mask - 1
    codes = np.frombuffer(bytes(codes), dtype=np.uint8)
    if board.chess960:
        board = board.copy(stack=False)
        board.chess960 = False
    rights = board.clean_castling_rights()
    row = np.zeros(ROW_WIDTH, dtype=np.uint8)
    row[:32] = codes[0::2] | (codes[1::2] << 4)
    row[R_SIDE] = 0 if board.turn == chess.WHITE else 1
    row[R_CASTLE] = sum(bit for bit, square in ((1, chess.H1), (2, chess.A1), (4, chess.H8),
                                                (8, chess.A8)) if rights & chess.BB_SQUARES[square])
    row[R_EP] = board.ep_square if board.has_legal_en_passant() else NO_EP
    return row


def pack_fen(fen) -> np.ndarray:
    """One packed row (uint8 [ROW_WIDTH]) of a FEN; ValueError on a bad FEN (`read_fen`)."""
    return pack_board(read_fen(fen))


def row_to_fen(row) -> str:
    """The FEN (4 fields + '0 1') of a packed row."""
    row = np.asarray(row, dtype=np.uint8)
    codes = np.empty(64, dtype=np.uint8)
    codes[0::2] = row[:32] & 15
    codes[1::2] = row[:32] >> 4
    ranks = []
    for r in range(7, -1, -1):
        text, empty = "", 0
        for f in range(8):
            c = int(codes[8 * r + f])
            if c == 12:
                empty += 1
                continue
            if empty:
                text += str(empty)
                empty = 0
            text += "PNBRQKpnbrqk"[c]
        ranks.append(text + (str(empty) if empty else ""))
    castle = "".join(ch for ch, bit in _CASTLE_BITS.items() if row[R_CASTLE] & bit) or "-"
    ep = "-" if row[R_EP] == NO_EP else "abcdefgh"[row[R_EP] & 7] + str((row[R_EP] >> 3) + 1)
    return f"{'/'.join(ranks)} {'wb'[row[R_SIDE]]} {castle} {ep} 0 1"


# ---------------------------------------------------------------------------
# EPD


def parse_epd_line(line):
    """(packed row, result) of one EPD line; ValueError saying what is wrong."""
    try:
        epd = parse_line(line)
    except ValueError:  # fewer than four fields
        epd = None
    if epd is None or (epd.counters is None and not epd.rest):
        raise ValueError("expected a FEN and a result")
    result = epd.result()
    if result is None:
        raise ValueError("no result (c9 \"1-0\";, [1.0] or a trailing 1-0)")
    return pack_fen(epd.position), result


def _bad_line(path, lineno, why, line, skip_bad, out):
    msg = f"{path}:{lineno}: {why}: {line.strip()[:80]!r}"
    if not skip_bad:
        raise DataError(msg)
    out.append(msg)


def load_epd(path, skip_bad=False, validate=True) -> PositionSet:
    """Positions and results of an EPD file (see the module docstring for the result forms)."""
    items = ((n, line, line) for n, line in numbered_lines(path))
    return _position_set(path, items, parse_epd_line, skip_bad, validate)


def _position_set(path, items, parse, skip_bad, validate) -> PositionSet:
    """The set of the (number, line, what `parse` reads) `items` that `parse` turns into
    (packed row, result), less those whose side not to move is in check (when validating); a
    bad one is `_bad_line`, named by its number and line."""
    rows, results, bad, kept = [], [], [], []
    for number, line, what in items:
        try:
            row, r = parse(what)
        except (TypeError, ValueError) as e:
            _bad_line(path, number, e, line, skip_bad, bad)
            continue
        rows.append(row)
        results.append(r)
        kept.append((number, line))
    rows = np.array(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    results = np.array(results, dtype=np.float64)
    if validate and len(rows):
        from .kernels import illegal_rows

        illegal = illegal_rows(rows)
        for k in np.nonzero(illegal)[0]:
            number, line = kept[k]
            _bad_line(path, number, "the side not to move is in check", line, skip_bad, bad)
        keep = ~illegal
        rows, results = rows[keep], results[keep]
    return PositionSet(rows, results, len(bad), [str(path)], bad[:10])


# ---------------------------------------------------------------------------
# Parquet (the `-format parquet` sets of `wasp-tune data`)


def load_parquet(path, skip_bad=False, validate=True) -> PositionSet:
    """Positions and results of a parquet file with columns ``fen`` and ``result`` (white's
    score); other columns are ignored. Bad rows are reported by row number (from 1), as EPD
    lines are by line number."""
    import pandas as pd

    try:
        df = pd.read_parquet(path)
    except ImportError as e:
        raise DataError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from e
    except Exception as e:  # pyarrow's errors for a file that is not parquet vary by version
        raise DataError(f"{path}: not a readable parquet file ({e})") from e
    missing = [c for c in ("fen", "result") if c not in df.columns]
    if missing:
        raise DataError(f"{path}: no column {', '.join(missing)} (a set needs fen and result)")
    pairs = zip(df["fen"].tolist(), df["result"].tolist(), strict=True)
    items = ((n, f"{fen} [{result}]", (fen, result)) for n, (fen, result) in enumerate(pairs, 1))
    return _position_set(path, items, _parquet_row, skip_bad, validate)


def _parquet_row(pair):
    """(packed row, result) of a parquet row (fen, result)."""
    fen, result = pair
    r = float(result)
    if r not in (0.0, 0.5, 1.0):
        raise ValueError(f"result {result!r} is not 1, 0.5 or 0")
    return pack_fen(str(fen)), r


# ---------------------------------------------------------------------------
# PGN


class _LineCounter(io.TextIOBase):
    """A text handle that counts the lines read through readline (python-chess reads so)."""

    def __init__(self, handle):
        self.handle = handle
        self.lineno = 0

    def readline(self, *args):
        line = self.handle.readline(*args)
        if line:
            self.lineno += 1
        return line


def has_mate_score(comment) -> bool:
    """True for an engine comment with a mate score ({+M3/20 ...}, {#-4}, ...)."""
    return bool(comment) and _RE_MATE.search(comment.split("/")[0].strip() or "x") is not None


def load_pgn(path, skip_plies=8, skip_bad=False) -> PositionSet:
    """Positions of every game labelled with its result: after the first `skip_plies` plies,
    not in check, and not after a move whose comment gives a mate score."""
    import chess
    import chess.pgn

    rows, results, bad = [], [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        handle = _LineCounter(f)
        n_game = 0
        while True:
            start = handle.lineno + 1
            try:
                game = chess.pgn.read_game(handle)
            except (ValueError, KeyError, IndexError) as e:  # IndexError: a stray `)`
                _bad_line(path, start, f"unreadable game: {e}", "", skip_bad, bad)
                continue
            if game is None:
                break
            n_game += 1
            result = _RESULT_TEXT.get(game.headers.get("Result", "*"))
            if game.errors:
                _bad_line(path, start, f"game {n_game}: {game.errors[0]}",
                          game.headers.get("Event", ""), skip_bad, bad)
                continue
            if result is None:
                continue  # unfinished game: no label
            board = game.board()
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                if ply <= skip_plies or board.is_check() or has_mate_score(node.comment):
                    continue
                rows.append(pack_board(board))
                results.append(result)
    rows = np.array(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    return PositionSet(rows, np.array(results, dtype=np.float64), len(bad), [str(path)],
                       bad[:10])


# ---------------------------------------------------------------------------
# Cached loading


def default_cache_dir():
    return os.environ.get("WASP_TUNE_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "wasp-tune"))


def _cache_key(path, options):
    st = os.stat(path)
    h = hashlib.sha1()
    h.update(f"{CACHE_VERSION}|{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}|"
             f"{sorted(options.items())}".encode())
    with open(path, "rb") as f:  # the first and last 64 KB guard against same-size rewrites
        h.update(f.read(65536))
        if st.st_size > 65536:
            f.seek(max(65536, st.st_size - 65536))
            h.update(f.read())
    return h.hexdigest()[:20]


def load(path, skip_bad=False, skip_plies=8, cache_dir=None, use_cache=True) -> PositionSet:
    """Load an EPD, PGN or parquet file (by extension), through the binary cache when
    allowed."""
    path = str(path)
    is_pgn = path.lower().endswith(".pgn")
    options = {"skip_bad": bool(skip_bad), "skip_plies": int(skip_plies) if is_pgn else 0}
    cache_file = None
    if use_cache:
        cache_dir = cache_dir or default_cache_dir()
        cache_file = os.path.join(cache_dir, f"{os.path.basename(path)}.{_cache_key(path, options)}"
                                             f".npz")
        if os.path.exists(cache_file):
            try:
                with np.load(cache_file) as z:
                    return PositionSet(z["rows"], z["results"], int(z["bad"]), [path],
                                       [str(x) for x in z["bad_examples"]])
            except (OSError, ValueError, KeyError):
                pass  # a broken cache file: rebuild it
    if is_pgn:
        ps = load_pgn(path, skip_plies=skip_plies, skip_bad=skip_bad)
    elif path.lower().endswith(".parquet"):
        ps = load_parquet(path, skip_bad=skip_bad)
    else:
        ps = load_epd(path, skip_bad=skip_bad)
    if cache_file:
        os.makedirs(cache_dir, exist_ok=True)
        with replacing(cache_file, ".npz") as tmp:
            np.savez(tmp, rows=ps.rows, results=ps.results, bad=ps.bad,
                     bad_examples=np.array(ps.bad_examples, dtype=str))
    return ps


def load_many(paths, **kwargs) -> PositionSet:
    """Load and concatenate several files."""
    return PositionSet.concat(load(p, **kwargs) for p in paths)


def load_set(paths, skip_bad=False, skip_plies=8, limit=0) -> PositionSet:
    """The positions of `paths` (`load_many`), the first `limit` of them when given, as the
    tools' command lines take a labelled set: DataError naming a bad line (with the flag that
    skips it) or saying that none is left."""
    try:
        ps = load_many(paths, skip_bad=skip_bad, skip_plies=skip_plies)
    except DataError as e:
        raise DataError(f"{e} (use -skip-bad to skip bad lines)") from None
    if limit:
        ps = ps.subset(slice(0, limit))
    if len(ps) == 0:
        raise DataError(f"no positions in {', '.join(map(str, paths))}")
    return ps
