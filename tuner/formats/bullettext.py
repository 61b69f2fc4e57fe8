"""bullet's text data, ``FEN | score | result`` a line (score and result from White's view), and
the side record that keeps what those lines have no field for (``game ply move`` a line).

The side record of ``X.txt`` is ``X.moves``, line for line with it. bullet reads the lines with
bulletformat's `ChessBoard::from_str`: the score an integer in i16's range, the result
``1.0``, ``0.5`` or ``0.0``.
"""

import os

from .records import RESULT_TEXT, Record, check_score

# the result spellings read (also in [ ]), as `tuner.formats.bfkernels`' kernel reads them
RESULTS = {"1.0": 1.0, "0.5": 0.5, "0.0": 0.0, "1": 1.0, "0": 0.0, "1/2": 0.5, "1-0": 1.0,
           "0-1": 0.0, "1/2-1/2": 0.5}


class TextFormatError(ValueError):
    """A line that is not ``FEN | score | result``: the message names the file and line."""


def side_path(path) -> str:
    """The side record beside a text file: ``X.txt`` -> ``X.moves``."""
    root, _ = os.path.splitext(str(path))
    return root + ".moves"


def format_line(r: Record) -> str:
    return f"{r.fen} | {r.score} | {RESULT_TEXT[r.result]}\n"


def format_side(r: Record) -> str:
    return f"{r.game} {r.ply} {r.move}\n"


def parse_line(line: str) -> tuple[str, int, float]:
    """(FEN, score, result) of one text line; ValueError says what is wrong."""
    parts = line.split("|")
    if len(parts) != 3:
        raise ValueError("not 'FEN | score | result'")
    fen = parts[0].strip()
    if len(fen.split()) < 2:
        raise ValueError(f"bad FEN {fen!r}")
    try:
        score = int(parts[1])
    except ValueError:
        raise ValueError(f"bad score {parts[1].strip()!r}") from None
    word = parts[2].strip()
    result = RESULTS.get(word[1:-1] if word[:1] == "[" and word[-1:] == "]" else word)
    if result is None:
        raise ValueError(f"bad result {parts[2].strip()!r}")
    return fen, check_score(score), result


def parse_side(line: str) -> tuple[int, int, str]:
    game, ply, move = line.split()
    return int(game), int(ply), move


def read_text(path, side: bool = True):
    """Records of a text file (blank lines and '#' comments skipped), with move, ply and game
    from its side record when there is one (and `side`). TextFormatError names the file and
    line of a bad one."""
    sp = side_path(path)
    sf = open(sp, encoding="utf-8") if side and os.path.exists(sp) else None
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                try:
                    fen, score, result = parse_line(line)
                    r = Record(fen, score, result)
                    if sf is not None:
                        s = sf.readline()
                        if not s:
                            raise ValueError(f"{sp} ends before this line")
                        r.game, r.ply, r.move = parse_side(s)
                except ValueError as e:
                    raise TextFormatError(f"{path}:{n}: {e}") from None
                yield r
    finally:
        if sf is not None:
            sf.close()


class TextWriter:
    """Writes records as text lines, and their side record when `side` (records that have
    no move then write none)."""

    def __init__(self, path, side: bool = True):
        self.f = open(path, "w", encoding="utf-8")
        self.sf = None
        self.side_path = side_path(path) if side else None

    def write(self, r: Record) -> None:
        self.f.write(format_line(r))
        if self.side_path and r.move is not None:
            if self.sf is None:
                self.sf = open(self.side_path, "w", encoding="utf-8")
            self.sf.write(format_side(r))

    def close(self) -> None:
        self.f.close()
        if self.sf is not None:
            self.sf.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
