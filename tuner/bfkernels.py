"""Kernels for bulletformat at scale: bullet's text lines parsed straight into 32-byte
`ChessBoard` records (layout in `tuner.bulletformat`), for converting files of millions of
positions; `tuner.bulletformat.encode` is the same mapping for one position in Python.
"""

import numpy as np
from numba import njit

RECORD_SIZE = 32
OK = 0
# error codes of encode_lines (the line is told beside them)
E_BOARD = 1  # a bad character, rank or file count in the placement
E_SIDE = 2  # the side to move is not w or b
E_FIELDS = 3  # fewer than three '|'-separated fields
E_SCORE = 4  # not an integer in i16's range
E_RESULT = 5  # not 1.0, 0.5, 0.0 (or 1, 0, 1/2, [1.0], ...)
E_PIECES = 6  # more than 32 pieces, or a king missing
ERRORS = {E_BOARD: "bad FEN placement", E_SIDE: "bad side to move", E_FIELDS:
          "not 'FEN | score | result'", E_SCORE: "bad score (an integer in i16's range)",
          E_RESULT: "bad result (1.0, 0.5 or 0.0)", E_PIECES: "more than 32 pieces or a king "
                                                           "missing"}

NL, SPACE, TAB, CR, BAR, SLASH = 10, 32, 9, 13, 124, 47
KING = 5
THEIRS = 8


@njit(cache=True, nogil=True)
def _kind(ch):
    """(kind 0-5, black 0/1) of a FEN piece letter, kind -1 when it is none."""
    black = 0
    if ch >= 97:  # lower case
        black = 1
        ch -= 32
    if ch == 80:  # P
        return 0, black
    if ch == 78:  # N
        return 1, black
    if ch == 66:  # B
        return 2, black
    if ch == 82:  # R
        return 3, black
    if ch == 81:  # Q
        return 4, black
    if ch == 75:  # K
        return 5, black
    return -1, black


@njit(cache=True, nogil=True)
def _encode_line(buf, i, end, out, board):
    """Parse buf[i:end] (one line) into out (32 uint8); an error code or OK."""
    board[:] = 0  # nibble + 1 a square, from White's side; 0 empty
    while i < end and (buf[i] == SPACE or buf[i] == TAB):
        i += 1
    rank, file = 7, 0
    while i < end and buf[i] != SPACE:
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
            kind, black = _kind(ch)
            if kind < 0 or file > 7:
                return E_BOARD
            board[rank * 8 + file] = kind + THEIRS * black + 1
            file += 1
        i += 1
    if rank != 0 or file != 8:
        return E_BOARD
    while i < end and buf[i] == SPACE:
        i += 1
    if i >= end or (buf[i] != 119 and buf[i] != 98):  # w, b
        return E_SIDE
    stm_black = buf[i] == 98
    while i < end and buf[i] != BAR:
        i += 1
    if i >= end:
        return E_FIELDS
    i += 1
    while i < end and buf[i] == SPACE:
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
    while i < end and buf[i] == SPACE:
        i += 1
    if i >= end or buf[i] != BAR:
        return E_FIELDS if i >= end else E_SCORE
    i += 1
    while i < end and buf[i] == SPACE:
        i += 1
    stop = end
    while stop > i and (buf[stop - 1] == SPACE or buf[stop - 1] == CR or buf[stop - 1] == TAB):
        stop -= 1
    if stop > i and buf[i] == 91 and buf[stop - 1] == 93:  # [ ]
        i += 1
        stop -= 1
    n = stop - i
    wdl = -1
    if n == 1 and buf[i] == 49:
        wdl = 2
    elif n == 1 and buf[i] == 48:
        wdl = 0
    elif n == 3 and buf[i] == 49 and buf[i + 1] == 47 and buf[i + 2] == 50:  # 1/2
        wdl = 1
    elif n == 3 and buf[i + 1] == 46:  # x.y
        if buf[i] == 49 and buf[i + 2] == 48:
            wdl = 2
        elif buf[i] == 48 and buf[i + 2] == 53:
            wdl = 1
        elif buf[i] == 48 and buf[i + 2] == 48:
            wdl = 0
    if wdl < 0:
        return E_RESULT
    out[:] = 0
    occ = np.uint64(0)
    count = 0
    ksq = -1
    opp_ksq = -1
    for rel in range(64):
        sq = rel ^ 56 if stm_black else rel
        p = board[sq]
        if p == 0:
            continue
        nib = p - 1
        if stm_black:
            nib ^= THEIRS
        if count >= 32:
            return E_PIECES
        occ |= np.uint64(1) << np.uint64(rel)
        out[8 + count // 2] |= nib << (4 * (count & 1))
        if nib == KING:
            ksq = rel
        elif nib == THEIRS | KING:
            opp_ksq = rel ^ 56
        count += 1
    if ksq < 0 or opp_ksq < 0:
        return E_PIECES
    for b in range(8):
        out[b] = (occ >> np.uint64(8 * b)) & np.uint64(0xFF)
    if stm_black:
        score = -score
        wdl = 2 - wdl
    s16 = score & 0xFFFF
    out[24] = s16 & 0xFF
    out[25] = s16 >> 8
    out[26] = wdl
    out[27] = ksq
    out[28] = opp_ksq
    return OK


@njit(cache=True, nogil=True)
def encode_lines(buf, out):
    """Parse the text lines in buf (uint8, whole lines) into out (uint8 [n, 32]); blank lines
    are skipped. Returns (records written, error code, index of the bad line among buf's)."""
    board = np.zeros(64, dtype=np.int64)
    n = 0
    line = 0
    i = 0
    size = buf.shape[0]
    while i < size:
        end = i
        while end < size and buf[end] != NL:
            end += 1
        blank = True
        for k in range(i, end):
            if buf[k] != SPACE and buf[k] != CR and buf[k] != TAB:
                blank = False
                break
        if not blank:
            err = _encode_line(buf, i, end, out[n], board)
            if err != OK:
                return n, err, line
            n += 1
        line += 1
        i = end + 1
    return n, OK, line
