"""Training positions for the net trainer: bulletformat `ChessBoard` records (layout, reader and
writer in `tuner.formats.bulletformat`, the text parser in `tuner.formats.bfkernels`, shared with
datagen) from bullet text, `.bf` or viriformat `.vf` files (its games replayed by
`tuner.formats.decode_boards`, filtered as bullet's binpack loaders filter), their Chess768
features and the datagen game of each. Big text files get a binary cache beside them
(`FILE.bfcache`, plain records) so a second run skips the parsing.
"""

import os
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from tuner.formats import (  # noqa: F401 (the record layout, for the trainer and its tests)
    EMPTY,
    KING,
    LOWEST_BIT,
    MAX_PIECES,
    OFF_KSQ,
    OFF_OCC,
    OFF_OPP_KSQ,
    OFF_PCS,
    OFF_RESULT,
    OFF_SCORE,
    BulletFormatError,
    Filters,
    ViriFormatError,
    decode_boards,
    encode_text,
    is_viri,
    load_bf,
    pack,
    save_bf,
)
from tuner.formats import RECORD_SIZE as RECORD
from tuner.formats import THEIRS as OPPONENT
from tuner.formats import side_path as side_record
from wasp.nnue.inputs import BLACK, FEATURES, MAX_ACTIVE, WHITE, feature

NO_FEATURE = FEATURES  # padding in feature lists
CACHE_SUFFIX = ".bfcache"
CACHE_MIN_BYTES = 16 << 20  # text files this big or bigger get a cache
NL = 10


class DataError(ValueError):
    """Unusable training data: the message names the file and the line or record."""


@njit(cache=True, nogil=True)
def board_features(boards, j, stm, ntm, files=0):
    """Chess768 inputs (`wasp.nnue.inputs.feature`) of record j into stm/ntm, the side to
    move's and the other side's; returns their count. The record is the side to move's view,
    so the side to move is White there and its opponent Black. `files` 7 gives the position
    mirrored left to right (square ^ 7).
    """
    count = 0
    for k in range(8):
        v = boards[j, OFF_OCC + k]
        while v:
            sq = (8 * k + LOWEST_BIT[v]) ^ files
            v &= v - 1
            nib = (boards[j, OFF_PCS + (count >> 1)] >> (4 * (count & 1))) & 15
            colour = BLACK if nib & OPPONENT else WHITE
            piece_type = nib & 7
            stm[count] = feature(WHITE, colour, piece_type, sq)
            ntm[count] = feature(BLACK, colour, piece_type, sq)
            count += 1
    return count


@njit(cache=True, nogil=True)
def _all_features(boards, stm, ntm, counts):
    for j in range(boards.shape[0]):
        counts[j] = board_features(boards, j, stm[j], ntm[j])


@njit(cache=True, nogil=True)
def _random_records(seed, lo, hi, values, out):
    np.random.seed(seed)
    board = np.empty(64, dtype=np.uint8)
    squares = np.arange(64)
    for j in range(out.shape[0]):
        board[:] = EMPTY
        np.random.shuffle(squares)
        material = 0
        for i in range(np.random.randint(lo, hi + 1)):
            if i < 2:
                p = KING | (OPPONENT * i)
            else:
                p = np.random.randint(5) | (OPPONENT * np.random.randint(2))
                material += values[p & 7] * (-1 if p & OPPONENT else 1)
            board[squares[i]] = p
        score = min(32767, max(-32768, material))
        result = 2 if score > 150 else 0 if score < -150 else 1
        pack(board, False, score, result, out[j])


def random_records(n, seed=0, pieces=(8, 32), values=(100, 300, 300, 500, 900)):
    """n random records (kings and 6 .. 30 other pieces anywhere: not always legal chess) scored
    by the side to move's material with `values`, result win/draw/loss beyond +-150: a
    target with a known answer for tests and benchmarks."""
    out = np.empty((n, RECORD), dtype=np.uint8)
    _random_records(seed, pieces[0], pieces[1], np.array([*values, 0, 0, 0], np.int64), out)
    return out


