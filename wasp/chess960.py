"""Chess960 start positions by their standard (Scharnagl) number 0..959, and DFRC pairs.

Position 518 is the standard start. The numbering is the one python-chess's
`chess.Board.from_chess960_pos` and the Chess960 literature use, so books built from it
name the same positions everywhere.
"""

N_POSITIONS = 960
STANDARD = 518

# Knight placements on the five squares left after the bishops and the queen (Scharnagl's table).
_KNIGHTS = ((0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4))


def back_rank(n: int) -> str:
    """White's back rank of position `n`, files a..h, e.g. back_rank(518) == "RNBQKBNR"."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < N_POSITIONS:
        raise ValueError(f"chess960 position number must be 0..959, got {n!r}")
    rank = [""] * 8
    n, light = divmod(n, 4)
    rank[2 * light + 1] = "B"
    n, dark = divmod(n, 4)
    rank[2 * dark] = "B"
    n, queen = divmod(n, 6)
    free = [f for f in range(8) if not rank[f]]
    rank[free[queen]] = "Q"
    free = [f for f in range(8) if not rank[f]]
    for i in _KNIGHTS[n]:
        rank[free[i]] = "N"
    for f, piece in zip((f for f in range(8) if not rank[f]), "RKR", strict=True):
        rank[f] = piece
    return "".join(rank)


def index_of(rank: str) -> int:
    """The number of a back rank (white's pieces, files a..h); ValueError if it is no 960 start."""
    table = _table()
    key = rank.upper()
    if key not in table:
        raise ValueError(f"not a chess960 back rank: {rank!r}")
    return table[key]


_TABLE: dict = {}


def _table():
    if not _TABLE:
        _TABLE.update((back_rank(n), n) for n in range(N_POSITIONS))
    return _TABLE


def _castling(white: str, black: str, shredder: bool) -> str:
    if not shredder:
        return "KQkq"  # two rooks a side: each is the outermost on its side of the king
    def files(rank):
        rooks = [f for f in range(8) if rank[f] == "R"]
        return "abcdefgh"[rooks[1]] + "abcdefgh"[rooks[0]]
    return files(white).upper() + files(black)


def dfrc_fen(white: int, black: int, shredder: bool = False) -> str:
    """FEN of the double-Fischer-random start with white's rank `white` and black's rank `black`.

    The castling field is X-FEN ("KQkq") unless `shredder` asks for Shredder-FEN ("HAha")."""
    w, b = back_rank(white), back_rank(black)
    return f"{b.lower()}/pppppppp/8/8/8/8/PPPPPPPP/{w} w {_castling(w, b, shredder)} - 0 1"


def start_fen(n: int, shredder: bool = False) -> str:
    """FEN of Chess960 start position `n` (both sides the same)."""
    return dfrc_fen(n, n, shredder)
