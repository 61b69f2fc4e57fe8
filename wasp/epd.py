"""`wasp epd`: run a test suite of EPD records with `bm` (best move) or `am` (avoid move).

Tolerant of real-world files: CRLF line ends, `#` comments, a missing `;` before `id`, a TAB
after `id`, `+`/`#`/`!` decorations on SAN moves. Moves are read with python-chess.
"""

import re
from dataclasses import dataclass

_OPCODES = r"(?:bm|am|id|c\d|ce|pv|pm|dm|acd|acn|acs|sm|hmvc|fmvn|D\d+)"
_OP_RE = re.compile(r"\b(bm|am)[ \t]+(.*?)(?=;|[ \t]+" + _OPCODES + r"[ \t]|$)")
_ID_RE = re.compile(r"\bid[ \t]+(\"[^\"]*\"|\S+)")


@dataclass
class EpdRecord:
    fen: str
    best: list[str]  # UCI moves
    avoid: list[str]
    ident: str


def _san_list(board, text):
    moves = []
    for tok in text.replace(",", " ").split():
        tok = tok.strip().rstrip("!?")
        if not tok:
            continue
        try:
            moves.append(board.parse_san(tok).uci())
        except ValueError:
            continue
    return moves


def parse_epd_line(line: str, number: int = 0) -> EpdRecord | None:
    """One EPD record, or None for blank/comment lines and records without bm/am."""
    import chess

    line = line.strip().replace("\t", " ")
    if not line or line.startswith("#"):
        return None
    fields = line.split(None, 4)
    if len(fields) < 4:
        raise ValueError(f"line {number}: not an EPD record: {line[:60]!r}")
    fen = " ".join(fields[:4]) + " 0 1"
    ops = fields[4] if len(fields) > 4 else ""
    board = chess.Board(fen)
    best, avoid = [], []
    for code, text in _OP_RE.findall(ops):
        (best if code == "bm" else avoid).extend(_san_list(board, text))
    m = _ID_RE.search(ops)
    ident = m.group(1).strip('"') if m else f"#{number}"
    if not best and not avoid:
        return None
    return EpdRecord(fen, best, avoid, ident)


def read_suite(path) -> list[EpdRecord]:
    records = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f, 1):
            rec = parse_epd_line(line, i)
            if rec is not None:
                records.append(rec)
    return records


def run_suite(path, time_ms=None, depth=None, hash_mb: int = 64, quiet: bool = False) -> int:
    """Search each position (time_ms per position, or to depth; default 1000 ms) and print
    the result and the final `solved S/T`. Returns 0."""
    from wasp.board import Position
    from wasp.driver import Limits, Searcher
    from wasp.warmup import warmup

    records = read_suite(path)
    warmup()
    searcher = Searcher(hash_mb)
    if time_ms is None and depth is None:
        time_ms = 1000
    solved = 0
    for n, rec in enumerate(records, 1):
        searcher.clear()
        pos = Position(rec.fen)
        if depth is not None:
            limits = Limits(depth=depth)
        else:
            limits = Limits(soft_ms=time_ms, hard_ms=time_ms)
        result = searcher.search(pos, limits)
        ok = (not rec.best or result.best in rec.best) and result.best not in rec.avoid
        solved += ok
        if not quiet:
            want = ("bm " + " ".join(rec.best)) if rec.best else ("am " + " ".join(rec.avoid))
            print(f"{n:4d} {rec.ident:20s} {'ok  ' if ok else 'FAIL'} {result.best:6s} ({want}) "
                  f"depth {result.depth} score {result.score} nodes {result.nodes}", flush=True)
    print(f"solved {solved}/{len(records)}")
    return 0


def solve_count(path, time_ms=None, depth=None) -> tuple[int, int]:
    """(solved, total) without printing per position."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        run_suite(path, time_ms=time_ms, depth=depth, quiet=True)
    line = buf.getvalue().strip().splitlines()[-1]
    s, t = line.split()[1].split("/")
    return int(s), int(t)
