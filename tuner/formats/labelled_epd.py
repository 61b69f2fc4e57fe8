"""Labelled EPD records for `wasp-tune data convert`: reader and writer.

A line is the project's labelled EPD (the Texel tuner's, `tuner.texel.positions`) with the score and
move counters as EPD opcodes: ``FEN4 hmvc H; fmvn F; ce S; c9 "1-0";``. ``ce`` is EPD's
centipawn evaluation, from the side to move's view; ``c9`` is the game's result.
"""

from wasp.epd import numbered_lines, parse_line

from .records import RESULT_PGN, Record, check_score


class EpdFormatError(ValueError):
    """A line that is not a labelled EPD record with a score: names the file and line."""


def format_epd(r: Record) -> str:
    fields = r.fen.split()
    half = fields[4] if len(fields) >= 6 else "0"
    full = fields[5] if len(fields) >= 6 else "1"
    ce = r.score if fields[1] == "w" else -r.score
    return (f"{' '.join(fields[:4])} hmvc {half}; fmvn {full}; ce {ce}; "
            f"c9 \"{RESULT_PGN[r.result]}\";\n")


def parse_epd(line: str) -> Record:
    """The Record of one line; ValueError says what is missing."""
    epd = parse_line(line)
    if epd is None or epd.fields[1] not in ("w", "b"):
        raise ValueError("not an EPD line")
    result = epd.result()
    if result is None:
        raise ValueError('no result (c9 "1-0";)')
    ops = {}
    for name, operand in epd.operations().items():
        if name in ("ce", "hmvc", "fmvn"):
            try:
                ops[name] = int(operand)
            except ValueError:
                pass
    if "ce" not in ops:
        raise ValueError("no score (ce N;)")
    white = epd.fields[1] == "w"
    fen = f"{epd.position} {ops.get('hmvc', 0)} {ops.get('fmvn', 1)}"
    return Record(fen, check_score(ops["ce"] if white else -ops["ce"]), result)


def read_epd(path):
    """The records of a labelled EPD file, in order (blank and '#' lines skipped)."""
    for n, line in numbered_lines(path):
        try:
            yield parse_epd(line)
        except ValueError as e:
            raise EpdFormatError(f"{path}:{n}: {e}") from None


class EpdWriter:
    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8")

    def write(self, r: Record) -> None:
        self.f.write(format_epd(r))

    def close(self) -> None:
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
