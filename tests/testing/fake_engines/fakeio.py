"""What the fake engines share (they run as scripts, so this folder is on their path): lines
out, flushed at once; a `go` answered; the commands read; a UCI `position` command read."""

import sys

import chess


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def bestmove(move: str, cp: int, extra: str = "") -> None:
    """Answer a `go`: a one-ply `info` line (`extra` after the score) and the move."""
    out(f"info depth 1 score cp {cp}{extra} nodes 1 pv {move}")
    out(f"bestmove {move}")


def commands():
    """The tokens of each non-blank line of stdin, as it comes."""
    for line in sys.stdin:
        tokens = line.split()
        if tokens:
            yield tokens


def uci_position(tokens) -> tuple[str | None, list[str]]:
    """(FEN or None for startpos, moves) of `position startpos|fen FEN [moves ...]`."""
    if tokens[1] == "startpos":
        fen, rest = None, tokens[2:]
    else:
        fen, rest = " ".join(tokens[2:8]), tokens[8:]
    return fen, rest[1:] if rest and rest[0] == "moves" else []


def uci_board(tokens) -> chess.Board:
    """The board a UCI `position` command sets up."""
    fen, moves = uci_position(tokens)
    board = chess.Board(fen) if fen else chess.Board()
    for m in moves:
        board.push_uci(m)
    return board
