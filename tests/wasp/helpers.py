"""Positions for the property tests (random legal play from the sampled openings), and the
clock referee's allowance for CPU the hypervisor stole."""

import os
import random

import chess

from tests.conftest import DATA


def opening_fens():
    with open(DATA / "openings-sample.epd", encoding="utf-8") as f:
        return [" ".join(line.split()[:4]) for line in f if line.strip()]


def random_positions(count, seed=1, max_plies=60):
    """`count` python-chess boards reached by random legal play from the sample openings.

    The walks run through the middlegame into endings, so en passant, castling,
    promotions, checks, mates and stalemates all occur.
    """
    rng = random.Random(seed)
    fens = opening_fens()
    boards = []
    while len(boards) < count:
        board = chess.Board(rng.choice(fens))
        for _ in range(rng.randint(0, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # Prefer captures and promotions now and then so endings are reached.
            noisy = [m for m in moves if board.is_capture(m) or m.promotion]
            pool = noisy if noisy and rng.random() < 0.4 else moves
            board.push(rng.choice(pool))
        boards.append(board)
    return boards


def stolen_seconds() -> float:
    """Seconds the hypervisor has taken from an average CPU of this machine since boot
    (/proc/stat's steal; 0 where there is none). A referee that keeps an engine's clock does
    not charge what was stolen during the move: on a virtual machine the host can stop the
    guest for a second at a time, and no engine can answer while its machine does not run."""
    from testing.tournament import host_steal

    reading = host_steal()
    if reading is None:
        return 0.0
    return reading[0] / (os.cpu_count() or 1) / os.sysconf("SC_CLK_TCK")
