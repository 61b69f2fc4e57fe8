"""Training positions as bulletformat `ChessBoard` records, from bullet text or `.bf` files.

A record is 32 bytes, side-to-move relative (the board flipped and the colours swapped when
Black is to move): `occ` u64 (occupied squares), `pcs` 16 bytes (a nibble per occupied square
in ascending square order: bit 3 set for the side not to move, bits 0-2 the piece type, pawn 0
.. king 5), `score` i16 (centipawns), `result` u8 (0 loss, 1 draw, 2 win), `ksq` and `opp_ksq`
u8, all little-endian. A text line is `FEN | score | result` from White's view (bullet's text
format); it is turned into a record as bulletformat does. Big text files get a binary cache
beside them (`FILE.bfcache`, plain records) so a second run skips the parsing.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit

RECORD = 32  # bytes of a ChessBoard record
MAX_PIECES = 32
FEATURES = 768
NO_FEATURE = FEATURES  # padding in feature lists
CACHE_SUFFIX = ".bfcache"
CACHE_MIN_BYTES = 16 << 20  # text files this big or bigger get a cache
READ_BLOCK = 64 << 20

# record byte offsets
OFF_OCC, OFF_PCS, OFF_SCORE, OFF_RESULT, OFF_KSQ, OFF_OPP_KSQ = 0, 8, 24, 26, 27, 28
OPPONENT = 8  # nibble bit of the side not to move
KING = 5

# parse errors (codes returned by the kernels, messages for the user)
OK, SKIP = 0, -1
ERR_FIELDS, ERR_BOARD, ERR_PIECES, ERR_KINGS, ERR_SIDE, ERR_SCORE, ERR_RESULT = range(1, 8)
ERR_BF_PIECES, ERR_BF_TYPE, ERR_BF_RESULT = range(8, 11)
MESSAGES = {
    ERR_FIELDS: "expected 'FEN | score | result'",
    ERR_BOARD: "bad board field in the FEN",
    ERR_PIECES: "more than 32 pieces",
    ERR_KINGS: "not one king of each colour",
    ERR_SIDE: "side to move is not 'w' or 'b'",
    ERR_SCORE: "score is not an integer in -32768..32767",
    ERR_RESULT: "result is not 1.0/0.5/0.0 (or 1, 1/2, 0, [1.0], 1-0, ...)",
    ERR_BF_PIECES: "more than 32 occupied squares",
    ERR_BF_TYPE: "a piece nibble with no piece type (above king)",
    ERR_BF_RESULT: "result byte is not 0, 1 or 2",
}


class DataError(ValueError):
    """Unusable training data: the message names the file and the line or record."""


def _piece_table():
    table = np.full(256, 255, dtype=np.uint8)
    for i, ch in enumerate("PNBRQKpnbrqk"):
        table[ord(ch)] = (i // 6) << 3 | (i % 6)  # colour bit 3 (1 = black), type 0..5
    return table


PIECE_OF_CHAR = _piece_table()


def _result_patterns():
    """Result spellings (brackets stripped first) and the record's result for each."""
    words = {"1": 2, "1.0": 2, "1-0": 2, "0.5": 1, "1/2": 1, "1/2-1/2": 1, "0": 0, "0.0": 0,
             "0-1": 0}
    width = max(len(w) for w in words)
    pats = np.zeros((len(words), width), dtype=np.uint8)
    lens = np.zeros(len(words), dtype=np.int64)
    vals = np.zeros(len(words), dtype=np.uint8)
    for k, (word, value) in enumerate(words.items()):
        pats[k, :len(word)] = np.frombuffer(word.encode(), dtype=np.uint8)
        lens[k] = len(word)
        vals[k] = value
    return pats, lens, vals


RESULT_PATS, RESULT_LENS, RESULT_VALS = _result_patterns()
LOWEST_BIT = np.array([0] + [(v & -v).bit_length() - 1 for v in range(1, 256)], dtype=np.uint8)
SPACE, TAB, CR, NL, BAR, SLASH = 32, 9, 13, 10, 124, 47


