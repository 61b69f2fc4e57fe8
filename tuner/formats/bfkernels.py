"""Kernels of bulletformat's 32-byte `ChessBoard` record (layout in `tuner.formats.bulletformat`):
bullet text lines parsed straight into records, records packed from a board and checked. The one
text parser of the tools (datagen's conversion and the net trainer's loading both go through it);
`tuner.formats.bulletformat.encode` is the same mapping for one position in Python.
"""

import numpy as np
from numba import njit

RECORD_SIZE = 32
MAX_PIECES = 32
# record byte offsets
OFF_OCC, OFF_PCS, OFF_SCORE, OFF_RESULT, OFF_KSQ, OFF_OPP_KSQ = 0, 8, 24, 26, 27, 28
KING = 5
THEIRS = 8  # the colour bit of a nibble: set for the side not to move
EMPTY = 255  # an empty square of a board given to `pack`

OK = 0
# error codes (the line or record is told beside them)
E_BOARD = 1  # a bad character, rank or file count in the placement
E_SIDE = 2  # the side to move is not w or b
E_FIELDS = 3  # not three '|'-separated fields
E_SCORE = 4  # not an integer in i16's range
E_RESULT = 5  # not a result spelling of tuner.formats.records.RESULT_WORDS (or one in [ ])
E_PIECES = 6  # more than 32 pieces
E_KINGS = 7  # not one king of each colour
E_BF_TYPE = 8  # a .bf record: a piece nibble with no piece type (above king)
E_BF_RESULT = 9  # a .bf record: a result byte above 2
ERRORS = {E_BOARD: "bad FEN board field", E_SIDE: "bad side to move (not 'w' or 'b')",
          E_FIELDS: "not 'FEN | score | result'",
          E_SCORE: "bad score (an integer in i16's range)",
          E_RESULT: "bad result (1.0, 0.5 or 0.0; also 1, 1/2, 0, 1-0, 0-1, 1/2-1/2, [1.0])",
          E_PIECES: "more than 32 pieces", E_KINGS: "a king missing or doubled (not one king of "
                                                    "each colour)",
          E_BF_TYPE: "a piece nibble with no piece type (above king)",
          E_BF_RESULT: "result byte is not 0, 1 or 2"}

NL, SPACE, TAB, CR, BAR, SLASH, HASH = 10, 32, 9, 13, 124, 47, 35


