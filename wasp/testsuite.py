"""`wasp epd`: run a test suite of EPD records with `bm` (best move) or `am` (avoid move).

The lines are read by `wasp.epd` (tolerant of CRLF, `#` comments, a missing `;` before `id`,
TABs); `+`/`#`/`!` decorations on SAN moves are accepted. Moves are read with python-chess.
"""

from dataclasses import dataclass

from wasp.epd import numbered_lines, parse_line


@dataclass
class EpdRecord:
    fen: str
    best: list[str]  # UCI moves
    avoid: list[str]
    ident: str


def _san_list(board, code, text):
    """The UCI moves of a bm/am operand; a move that is not legal here is an error."""
    moves = []
    for tok in text.replace(",", " ").split():
        tok = tok.strip().rstrip("!?")
        if not tok:
            continue
        try:
            moves.append(board.parse_san(tok).uci())
        except ValueError:
            raise ValueError(f"{code} move {tok!r} is not a legal move in this position") from None
    return moves


def parse_epd_line(line: str, number: int = 0) -> EpdRecord | None:
    """One EPD record, or None for blank and `#` comment lines.

    Raises ValueError (naming line `number`) for a record that cannot be judged: a bad FEN, no
    bm or am operation, or a bm/am move that is not legal in the position."""
    import chess

    try:
        epd = parse_line(line)
    except ValueError:
        raise ValueError(f"line {number}: not an EPD record: {line.strip()[:60]!r}") from None
    if epd is None:
        return None
    fen = epd.position + " 0 1"
    try:
        board = chess.Board(fen)
    except ValueError as e:
        raise ValueError(f"line {number}: bad position {epd.position[:60]!r}: {e}") from None
    best, avoid = [], []
    for code, text in epd.operation_list():
        if code not in ("bm", "am") or not text:
            continue
        try:
            moves = _san_list(board, code, text)
        except ValueError as e:
            raise ValueError(f"line {number}: {e}") from None
        if not moves:
            raise ValueError(f"line {number}: {code} without a move")
        (best if code == "bm" else avoid).extend(moves)
    ident = epd.operations().get("id") or f"#{number}"
    if not best and not avoid:
        raise ValueError(f"line {number}: no bm or am operation")
    return EpdRecord(fen, best, avoid, ident)


def read_suite(path, errors: list | None = None) -> list[EpdRecord]:
    """The records of a suite. A bad record raises ValueError ("FILE:LINE: what is wrong"),
    or, when an `errors` list is given, is appended to it as that text and skipped."""
    records = []
    for i, line in numbered_lines(path):
        try:
            records.append(parse_epd_line(line, i))
        except ValueError as e:
            msg = f"{path}:{str(e).removeprefix('line ')}"
            if errors is None:
                raise ValueError(msg) from None
            errors.append(msg)
    return records


MAX_ERRORS_SHOWN = 10


def run_suite(path, time_ms=None, depth=None, hash_mb: int = 64, quiet: bool = False) -> int:
    """Search each position (time_ms per position, or to depth; default 1000 ms) and print
    the result and the final `solved S/T`.

    A record that cannot be judged (bad FEN, no bm/am, an illegal bm/am move) is reported on
    stderr with its line and counted in T as not solved. Returns 0, or 1 when some record was
    bad (with no good record, nothing is searched)."""
    import sys

    errors = []
    records = read_suite(path, errors)
    for msg in errors[:MAX_ERRORS_SHOWN]:
        print(f"wasp epd: error: {msg}", file=sys.stderr)
    if len(errors) > MAX_ERRORS_SHOWN:
        print(f"wasp epd: ... and {len(errors) - MAX_ERRORS_SHOWN} more bad records",
              file=sys.stderr)
    if not records:
        print(f"wasp epd: error: {path}: no EPD records with bm or am", file=sys.stderr)
        return 1

    from wasp.board import Position
    from wasp.driver import Limits, Searcher
    from wasp.warmup import warmup

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
    total = len(records) + len(errors)
    if errors:
        print(f"solved {solved}/{total} ({len(errors)} bad records not searched: see above)")
        return 1
    print(f"solved {solved}/{total}")
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