@njit(cache=True, nogil=True)
def _is_space(c):
    return c == SPACE or c == TAB or c == CR


@njit(cache=True, nogil=True)
def _parse_line(buf, a, b, rec, board):
    """Parse the text line buf[a:b] into `rec` (32 bytes); OK, SKIP (blank/comment) or an error."""
    while a < b and _is_space(buf[a]):
        a += 1
    while b > a and _is_space(buf[b - 1]):
        b -= 1
    if a == b or buf[a] == 35:  # '#'
        return SKIP
    bar1 = -1
    bar2 = -1
    for i in range(a, b):
        if buf[i] == BAR:
            if bar1 < 0:
                bar1 = i
            elif bar2 < 0:
                bar2 = i
            else:
                return ERR_FIELDS
    if bar2 < 0:
        return ERR_FIELDS
    # the board field, rank 8 first
    for s in range(64):
        board[s] = 255
    rank = 7
    file = 0
    i = a
    while i < bar1 and not _is_space(buf[i]):
        c = buf[i]
        if c == SLASH:
            if file != 8 or rank == 0:
                return ERR_BOARD
            rank -= 1
            file = 0
        elif 49 <= c <= 56:  # '1'..'8'
            file += c - 48
            if file > 8:
                return ERR_BOARD
        else:
            p = PIECE_OF_CHAR[c]
            if p == 255 or file >= 8:
                return ERR_BOARD
            board[8 * rank + file] = p
            file += 1
        i += 1
    if rank != 0 or file != 8:
        return ERR_BOARD
    while i < bar1 and _is_space(buf[i]):
        i += 1
    if i >= bar1 or not (buf[i] == 119 or buf[i] == 98) or (
            i + 1 < bar1 and not _is_space(buf[i + 1])):
        return ERR_SIDE
    black = buf[i] == 98
    # the score
    s = bar1 + 1
    e = bar2
    while s < e and _is_space(buf[s]):
        s += 1
    while e > s and _is_space(buf[e - 1]):
        e -= 1
    negative = False
    if s < e and (buf[s] == 45 or buf[s] == 43):
        negative = buf[s] == 45
        s += 1
    if s == e or e - s > 6:
        return ERR_SCORE
    score = 0
    for k in range(s, e):
        if not 48 <= buf[k] <= 57:
            return ERR_SCORE
        score = 10 * score + (buf[k] - 48)
    if negative:
        score = -score
    if score < -32768 or score > 32767:
        return ERR_SCORE
    # the result
    s = bar2 + 1
    e = b
    while s < e and _is_space(buf[s]):
        s += 1
    if e - s >= 2 and buf[s] == 91 and buf[e - 1] == 93:  # [ ]
        s += 1
        e -= 1
    result = -1
    for p in range(RESULT_PATS.shape[0]):
        n = RESULT_LENS[p]
        if e - s == n:
            same = True
            for k in range(n):
                if buf[s + k] != RESULT_PATS[p, k]:
                    same = False
                    break
            if same:
                result = RESULT_VALS[p]
                break
    if result < 0:
        return ERR_RESULT
    if black:
        for sq in range(32):  # the side to move's view: flip the board, swap the colours
            lo = board[sq]
            hi = board[sq ^ 56]
            board[sq] = hi if hi == 255 else hi ^ OPPONENT
            board[sq ^ 56] = lo if lo == 255 else lo ^ OPPONENT
        score = -score
        result = 2 - result
    return pack(board, score, result, rec)


