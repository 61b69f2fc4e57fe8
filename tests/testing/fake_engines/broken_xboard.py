#!/usr/bin/env python3
"""A CECP v2 (xboard) engine with one protocol fault, for ``wasp-match -compliance``'s tests.

    broken_xboard.py --fault none|nodone|illegal|badpost|deep|noillegal

It plays the first legal move (sorted by UCI text) at once, with one thinking line. Its
single fault: no ``feature done=1``, an illegal move, a malformed thinking line, thinking
output past the ``sd`` depth, or silence when the GUI sends an illegal move.
"""

import argparse

import chess
from fakeio import commands, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="none",
                    choices=["none", "nodone", "illegal", "badpost", "deep", "noillegal"])
    fault = ap.parse_args().fault
    board = chess.Board()
    force = False
    depth_limit = None

    def think_and_move() -> None:
        moves = sorted(m.uci() for m in board.legal_moves)
        if not moves:
            return
        move = moves[0]
        depth = (depth_limit or 1) + (3 if fault == "deep" else 0)
        out("1 twelve 0 1 " + move if fault == "badpost" else f"{depth} 12 0 1 {move}")
        if fault == "illegal":
            empty = [chess.square_name(s) for s in chess.SQUARES if board.piece_at(s) is None]
            move = empty[0] + empty[1]
        else:
            board.push_uci(move)
        out(f"move {move}")

    for tokens in commands():
        cmd, args = tokens[0], tokens[1:]
        if cmd == "protover":
            out('feature ping=1 setboard=1 usermove=1 sigint=0 sigterm=0 myname="broken"')
            if fault != "nodone":
                out("feature done=1")
        elif cmd == "ping":
            out(f"pong {args[0]}")
        elif cmd == "new":
            board, force, depth_limit = chess.Board(), False, None
        elif cmd == "force":
            force = True
        elif cmd == "setboard":
            board = chess.Board(" ".join(args))
        elif cmd == "sd":
            depth_limit = int(args[0])
        elif cmd == "usermove":
            try:
                board.push_uci(args[0])
            except ValueError:
                if fault != "noillegal":
                    out(f"Illegal move: {args[0]}")
                continue
            if not force:
                think_and_move()
        elif cmd == "go":
            force = False
            think_and_move()
        elif cmd == "?":
            pass
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