def _piece_table():
    table = np.full(256, EMPTY, dtype=np.uint8)
    for i, ch in enumerate("PNBRQKpnbrqk"):
        table[ord(ch)] = (i // 6) * THEIRS | (i % 6)  # White's pieces without the colour bit
    return table


PIECE_OF_CHAR = _piece_table()
LOWEST_BIT = np.array([0] + [(v & -v).bit_length() - 1 for v in range(1, 256)], dtype=np.uint8)


@njit(cache=True, nogil=True)
def _is_space(c):
    return c == SPACE or c == TAB or c == CR


@njit(cache=True, nogil=True)
def _result(buf, i, stop):
    """The result of buf[i:stop] as 0, 1, 2 (White's loss, draw, win), or -1."""
    n = stop - i
    if n == 1 and buf[i] == 49:  # 1
        return 2
    if n == 1 and buf[i] == 48:  # 0
        return 0
    if n == 3 and buf[i] == 49 and buf[i + 1] == 47 and buf[i + 2] == 50:  # 1/2
        return 1
    if n == 3 and buf[i + 1] == 46:  # x.y
        if buf[i] == 49 and buf[i + 2] == 48:
            return 2
        if buf[i] == 48 and buf[i + 2] == 53:
            return 1
        if buf[i] == 48 and buf[i + 2] == 48:
            return 0
    if n == 3 and buf[i + 1] == 45 and buf[i] + buf[i + 2] == 97:  # 1-0, 0-1
        return 2 if buf[i] == 49 else 0
    if n == 7 and buf[i] == 49 and buf[i + 1] == 47 and buf[i + 2] == 50 and \
            buf[i + 3] == 45 and buf[i + 4] == 49 and buf[i + 5] == 47 and buf[i + 6] == 50:
        return 1  # 1/2-1/2
    return -1


@njit(cache=True, nogil=True)
def pack(board, stm_black, score, wdl, out):
    """Fill `out` (32 uint8) from a board seen from White (a nibble a square, White's pieces
    without the colour bit, EMPTY for none), White's score and result (0, 1, 2); the record
    is the side to move's view. OK, E_PIECES or E_KINGS."""
    out[:] = 0
    occ = np.uint64(0)
    count = 0
    kings = 0
    for rel in range(64):
        p = board[rel ^ 56 if stm_black else rel]
        if p == EMPTY:
            continue
        nib = p ^ THEIRS if stm_black else p
        if count >= MAX_PIECES:
            return E_PIECES
        occ |= np.uint64(1) << np.uint64(rel)
        out[OFF_PCS + count // 2] |= nib << (4 * (count & 1))
        if nib == KING:
            out[OFF_KSQ] = rel
            kings += 1
        elif nib == THEIRS | KING:
            out[OFF_OPP_KSQ] = rel ^ 56
            kings += 16
        count += 1
    if kings != 17:
        return E_KINGS
    for b in range(8):
        out[OFF_OCC + b] = (occ >> np.uint64(8 * b)) & np.uint64(0xFF)
    if stm_black:
        score = -score
        wdl = 2 - wdl
    s16 = score & 0xFFFF
    out[OFF_SCORE] = s16 & 0xFF
    out[OFF_SCORE + 1] = s16 >> 8
    out[OFF_RESULT] = wdl
    return OK


@njit(cache=True, nogil=True)
def _encode_line(buf, i, end, out, board):
    """Parse buf[i:end] (one line, not blank) into out (32 uint8); an error code or OK."""
    board[:] = EMPTY
    while i < end and _is_space(buf[i]):
        i += 1
    rank, file = 7, 0
    while i < end and not _is_space(buf[i]):
        ch = buf[i]
        if ch == SLASH:
            if file != 8 or rank == 0:
                return E_BOARD
            rank -= 1
            file = 0
        elif 49 <= ch <= 56:
            file += ch - 48
            if file > 8:
                return E_BOARD
        else:
            p = PIECE_OF_CHAR[ch]
            if p == EMPTY or file > 7:
                return E_BOARD
            board[rank * 8 + file] = p
            file += 1
        i += 1
    if rank != 0 or file != 8:
        return E_BOARD
    while i < end and _is_space(buf[i]):
        i += 1
    if i >= end or (buf[i] != 119 and buf[i] != 98):  # w, b
        return E_SIDE
    stm_black = buf[i] == 98
    i += 1
    if i < end and not (_is_space(buf[i]) or buf[i] == BAR):
        return E_SIDE
    while i < end and buf[i] != BAR:
        i += 1
    if i >= end:
        return E_FIELDS
    i += 1
    while i < end and _is_space(buf[i]):
        i += 1
    neg = False
    if i < end and (buf[i] == 45 or buf[i] == 43):  # - +
        neg = buf[i] == 45
        i += 1
    score = 0
    digits = 0
    while i < end and 48 <= buf[i] <= 57:
        score = score * 10 + (buf[i] - 48)
        digits += 1
        if score > 40000:
            return E_SCORE
        i += 1
    if digits == 0:
        return E_SCORE
    if neg:
        score = -score
    if score < -32768 or score > 32767:
        return E_SCORE
    while i < end and _is_space(buf[i]):
        i += 1
    if i >= end or buf[i] != BAR:
        return E_FIELDS if i >= end else E_SCORE
    i += 1
    while i < end and _is_space(buf[i]):
        i += 1
    stop = end
    while stop > i and _is_space(buf[stop - 1]):
        stop -= 1
    if stop > i and buf[i] == 91 and buf[stop - 1] == 93:  # [ ]
        i += 1
        stop -= 1
    for k in range(i, stop):
        if buf[k] == BAR:
            return E_FIELDS
    wdl = _result(buf, i, stop)
    if wdl < 0:
        return E_RESULT
    return pack(board, stm_black, score, wdl, out)


@njit(cache=True, nogil=True)
def encode_lines(buf, out, info):
    """Parse the text lines in buf (uint8, whole lines) into out (uint8 [n, 32]); blank lines
    and '#' comments are skipped. info = [records written, error code, index of the bad line
    among buf's, its start, its end]."""
    board = np.empty(64, dtype=np.uint8)
    n = 0
    line = 0
    i = 0
    size = buf.shape[0]
    while i < size:
        end = i
        while end < size and buf[end] != NL:
            end += 1
        first = i
        while first < end and _is_space(buf[first]):
            first += 1
        if first < end and buf[first] != HASH:
            err = _encode_line(buf, i, end, out[n], board)
            if err != OK:
                info[0], info[1], info[2], info[3], info[4] = n, err, line, i, end
                return
            n += 1
        line += 1
        i = end + 1
    info[0], info[1], info[2] = n, OK, line


@njit(cache=True, nogil=True)
def check_records(boards, info):
    """info = [first bad record or -1, error]: piece counts, piece types and results."""
    info[0] = -1
    for j in range(boards.shape[0]):
        count = 0
        for k in range(8):
            v = boards[j, OFF_OCC + k]
            while v:
                count += 1
                v &= v - 1
        code = OK
        if count > MAX_PIECES:
            code = E_PIECES
        elif boards[j, OFF_RESULT] > 2:
            code = E_BF_RESULT
        else:
            for i in range(count):
                if (boards[j, OFF_PCS + (i >> 1)] >> (4 * (i & 1))) & 7 > KING:
                    code = E_BF_TYPE
                    break
        if code != OK:
            info[0] = j
            info[1] = code
            return
