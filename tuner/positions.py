"""Labelled positions for tuning: EPD and PGN loading, the packed row form, and the load cache.

A position is stored as one packed row of `ROW_WIDTH` uint8 (layout in `tuner.rows`; `pack_fen`
here, `unpack_row` in `tuner.kernels`).

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

from tuner.rows import NO_EP, R_CASTLE, R_EP, R_SIDE, ROW_WIDTH

CACHE_VERSION = 2

_PIECE_CODE = np.full(256, 255, dtype=np.uint8)
for _i, _ch in enumerate("PNBRQKpnbrqk"):
    _PIECE_CODE[ord(_ch)] = _i
_PIECE_CODE[ord(".")] = 12
_EXPAND = str.maketrans({str(d): "." * d for d in range(1, 9)})
_CASTLE_BITS = {"K": 1, "Q": 2, "k": 4, "q": 8}
_SHREDDER = {"H": "K", "A": "Q", "h": "k", "a": "q"}
_RESULT_TEXT = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_RE_C9 = re.compile(r'\bc9\s+"?(1-0|0-1|1/2-1/2)"?')
_RE_BRACKET = re.compile(r"\[\s*(1(?:\.0*)?|0(?:\.0*)?|0?\.50*)\s*\]")
_RE_TRAILING = re.compile(r'(?:^|\s)"?(1-0|0-1|1/2-1/2)"?\s*;?\s*$')
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
# FEN packing (pure Python: fast enough to load a million lines in under a minute, then cached)


def _board_string(placement):
    """The 64 mailbox characters a1..h8 ('.' empty), or raise ValueError."""
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise ValueError(f"expected 8 ranks, got {len(ranks)}")
    ranks = [r.translate(_EXPAND) for r in ranks]
    for r in ranks:
        if len(r) != 8:
            raise ValueError(f"rank {r!r} does not have 8 squares")
    return "".join(reversed(ranks))


def fen_fields(fen):
    """(64-char board, side 0/1, castle bits, ep square) of a 4- to 6-field FEN; ValueError."""
    f = fen.split()
    if len(f) < 4:
        raise ValueError(f"expected at least 4 FEN fields, got {len(f)}")
    board = _board_string(f[0])
    codes = _PIECE_CODE[np.frombuffer(board.encode("latin-1"), dtype=np.uint8)]
    if np.any(codes == 255):
        raise ValueError(f"bad piece letter in {f[0]!r}")
    if np.sum(codes == 5) != 1 or np.sum(codes == 11) != 1:
        raise ValueError("each side needs exactly one king")
    if np.any((codes[:8] % 6 == 0) & (codes[:8] < 12)) or \
            np.any((codes[56:] % 6 == 0) & (codes[56:] < 12)):
        raise ValueError("pawns on the first or last rank")
    if f[1] not in ("w", "b"):
        raise ValueError(f"side to move must be w or b, got {f[1]!r}")
    side = 0 if f[1] == "w" else 1
    castle = 0
    if f[2] != "-":
        for ch in f[2]:
            # Shredder-FEN / X-FEN (Chess960) name the rook's file: the h- and a-file rooks
            # are the standard rights; the row holds no others (the tuner never castles)
            ch = _SHREDDER.get(ch, ch)
            if ch in _CASTLE_BITS:
                castle |= _CASTLE_BITS[ch]
            elif ch.upper() not in "BCDEFG":
                raise ValueError(f"bad castling field {f[2]!r}")
    # keep only rights whose king and rook stand at home (as the core's FEN parser requires)
    homes = {1: ((4, 5), (7, 3)), 2: ((4, 5), (0, 3)), 4: ((60, 11), (63, 9)),
             8: ((60, 11), (56, 9))}
    for bit, need in homes.items():
        if castle & bit and any(codes[sq] != p for sq, p in need):
            castle &= ~bit
    ep = NO_EP
    if f[3] != "-":
        if len(f[3]) != 2 or f[3][0] not in "abcdefgh" or f[3][1] not in "36":
            raise ValueError(f"bad en-passant square {f[3]!r}")
        ep = "abcdefgh".index(f[3][0]) + 8 * (int(f[3][1]) - 1)
        pawn_sq = ep - 8 if side == 0 else ep + 8
        if codes[pawn_sq] != (6 if side == 0 else 0) or (f[3][1] == "6") != (side == 0):
            ep = NO_EP  # not a real en-passant square: drop it
        else:
            # only keep it when a pawn can take there (as the core does)
            f_ep = ep & 7
            own = 0 if side == 0 else 6
            takers = [s for s in (pawn_sq - 1, pawn_sq + 1)
                      if abs((s & 7) - f_ep) == 1 and codes[s] == own]
            if not takers:
                ep = NO_EP
    return codes, side, castle, ep


def pack_fen(fen) -> np.ndarray:
    """One packed row (uint8 [ROW_WIDTH]) of a FEN; ValueError on a bad FEN."""
    codes, side, castle, ep = fen_fields(fen)
    row = np.zeros(ROW_WIDTH, dtype=np.uint8)
    row[:32] = codes[0::2] | (codes[1::2] << 4)
    row[R_SIDE] = side
    row[R_CASTLE] = castle
    row[R_EP] = ep
    return row


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


def parse_result(text):
    """White's result (1, 0.5, 0) found in the part of an EPD line after the FEN, or None."""
    m = _RE_C9.search(text)
    if m:
        return _RESULT_TEXT[m.group(1)]
    m = _RE_BRACKET.search(text)
    if m:
        v = float(m.group(1))
        return v if v in (0.0, 0.5, 1.0) else None
    m = _RE_TRAILING.search(text)
    if m:
        return _RESULT_TEXT[m.group(1)]
    return None


