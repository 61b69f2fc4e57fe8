"""FEN and EPD position text in and out, validated in Python before any kernel sees it."""

import numpy as np

from wasp.bitboards import T_PAWN
from wasp.position import (
    STANDARD_KINGS,
    STANDARD_ROOKS,
    State,
    compute_key,
    in_check,
    new_state,
    set_castling,
)
from wasp.types import (
    B_KING,
    B_PAWN,
    B_ROOK,
    BLACK,
    CASTLE_BK,
    CASTLE_BQ,
    CASTLE_WK,
    CASTLE_WQ,
    CASTLING_ROOK,
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
    ST_CHESS960,
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
_CASTLE_BITS = (CASTLE_WK, CASTLE_WQ, CASTLE_BK, CASTLE_BQ)


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


def parse_castling(fen, castling, mailbox):
    """(rights, king squares, rook squares of the four rights, whether a file was named) of a
    castling field in any of its forms: standard "KQkq", X-FEN (K/Q the outermost rook on
    that side of the king, a file letter an inner one) and Shredder-FEN (rook files, "HAha").
    """
    rights = 0
    kings = [int(np.flatnonzero(mailbox == W_KING)[0]), int(np.flatnonzero(mailbox == B_KING)[0])]
    rooks = [NO_SQUARE] * 4
    named_file = False
    if castling == "-":
        return rights, kings, rooks, named_file
    for ch in castling:
        lower = ch.lower()
        if lower not in "kqabcdefgh":
            raise _bad(fen, f"bad castling field {castling!r}")
        color = WHITE if ch.isupper() else BLACK
        rank = 0 if color == WHITE else 56
        king = kings[color]
        rook_piece = W_ROOK if color == WHITE else B_ROOK
        if king - rank not in range(8):
            name = "white" if color == WHITE else "black"
            raise _bad(fen, f"castling right {ch!r} but the {name} king is not on its back rank")
        own = [rank + f for f in range(8) if mailbox[rank + f] == rook_piece]
        if lower == "k":
            found = [sq for sq in own if sq > king]
            rook = found[-1] if found else None
        elif lower == "q":
            found = [sq for sq in own if sq < king]
            rook = found[0] if found else None
        else:
            named_file = True
            rook = rank + "abcdefgh".index(lower)
            if rook not in own or rook == king:
                rook = None
        if rook is None:
            where = {"k": "on the king's h side", "q": "on the king's a side"}.get(
                lower, f"on {lower}{1 if color == WHITE else 8}")
            raise _bad(fen, f"castling right {ch!r} but no {PIECE_CHARS[rook_piece]} {where}")
        right = 2 * color + (0 if rook > king else 1)
        if rights & _CASTLE_BITS[right]:
            raise _bad(fen, f"castling right {ch!r} given twice")
        rights |= _CASTLE_BITS[right]
        rooks[right] = rook
    return rights, kings, rooks, named_file


def is_standard_castling(kings, rooks):
    """True when every castling right has its king and rook on standard chess's squares."""
    return all(rook == NO_SQUARE or (rook == std and kings[i // 2] == STANDARD_KINGS[i // 2])
               for i, (rook, std) in enumerate(zip(rooks, STANDARD_ROOKS, strict=True)))


def parse_fen(fen, T, chess960=False):
    """A validated `State` from a FEN (6 fields) or an EPD position (the first 4 fields).

    The castling field may be standard, X-FEN or Shredder-FEN. The state is marked Chess960
    (castling written king-takes-rook) when `chess960` asks for it, when the field names a
    file, or when a castling king or rook stands off standard chess's squares.
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

    rights, kings, rooks, named_file = parse_castling(fen, castling, mailbox)

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
    if rights:
        set_castling(S.st, tuple(kings), tuple(rooks))
    S.st[ST_CHESS960] = int(chess960 or named_file or not is_standard_castling(kings, rooks))
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


# board_fen's byte table: a piece's letter, an empty square "1"; then runs of 1s become digits
_SQUARE_CHARS = bytes(PIECE_CHARS.encode()[p] if p < len(PIECE_CHARS) else
                      ord("1") if p == EMPTY else ord("?") for p in range(256))
_EMPTY_RUNS = [(b"1" * k, str(k).encode()) for k in range(8, 1, -1)]


def board_fen(S):
    """The FEN's first field: ranks 8 to 1, runs of empty squares as digits."""
    squares = S.st[MAILBOX:MAILBOX + 64].astype(np.uint8).tobytes().translate(_SQUARE_CHARS)
    text = b"/".join(squares[8 * rank:8 * rank + 8] for rank in range(7, -1, -1))
    for run, digit in _EMPTY_RUNS:  # longest first: each run is whole when it is replaced
        text = text.replace(run, digit)
    return text.decode()


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


def castling_field(S, shredder=False):
    """The castling field: X-FEN (standard "KQkq" in standard chess; a rook's file only where
    another rook stands outside it on the same side), or Shredder-FEN's files."""
    rights = int(S.st[ST_CASTLE])
    out = []
    for right, bit in enumerate(_CASTLE_BITS):
        if not rights & bit:
            continue
        color, a_side = divmod(right, 2)
        rook = int(S.st[CASTLING_ROOK + right])
        rank = 56 * color
        rook_piece = W_ROOK if color == WHITE else B_ROOK
        outer = range(rank, rook) if a_side else range(rook + 1, rank + 8)
        if shredder or any(S.st[MAILBOX + sq] == rook_piece for sq in outer):
            ch = "abcdefgh"[rook & 7]
        else:
            ch = "q" if a_side else "k"
        out.append(ch.upper() if color == WHITE else ch)
    return "".join(out) or "-"


def to_fen(S, T, epd=False, shredder=False):
    """FEN of a State; the en-passant square is written only when a legal capture exists
    (python-chess's default). With epd=True, the first four fields only; castling in X-FEN
    (as python-chess writes it) unless `shredder` asks for Shredder-FEN."""
    side = "w" if S.st[ST_SIDE] == WHITE else "b"
    castling = castling_field(S, shredder)
    ep_sq = legal_ep_square(T, S)
    ep = square_name(ep_sq) if ep_sq is not None else "-"
    fields = [board_fen(S), side, castling, ep]
    if not epd:
        fields += [str(int(S.st[ST_HALFMOVE])), str(int(S.st[ST_FULLMOVE]))]
    return " ".join(fields)


__all__ = ["STARTING_FEN", "State", "parse_fen", "to_fen", "board_fen", "castling_field"]
