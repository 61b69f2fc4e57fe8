"""Kernels of viriformat (layout in `tuner.formats.viriformat`): games found in a byte buffer, and
games replayed on the engine's own position (each move checked against its legal moves, made by
`wasp.position.make_move`) into bulletformat's 32-byte records, filtered as bullet's binpack
loaders filter (ply, check, tactical move, score).
"""

import numpy as np
from numba import njit

from wasp.movegen import generate
from wasp.position import (
    ep_capturable,
    in_check,
    is_attacked,
    king_square,
    make_move,
    set_castling,
)
from wasp.types import (
    BLACK,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    CASTLING_ROOK,
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    GEN_ALL,
    KING,
    MAILBOX,
    MAX_MOVES,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    NO_SQUARE,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    ROOK,
    ST_CASTLE,
    ST_EP,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    WHITE,
)

from .bfkernels import EMPTY as BF_EMPTY
from .bfkernels import OK, pack

HEADER_SIZE = 32  # a game's marlinformat PackedBoard
MOVE_SIZE = 4  # a move (u16) and its score (i16)
# header byte offsets
OFF_OCC, OFF_PCS, OFF_STM_EP, OFF_HALFMOVE, OFF_FULLMOVE = 0, 8, 24, 25, 26
OFF_SCORE, OFF_WDL, OFF_EXTRA = 28, 30, 31
MAX_PIECES = 32
UNMOVED_ROOK = 6  # the piece code of a rook that still castles
BAD_PIECE = 7  # never valid
BLACK_PIECE = 8  # a piece nibble's colour bit
STM_BLACK = 0x80  # the side-to-move bit of the stm/ep byte; the low seven bits: the ep square
EP_MASK = 0x7F
NO_EP = 64
# move fields: from | to << 6 | promotion << 12 | type << 14
SQUARE_MASK = 0x3F
TO_SHIFT, PROMO_SHIFT, TYPE_SHIFT = 6, 12, 14
PROMO_MASK = 3  # knight, bishop, rook, queen = 0..3
TYPE_NORMAL, TYPE_EP, TYPE_CASTLE, TYPE_PROMO = 0, 1, 2, 3
ANY_TYPE = 4  # `legal_code` for UCI text: any move, castling in either form
MOVE_KEY = (1 << (MOVE_PROMO_SHIFT + 3)) - 1  # an engine move's from, to and promotion bits
CASTLE_BITS = (CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ)

# the filter, an int64 array: keep a position when its ply >= F_MIN_PLY, not in check when
# F_NO_CHECK, its move not a capture, en passant or promotion when F_NO_CAPTURE, |score| at most
# F_MAX_SCORE
F_MIN_PLY, F_NO_CHECK, F_NO_CAPTURE, F_MAX_SCORE = range(4)
N_FILTER = 4
NO_SCORE_CAP = 1 << 16  # above every i16

# info slots of `decode_games` and `scan_games`
I_BYTES, I_RECORDS, I_GAMES, I_ERROR, I_AT, I_MOVE = range(6)
N_INFO = 6

# error codes (told with the game and move)
E_PIECES = 1
E_PIECE = 2
E_KINGS = 3
E_PAWNS = 4
E_ROOK = 5
E_EP = 6
E_WDL = 7
E_CHECK = 8
E_NULL = 9
E_ILLEGAL = 10
ERRORS = {E_PIECES: "more than 32 pieces",
          E_PIECE: "a piece code of 7 (no piece type)",
          E_KINGS: "not one king of each colour",
          E_PAWNS: "a pawn on the first or last rank",
          E_ROOK: "an unmoved (castling) rook off its king's back rank, or two on one side",
          E_EP: "a bad en-passant square",
          E_WDL: "a game result other than 0, 1 or 2",
          E_CHECK: "the side not to move is in check",
          E_NULL: "a null move (move 0 with a score)",
          E_ILLEGAL: "a move that is not legal in its position (castling is king takes rook, "
                     "type 2; en passant type 1; promotion type 3)"}


def _nibble_table():
    """bfkernels' board nibble of each of the engine's pieces (colour * 6 + type; EMPTY)."""
    table = np.full(EMPTY + 1, BF_EMPTY, dtype=np.uint8)
    for piece in range(EMPTY):
        table[piece] = (BLACK_PIECE if piece >= 6 else 0) | piece % 6
    return table


NIBBLE = _nibble_table()


@njit(cache=True, nogil=True)
def _u16(buf, i):
    return np.int64(buf[i]) | np.int64(buf[i + 1]) << 8


@njit(cache=True, nogil=True)
def _i16(buf, i):
    v = _u16(buf, i)
    return v - 65536 if v >= 32768 else v


