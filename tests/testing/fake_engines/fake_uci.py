#!/usr/bin/env python3
"""A small deterministic UCI engine for the match-runner tests.

    fake_uci.py [--style greedy|random] [--fail crash|hang|stall|illegal|nostart]
                [--after N] [--delay S] [--name NAME]

It plays instantly: ``greedy`` mates in one, else takes the most valuable
piece, else moves by a hash of the position; ``random`` moves by a hash of the
position only. Same position, same move: games are reproducible. With
``--fail`` it misbehaves at its N-th ``go`` since the process started:
crash (exits), hang (stops reading and answering), stall (answers after
``--delay`` seconds), illegal (answers with an illegal move), nostart (exits
before ``uciok``). ``--ply P`` misbehaves instead when asked for the move of ply P
(1-based from the position's start: the same in a replay as in the game).
``--stderr`` writes a line to stderr at every ``go`` and before a crash.
``--slowready S`` waits S seconds before its first ``readyok`` (an
engine that compiles at start). ``--envfile F`` appends its NUMBA_CACHE_DIR to F at start.
``--bench NPS`` prints a bench report (12345 nodes at NPS nodes/second) and exits.
``--affinityfile F`` appends ``PID CORES`` (the CPUs it may run on) to F at every ``go``.
``--movetime S`` thinks S seconds a move (a game long enough for a worker to join mid-run).
"""

import argparse
import os
import sys
import time
import zlib

import chess
from fakeio import bestmove, commands, out, uci_position

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def material(board: chess.Board) -> int:
    s = 0
    for piece in board.piece_map().values():
        v = VALUES.get(piece.piece_type, 0)
        s += v if piece.color == board.turn else -v
    return 100 * s


def choose(board: chess.Board, style: str) -> chess.Move:
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    h = zlib.crc32(board.fen().encode())
    if style == "greedy":
        for m in moves:
            board.push(m)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return m
        caps = [m for m in moves if board.is_capture(m)]
        if caps:

            def gain(m):
                p = board.piece_at(m.to_square)
                return VALUES.get(p.piece_type, 1) if p else 1

            best = max(gain(m) for m in caps)
            caps = [m for m in caps if gain(m) == best]
            return caps[h % len(caps)]
    return moves[h % len(moves)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--style", default="greedy")
    ap.add_argument("--fail", default=None)
    ap.add_argument("--after", type=int, default=1)
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--name", default="Fake")
    ap.add_argument("--slowready", type=float, default=0.0)
    ap.add_argument("--envfile", default=None, help="append NUMBA_CACHE_DIR here at start")
    ap.add_argument("--ply", type=int, default=None, help="fail at this ply, not by --after")
    ap.add_argument("--stderr", action="store_true", help="write to stderr at each go")
    ap.add_argument("--affinityfile", default=None, help="append the allowed CPUs at each go")
    ap.add_argument("--bench", type=int, default=None, help="print a bench report, exit")
    ap.add_argument("--movetime", type=float, default=0.0, help="think this long a move")
    args = ap.parse_args()
    if args.bench is not None:
        print("Total time (ms) : 10")
        print("Nodes searched  : 12345")
        print(f"Nodes/second    : {args.bench}")
        return
    if args.envfile:
        with open(args.envfile, "a") as f:
            f.write(f"{os.environ.get('NUMBA_CACHE_DIR', '')}\n")

    board = chess.Board()
    base_fen = None
    played: list[str] = []
    gos = 0

    for tokens in commands():
        cmd = tokens[0]
        if cmd == "uci":
            if args.fail == "nostart":
                sys.exit(3)
            out(f"id name {args.name}")
            out("id author wasp-py tests")
            out("option name Hash type spin default 1 min 1 max 16")
            out("uciok")
        elif cmd == "isready":
            if args.slowready:
                time.sleep(args.slowready)
                args.slowready = 0.0
            out("readyok")
        elif cmd == "position":
            fen, moves = uci_position(tokens)
            if fen != base_fen or moves[: len(played)] != played:
                board = chess.Board(fen) if fen else chess.Board()
                base_fen, played = fen, []
            for m in moves[len(played) :]:
                board.push_uci(m)
            played = list(moves)
        elif cmd == "go":
            gos += 1
            if args.affinityfile:
                cores = ",".join(map(str, sorted(os.sched_getaffinity(0))))
                with open(args.affinityfile, "a") as f:
                    f.write(f"{os.getpid()} {cores}\n")
            ply = len(played) + 1
            if args.ply is not None:
                failing = args.fail is not None and ply == args.ply
            else:
                failing = args.fail is not None and gos >= args.after
            if args.stderr:
                sys.stderr.write(f"fake: go {gos} at ply {ply}\n")
                sys.stderr.flush()
            if failing and args.fail == "crash":
                if args.stderr:
                    sys.stderr.write(f"fake: crashing at ply {ply}\n")
                    sys.stderr.flush()
                sys.exit(1)
            if failing and args.fail == "hang":
                while True:
                    time.sleep(3600)
            if failing and args.fail == "stall" and (args.ply is not None or gos == args.after):
                time.sleep(args.delay)
            if args.movetime:
                time.sleep(args.movetime)
            move = choose(board, args.style)
            if failing and args.fail == "illegal":
                out("info depth 1 score cp 0")
                empty = [chess.square_name(s) for s in chess.SQUARES if board.piece_at(s) is None]
                out(f"bestmove {empty[0]}{empty[1]}")
                continue
            bestmove(move.uci(), material(board), " time 0")
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
