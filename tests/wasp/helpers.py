"""Positions for the property tests: random legal play from the sampled openings."""

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
