"""One labelled position of self-play data, as every data format here reads and writes it.

A `Record` holds what bullet's text line holds (FEN, score, result: both from White's view) and
what the datagen run keeps beside it (the move played, the ply, the game id); formats that
lack a field leave it None.
"""

from dataclasses import dataclass

SCORE_MIN, SCORE_MAX = -32768, 32767  # i16: bullet's score field
MATE_SCORE = 32000  # a mate, either distance, is written as +/- this
RESULT_TEXT = {1.0: "1.0", 0.5: "0.5", 0.0: "0.0"}
RESULT_PGN = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}


@dataclass(slots=True)
class Record:
    """A position with White's score (cp, i16) and White's result (1.0, 0.5, 0.0)."""

    fen: str
    score: int
    result: float
    move: str | None = None  # the move played from it (UCI), when the format keeps it
    ply: int | None = None  # half-moves since the game's start (from the FEN's move number)
    game: int | None = None  # the game's index in its run

    @property
    def white_to_move(self) -> bool:
        return self.fen.split(" ", 2)[1] == "w"

    @property
    def is_mate_score(self) -> bool:
        return abs(self.score) >= MATE_SCORE


def check_score(score: int) -> int:
    """`score` when it fits bullet's i16 field; ValueError otherwise."""
    if not SCORE_MIN <= score <= SCORE_MAX:
        raise ValueError(f"score {score} outside i16's range")
    return score


def fen_ply(fen: str) -> int:
    """Half-moves played before `fen`, from its full-move number and side to move."""
    parts = fen.split()
    full = int(parts[5]) if len(parts) >= 6 else 1
    return 2 * (max(full, 1) - 1) + (1 if parts[1] == "b" else 0)
