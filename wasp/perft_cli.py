"""`wasp perft`: counts, divide, OmegaZero's tree walk, and suite checking."""

import sys
import time

from wasp.board import IllegalMoveError, Position
from wasp.epd import numbered_lines, parse_line
from wasp.fen import STARTING_FEN
from wasp.perft import divide, perft


def _count(position, depth, show_divide):
    start = time.perf_counter()
    if show_divide:
        rows = divide(position, depth)
        for move, n in rows:
            print(f"{move}: {n}")
        total = sum(n for _, n in rows)
        print(f"\nMoves: {len(rows)}")
    else:
        total = perft(position, depth)
    seconds = max(time.perf_counter() - start, 1e-9)
    print(f"Nodes searched: {total}")
    print(f"Nodes/second: {int(total / seconds)}")
    return total


def _walk(position, depth, show_divide, read=input):
    """Descend the tree move by move (UCI or SAN), `q` to leave."""
    path = []
    while True:
        try:
            text = read(f"[{' '.join(path) or 'root'}] move, 'up' or 'q': ").strip()
        except EOFError:
            return
        if text in ("q", "quit"):
            return
        if text == "up":
            if path:
                position.pop()
                path.pop()
                depth += 1
            else:
                print("already at the root")
        elif depth <= 1:
            print("depth 1 reached: no deeper counts ('up' or 'q')")
            continue
        else:
            try:
                code = _parse_move(position, text)
            except IllegalMoveError as e:
                print(f"error: {e}")
                continue
            position.push(code)
            path.append(text)
            depth -= 1
        print(position.fen())
        _count(position, depth, show_divide)


def _parse_move(position, text):
    try:
        return position.parse_uci(text)
    except IllegalMoveError:
        pass
    import chess

    board = chess.Board(position.fen(), chess960=position.chess960)
    try:
        return position.parse_uci(board.parse_san(text).uci())
    except ValueError:
        raise IllegalMoveError(f"{text!r} is neither a legal UCI nor SAN move here") from None


def parse_perft_line(line):
    """(fen, [(depth, count), ...]) from a suite line `FEN ;D1 n ;D2 n ...` (`wasp.epd`: both
    `;D2 191` and `;D2 191; D3 ...` spellings parse)."""
    epd = parse_line(line)  # ValueError: not four fields
    if epd is None:
        raise ValueError("not a perft record")
    expected = []
    for code, count in epd.operation_list():
        if not code.upper().startswith("D") or not count or " " in count:
            raise ValueError(f"bad depth entry {(code + ' ' + count).strip()!r}")
        try:
            expected.append((int(code[1:]), int(count)))
        except ValueError:
            raise ValueError(f"bad depth entry {(code + ' ' + count).strip()!r}") from None
    return epd.fen(), expected


MAX_ERRORS_SHOWN = 10


def check_suite(path, max_nodes=10**9, out=None, err=None):
    """Check every listed depth with count <= max_nodes; returns (passed, total).

    A wrong count is a FAIL line on `out`; a line that is not a perft record is an error on
    `err` (stderr; the first MAX_ERRORS_SHOWN of them) and counts as one failed check."""
    out = out or sys.stdout
    err = err or sys.stderr
    passed = total = bad = 0
    for lineno, line in numbered_lines(path):
        try:
            fen, expected = parse_perft_line(line)
            position = Position(fen)
        except ValueError as e:
            total += 1
            bad += 1
            if bad <= MAX_ERRORS_SHOWN:
                print(f"wasp perft: error: {path}:{lineno}: {e}", file=err)
            continue
        for depth, count in expected:
            if count > max_nodes:
                continue
            total += 1
            got = perft(position, depth)
            if got == count:
                passed += 1
            else:
                print(f"{path}:{lineno}: FAIL {fen} depth {depth}: expected {count}, "
                      f"got {got}", file=out)
    if bad > MAX_ERRORS_SHOWN:
        print(f"wasp perft: ... and {bad - MAX_ERRORS_SHOWN} more bad lines", file=err)
    if bad and bad == total:
        print(f"wasp perft: error: {path}: no perft records (FEN ;D1 n ;D2 n ...)", file=err)
    print(f"passed {passed}/{total}", file=out)
    return passed, total


def run(args):
    """`wasp perft`; exit code 0, 1 (a bad suite file or a wrong count) or 2 (bad arguments)."""
    if args.epd:
        from wasp.exitcodes import fail, file_problem

        problem = file_problem(args.epd)
        if problem:
            return fail("wasp perft", problem)
        passed, total = check_suite(args.epd, args.max_nodes)
        if total == 0:
            return fail("wasp perft", f"{args.epd}: no perft records (FEN ;D1 n ;D2 n ...)")
        return 0 if passed == total else 1
    if args.depth is None or args.depth < 1:
        print("wasp perft: --depth N (N >= 1) is required without --epd", file=sys.stderr)
        return 2
    try:
        position = Position(args.fen or STARTING_FEN)
    except ValueError as e:
        print(f"wasp perft: {e}", file=sys.stderr)
        return 2
    _count(position, args.depth, args.divide)
    if args.walk:
        _walk(position, args.depth, True)
    return 0
