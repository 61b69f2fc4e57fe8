"""PGN text of a game played with the engine (terminal play, the browser board)."""

from wasp.board import Position
from wasp.fen import STARTING_FEN
from wasp.san import numbered


def pgn_text(start_fen: str, sans: list[str], headers: dict) -> str:
    """A PGN game from SAN moves (headers in the order given: the Seven Tag Roster first)."""
    lines = [f'[{k} "{v}"]' for k, v in headers.items()]
    start = Position(start_fen)
    if start.chess960:
        lines.append('[Variant "Chess960"]')
    if start_fen != STARTING_FEN:
        lines += ['[SetUp "1"]', f'[FEN "{start_fen}"]']
    words = numbered(start, sans) + [headers["Result"]]
    text, line = [], ""
    for w in words:  # wrap at 80 columns
        if len(line) + len(w) + 1 > 80:
            text.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    text.append(line)
    return "\n".join(lines) + "\n\n" + "\n".join(text) + "\n"
