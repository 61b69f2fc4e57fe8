"""Opening books of double Fischer Random (DFRC) and Chess960 start positions.

The positions come from `wasp.chess960` (Chess960's standard numbering 0..959, 518 the usual
start, as python-chess's `chess.Board.from_chess960_pos`). A DFRC position gives each side its
own arrangement: DFRC number ``960 * white + black``, the order of the DFRC book fishtest and
OpenBench use (line 1: both sides 0; line 2: white 0, black 1).
"""

from __future__ import annotations

import os
import random
import sys

import chess

from wasp import chess960 as w960
from wasp.atomicfile import write_text
from wasp.cliargs import ArgumentParser, add_output
from wasp.exitcodes import EXIT_INPUT, EXIT_USAGE, fail

N960 = w960.N_POSITIONS
NDFRC = N960 * N960
CASTLING_FORMS = ("shredder", "xfen")

EXAMPLES = """examples:
  wasp-tune data dfrc -o dfrc.epd -n 1000 -seed 1          # 1000 DFRC start positions
  wasp-tune data dfrc -o frc.epd -chess960 -all            # the 960 Chess960 positions
  wasp-match ... -variant fischerandom -openings file=dfrc.epd order=random

Lines are FENs with all four castling rights, in Shredder-FEN (HFhf, the DFRC books' form)
or X-FEN (KQkq, -castling xfen); sorted by DFRC number (960 * white + black). Play them
with wasp-match -variant fischerandom (or fastchess/cutechess-cli -variant fischerandom).

exit codes: 0 ok, 1 the output cannot be written, 2 a bad command line
"""


def dfrc_board(number: int) -> chess.Board:
    """DFRC position `number` (0..921599; white's arrangement number // 960, black's
    number % 960), with every castling right, as a chess960 board."""
    return chess.Board(dfrc_fen(number), chess960=True)


def dfrc_fen(number: int, castling: str = "shredder") -> str:
    """The FEN of DFRC position `number` (castling field Shredder-FEN or X-FEN)."""
    if not 0 <= number < NDFRC:
        raise ValueError(f"DFRC position {number} outside 0..{NDFRC - 1}")
    if castling not in CASTLING_FORMS:
        raise ValueError(f"castling form {castling!r} (expected shredder or xfen)")
    return w960.dfrc_fen(*divmod(number, N960), shredder=castling == "shredder")


def chess960_number(n: int) -> int:
    """The DFRC number of Chess960 position `n` (both sides the same arrangement)."""
    return N960 * n + n


def book_numbers(count: int | None, seed: int = 1, chess960: bool = False) -> list[int]:
    """`count` distinct DFRC numbers drawn with `seed` (None: all), sorted; with `chess960`
    only the 960 mirrored positions."""
    pool = range(N960) if chess960 else range(NDFRC)
    if count is None:
        picked = list(pool)
    else:
        if not 1 <= count <= len(pool):
            raise ValueError(f"-n {count}: expected 1..{len(pool)}")
        picked = random.Random(seed).sample(pool, count)
    numbers = [chess960_number(n) for n in picked] if chess960 else picked
    return sorted(numbers)


def write_book(path: str, numbers, castling: str = "shredder") -> int:
    """Write one FEN a line (atomically: a killed run leaves no half book); the line count."""
    lines = [dfrc_fen(n, castling) + "\n" for n in numbers]
    write_text(path, "".join(lines), encoding="ascii")
    return len(lines)


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="wasp-tune data dfrc", epilog=EXAMPLES,
                       description="An opening book of DFRC (or Chess960) start positions.")
    add_output(p, "output EPD file")
    p.add_argument("-n", type=int, default=1000,
                   help="number of positions, a seeded random draw (default 1000)")
    p.add_argument("-all", action="store_true",
                   help="every position (921,600 DFRC; 960 with -chess960)")
    p.add_argument("-seed", type=int, default=1, help="draw seed (default 1)")
    p.add_argument("-chess960", action="store_true",
                   help="Chess960 positions only (both sides the same arrangement)")
    p.add_argument("-castling", choices=CASTLING_FORMS, default="shredder",
                   help="castling field: shredder (HFhf, default) or xfen (KQkq)")
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    prog = "wasp-tune data dfrc"
    try:
        numbers = book_numbers(None if args.all else args.n, args.seed, args.chess960)
    except ValueError as e:
        return fail(prog, e, EXIT_USAGE)
    parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(parent):
        return fail(prog, f"{args.out}: directory {parent} does not exist", EXIT_INPUT)
    try:
        n = write_book(args.out, numbers, args.castling)
    except OSError as e:
        return fail(prog, f"{args.out}: cannot write: {e.strerror}", EXIT_INPUT)
    print(f"{args.out}: {n} {'Chess960' if args.chess960 else 'DFRC'} start positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
