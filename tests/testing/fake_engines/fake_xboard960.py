#!/usr/bin/env python3
"""A small deterministic xboard engine that plays Chess960, for the match-runner tests.

    fake_xboard960.py [--reply san|uci] [--log FILE] [--no-frc]

It announces ``variants="normal,fischerandom"`` (none with ``--no-frc``), follows
``variant fischerandom`` and ``setboard``, castles whenever it can (else moves by a hash
of the position), and answers castling as ``O-O``/``O-O-O`` (the protocol's FRC form) or
king-takes-rook (``--reply uci``). A received move it cannot play, or a castling in FRC not
written O-O/O-O-O, gets ``Illegal move``.
``--log FILE`` appends every move it receives, as received, one a line.
"""

import argparse
import zlib

import chess
from fakeio import commands, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reply", choices=("san", "uci"), default="san")
    ap.add_argument("--log", default=None)
    ap.add_argument("--no-frc", action="store_true")
    args = ap.parse_args()
    frc = False
    board = chess.Board()
    forced = True

    def play() -> None:
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        if not moves:
            return
        castles = [m for m in moves if board.is_castling(m)]
        h = zlib.crc32(board.fen().encode())
        move = castles[h % len(castles)] if castles else moves[h % len(moves)]
        text = move.uci()
        if board.is_castling(move) and args.reply == "san":
            text = "O-O" if board.is_kingside_castling(move) else "O-O-O"
        out(f"1 {h % 200 - 100} 1 1 {text}")
        out(f"move {text}")
        board.push(move)

    for tokens in commands():
        cmd = tokens[0]
        if cmd == "protover":
            variants = "normal" if args.no_frc else "normal,fischerandom"
            out(f'feature myname="FakeFRC" setboard=1 ping=1 usermove=1 san=0 '
                f'variants="{variants}" done=1')
        elif cmd == "new":
            frc, board, forced = False, chess.Board(), False
        elif cmd == "variant":
            frc = tokens[1:] == ["fischerandom"]
            board = chess.Board(chess960=frc)
        elif cmd == "setboard":
            board = chess.Board(" ".join(tokens[1:]), chess960=frc)
        elif cmd == "force":
            forced = True
        elif cmd == "ping":
            out(f"pong {tokens[1]}")
        elif cmd == "go":
            forced = False
            play()
        elif cmd == "usermove":
            text = tokens[1]
            if args.log:
                with open(args.log, "a") as f:
                    f.write(text + "\n")
            try:
                move = board.parse_san(text) if text.startswith("O-O") else board.parse_uci(text)
            except ValueError:
                move = None
            if move is None or (frc and board.is_castling(move) and text[0] != "O"):
                out(f"Illegal move: {text}")  # in FRC, castling must come as O-O / O-O-O
                continue
            board.push(move)
            if not forced:
                play()
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
