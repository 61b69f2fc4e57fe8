"""bulletformat's `ChessBoard`, the 32-byte record bullet trains from: reader and writer.

Layout (little-endian, as jw1912/bulletformat's `#[repr(C)]` struct): ``occ`` u64, the occupied
squares; ``pcs`` 16 bytes, a nibble a piece (low nibble first) in ascending square order, the
nibble ``colour << 3 | kind`` (kinds P N B R Q K = 0..5, colour 0 the side to move); ``score``
i16 and ``result`` u8 (0, 1, 2 for loss, draw, win), both the side to move's; ``ksq``, the side
to move's king square; ``opp_ksq``, the other king's square as its own side sees it; ``extra``
3 bytes, zero. Everything is seen from the side to move: with Black to move the board is
mirrored (square ^ 56) and the colours swapped, so a record keeps no side to move, castling
rights, en-passant square or move counters, and reads back as a White-to-move position.
"""

import os

import numpy as np

from wasp.atomicfile import replacing

from .bfkernels import KING, MAX_PIECES, RECORD_SIZE, THEIRS
from .records import Record, check_score

DTYPE = np.dtype([("occ", "<u8"), ("pcs", "u1", (16,)), ("score", "<i2"), ("result", "u1"),
                  ("ksq", "u1"), ("opp_ksq", "u1"), ("extra", "u1", (3,))])
assert DTYPE.itemsize == RECORD_SIZE
KINDS = "pnbrqk"
FLIP = 56  # square ^ FLIP mirrors the board top to bottom
CHUNK = 1 << 16  # records a read
TEXT_CHUNK = 1 << 24  # bytes of text a kernel call parses


class BulletFormatError(ValueError):
    """A record that cannot be encoded or decoded: the message says which and why."""