@njit(cache=True, nogil=True)
def pack(board, score, result, rec):
    """Fill the record `rec` from a side-to-move relative board (nibble a square, 255 empty),
    score and result; OK, ERR_PIECES or ERR_KINGS."""
    for k in range(RECORD):
        rec[k] = 0
    count = 0
    kings = 0
    for sq in range(64):
        p = board[sq]
        if p == 255:
            continue
        if count == MAX_PIECES:
            return ERR_PIECES
        rec[OFF_OCC + (sq >> 3)] |= 1 << (sq & 7)
        rec[OFF_PCS + (count >> 1)] |= p << (4 * (count & 1))
        count += 1
        if p == KING:
            rec[OFF_KSQ] = sq
            kings += 1
        elif p == KING | OPPONENT:
            rec[OFF_OPP_KSQ] = sq ^ 56
            kings += 16
    if kings != 17:
        return ERR_KINGS
    u = score & 0xFFFF
    rec[OFF_SCORE] = u & 0xFF
    rec[OFF_SCORE + 1] = u >> 8
    rec[OFF_RESULT] = result
    return OK


@njit(cache=True, nogil=True)
def _parse_block(buf, out, info):
    """Parse the lines of buf (complete lines) into out; info = [records, error, line, a, b]."""
    board = np.empty(64, dtype=np.uint8)
    n = buf.shape[0]
    count = 0
    line = 0
    a = 0
    while a < n:
        b = a
        while b < n and buf[b] != NL:
            b += 1
        code = _parse_line(buf, a, b, out[count], board)
        if code == OK:
            count += 1
        elif code != SKIP:
            info[0] = count
            info[1] = code
            info[2] = line
            info[3] = a
            info[4] = b
            return
        line += 1
        a = b + 1
    info[0] = count
    info[1] = OK
    info[2] = line


@njit(cache=True, nogil=True)
def _check_records(boards, info):
    """info = [first bad record or -1, error]: piece counts, piece types and results."""
    info[0] = -1
    for j in range(boards.shape[0]):
        count = 0
        for k in range(8):
            v = boards[j, OFF_OCC + k]
            while v:
                count += v & 1
                v >>= 1
        code = OK
        if count > MAX_PIECES:
            code = ERR_BF_PIECES
        elif boards[j, OFF_RESULT] > 2:
            code = ERR_BF_RESULT
        else:
            for i in range(count):
                if (boards[j, OFF_PCS + (i >> 1)] >> (4 * (i & 1))) & 7 > KING:
                    code = ERR_BF_TYPE
                    break
        if code != OK:
            info[0] = j
            info[1] = code
            return


@njit(cache=True, nogil=True)
def board_features(boards, j, stm, ntm):
    """Chess768 inputs of record j into stm/ntm (the two perspectives); returns their count.

    From the side to move: 384 * (piece is the opponent's) + 64 * type + square; from the
    other side: the colours swapped and the square mirrored (square ^ 56).
    """
    count = 0
    for k in range(8):
        v = boards[j, OFF_OCC + k]
        while v:
            sq = 8 * k + LOWEST_BIT[v]
            v &= v - 1
            nib = (boards[j, OFF_PCS + (count >> 1)] >> (4 * (count & 1))) & 15
            piece = 64 * (nib & 7)
            if nib & OPPONENT:
                stm[count] = 384 + piece + sq
                ntm[count] = piece + (sq ^ 56)
            else:
                stm[count] = piece + sq
                ntm[count] = 384 + piece + (sq ^ 56)
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
        board[:] = 255
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
        pack(board, score, result, out[j])


def random_records(n, seed=0, pieces=(8, 32), values=(100, 300, 300, 500, 900)):
    """n random records (kings and 6 .. 30 other pieces anywhere: not always legal chess) scored
    by the side to move's material with `values`, result win/draw/loss beyond +-150: a
    target with a known answer for tests and benchmarks."""
    out = np.empty((n, RECORD), dtype=np.uint8)
    _random_records(seed, pieces[0], pieces[1], np.array([*values, 0, 0, 0], np.int64), out)
    return out


