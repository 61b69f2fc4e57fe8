"""EPD lines, read in one place for every tool: a position's four FEN fields, the move counters
of a 6-field FEN, and the operations after them (``opcode operand ...;``).

Tolerant of what real files hold: CRLF line ends, TABs, `#` comment lines, a missing `;` before
a known opcode (``bm Nf3 id "WAC.001"``). Labelled sets' results (``c9 "1-0";``, ``[1.0]`` or a
trailing ``1-0``) are read by `EpdLine.result`, as the tuners write and read them.
"""

import re
from dataclasses import dataclass

# The opcodes of the EPD standard and the common suites (perft's D1..D99 included): a word
# that starts a new operation even where a `;` is missing before it; a comment opcode (c0..c9,
# spelled as a square is) only when a quoted string follows it.
OPCODES = ("bm", "am", "id", "ce", "pv", "pm", "dm", "acd", "acn", "acs", "sm", "hmvc", "fmvn")
_OPCODE = re.compile(r"[ \t]+(?=(?:(?:" + "|".join(OPCODES) + r"|D\d+)[ \t]|c\d[ \t]+\"))")
_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_RE_C9 = re.compile(r'\bc9\s+"?(1-0|0-1|1/2-1/2)"?')
_RE_BRACKET = re.compile(r"\[\s*(1(?:\.0*)?|0(?:\.0*)?|0?\.50*)\s*\]")
_RE_TRAILING = re.compile(r'(?:^|\s)"?(1-0|0-1|1/2-1/2)"?\s*;?\s*$')


def result_in(text: str) -> float | None:
    """White's result (1, 0.5, 0) written in `text` (an EPD line's text after the FEN):
    ``c9 "1-0"``, ``[1.0]``/``[0.5]``/``[0.0]`` or a trailing ``1-0``; None when none is."""
    m = _RE_C9.search(text)
    if m:
        return _RESULTS[m.group(1)]
    m = _RE_BRACKET.search(text)
    if m:
        v = float(m.group(1))
        return v if v in (0.0, 0.5, 1.0) else None
    m = _RE_TRAILING.search(text)
    if m:
        return _RESULTS[m.group(1)]
    return None


def _split_operations(text: str) -> list[str]:
    """The operations of `text`: split at each `;` outside a quoted string, and before a known
    opcode where the `;` is missing."""
    parts, current, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    out = []
    for part in parts:
        out.extend(p.strip() for p in _OPCODE.split(part.strip()) if p.strip())
    return out


@dataclass(frozen=True)
class EpdLine:
    """One EPD line: `fields` the four FEN fields (placement, side, castling, en passant),
    `counters` a 6-field FEN's halfmove clock and move number (None when absent), `rest` the
    text after them."""

    fields: tuple
    counters: tuple | None
    rest: str

    @property
    def position(self) -> str:
        """The four FEN fields, space-separated."""
        return " ".join(self.fields)

    def operation_list(self) -> list:
        """(opcode, operand text) of each operation in the line's order; a quoted operand
        without its quotes."""
        ops = []
        for op in _split_operations(self.rest):
            code, _, operand = op.partition(" ")
            operand = operand.strip()
            if len(operand) >= 2 and operand[0] == operand[-1] == '"':
                operand = operand[1:-1]
            ops.append((code, operand))
        return ops

    def operations(self) -> dict:
        """Opcode -> operand text, the first of a repeated opcode winning."""
        ops = {}
        for code, operand in self.operation_list():
            ops.setdefault(code, operand)
        return ops

    def fen(self) -> str:
        """The full FEN: the move counters of the hmvc/fmvn operations, else the line's own,
        else ``0 1``."""
        ops = self.operations() if "hmvc" in self.rest or "fmvn" in self.rest else {}
        if "hmvc" in ops or "fmvn" in ops:
            clocks = f"{_int(ops.get('hmvc'), 0)} {_int(ops.get('fmvn'), 1)}"
        elif self.counters is not None:
            clocks = " ".join(self.counters)
        else:
            clocks = "0 1"
        return f"{self.position} {clocks}"

    def result(self) -> float | None:
        """White's result written on the line (`result_in`), or None."""
        return result_in(self.rest)


def _int(text, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


_FIELDS = re.compile(r"([^\s;]+)\s+([^\s;]+)\s+([^\s;]+)\s+([^\s;]+)\s*(.*)$")
_COUNTERS = re.compile(r"(\d+)\s+(\d+)(?:\s+(.*))?$")


def parse_line(line: str) -> EpdLine | None:
    """The `EpdLine` of one line; None for a blank or `#` comment line. ValueError for a line
    without four fields (the position is not checked here: python-chess or the engine does
    that). A `;` may follow the fourth field without a space (``- -;D1 20``)."""
    text = line.strip().replace("\t", " ")
    if not text or text.startswith("#"):
        return None
    m = _FIELDS.match(text)
    if m is None:
        raise ValueError(f"not an EPD line: {text[:60]!r}")
    rest = m.group(5)
    counters = None
    c = _COUNTERS.match(rest)
    if c is not None:
        counters, rest = (c.group(1), c.group(2)), c.group(3) or ""
    return EpdLine(m.groups()[:4], counters, rest)


def numbered_lines(path):
    """(line number, text) of each line of the file at `path` that is neither blank nor a `#`
    comment, its text stripped: what every EPD-like file's reader iterates."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if text and not text.startswith("#"):
                yield n, text


def read_lines(path):
    """(line number, `EpdLine`) of each EPD line of the file at `path` (blank and `#` lines
    skipped); a line that is not EPD raises ValueError naming ``path:line``."""
    for n, text in numbered_lines(path):
        try:
            yield n, parse_line(text)
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