def encode(fen: str, score: int, result: float) -> np.ndarray:
    """One record (a DTYPE scalar array) of a position with White's score and result."""
    fields = fen.split()
    if len(fields) < 2 or fields[1] not in ("w", "b"):
        raise BulletFormatError(f"bad FEN {fen!r}")
    black = fields[1] == "b"
    pieces = []  # (relative square, nibble)
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        raise BulletFormatError(f"bad FEN {fen!r}")
    for r, row in enumerate(ranks):
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
                continue
            kind = KINDS.find(ch.lower())
            if kind < 0 or file > 7:
                raise BulletFormatError(f"bad FEN {fen!r}")
            sq = (7 - r) * 8 + file
            theirs = ch.islower() != black  # a piece of the side not to move
            pieces.append((sq ^ FLIP if black else sq, (THEIRS if theirs else 0) | kind))
            file += 1
    if len(pieces) > MAX_PIECES:
        raise BulletFormatError(f"more than {MAX_PIECES} pieces in {fen!r}")
    pieces.sort()
    rec = np.zeros((), dtype=DTYPE)
    occ = 0
    ksq = opp_ksq = None
    for i, (sq, nib) in enumerate(pieces):
        occ |= 1 << sq
        rec["pcs"][i // 2] |= nib << (4 * (i & 1))
        if nib == KING:
            ksq = sq
        elif nib == THEIRS | KING:
            opp_ksq = sq ^ FLIP
    kings = [nib for _, nib in pieces if nib & 7 == KING]
    if sorted(kings) != [KING, THEIRS | KING]:
        raise BulletFormatError(f"a king missing or doubled in {fen!r}")
    rec["occ"] = occ
    rec["score"] = -check_score(score) if black else check_score(score)
    wdl = round(2 * result)
    rec["result"] = 2 - wdl if black else wdl
    rec["ksq"] = ksq
    rec["opp_ksq"] = opp_ksq
    return rec


def decode(rec) -> Record:
    """The Record of one record (checked: `load_bf`'s kernel): the side to move as White, its
    score and result."""
    occ = int(rec["occ"])
    pcs = rec["pcs"]
    board = [None] * 64
    i = 0
    while occ:
        sq = (occ & -occ).bit_length() - 1
        occ &= occ - 1
        nib = (int(pcs[i // 2]) >> (4 * (i & 1))) & 15
        kind = nib & 7
        board[sq] = KINDS[kind] if nib & THEIRS else KINDS[kind].upper()
        i += 1
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            p = board[rank * 8 + file]
            if p is None:
                empty += 1
                continue
            row += (str(empty) if empty else "") + p
            empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return Record("/".join(rows) + " w - - 0 1", int(rec["score"]), int(rec["result"]) / 2)


def _check(path, boards, first: int = 0) -> None:
    """BulletFormatError naming the file and the first bad record of `boards` (uint8 [n, 32],
    record `first` of the file onwards), if there is one."""
    from .bfkernels import ERRORS, check_records

    info = np.zeros(2, dtype=np.int64)
    check_records(boards, info)
    if info[0] >= 0:
        j = first + int(info[0])
        raise BulletFormatError(f"{path}: record {j + 1} (byte {j * RECORD_SIZE}): "
                                f"{ERRORS[int(info[1])]}")


def _size(path) -> int:
    size = os.path.getsize(path)
    if size % RECORD_SIZE:
        raise BulletFormatError(f"{path}: {size} bytes, not a whole number of "
                                f"{RECORD_SIZE}-byte records")
    return size


def load_bf(path) -> np.ndarray:
    """The records of a .bf file as uint8 [n, 32], checked; BulletFormatError names a bad file
    or record."""
    _size(path)
    boards = np.fromfile(path, dtype=np.uint8).reshape(-1, RECORD_SIZE)
    _check(path, boards)
    return boards


def map_bf(path) -> np.ndarray:
    """The records of a .bf file memory-mapped (uint8 [n, 32], read-only), checked a chunk at
    a time; BulletFormatError names a bad file or record."""
    size = _size(path)
    if not size:
        return np.zeros((0, RECORD_SIZE), dtype=np.uint8)
    boards = np.memmap(path, dtype=np.uint8, mode="r").reshape(-1, RECORD_SIZE)
    for start in range(0, len(boards), CHUNK):
        _check(path, np.asarray(boards[start:start + CHUNK]), start)
    return boards


def save_bf(boards, path) -> None:
    """Write records (uint8 [n, 32] or DTYPE) as a .bf file, atomically (a temporary file
    renamed)."""
    with replacing(path) as tmp:
        np.ascontiguousarray(boards).tofile(tmp)


def read_bf(path):
    """The Records of a .bf file, in order; BulletFormatError names a bad file or record."""
    size = _size(path)
    data = np.memmap(path, dtype=DTYPE, mode="r") if size else np.zeros(0, DTYPE)
    for start in range(0, len(data), CHUNK):
        chunk = np.array(data[start:start + CHUNK])
        _check(path, chunk.view(np.uint8).reshape(-1, RECORD_SIZE), start)
        for rec in chunk:
            yield decode(rec)


class BfWriter:
    """Writes records to a .bf file (buffered, CHUNK records a write)."""

    def __init__(self, path):
        self.f = open(path, "wb")
        self.buf = np.zeros(CHUNK, dtype=DTYPE)
        self.n = 0

    def write(self, r: Record) -> None:
        self.buf[self.n] = encode(r.fen, r.score, r.result)
        self.n += 1
        if self.n == CHUNK:
            self.flush()

    def flush(self) -> None:
        self.f.write(self.buf[:self.n].tobytes())
        self.n = 0

    def close(self) -> None:
        self.flush()
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def encode_text(path, chunk_bytes: int = TEXT_CHUNK, progress: bool = False):
    """The records of a bullet text file, a numpy array of DTYPE a chunk, parsed by the
    `tuner.formats.bfkernels` kernel (the same mapping as `encode`; blank lines and '#' comments
    skipped); BulletFormatError names the file and line of a bad one."""
    from tqdm import tqdm

    from .bfkernels import ERRORS, OK, encode_lines

    line0 = 1
    rest = b""
    info = np.zeros(5, dtype=np.int64)
    with open(path, "rb") as f, tqdm(total=os.path.getsize(path), unit="B", unit_scale=True,
                                      leave=False, desc=f"parsing {os.path.basename(path)}",
                                      disable=not progress) as bar:
        while True:
            block = f.read(chunk_bytes)
            data = rest + block
            if not block:
                rest = b""
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    continue
                data, rest = data[:cut], data[cut:]
            if not data:
                break
            buf = np.frombuffer(data, dtype=np.uint8)
            out = np.empty((len(buf) // 16 + 1, RECORD_SIZE), dtype=np.uint8)
            encode_lines(buf, out, info)
            if info[1] != OK:
                text = data[info[3]:info[4]].decode("utf-8", "replace").strip()
                raise BulletFormatError(f"{path}:{line0 + info[2]}: {ERRORS[int(info[1])]}: "
                                        f"{text[:100]!r}")
            n = int(info[0])
            yield out[:n].view(DTYPE).reshape(n)
            line0 += int(info[2])
            bar.update(len(block))
            if not block:
                break
