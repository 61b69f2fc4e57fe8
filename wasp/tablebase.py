"""Syzygy endgame tablebases for the engine: the tables of `SyzygyPath` and root probing.

At the root of a position the tables cover, every legal move is ranked by DTZ as Stockfish's
`Tablebases::root_probe` ranks it (WDL alone when the DTZ tables are missing, as its
`root_probe_wdl`), and only the moves of the best rank are searched: a won position stays won
and is converted before the 50-move rule can draw it (every kept win reaches a zeroing move
with the 50-move counter below 100), a drawn one stays drawn. The search itself does not probe
(see README, "Endgame tablebases", for the measurement). Probing is python-chess's
`chess.syzygy`; the tables' files are opened on the first probe, so setting the path is cheap.
"""

import os
from dataclasses import dataclass, field

MAX_DTZ = 1 << 18  # ranks: Stockfish's scale (a win ranks MAX_DTZ, a 50-move-draw-bound one less)
TB_WIN = 20000  # centipawns: a tablebase win as reported (Stockfish's "cp 20000"); mates beyond
PAWN = 100
# WDL (side to move) -> DTZ of a zeroing move into it (Stockfish's dtz_before_zeroing)
_ZEROING_DTZ = {2: 1, 1: 101, 0: 0, -1: -101, -2: -1}
# WDL (side to move) -> rank when only WDL tables are there (Stockfish's WDL_to_rank)
_WDL_RANK = {-2: -MAX_DTZ, -1: -MAX_DTZ + 101, 0: 0, 1: MAX_DTZ - 101, 2: MAX_DTZ}
_WDL_SCORE = {-2: -TB_WIN, -1: -2, 0: 0, 1: 2, 2: TB_WIN}


def split_paths(paths: str) -> list[str]:
    """`SyzygyPath`'s directories: ':'-separated (';' on Windows), empty parts ignored."""
    return [p for p in str(paths).split(os.pathsep) if p.strip()]


def table_pieces(name: str) -> int:
    """Pieces of a table named like `KRvKP`."""
    return len(name) - 1


def open_tables(paths: str, dtz: bool = True):
    """(a chess.syzygy.Tablebase of every directory of `paths`, the table files found, the most
    pieces a table has): the one reader of a Syzygy path, for the engine's SyzygyPath and the
    tools' -tb (which need no DTZ: `dtz=False`). The files open at the first probe. ValueError
    naming a directory that is missing or holds no table (no WDL table with `dtz=False`)."""
    import chess.syzygy

    dirs = split_paths(paths)
    if not dirs:
        raise ValueError("no directory given")
    for d in dirs:
        if not os.path.isdir(d):
            raise ValueError(f"{d}: {'not a' if os.path.exists(d) else 'no such'} directory")
    tables = chess.syzygy.Tablebase()
    files = 0
    for d in dirs:
        found = tables.add_directory(d, load_dtz=dtz)
        if found == 0:
            tables.close()
            raise ValueError(f"{d}: no Syzygy " + ("tables (.rtbw/.rtbz files)" if dtz else
                                                   "WDL tables (.rtbw files)") + " in it")
        files += found
    return tables, files, max(table_pieces(n) for n in (*tables.wdl, *tables.dtz))


@dataclass
class RootProbe:
    """The root moves the tables allow, with their ranks and the scores to report."""

    moves: list[str]  # the moves of the best rank, in the order given
    ranks: dict[str, int]  # every probed move -> rank (higher is better)
    scores: dict[str, int]  # every probed move -> centipawns to report for it
    hits: int = 0  # table probes made (UCI `tbhits`)
    dtz: bool = True  # ranked by DTZ (False: WDL only, the DTZ tables are missing)
    notes: list[str] = field(default_factory=list)

    def score(self, move: str, searched: int, mate_bound: int) -> int:
        """The score to report for `move`: a mate the search found, else the tables'."""
        if abs(searched) >= mate_bound or move not in self.scores:
            return searched
        return self.scores[move]


