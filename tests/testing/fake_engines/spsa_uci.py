#!/usr/bin/env python3
"""A UCI engine for the SPSA tests: its play gets worse with its option's distance from a
known best value.

    spsa_uci.py [--best 42] [--spread 40]

Option ``Knob`` (spin 0..100, default 0). At each move it plays a random legal move with
probability ``min(1, |Knob - best| / spread)``, else the best move of a 1-ply material search
(mate in one, else the largest material gain). Its ``score cp`` is the material balance after
its move, from its own view, so the runner's resign adjudication ends a lost game early.
Every choice is a function of the position and Knob (a hash, no clock): games repeat exactly.
Also ``Other`` (spin 0..10, no effect) for the option list tests.
"""

import argparse
import zlib

import chess
from fakeio import bestmove, commands, out, uci_board

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def material(board: chess.Board, color: chess.Color) -> int:
    s = 0
    for piece in board.piece_map().values():
        v = VALUES.get(piece.piece_type, 0)
        s += v if piece.color == color else -v
    return 100 * s


def choose(board: chess.Board, knob: int, best: int, spread: float) -> chess.Move:
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    h = zlib.crc32(f"{board.fen()} {knob}".encode())
    if (h % 10007) / 10007 < min(1.0, abs(knob - best) / spread):
        return moves[(h // 10007) % len(moves)]
    me = board.turn
    scored = []
    for m in moves:
        board.push(m)
        value = 10**6 if board.is_checkmate() else material(board, me)
        board.pop()
        scored.append(value)
    top = max(scored)
    good = [m for m, v in zip(moves, scored, strict=True) if v == top]
    return good[h % len(good)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--best", type=int, default=42)
    ap.add_argument("--spread", type=float, default=40.0)
    args = ap.parse_args()
    board = chess.Board()
    knob = 0

    for tokens in commands():
        cmd = tokens[0]
        if cmd == "uci":
            out("id name SpsaFake")
            out("option name Hash type spin default 1 min 1 max 16")
            out("option name Knob type spin default 0 min 0 max 100")
            out("option name Other type spin default 5 min 0 max 10")
            out("option name Ratio type string default 0.5")
            out("option name Ponder type check default false")
            out("uciok")
        elif cmd == "isready":
            out("readyok")
        elif cmd == "setoption" and len(tokens) >= 5 and tokens[2].lower() == "knob":
            knob = int(tokens[4])
        elif cmd == "position":
            board = uci_board(tokens)
        elif cmd == "go":
            move = choose(board, knob, args.best, args.spread)
            me = board.turn
            board.push(move)
            bestmove(move.uci(), material(board, me))
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
