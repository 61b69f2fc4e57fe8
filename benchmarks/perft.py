"""Perft speed: ours beside python-chess and Stockfish's `go perft`, in one run.

    python benchmarks/perft.py            # start position d6, Kiwipete d5
    python benchmarks/perft.py --suite    # also both full suites to their deepest depth

Nodes/second are leaf counts over wall time (bulk counting at the last ply, as
Stockfish's perft does). Kernels are compiled before timing.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POSITIONS = [
    ("start position", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 6, 4),
    ("Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5, 3),
]


def ours(fen, depth):
    from wasp.board import Position
    from wasp.perft import perft

    p = Position(fen)
    perft(p, 2)  # load or compile the kernels outside the timing
    t = time.perf_counter()
    n = perft(p, depth)
    return n, time.perf_counter() - t


def python_chess(fen, depth):
    import chess

    def walk(board, d):
        if d == 1:
            return board.legal_moves.count()
        total = 0
        for m in board.legal_moves:
            board.push(m)
            total += walk(board, d - 1)
            board.pop()
        return total

    board = chess.Board(fen)
    t = time.perf_counter()
    n = walk(board, depth)
    return n, time.perf_counter() - t


def stockfish_engine():
    return shutil.which("stockfish") or (
        "/usr/games/stockfish" if pathlib.Path("/usr/games/stockfish").exists() else None
    )


def stockfish(fen, depth):
    exe = stockfish_engine()
    proc = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            bufsize=1)
    proc.stdin.write("uci\nisready\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith("readyok"):
            break
    proc.stdin.write(f"position fen {fen}\n")
    proc.stdin.flush()
    t = time.perf_counter()
    proc.stdin.write(f"go perft {depth}\n")
    proc.stdin.flush()
    n = None
    for line in proc.stdout:
        if line.startswith("Nodes searched"):
            n = int(line.split(":")[1])
            break
    elapsed = time.perf_counter() - t
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    proc.wait(timeout=10)
    return n, elapsed


def row(who, name, depth, n, seconds):
    print(f"{who:<14} {name:<15} d{depth}  {n:>12,} nodes  {seconds:8.3f} s  "
          f"{n / seconds / 1e6:8.2f} M nodes/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", action="store_true",
                    help="also check both perft suites to their deepest depth")
    args = ap.parse_args()
    for name, fen, depth, small in POSITIONS:
        n, s = ours(fen, depth)
        row("wasp-py", name, depth, n, s)
        n, s = python_chess(fen, small)
        row("python-chess", name, small, n, s)
        if stockfish_engine():
            n, s = stockfish(fen, depth)
            row("stockfish", name, depth, n, s)
        else:
            print("stockfish      (not installed: apt-get install stockfish)")
    if args.suite:
        from wasp.perft_cli import check_suite

        for suite in ("perftsuite.epd", "perftsuite-senjo-extended.epd"):
            t = time.perf_counter()
            check_suite(ROOT / "tests" / "data" / suite, max_nodes=10**11)
            print(f"{suite}: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp",))
    main()