class Tablebases:
    """The Syzygy tables in some directories.

    >>> tb = Tablebases("/syzygy/3-4-5:/syzygy/6")  # ValueError when a path holds no table
    >>> tb.root_probe(position)  # a RootProbe, or None when the tables do not cover it
    """

    def __init__(self, paths: str):
        self.paths = paths
        # table files found (a WDL and a DTZ file a table in a full set)
        self.tables, self.files, self.largest = open_tables(paths)

    def __repr__(self):
        return f"<Tablebases {self.paths!r}: {self.files} files, up to {self.largest} pieces>"

    def close(self) -> None:
        self.tables.close()

    def covers(self, board, limit: int | None = None) -> bool:
        """Might the tables hold `board` (a chess.Board): few enough pieces, no castling?"""
        import chess

        pieces = chess.popcount(board.occupied)
        cap = self.largest if not limit else min(limit, self.largest)
        return pieces <= cap and not board.castling_rights

    def wdl(self, board) -> int | None:
        """WDL of `board` for the side to move (-2..2), or None when a table is missing."""
        import chess.syzygy

        try:
            return self.tables.probe_wdl(board)
        except (chess.syzygy.MissingTableError, KeyError):
            return None

    def root_probe(self, position, limit: int | None = None, rule50: bool = True,
                   candidates=None) -> RootProbe | None:
        """Rank the legal moves of `position` (a wasp.board.Position, whose history tells
        repetitions); None when the tables do not cover it. `candidates`: only these moves
        (UCI `searchmoves`). `rule50` False ranks cursed wins as wins (Syzygy50MoveRule)."""
        import chess

        board = chess.Board(position.fen())
        if not self.covers(board, limit):
            return None
        moves = [m for m in position.legal_moves() if not candidates or m in candidates]
        if not moves:
            return None
        probe = self._dtz_probe(board, position, moves, rule50)
        if probe is None:
            probe = self._wdl_probe(board, position, moves, rule50)
        return probe

    def _after(self, board, position, move):
        """(the board after `move`, does it draw by repetition or the 50-move rule?)"""
        after = board.copy(stack=False)
        after.push_uci(move)
        copy = position.copy()
        copy.push_uci(move)
        drawn = not after.is_checkmate() and (copy.is_repetition(3) or after.halfmove_clock >= 100)
        return after, drawn

    def _dtz_probe(self, board, position, moves, rule50) -> RootProbe | None:
        """Stockfish's root_probe: DTZ counted from the root, ranked within the 50-move rule."""
        import chess.syzygy

        cnt50 = board.halfmove_clock
        rep = position.has_repeated()  # not only the root: any position since the last zeroing
        ranks, scores, hits = {}, {}, 0
        bound = MAX_DTZ // 2 - 100 if rule50 else 1
        for move in moves:
            after, drawn = self._after(board, position, move)
            try:
                if after.halfmove_clock == 0:  # a zeroing move: one of -101/-1/0/1/101
                    dtz = _ZEROING_DTZ[-self.tables.probe_wdl(after)]
                elif drawn:
                    dtz = 0
                else:
                    d = -self.tables.probe_dtz(after)
                    dtz = d + 1 if d > 0 else d - 1 if d < 0 else 0
            except (chess.syzygy.MissingTableError, KeyError):
                return None
            hits += 1
            if after.is_checkmate():
                dtz = 1
            if dtz > 0:
                r = MAX_DTZ if dtz + cnt50 <= 99 and not rep else MAX_DTZ // 2 - (dtz + cnt50)
            elif dtz < 0:
                r = -MAX_DTZ if -dtz * 2 + cnt50 < 100 else -MAX_DTZ // 2 + (-dtz + cnt50)
            else:
                r = 0
            ranks[move] = r
            # A cursed win shows 3..49 cp, growing as the win comes within reach.
            if r >= bound:
                scores[move] = TB_WIN
            elif r > 0:
                scores[move] = max(3, r - (MAX_DTZ // 2 - 200)) * PAWN // 200
            elif r == 0:
                scores[move] = 0
            elif r > -bound:
                scores[move] = min(-3, r + (MAX_DTZ // 2 - 200)) * PAWN // 200
            else:
                scores[move] = -TB_WIN
        best = max(ranks.values())
        return RootProbe([m for m in moves if ranks[m] == best], ranks, scores, hits, True)

    def _wdl_probe(self, board, position, moves, rule50) -> RootProbe | None:
        """Stockfish's root_probe_wdl: the DTZ tables are missing, WDL ranks the moves."""
        ranks, scores, hits = {}, {}, 0
        for move in moves:
            after, drawn = self._after(board, position, move)
            if after.is_checkmate():
                wdl = 2
            elif drawn:
                wdl = 0
            else:
                w = self.wdl(after)
                if w is None:
                    return None
                wdl = -w
            hits += 1
            if not rule50:
                wdl = 2 if wdl > 0 else -2 if wdl < 0 else 0
            ranks[move], scores[move] = _WDL_RANK[wdl], _WDL_SCORE[wdl]
        best = max(ranks.values())
        return RootProbe([m for m in moves if ranks[m] == best], ranks, scores, hits, False)
