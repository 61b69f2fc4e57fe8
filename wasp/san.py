"""Standard algebraic notation: reading moves as people type them, and writing SAN.

Reading accepts what OmegaZero's players type and more: `e4`, `Nxe4`, `Rdf8`, `R1a3`,
`Qh4e1`, `Qh4xe1`, `exd6e.p.`, `e8Q`, `e8=Q`, `exd8Q`, `O-O`/`0-0`, `O-O-O`/`0-0-0`,
check and annotation marks (`+ # ! ?`), and plain UCI (`e2e4`). A move that cannot be
read or is not legal raises IllegalMoveError saying why.
"""

import re

from wasp.board import IllegalMoveError, Position
from wasp.types import (
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    MAILBOX,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    square_name,
)

PIECE_LETTERS = " NBRQK"  # by piece type; pawns have none
PIECE_NAMES = ["pawn", "knight", "bishop", "rook", "queen", "king"]

_SAN = re.compile(
    r"^(?P<piece>[NBRQK])?(?P<file>[a-h])?(?P<rank>[1-8])?(?P<capture>[x:])?"
    r"(?P<to>[a-h][1-8])(?:=?(?P<promo>[NBRQnbrq]))?$"
)


def _fields(code):
    frm = code & MOVE_FROM_MASK
    to = (code >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    promo = (code >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    return frm, to, promo


def _piece_type(position, sq):
    p = int(position.S.st[MAILBOX + sq])
    return None if p == EMPTY else p % 6


def parse_san(position: Position, text: str) -> int:
    """The encoded legal move that `text` names; IllegalMoveError says why there is none."""
    if not isinstance(text, str) or not text.strip():
        raise IllegalMoveError("empty move")
    raw = text.strip()
    s = re.sub(r"\s*e\.?p\.?$", "", raw)  # en passant suffix: exd6e.p., exd6 ep
    s = s.rstrip("+#!?")
    legal = position.legal_move_codes()

    if s in ("O-O", "0-0", "O-O-O", "0-0-0", "o-o", "o-o-o"):
        long_side = s.count("-") == 2
        for code in legal:
            frm, to, _ = _fields(code)
            if code & FLAG_CASTLE and ((to & 7) == 2) == long_side:
                return code
        side = "queen" if long_side else "king"
        raise IllegalMoveError(f"{raw}: castling on the {side} side is not legal here")

    if re.fullmatch(r"[a-h][1-8][a-h][1-8][nbrqNBRQ]?", s):  # UCI
        try:
            return position.parse_uci(s.lower())
        except IllegalMoveError:
            pass

    m = _SAN.match(s)
    if not m:
        raise IllegalMoveError(f"{raw}: not a move (try e4, Nf3, exd5, O-O, e8=Q)")
    piece = PIECE_LETTERS.index(m["piece"]) if m["piece"] else 0
    to_sq = "abcdefgh".index(m["to"][0]) + 8 * (int(m["to"][1]) - 1)
    promo = " NBRQ".index(m["promo"].upper()) if m["promo"] else 0
    candidates = []
    for code in legal:
        frm, to, code_promo = _fields(code)
        if to != to_sq or _piece_type(position, frm) != piece:
            continue
        if code & FLAG_CASTLE and position.chess960:
            continue  # Chess960 castles only as O-O / O-O-O: Kg1 is the king's own step
        if m["file"] and "abcdefgh"[frm & 7] != m["file"]:
            continue
        if m["rank"] and str((frm >> 3) + 1) != m["rank"]:
            continue
        if code_promo != promo:
            continue
        candidates.append(code)
    if len(candidates) == 1:
        code = candidates[0]
        if m["capture"] and not is_capture(position, code):
            raise IllegalMoveError(f"{raw}: there is nothing to capture on {m['to']}")
        return code
    if len(candidates) > 1:
        options = ", ".join(to_san(position, c) for c in candidates)
        raise IllegalMoveError(f"{raw} is ambiguous: {options}")
    # Say why nothing matched.
    name = PIECE_NAMES[piece]
    if piece == 0 and promo == 0 and m["to"][1] in "18":
        raise IllegalMoveError(f"{raw}: a pawn reaching the last rank must promote (e.g. "
                               f"{m['to']}=Q)")
    if promo and piece != 0:
        raise IllegalMoveError(f"{raw}: only pawns promote")
    if position.is_check():
        raise IllegalMoveError(f"{raw}: illegal, your king is in check")
    reaching = [c for c in position.legal_move_codes()
                if _piece_type(position, _fields(c)[0]) == piece]
    if not reaching:
        raise IllegalMoveError(f"{raw}: no {name} of yours can move")
    raise IllegalMoveError(f"{raw}: no {name} of yours can move to {m['to']}"
                           + (" from there" if m["file"] or m["rank"] else ""))


def is_capture(position: Position, code: int) -> bool:
    _, to, _ = _fields(code)
    if code & FLAG_CASTLE:  # a Chess960 king may land on its own rook's square
        return False
    return bool(code & FLAG_EP) or int(position.S.st[MAILBOX + to]) != EMPTY


def to_san(position: Position, code: int) -> str:
    """SAN of a legal move, with + or # (as python-chess writes it)."""
    frm, to, promo = _fields(code)
    if code & FLAG_CASTLE:
        san = "O-O" if to & 7 == 6 else "O-O-O"
    else:
        piece = _piece_type(position, frm)
        capture = is_capture(position, code)
        if piece == 0:
            san = (square_name(frm)[0] + "x" if capture else "") + square_name(to)
            if promo:
                san += "=" + PIECE_LETTERS[promo]
        else:
            others = [c for c in position.legal_move_codes()
                      if c != code and _fields(c)[1] == to and not c & FLAG_CASTLE
                      and _piece_type(position, _fields(c)[0]) == piece]
            qualifier = ""
            if others:
                froms = [_fields(c)[0] for c in others]
                if all((f & 7) != (frm & 7) for f in froms):
                    qualifier = square_name(frm)[0]
                elif all((f >> 3) != (frm >> 3) for f in froms):
                    qualifier = square_name(frm)[1]
                else:
                    qualifier = square_name(frm)
            san = PIECE_LETTERS[piece] + qualifier + ("x" if capture else "") + square_name(to)
    position.push(code)
    try:
        if position.is_check():
            san += "#" if not position.legal_move_codes() else "+"
    finally:
        position.pop()
    return san


def line_to_san(position: Position, codes) -> list[str]:
    """SAN of a sequence of moves from `position` (left unchanged)."""
    out = []
    for code in codes:
        out.append(to_san(position, code))
        position.push(code)
    for _ in codes:
        position.pop()
    return out


def numbered(position: Position, sans) -> list[str]:
    """SAN moves from `position` with move numbers: ['12...', 'Nf6', '13.', 'e5']."""
    number, white = position.fullmove_number, position.turn == 0
    words = []
    for i, san in enumerate(sans):
        if white:
            words.append(f"{number}.")
        elif i == 0:
            words.append(f"{number}...")
        words.append(san)
        if not white:
            number += 1
        white = not white
    return words
