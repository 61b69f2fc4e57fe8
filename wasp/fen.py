"""FEN and EPD position text in and out, validated in Python before any kernel sees it."""

import numpy as np

from wasp.bitboards import T_PAWN
from wasp.position import State, compute_key, in_check, new_state
from wasp.types import (
    B_KING,
    B_PAWN,
    B_ROOK,
    BLACK,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    EMPTY,
    FLAG_EP,
    GEN_NOISY,
    KEYS,
    MAILBOX,
    MAX_MOVES,
    NO_SQUARE,
    OCC_ALL,
    OCC_WHITE,
    PIECE_CHARS,
    ST_CASTLE,
    ST_EP,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    W_KING,
    W_PAWN,
    W_ROOK,
    WHITE,
    parse_square,
    square_name,
)

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

_CASTLE_CHARS = {"K": CASTLE_WK, "Q": CASTLE_WQ, "k": CASTLE_BK, "q": CASTLE_BQ}
# For each right: the king's and the rook's home squares and pieces.
_CASTLE_HOMES = {
    "K": ((4, W_KING), (7, W_ROOK)),
    "Q": ((4, W_KING), (0, W_ROOK)),
    "k": ((60, B_KING), (63, B_ROOK)),
    "q": ((60, B_KING), (56, B_ROOK)),
}


def _bad(fen, why):
    return ValueError(f"invalid fen {fen!r}: {why}")


def parse_board(fen, placement):
    """The 64-square mailbox of a FEN's first field."""
    mailbox = np.full(64, EMPTY, dtype=np.int8)
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise _bad(fen, f"expected 8 ranks separated by '/', got {len(ranks)}")
    for i, rank_text in enumerate(ranks):
        rank = 7 - i
        file = 0
        previous_digit = False
        for ch in rank_text:
            if ch.isdigit():
                if previous_digit:
                    raise _bad(fen, f"two digits in a row in rank {rank + 1}")
                if ch not in "12345678":
                    raise _bad(fen, f"bad empty-square count {ch!r} in rank {rank + 1}")
                file += int(ch)
                previous_digit = True
            elif ch in PIECE_CHARS:
                if file >= 8:
                    raise _bad(fen, f"rank {rank + 1} has more than 8 squares")
                mailbox[rank * 8 + file] = PIECE_CHARS.index(ch)
                file += 1
                previous_digit = False
            else:
                raise _bad(fen, f"unexpected character {ch!r} in rank {rank + 1}")
        if file != 8:
            raise _bad(fen, f"rank {rank + 1} has {file} squares, expected 8")
    return mailbox