def features(boards):
    """(stm, ntm, counts): int64 [n, MAX_ACTIVE] feature lists padded with NO_FEATURE, int64
    [n]."""
    boards = np.ascontiguousarray(boards, dtype=np.uint8).reshape(-1, RECORD)
    n = len(boards)
    stm = np.full((n, MAX_ACTIVE), NO_FEATURE, dtype=np.int64)
    ntm = np.full((n, MAX_ACTIVE), NO_FEATURE, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    _all_features(boards, stm, ntm, counts)
    return stm, ntm, counts


def scores(boards) -> np.ndarray:
    """The side to move's scores (int16 [n]) of the records."""
    boards = np.ascontiguousarray(boards, dtype=np.uint8).reshape(-1, RECORD)
    return boards[:, OFF_SCORE:OFF_SCORE + 2].copy().view("<i2").ravel()


def results(boards) -> np.ndarray:
    """The side to move's results (0, 0.5, 1; float64 [n]) of the records."""
    return np.asarray(boards, dtype=np.uint8).reshape(-1, RECORD)[:, OFF_RESULT] / 2.0


def parse_text(path, progress=False) -> np.ndarray:
    """The records of a bullet text file (uint8 [n, 32], `tuner.formats.bulletformat`'s parser);
    DataError names the file and line of a bad line."""
    try:
        chunks = list(encode_text(str(path), progress=progress))
    except BulletFormatError as e:
        raise DataError(str(e)) from None
    if not chunks:
        return np.empty((0, RECORD), dtype=np.uint8)
    return np.concatenate(chunks).view(np.uint8).reshape(-1, RECORD)


def read_bf(path) -> np.ndarray:
    """The records of a `.bf` file (checked); DataError names the file and record."""
    try:
        return load_bf(str(path))
    except BulletFormatError as e:
        raise DataError(str(e)) from None


def write_bf(boards, path) -> None:
    """Write records as a `.bf` file (atomically: a temporary file renamed)."""
    save_bf(np.asarray(boards, dtype=np.uint8), path)


def is_bf(path) -> bool:
    return str(path).lower().endswith((".bf", CACHE_SUFFIX))


def is_binary(path) -> bool:
    """A `.bf` (or its cache) or viriformat `.vf` file: records, not text lines."""
    return is_bf(path) or is_viri(path)


def source(entry) -> tuple[str, Filters | None]:
    """(path, filter) of a data entry: a path, or {"path": ..., "filter": {Filters' fields}}
    for a viriformat file read through a filter (as a run's settings keep it)."""
    if isinstance(entry, dict):
        return str(entry["path"]), Filters(**entry["filter"]) if entry.get("filter") else None
    return str(entry), None


def load_viri(path, filters: Filters | None = None, progress=False):
    """(records uint8 [n, 32], game int64 [n]) of a viriformat file: its games replayed (by
    `tuner.formats.decode_boards`, whose batches a streaming reader takes one at a time), the
    positions that pass `filters` kept; DataError names the file, game and move of a bad one."""
    try:
        batches = list(decode_boards(str(path), filters, progress=progress))
    except ViriFormatError as e:
        raise DataError(str(e)) from None
    if not batches:
        return np.empty((0, RECORD), dtype=np.uint8), np.empty(0, dtype=np.int64)
    return (np.concatenate([b.boards for b in batches]),
            np.concatenate([b.games for b in batches]))


def load_file(path, progress=False, cache=True) -> np.ndarray:
    """Records of one data file: `.bf` read as is, text parsed (through its cache if big)."""
    from wasp.exitcodes import file_problem

    path = str(path)
    problem = file_problem(path, text=not is_binary(path))
    if problem:
        raise DataError(f"data file {problem}")
    if is_viri(path):
        return load_viri(path, progress=progress)[0]
    if is_bf(path):
        return read_bf(path)
    cached = path + CACHE_SUFFIX
    try:
        fresh = os.path.getmtime(cached) >= os.path.getmtime(path)
    except OSError:
        fresh = False
    if cache and fresh and os.path.getsize(cached) % RECORD == 0:
        return read_bf(cached)
    boards = parse_text(path, progress)
    if cache and os.path.getsize(path) >= CACHE_MIN_BYTES:
        try:
            write_bf(boards, cached)
        except OSError:
            pass  # a read-only directory: no cache, same data
    return boards


@njit(cache=True, nogil=True)
def _first_numbers(buf, out):
    """The leading integer of each non-blank line of buf into out; the count, or -1 - the line
    of the first line that does not start with one."""
    n = buf.shape[0]
    count = 0
    line = 0
    a = 0
    while a < n:
        b = a
        while b < n and buf[b] != NL:
            b += 1
        i = a
        while i < b and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
            i += 1
        if i < b:
            if not 48 <= buf[i] <= 57:
                return -1 - line
            v = 0
            while i < b and 48 <= buf[i] <= 57:
                v = 10 * v + (buf[i] - 48)
                i += 1
            out[count] = v
            count += 1
        line += 1
        a = b + 1
    return count


def game_ids(path, n):
    """The game of each position of a data file, from its datagen side record (``game ply
    move`` a line, line for line with the data), or None when there is none."""
    side = side_record(path)
    if not os.path.exists(side):
        return None
    buf = np.fromfile(side, dtype=np.uint8)
    ids = np.empty(buf.size // 2 + 1, dtype=np.int64)
    count = _first_numbers(buf, ids)
    if count < 0:
        raise DataError(f"{side}:{-count}: not 'game ply move' (the side record of {path})")
    if count != n:
        raise DataError(f"{side}: {count} lines for the {n} positions of {path} (a side "
                        f"record is line for line with its data; move it away to split by "
                        f"blocks)")
    return ids[:count]


@dataclass
class Dataset:
    """Records of one or more files, with the game of each position when the data say it."""

    boards: np.ndarray  # uint8 [n, 32]
    games: np.ndarray | None = None  # int64 [n], distinct across files
    files: list = field(default_factory=list)  # (path, positions)

    def __len__(self):
        return len(self.boards)

    def __repr__(self):
        split = "by game" if self.games is not None else "no game record"
        return f"<Dataset {len(self):,} positions from {len(self.files)} file(s), {split}>"


def load(paths, progress=False, cache=True) -> Dataset:
    """The records of every entry of `paths` (text, `.bf` or `.vf` files; a `.vf` through its
    filter, see `source`), in order. A viriformat file's games are its own."""
    from wasp.exitcodes import file_problem

    boards, games, files = [], [], []
    all_games = True
    offset = 0
    for entry in paths:
        path, filters = source(entry)
        if is_viri(path):
            problem = file_problem(path, text=False)
            if problem:
                raise DataError(f"data file {problem}")
            b, g = load_viri(path, filters, progress)
            if filters is not None and not len(b):
                raise DataError(f"{path}: no position passes the filter")
        else:
            if filters is not None:
                raise DataError(f"{path}: the filter reads viriformat (.vf) files only")
            b = load_file(path, progress, cache)
            g = game_ids(path, len(b))
        boards.append(b)
        files.append((path, len(b)))
        if g is None:
            all_games = False
        elif len(g):
            games.append(g - g.min() + offset)
            offset = int(games[-1].max()) + 1
    joined = np.concatenate(boards) if boards else np.empty((0, RECORD), dtype=np.uint8)
    return Dataset(joined, np.concatenate(games) if all_games and games else None, files)
