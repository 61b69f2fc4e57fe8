"""Training positions for the net trainer: bulletformat `ChessBoard` records (layout, reader and
writer in `tuner.formats.bulletformat`, the text parser in `tuner.formats.bfkernels`, shared with
datagen) from bullet text, `.bf` or viriformat `.vf` files (its games replayed by
`tuner.formats.decode_boards`, filtered as bullet's binpack loaders filter), their inputs and
the datagen game of each. Big text files get a binary cache beside them (`FILE.bfcache`, plain
records) so a second run skips the parsing. Streamed (`load(..., stream=True)`), the records
stay on disk: `.bf` files memory-mapped, text and `.vf` decoded a chunk at a time into a
`.bfcache` beside them (a `.vf` one also keeps its games), read through `MappedRecords`.
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
    map_bf,
    pack,
    save_bf,
)
from tuner.formats import RECORD_SIZE as RECORD
from tuner.formats import THEIRS as OPPONENT
from tuner.formats import side_path as side_record
from wasp.nnue.inputs import (
    BLACK,
    FEATURES,
    LAYOUT_SIZE,
    MAX_ACTIVE,
    WHITE,
    bucket_table,
    bucketed_feature,
    feature,
)

NO_FEATURE = FEATURES  # padding in Chess768's feature lists
CACHE_SUFFIX = ".bfcache"
CACHE_MIN_BYTES = 16 << 20  # text files this big or bigger get a cache
NL = 10


class DataError(ValueError):
    """Unusable training data: the message names the file and the line or record."""


@njit(cache=True, nogil=True)
def board_features(boards, j, stm, ntm, files, table, mirrored):
    """The inputs of record j into stm/ntm, the side to move's and the other side's; returns
    their count. Chess768 (`wasp.nnue.inputs.feature`), or with `mirrored` the king-bucketed,
    mirrored inputs (`bucketed_feature`, `table` from `bucket_table`; the record's king squares
    pick the buckets). The record is the side to move's view, so the side to move is White
    there and its opponent Black. `files` 7 gives the position mirrored left to right
    (square ^ 7).
    """
    count = 0
    king_s = np.int64(boards[j, OFF_KSQ] ^ files)  # each king as its own side sees the board
    king_n = np.int64(boards[j, OFF_OPP_KSQ] ^ files)
    for k in range(8):
        v = boards[j, OFF_OCC + k]
        while v:
            sq = (8 * k + LOWEST_BIT[v]) ^ files
            v &= v - 1
            nib = (boards[j, OFF_PCS + (count >> 1)] >> (4 * (count & 1))) & 15
            colour = BLACK if nib & OPPONENT else WHITE
            piece_type = nib & 7
            if mirrored:
                stm[count] = bucketed_feature(table, king_s, WHITE, colour, piece_type, sq)
                ntm[count] = bucketed_feature(table, king_n, BLACK, colour, piece_type, sq)
            else:
                stm[count] = feature(WHITE, colour, piece_type, sq)
                ntm[count] = feature(BLACK, colour, piece_type, sq)
            count += 1
    return count


@njit(cache=True, nogil=True)
def _all_features(boards, stm, ntm, counts, table, mirrored):
    for j in range(boards.shape[0]):
        counts[j] = board_features(boards, j, stm[j], ntm[j], 0, table, mirrored)


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


def features(boards, arch=None):
    """(stm, ntm, counts): int64 [n, MAX_ACTIVE] input lists of an architecture's inputs
    (default Chess768) padded with the number of inputs (NO_FEATURE for Chess768), int64
    [n]."""
    boards = np.ascontiguousarray(boards, dtype=np.uint8).reshape(-1, RECORD)
    n = len(boards)
    pad = NO_FEATURE if arch is None else arch.features
    stm = np.full((n, MAX_ACTIVE), pad, dtype=np.int64)
    ntm = np.full((n, MAX_ACTIVE), pad, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    layout = (0,) * LAYOUT_SIZE if arch is None else arch.layout
    _all_features(boards, stm, ntm, counts, bucket_table(layout),
                  arch is not None and arch.mirrored)
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


class MappedRecords:
    """The records of several memory-mapped files seen as one [n, 32] array, read by `take`
    (the rows asked for, gathered into memory)."""

    def __init__(self, maps):
        self.maps = list(maps)
        self.ends = np.cumsum([len(m) for m in self.maps], dtype=np.int64)

    def __len__(self):
        return int(self.ends[-1]) if len(self.ends) else 0

    @property
    def shape(self):
        return len(self), RECORD

    def take(self, rows) -> np.ndarray:
        """uint8 [len(rows), 32]: the records of `rows` (indices into the whole), in order."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), RECORD), dtype=np.uint8)
        which = np.searchsorted(self.ends, rows, side="right")
        for f in np.unique(which):
            mask = which == f
            start = self.ends[f - 1] if f else 0
            out[mask] = self.maps[f][rows[mask] - start]
        return out

    def __repr__(self):
        return f"<MappedRecords {len(self):,} records in {len(self.maps)} file(s)>"


