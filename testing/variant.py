"""The run's chess variant: standard chess or Chess960 (fastchess's ``-variant fischerandom``).

One flag decides how the runner reads books, checks moves (python-chess, ``chess960=True``:
castling is king-takes-rook, ``e1h1``), talks to engines and writes PGN.
"""

from __future__ import annotations

import chess
import chess.pgn

STANDARD = "standard"
FISCHERANDOM = "fischerandom"
VARIANTS = (STANDARD, FISCHERANDOM)


class VariantError(ValueError):
    """A book position or an engine that does not fit the run's variant."""


def is_chess960(variant: str) -> bool:
    return variant == FISCHERANDOM


def board(fen: str | None, chess960: bool) -> chess.Board:
    """The board of a FEN (X-FEN or Shredder-FEN castling fields) or of the standard start."""
    return chess.Board(fen or chess.STARTING_FEN, chess960=chess960)


def _standard_castling(fen: str) -> bool:
    """Whether every castling right of `fen` is one of KQkq with its king and rook on their
    standard squares (read from the placement text alone)."""
    fields = fen.split()
    if len(fields) < 3:
        return False
    rights = fields[2]
    if rights == "-":
        return True
    ranks = fields[0].split("/")
    if len(ranks) != 8 or set(rights) - set("KQkq"):
        return False

    def expand(rank: str) -> str:
        return "".join("." * int(c) if c.isdigit() else c for c in rank)

    first, last = expand(ranks[7]), expand(ranks[0])
    if len(first) != 8 or len(last) != 8:
        return False
    need = {"K": (first, "K", "R", 7), "Q": (first, "K", "R", 0), "k": (last, "k", "r", 7),
            "q": (last, "k", "r", 0)}
    for right in rights:
        rank, king, rook, corner = need[right]
        if rank[4] != king or rank[corner] != rook:
            return False
    return True


def needs_chess960(fen: str) -> bool:
    """Whether the castling rights of `fen` only make sense in Chess960: a right names a
    rook file, or its king or rook stands off the standard squares, so that standard chess
    would drop it."""
    if _standard_castling(fen):  # most books' lines: no boards to build
        return False
    b960 = chess.Board(fen, chess960=True)
    std = chess.Board(fen)
    return b960.clean_castling_rights() != std.clean_castling_rights()


def check_standard(fen: str) -> None:
    """VariantError when `fen` is a Chess960 position and the run plays standard chess."""
    if needs_chess960(fen):
        field = fen.split()[2] if len(fen.split()) > 2 else "-"
        raise VariantError(f"castling rights {field!r} only make sense in Chess960 "
                           f"(a 960 or DFRC book?): give -variant fischerandom")


def pgn_is_chess960(tag: str | None) -> bool:
    """Whether a PGN `Variant` tag names Chess960; VariantError for any other variant."""
    if tag is None or tag.strip().lower() in ("", "standard", "chess", "normal"):
        return False
    if chess.pgn.Headers(Variant=tag.strip()).is_chess960():  # the tags python-chess knows
        return True
    raise VariantError(f"variant {tag!r} is not played by the runner (standard or Chess960)")
