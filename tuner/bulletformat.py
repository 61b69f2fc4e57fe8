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

from tuner.records import Record, check_score

RECORD_SIZE = 32
DTYPE = np.dtype([("occ", "<u8"), ("pcs", "u1", (16,)), ("score", "<i2"), ("result", "u1"),
                  ("ksq", "u1"), ("opp_ksq", "u1"), ("extra", "u1", (3,))])
assert DTYPE.itemsize == RECORD_SIZE
KINDS = "pnbrqk"
KING = 5
THEIRS = 8  # the colour bit of a nibble: set for the side not to move
FLIP = 56  # square ^ FLIP mirrors the board top to bottom
MAX_PIECES = 32
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
    if ksq is None or opp_ksq is None:
        raise BulletFormatError(f"a king is missing in {fen!r}")
    rec["occ"] = occ
    rec["score"] = -check_score(score) if black else check_score(score)
    wdl = round(2 * result)
    rec["result"] = 2 - wdl if black else wdl
    rec["ksq"] = ksq
    rec["opp_ksq"] = opp_ksq
    return rec


def decode(rec) -> Record:
    """The Record of one record: the side to move as White, its score and result."""
    occ = int(rec["occ"])
    pcs = rec["pcs"]
    board = [None] * 64
    i = 0
    while occ:
        sq = (occ & -occ).bit_length() - 1
        occ &= occ - 1
        if i >= MAX_PIECES:
            raise BulletFormatError("more than 32 pieces")
        nib = (int(pcs[i // 2]) >> (4 * (i & 1))) & 15
        kind = nib & 7
        if kind > KING:
            raise BulletFormatError(f"bad piece nibble {nib}")
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
    result = int(rec["result"])
    if result > 2:
        raise BulletFormatError(f"bad result {result}")
    return Record("/".join(rows) + " w - - 0 1", int(rec["score"]), result / 2)


def read_bf(path):
    """The records of a .bf file, in order; BulletFormatError names a bad file or record."""
    size = os.path.getsize(path)
    if size % RECORD_SIZE:
        raise BulletFormatError(f"{path}: {size} bytes, not a whole number of "
                                f"{RECORD_SIZE}-byte records")
    data = np.memmap(path, dtype=DTYPE, mode="r") if size else np.zeros(0, DTYPE)
    for start in range(0, len(data), CHUNK):
        chunk = np.array(data[start:start + CHUNK])
        for k, rec in enumerate(chunk):
            try:
                yield decode(rec)
            except BulletFormatError as e:
                raise BulletFormatError(f"{path}: record {start + k}: {e}") from None


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


def encode_text(path, chunk_bytes: int = TEXT_CHUNK):
    """The records of a bullet text file, a numpy array of DTYPE a chunk, parsed by the
    `tuner.bfkernels` kernel (the same mapping as `encode`); BulletFormatError names the file
    and line of a bad one."""
    from tuner.bfkernels import ERRORS, OK, encode_lines

    line0 = 1
    rest = b""
    with open(path, "rb") as f:
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
            lines = int(np.count_nonzero(buf == 10)) + (0 if data.endswith(b"\n") else 1)
            out = np.zeros((lines, RECORD_SIZE), dtype=np.uint8)
            n, err, bad = encode_lines(buf, out)
            if err != OK:
                raise BulletFormatError(f"{path}:{line0 + bad}: {ERRORS[err]}")
            yield out[:n].view(DTYPE).reshape(n)
            line0 += lines
            if not block:
                break
