"""Names for colours, pieces, squares, move fields and state slots, shared by every kernel.

Plain ints: numba folds module-level ints into the compiled code as constants.
"""

WHITE, BLACK = 0, 1

PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(6)

# A piece is colour * 6 + piece type; EMPTY marks an empty mailbox square.
W_PAWN, W_KNIGHT, W_BISHOP, W_ROOK, W_QUEEN, W_KING = range(6)
B_PAWN, B_KNIGHT, B_BISHOP, B_ROOK, B_QUEEN, B_KING = range(6, 12)
EMPTY = 12

# Extra slots of the bitboard array after the twelve piece boards.
OCC_WHITE, OCC_BLACK, OCC_ALL = 12, 13, 14
N_BITBOARDS = 16

# Squares, little-endian rank-file (a1 = 0, h8 = 63), as python-chess numbers them.
A1, B1, C1, D1, E1, F1, G1, H1 = range(8)
A8, B8, C8, D8, E8, F8, G8, H8 = range(56, 64)
NO_SQUARE = 64

# Castling right bits.
CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ = 1, 2, 4, 8

# A position is two arrays (see wasp.position.State):
#   bb: uint64, the 16 bitboards, then the Zobrist key of every position of the history;
#   st: int64, the ST_* scalars, the mailbox, then the undo stack (N_UNDO per move made).
ST_SIDE = 0  # side to move
ST_CASTLE = 1  # castling right bits
ST_EP = 2  # en-passant square, NO_SQUARE when no pawn can capture there
ST_HALFMOVE = 3  # plies since the last capture or pawn move
ST_FULLMOVE = 4  # FEN fullmove number
ST_PLY = 5  # moves made since the history began: index into keys and undo
ST_CHESS960 = 6  # 1 when castling is written king-takes-rook (Chess960); kernels ignore it
N_STATE = 8
MAILBOX = N_STATE  # st[MAILBOX + sq]: the piece on sq, or EMPTY
KEYS = N_BITBOARDS  # bb[KEYS + ply]: key of the position after `ply` moves

# Columns of an undo record (one per move made), at st[UNDO + ply * N_UNDO + column].
UNDO_MOVE, UNDO_CAPTURED, UNDO_CASTLE, UNDO_EP, UNDO_HALFMOVE = range(5)
N_UNDO = 5
UNDO = MAILBOX + 64

# History length: a game plus a search path. Python code compacts the history
# when a game grows past HISTORY_KEEP plies (positions before the last capture
# or pawn move can never repeat).
MAX_HISTORY = 2048
HISTORY_KEEP = 1024
MAX_MOVES = 256  # legal moves in any position fit (the record is 218)
MAX_PLY = 128  # deepest search path
MATE = 32000  # the score of mate at the root; mate in n plies scores MATE - n
MATE_BOUND = MATE - 2 * MAX_PLY  # |score| beyond this is a mate in some number of plies

# The castling table, after the undo stack: st[CASTLING + sq] holds the castling rights that
# survive a move from or to sq; st[CASTLING + 64 + i] the square of the rook of right i
# (0 white king side, 1 white queen side, 2 black king side, 3 black queen side, as the
# CASTLE_* bits). Fixed for a game; Chess960 starts fill it with their own squares.
CASTLING = UNDO + MAX_HISTORY * N_UNDO
CASTLING_ROOK = CASTLING + 64
N_ST = CASTLING_ROOK + 4

# Move encoding (int): from | to << 6 | promotion piece type << 12 | flag bits.
MOVE_NONE = 0
MOVE_FROM_MASK = 0x3F
MOVE_TO_SHIFT = 6
MOVE_PROMO_SHIFT = 12
MOVE_PROMO_MASK = 0x7
FLAG_EP = 1 << 15
FLAG_CASTLE = 1 << 16
FLAG_DOUBLE_PUSH = 1 << 17

# Move generation modes: NOISY (captures and promotions) and QUIET partition ALL.
GEN_ALL, GEN_NOISY, GEN_QUIET = 0, 1, 2

PIECE_CHARS = "PNBRQKpnbrqk"
FILE_NAMES = "abcdefgh"
RANK_NAMES = "12345678"


def square_name(sq: int) -> str:
    return FILE_NAMES[sq & 7] + RANK_NAMES[sq >> 3]


def parse_square(name: str) -> int:
    if len(name) != 2 or name[0] not in FILE_NAMES or name[1] not in RANK_NAMES:
        raise ValueError(f"not a square: {name!r}")
    return FILE_NAMES.index(name[0]) + 8 * RANK_NAMES.index(name[1])

# The evaluation's `info` array: what the search needs besides the score
# (filled by every evaluate(T, S, W, E, info) kernel).
INFO_HUNG = 0  # material of the side to move that is hung (en prise), centipawns
INFO_PAWN_ENDING = 1  # 1 when the side to move has only king and pawns
INFO_MATE_THREAT = 2  # 1 when the opponent threatens mate
INFO_PROMO_THREAT = 3  # 1 when the opponent threatens to promote
N_INFO = 8
