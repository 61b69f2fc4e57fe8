#!/usr/bin/env python3
"""A UCI engine with one protocol fault, for ``wasp-match -compliance``'s tests.

    broken_uci.py --fault none|nouciok|noreadyok|illegal|badinfo|badpv|nostop|badoption|drops|
                          nonodes

It answers at once with the first legal move (sorted by UCI text) and one info
line; ``go infinite`` searches until ``stop``. Its single fault: no ``uciok``,
no ``readyok``, an illegal bestmove, a non-integer score, an illegal pv move,
ignoring ``stop``, or a spin option whose default is outside min..max; or
``drops``: a search takes half a second, and any command but ``isready`` that arrives
meanwhile (or the end of input) cancels it without its bestmove, as many engines do; or
``nonodes``: ``go nodes N`` searches until ``stop``, an info line every 0.2 s meanwhile.
"""

import argparse
import threading

import chess
from fakeio import commands, out, uci_board


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fault", default="none")
    fault = ap.parse_args().fault
    board = chess.Board()
    searching = False

    def bestmove() -> None:
        moves = sorted(m.uci() for m in board.legal_moves)
        move = moves[0]
        score = "cp 12.5" if fault == "badinfo" else "cp 12"
        pv = "e2e5" if fault == "badpv" else move
        out(f"info depth 1 score {score} nodes 1 time 0 pv {pv}")
        if fault == "illegal":
            empty = [chess.square_name(s) for s in chess.SQUARES if board.piece_at(s) is None]
            move = empty[0] + empty[1]
        out(f"bestmove {move}")

    pending = None  # drops: the timer of the search under way

    for tokens in commands():
        cmd = tokens[0]
        if fault == "drops" and pending is not None and cmd != "isready":
            pending.cancel()
            pending = None
            if cmd == "stop":
                bestmove()
                continue
        if cmd == "uci":
            out("id name Broken")
            out("id author wasp-py tests")
            if fault == "badoption":
                out("option name Hash type spin default 64 min 1 max 16")
            else:
                out("option name Hash type spin default 1 min 1 max 16")
            if fault != "nouciok":
                out("uciok")
        elif cmd == "isready":
            if fault != "noreadyok":
                out("readyok")
        elif cmd == "position":
            board = uci_board(tokens)
        elif cmd == "go":
            if fault == "nonodes" and "nodes" in tokens:
                searching = True
                flood = threading.Event()
                threading.Thread(target=lambda f=flood: [
                    out("info depth 1 score cp 0 nodes 1 time 0") for _ in iter(
                        lambda: f.wait(0.2), True)], daemon=True).start()
            elif fault == "drops":
                pending = threading.Timer(0.5 if "infinite" not in tokens else 3600, bestmove)
                pending.start()
            elif "infinite" in tokens:
                searching = True
                out("info depth 1 score cp 0 nodes 1 time 0")
            else:
                bestmove()
        elif cmd == "stop":
            if fault == "nonodes" and searching:
                flood.set()
            if searching and fault != "nostop":
                searching = False
                bestmove()
        elif cmd == "quit":
            break
    if pending is not None:
        pending.cancel()


if __name__ == "__main__":
    main()