def parse_epd_line(line):
    """(packed row, result) of one EPD line; ValueError saying what is wrong."""
    tokens = line.split()
    if len(tokens) < 5:
        raise ValueError("expected a FEN and a result")
    rest = tokens[4:]
    fen = " ".join(tokens[:4])
    # a 6-field FEN: two clock numbers before the result
    if len(rest) >= 2 and rest[0].isdigit() and rest[1].isdigit():
        rest = rest[2:]
    result = parse_result(" ".join(rest))
    if result is None:
        raise ValueError("no result (c9 \"1-0\";, [1.0] or a trailing 1-0)")
    return pack_fen(fen), result


def _bad_line(path, lineno, why, line, skip_bad, out):
    msg = f"{path}:{lineno}: {why}: {line.strip()[:80]!r}"
    if not skip_bad:
        raise DataError(msg)
    out.append(msg)


def load_epd(path, skip_bad=False, validate=True) -> PositionSet:
    """Positions and results of an EPD file (see the module docstring for the result forms)."""
    rows, results, bad = [], [], []
    lines = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                row, r = parse_epd_line(s)
            except ValueError as e:
                _bad_line(path, lineno, e, line, skip_bad, bad)
                continue
            rows.append(row)
            results.append(r)
            lines.append((lineno, line))
    return _position_set(path, rows, results, lines, bad, skip_bad, validate)


def _position_set(path, rows, results, lines, bad, skip_bad, validate) -> PositionSet:
    """The set of parsed rows, less those whose side not to move is in check (when validating)."""
    rows = np.array(rows, dtype=np.uint8).reshape(-1, ROW_WIDTH)
    results = np.array(results, dtype=np.float64)
    if validate and len(rows):
        from tuner.kernels import illegal_rows

        illegal = illegal_rows(rows)
        for k in np.nonzero(illegal)[0]:
            lineno, line = lines[k]
            _bad_line(path, lineno, "the side not to move is in check", line, skip_bad, bad)
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
    rows, results, bad, lines = [], [], [], []
    pairs = zip(df["fen"].tolist(), df["result"].tolist(), strict=True)
    for rowno, (fen, result) in enumerate(pairs, 1):
        line = f"{fen} [{result}]"
        try:
            r = float(result)
            if r not in (0.0, 0.5, 1.0):
                raise ValueError(f"result {result!r} is not 1, 0.5 or 0")
            row = pack_fen(str(fen))
        except (TypeError, ValueError) as e:
            _bad_line(path, rowno, e, line, skip_bad, bad)
            continue
        rows.append(row)
        results.append(r)
        lines.append((rowno, line))
    return _position_set(path, rows, results, lines, bad, skip_bad, validate)


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
                rows.append(pack_fen(board.fen()))
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
        tmp = cache_file + f".{os.getpid()}.tmp.npz"
        np.savez(tmp, rows=ps.rows, results=ps.results, bad=ps.bad,
                 bad_examples=np.array(ps.bad_examples, dtype=str))
        os.replace(tmp, cache_file)
    return ps


def load_many(paths, **kwargs) -> PositionSet:
    """Load and concatenate several files."""
    return PositionSet.concat(load(p, **kwargs) for p in paths)