def parse_fen(fen, T):
    """A validated `State` from a FEN (6 fields) or an EPD position (the first 4 fields).

    Raises ValueError saying what is wrong.
    """
    if not isinstance(fen, str):
        raise ValueError(f"invalid fen {fen!r}: not a string")
    fields = fen.split()
    if len(fields) < 4 or len(fields) > 6:
        raise _bad(fen, f"expected 4 to 6 fields, got {len(fields)}")
    placement, side, castling, ep = fields[:4]
    mailbox = parse_board(fen, placement)

    counts = np.bincount(mailbox.astype(np.int64), minlength=13)
    if counts[W_KING] != 1:
        raise _bad(fen, f"white must have exactly one king, has {counts[W_KING]}")
    if counts[B_KING] != 1:
        raise _bad(fen, f"black must have exactly one king, has {counts[B_KING]}")
    back_ranks = np.concatenate([mailbox[:8], mailbox[56:]])
    if np.any((back_ranks == W_PAWN) | (back_ranks == B_PAWN)):
        raise _bad(fen, "pawns on the first or last rank")

    if side not in ("w", "b"):
        raise _bad(fen, f"side to move must be 'w' or 'b', got {side!r}")
    us = WHITE if side == "w" else BLACK

    rights = 0
    if castling != "-":
        for ch in castling:
            if ch not in _CASTLE_CHARS:
                raise _bad(fen, f"bad castling field {castling!r}")
            if rights & _CASTLE_CHARS[ch]:
                raise _bad(fen, f"castling right {ch!r} given twice")
            for sq, piece in _CASTLE_HOMES[ch]:
                if mailbox[sq] != piece:
                    raise _bad(fen, f"castling right {ch!r} but no {PIECE_CHARS[piece]} on "
                                    f"{square_name(sq)}")
            rights |= _CASTLE_CHARS[ch]

    ep_square = NO_SQUARE
    if ep != "-":
        try:
            ep_square = parse_square(ep)
        except ValueError:
            raise _bad(fen, f"bad en-passant square {ep!r}") from None
        want_rank = 5 if us == WHITE else 2
        if ep_square >> 3 != want_rank:
            raise _bad(fen, f"en-passant square {ep} is not on rank {want_rank + 1}")
        pusher_sq = ep_square - 8 if us == WHITE else ep_square + 8
        origin_sq = ep_square + 8 if us == WHITE else ep_square - 8
        pusher = B_PAWN if us == WHITE else W_PAWN
        if mailbox[pusher_sq] != pusher:
            raise _bad(fen, f"en-passant square {ep} but no pawn on {square_name(pusher_sq)}")
        if mailbox[ep_square] != EMPTY or mailbox[origin_sq] != EMPTY:
            raise _bad(fen, f"en-passant square {ep} but the pawn did not just pass it")

    halfmove, fullmove = 0, 1
    if len(fields) >= 5:
        try:
            halfmove = int(fields[4])
        except ValueError:
            raise _bad(fen, f"halfmove clock {fields[4]!r} is not a number") from None
        if halfmove < 0:
            raise _bad(fen, "halfmove clock is negative")
    if len(fields) == 6:
        try:
            fullmove = int(fields[5])
        except ValueError:
            raise _bad(fen, f"fullmove number {fields[5]!r} is not a number") from None
        if fullmove < 0:
            raise _bad(fen, "fullmove number is negative")
        fullmove = max(fullmove, 1)

    S = new_state()
    S.st[MAILBOX:MAILBOX + 64] = mailbox
    for sq in range(64):
        p = int(mailbox[sq])
        if p != EMPTY:
            b = np.uint64(1) << np.uint64(sq)
            S.bb[p] |= b
            S.bb[OCC_WHITE + p // 6] |= b
            S.bb[OCC_ALL] |= b
    S.st[ST_SIDE] = us
    S.st[ST_CASTLE] = rights
    S.st[ST_HALFMOVE] = halfmove
    S.st[ST_FULLMOVE] = fullmove
    S.st[ST_PLY] = 0
    # Keep the en-passant square only where a pawn could take (Polyglot hashes it then).
    if ep_square != NO_SQUARE:
        takers = T[T_PAWN + 64 * (1 - us) + ep_square] & S.bb[6 * us + W_PAWN]
        if takers:
            S.st[ST_EP] = ep_square

    # The side that just moved must not be in check.
    S.st[ST_SIDE] = 1 - us
    if in_check(T, S):
        raise _bad(fen, "the side not to move is in check")
    S.st[ST_SIDE] = us
    S.bb[KEYS] = compute_key(T, S)
    return S


def board_fen(S):
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            p = int(S.st[MAILBOX + rank * 8 + file])
            if p == EMPTY:
                empty += 1
            else:
                if empty:
                    row += str(empty)
                    empty = 0
                row += PIECE_CHARS[p]
        if empty:
            row += str(empty)
        rows.append(row)
    return "/".join(rows)


def legal_ep_square(T, S):
    """The en-passant square when a legal en-passant capture exists, else None."""
    from wasp.movegen import generate

    if S.st[ST_EP] == NO_SQUARE:
        return None
    moves = np.zeros(MAX_MOVES, dtype=np.int32)
    n = generate(T, S, moves, GEN_NOISY, True)
    for m in moves[:n]:
        if int(m) & FLAG_EP:
            return int(S.st[ST_EP])
    return None


def to_fen(S, T, epd=False):
    """FEN of a State; the en-passant square is written only when a legal capture exists
    (python-chess's default). With epd=True, the first four fields only."""
    side = "w" if S.st[ST_SIDE] == WHITE else "b"
    rights = int(S.st[ST_CASTLE])
    castling = "".join(c for c, bit in _CASTLE_CHARS.items() if rights & bit) or "-"
    ep_sq = legal_ep_square(T, S)
    ep = square_name(ep_sq) if ep_sq is not None else "-"
    fields = [board_fen(S), side, castling, ep]
    if not epd:
        fields += [str(int(S.st[ST_HALFMOVE])), str(int(S.st[ST_FULLMOVE]))]
    return " ".join(fields)


__all__ = ["STARTING_FEN", "State", "parse_fen", "to_fen", "board_fen"]