def features(boards):
    """(stm, ntm, counts): int64 [n, 32] feature lists padded with NO_FEATURE, int64 [n]."""
    boards = np.ascontiguousarray(boards, dtype=np.uint8).reshape(-1, RECORD)
    n = len(boards)
    stm = np.full((n, MAX_PIECES), NO_FEATURE, dtype=np.int64)
    ntm = np.full((n, MAX_PIECES), NO_FEATURE, dtype=np.int64)
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
    """The records of a bullet text file; DataError names the file and line of a bad line."""
    from tqdm import tqdm

    path = str(path)
    blocks = []
    info = np.zeros(5, dtype=np.int64)
    lines_before = 0
    size = os.path.getsize(path)
    with open(path, "rb") as f, tqdm(total=size, unit="B", unit_scale=True, leave=False,
                                      desc=f"parsing {Path(path).name}",
                                      disable=not progress) as bar:
        rest = b""
        while True:
            data = f.read(READ_BLOCK)
            last = not data
            chunk = rest + data
            if not last:
                cut = chunk.rfind(b"\n") + 1
                if cut == 0:
                    rest = chunk
                    continue
                chunk, rest = chunk[:cut], chunk[cut:]
            buf = np.frombuffer(chunk, dtype=np.uint8)
            out = np.empty((len(buf) // 16 + 1, RECORD), dtype=np.uint8)
            _parse_block(buf, out, info)
            if info[1] != OK:
                text = chunk[info[3]:info[4]].decode("utf-8", "replace").strip()
                raise DataError(f"{path}:{lines_before + info[2] + 1}: {MESSAGES[info[1]]}: "
                                f"{text[:100]!r}")
            blocks.append(out[:info[0]].copy())
            lines_before += int(info[2])
            bar.update(len(data))
            if last:
                break
    return np.concatenate(blocks) if blocks else np.empty((0, RECORD), dtype=np.uint8)


def read_bf(path) -> np.ndarray:
    """The records of a `.bf` file (checked); DataError names the file and record."""
    path = str(path)
    size = os.path.getsize(path)
    if size % RECORD:
        raise DataError(f"{path}: {size} bytes is not a whole number of {RECORD}-byte "
                        f"bulletformat records")
    boards = np.fromfile(path, dtype=np.uint8).reshape(-1, RECORD)
    info = np.zeros(2, dtype=np.int64)
    _check_records(boards, info)
    if info[0] >= 0:
        raise DataError(f"{path}: record {info[0] + 1} (byte {info[0] * RECORD}): "
                        f"{MESSAGES[info[1]]}")
    return boards


def write_bf(boards, path) -> None:
    """Write records as a `.bf` file (atomically: a temporary file renamed)."""
    tmp = f"{path}.tmp{os.getpid()}"
    np.ascontiguousarray(boards, dtype=np.uint8).tofile(tmp)
    os.replace(tmp, path)


def is_bf(path) -> bool:
    return str(path).lower().endswith((".bf", CACHE_SUFFIX))


def load_file(path, progress=False, cache=True) -> np.ndarray:
    """Records of one data file: `.bf` read as is, text parsed (through its cache if big)."""
    from wasp.exitcodes import file_problem

    path = str(path)
    problem = file_problem(path, text=not is_bf(path))
    if problem:
        raise DataError(f"data file {problem}")
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
        while i < b and _is_space(buf[i]):
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


def side_record(path) -> str:
    """The datagen side record of a data file: ``X.moves`` beside ``X.txt`` (or ``X.bf``)."""
    return os.path.splitext(str(path))[0] + ".moves"


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
    """The records of every file in `paths` (text or `.bf`), in order."""
    boards, games, files = [], [], []
    all_games = True
    offset = 0
    for path in paths:
        b = load_file(path, progress, cache)
        boards.append(b)
        files.append((str(path), len(b)))
        g = game_ids(path, len(b))
        if g is None:
            all_games = False
        elif len(g):
            games.append(g - g.min() + offset)
            offset = int(games[-1].max()) + 1
    joined = np.concatenate(boards) if boards else np.empty((0, RECORD), dtype=np.uint8)
    return Dataset(joined, np.concatenate(games) if all_games and games else None, files)