@njit(cache=True, nogil=True)
def game_end(buf, start):
    """The offset just past the terminator of the game at `start`, or -1 when buf ends first."""
    n = buf.shape[0]
    j = start + HEADER_SIZE
    while j + MOVE_SIZE <= n:
        if buf[j] == 0 and buf[j + 1] == 0 and buf[j + 2] == 0 and buf[j + 3] == 0:
            return j + MOVE_SIZE
        j += MOVE_SIZE
    return -1


@njit(cache=True, nogil=True)
def scan_games(buf, starts, counts, info):
    """The whole games of buf: their offsets into starts, their move counts into counts;
    info[I_GAMES] games, info[I_BYTES] bytes (the rest belongs to a game buf cuts off)."""
    n = buf.shape[0]
    g = 0
    at = 0
    while at + HEADER_SIZE <= n:
        end = game_end(buf, at)
        if end < 0:
            break
        starts[g] = at
        counts[g] = (end - at - HEADER_SIZE) // MOVE_SIZE - 1
        g += 1
        at = end
    info[I_GAMES] = g
    info[I_BYTES] = at


@njit(cache=True, nogil=True)
def set_up(T, S, buf, at, kings, rooks):
    """The position of the header at buf[at:at + 32] into S (history cleared); OK or an error
    code. Unmoved rooks become castling rights on their side of their king."""
    bb, st = S.bb, S.st
    bb[:OCC_ALL + 1] = 0
    st[MAILBOX:MAILBOX + 64] = EMPTY
    occ = np.uint64(0)
    for k in range(8):
        occ |= np.uint64(buf[at + OFF_OCC + k]) << np.uint64(8 * k)
    kings[0] = kings[1] = -1
    count = 0
    for sq in range(64):
        if not (occ >> np.uint64(sq)) & np.uint64(1):
            continue
        if count == MAX_PIECES:
            return E_PIECES
        nib = (buf[at + OFF_PCS + count // 2] >> (4 * (count & 1))) & 15
        count += 1
        colour = BLACK if nib & BLACK_PIECE else WHITE
        code = nib & 7
        if code == BAD_PIECE:
            return E_PIECE
        kind = ROOK if code == UNMOVED_ROOK else code
        if kind == PAWN and (sq < 8 or sq >= 56):
            return E_PAWNS
        if kind == KING:
            if kings[colour] >= 0:
                return E_KINGS
            kings[colour] = sq
        piece = 6 * colour + kind
        b = np.uint64(1) << np.uint64(sq)
        bb[piece] |= b
        bb[OCC_WHITE + colour] |= b
        bb[OCC_ALL] |= b
        st[MAILBOX + sq] = piece
    if kings[0] < 0 or kings[1] < 0:
        return E_KINGS
    rooks[:] = NO_SQUARE
    rights = 0
    count = 0
    for sq in range(64):
        if not (occ >> np.uint64(sq)) & np.uint64(1):
            continue
        nib = (buf[at + OFF_PCS + count // 2] >> (4 * (count & 1))) & 15
        count += 1
        if nib & 7 != UNMOVED_ROOK:
            continue
        colour = BLACK if nib & BLACK_PIECE else WHITE
        king = kings[colour]
        if sq >> 3 != 7 * colour or king >> 3 != sq >> 3:
            return E_ROOK
        right = 2 * colour + (0 if sq > king else 1)
        if rooks[right] != NO_SQUARE:
            return E_ROOK
        rooks[right] = sq
        rights |= CASTLE_BITS[right]
    set_castling(st, kings, rooks)
    st[ST_CASTLE] = rights
    stm_ep = buf[at + OFF_STM_EP]
    us = BLACK if stm_ep & STM_BLACK else WHITE
    st[ST_SIDE] = us
    st[ST_EP] = NO_SQUARE
    ep = stm_ep & EP_MASK
    if ep != NO_EP:
        if ep > NO_EP or ep >> 3 != (5 if us == WHITE else 2):
            return E_EP
        pusher = ep - 8 if us == WHITE else ep + 8
        origin = ep + 8 if us == WHITE else ep - 8
        if (st[MAILBOX + pusher] != 6 * (1 - us) + PAWN or st[MAILBOX + ep] != EMPTY
                or st[MAILBOX + origin] != EMPTY):
            return E_EP
        if ep_capturable(T, S, ep, us):  # kept only where a pawn could take, as FENs are read
            st[ST_EP] = ep
    st[ST_HALFMOVE] = buf[at + OFF_HALFMOVE]
    st[ST_FULLMOVE] = max(_u16(buf, at + OFF_FULLMOVE), 1)
    st[ST_PLY] = 0
    if buf[at + OFF_WDL] > 2:
        return E_WDL
    them = 1 - us
    if is_attacked(T, S, king_square(S, them), us, bb[OCC_ALL]):
        return E_CHECK
    return OK


@njit(cache=True, nogil=True)
def legal_code(T, S, moves, frm, to, promo, kind):
    """The legal engine move from `frm` to `to` (promotion 0, or the engine's 1..4 knight ..
    queen) of viriformat type `kind` in S, castling as king takes rook; with ANY_TYPE (UCI
    text) any move but castling first, then castling with `to` the king's destination or its
    rook's square. -1 when there is none. `moves` is room for the legal moves."""
    n = generate(T, S, moves, GEN_ALL, True)
    key = frm | to << MOVE_TO_SHIFT | promo << MOVE_PROMO_SHIFT
    us = S.st[ST_SIDE]
    castle = -1
    for i in range(n):
        code = np.int64(moves[i])
        if code & FLAG_CASTLE:
            if kind != TYPE_CASTLE and kind != ANY_TYPE or code & SQUARE_MASK != frm:
                continue
            dest = (code >> MOVE_TO_SHIFT) & SQUARE_MASK
            rook = S.st[CASTLING_ROOK + 2 * us + (0 if dest & 7 == 6 else 1)]
            if rook == to or (kind == ANY_TYPE and dest == to):
                if kind == TYPE_CASTLE:
                    return code
                if castle < 0:
                    castle = code
        elif code & MOVE_KEY == key and (kind == ANY_TYPE or kind != TYPE_CASTLE
                                         and (kind == TYPE_EP) == bool(code & FLAG_EP)):
            return code
    return castle


@njit(cache=True, nogil=True)
def tactical(S, code):
    """A capture, en passant or promotion (Viridithas's tactical move; castling is none)."""
    if code & FLAG_EP or (code >> MOVE_PROMO_SHIFT) & 7:
        return True
    to = (code >> MOVE_TO_SHIFT) & SQUARE_MASK
    return not code & FLAG_CASTLE and S.st[MAILBOX + to] != EMPTY


@njit(cache=True, nogil=True)
def _record(S, board, score, wdl, out):
    """bulletformat's record of the position in S (White's score and result 0, 1, 2)."""
    for sq in range(64):
        board[sq] = NIBBLE[S.st[MAILBOX + sq]]
    return pack(board, S.st[ST_SIDE] == BLACK, score, wdl, out)


@njit(cache=True, nogil=True)
def decode_games(buf, T, S, flt, out, games, first_game, info):
    """Replay the whole games of buf into bulletformat records (out, uint8 [n, 32]: room for
    one a move) with the index of each one's game (games; the first game of buf is
    `first_game`), keeping the positions that pass the filter `flt`. info: I_BYTES read (up to
    the first game buf cuts off), I_RECORDS written, I_GAMES read, I_ERROR (OK or a code) with
    I_AT (the bad game's offset in buf) and I_MOVE (its move, from 0; -1: the header)."""
    kings = np.empty(2, dtype=np.int64)
    rooks = np.empty(4, dtype=np.int64)
    board = np.empty(64, dtype=np.uint8)
    moves = np.empty(MAX_MOVES, dtype=np.int32)
    st = S.st
    n = 0
    g = 0
    at = 0
    info[I_ERROR] = OK
    while at + HEADER_SIZE <= buf.shape[0]:
        end = game_end(buf, at)
        if end < 0:
            break
        err = set_up(T, S, buf, at, kings, rooks)
        if err != OK:
            info[I_ERROR], info[I_AT], info[I_MOVE] = err, at, -1
            break
        wdl = buf[at + OFF_WDL]
        ply = 2 * (st[ST_FULLMOVE] - 1) + st[ST_SIDE]
        j = at + HEADER_SIZE
        k = 0
        while j < end - MOVE_SIZE:
            mv = _u16(buf, j)
            score = _i16(buf, j + 2)
            if mv == 0:
                err = E_NULL
                break
            kind = mv >> TYPE_SHIFT
            promo = ((mv >> PROMO_SHIFT) & PROMO_MASK) + 1 if kind == TYPE_PROMO else 0
            code = legal_code(T, S, moves, mv & SQUARE_MASK, (mv >> TO_SHIFT) & SQUARE_MASK,
                              promo, kind)
            if code < 0:
                err = E_ILLEGAL
                break
            keep = ply >= flt[F_MIN_PLY] and abs(score) <= flt[F_MAX_SCORE]
            if keep and flt[F_NO_CHECK] and in_check(T, S):
                keep = False
            if keep and flt[F_NO_CAPTURE]:
                keep = not tactical(S, code)
            if keep:
                _record(S, board, score, wdl, out[n])
                games[n] = first_game + g
                n += 1
            S.st[ST_PLY] = 0  # nothing is undone: the history stays one ply long
            make_move(T, S, code)
            ply += 1
            j += MOVE_SIZE
            k += 1
        if err != OK:
            info[I_ERROR], info[I_AT], info[I_MOVE] = err, at, k
            break
        g += 1
        at = end
    info[I_BYTES] = at
    info[I_RECORDS] = n
    info[I_GAMES] = g