def gather(boards, idx):
    """(records, indices) for the kernels: `boards` and `idx` as they are, or for
    MappedRecords the rows of idx gathered (an index ~r, a record mirrored, stays ~)."""
    if not isinstance(boards, MappedRecords):
        return boards, idx
    idx = np.asarray(idx, dtype=np.int64)
    flipped = idx < 0
    local = np.arange(len(idx), dtype=np.int64)
    local[flipped] = ~local[flipped]
    return boards.take(np.where(flipped, ~idx, idx)), local


def _filter_key(filters: Filters | None) -> str:
    if filters is None:
        return ""
    import hashlib
    import json
    from dataclasses import asdict

    text = json.dumps(asdict(filters), sort_keys=True)
    return "." + hashlib.sha1(text.encode()).hexdigest()[:12]


def _fresh(cache, source) -> bool:
    try:
        return (os.path.getmtime(cache) >= os.path.getmtime(source)
                and os.path.getsize(cache) % RECORD == 0)
    except OSError:
        return False


def _write_chunks(chunks, cache) -> None:
    """Write record chunks (uint8 [k, 32] each) to `cache` (atomically)."""
    from wasp.atomicfile import replacing

    with replacing(cache) as tmp, open(tmp, "wb") as f:
        for chunk in chunks:
            np.ascontiguousarray(chunk, dtype=np.uint8).tofile(f)


def map_file(entry, progress=False):
    """(MappedRecords' map, games or None) of a data entry streamed: a `.bf` file mapped, a
    text or `.vf` file through its `.bfcache` (written a chunk at a time when missing or older
    than the file; for a `.vf` file one a filter, its games beside it in `.games.npy`)."""
    from wasp.exitcodes import file_problem

    path, filters = source(entry)
    problem = file_problem(path, text=not is_binary(path))
    if problem:
        raise DataError(f"data file {problem}")
    try:
        if is_bf(path):
            return map_bf(path), None
        if is_viri(path):
            cache = path + _filter_key(filters) + CACHE_SUFFIX
            games_file = cache + ".games.npy"
            if not (_fresh(cache, path) and _fresh(games_file, path)):
                games = []

                def records():
                    for batch in decode_boards(path, filters, progress=progress):
                        games.append(batch.games)
                        yield batch.boards

                _write_chunks(records(), cache)
                joined = np.concatenate(games) if games else np.empty(0, np.int64)
                np.save(games_file, joined)
            boards, games = map_bf(cache), np.load(games_file, mmap_mode="r")
            if filters is not None and not len(boards):
                raise DataError(f"{path}: no position passes the filter")
            return boards, games
        if filters is not None:
            raise DataError(f"{path}: the filter reads viriformat (.vf) files only")
        cache = path + CACHE_SUFFIX
        if not _fresh(cache, path):
            _write_chunks((c.view(np.uint8).reshape(-1, RECORD) for c in
                           encode_text(path, progress=progress)), cache)
        boards = map_bf(cache)
        return boards, game_ids(path, len(boards))
    except (BulletFormatError, ViriFormatError) as e:
        raise DataError(str(e)) from None


@dataclass
class Dataset:
    """Records of one or more files, with the game of each position when the data say it."""

    boards: np.ndarray  # uint8 [n, 32], or MappedRecords when streamed
    games: np.ndarray | None = None  # int64 [n], distinct across files
    files: list = field(default_factory=list)  # (path, positions)

    def __len__(self):
        return len(self.boards)

    def __repr__(self):
        split = "by game" if self.games is not None else "no game record"
        return f"<Dataset {len(self):,} positions from {len(self.files)} file(s), {split}>"


def load(paths, progress=False, cache=True, stream=False) -> Dataset:
    """The records of every entry of `paths` (text, `.bf` or `.vf` files; a `.vf` through its
    filter, see `source`), in order: in memory, or with `stream` on disk (`map_file`). A
    viriformat file's games are its own."""
    from wasp.exitcodes import file_problem

    boards, games, files = [], [], []
    all_games = True
    offset = 0
    for entry in paths:
        path, filters = source(entry)
        if stream:
            b, g = map_file(entry, progress)
        elif is_viri(path):
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
            games.append(np.asarray(g) - np.min(g) + offset)
            offset = int(games[-1].max()) + 1
    if stream:
        joined = MappedRecords(boards)
    else:
        joined = np.concatenate(boards) if boards else np.empty((0, RECORD), dtype=np.uint8)
    return Dataset(joined, np.concatenate(games) if all_games and games else None, files)
