"""PGN text of a finished game: standard tags, termination, ``{score/depth time}`` comments."""

from __future__ import annotations

import time

import chess
import chess.pgn

from .game import PGN_TERMINATION, GameRecord, MoveInfo


def move_comment(info: MoveInfo) -> str:
    """cutechess-style ``+0.35/12 0.123s`` (``+M5`` for mates) from the mover's view."""
    if info.mate is not None:
        score = f"{'+' if info.mate > 0 else '-'}M{abs(info.mate)}"
    elif info.score is not None:
        score = f"{info.score / 100:+.2f}"
    else:
        score = None
    t = f"{info.elapsed:.3f}s"
    if score is None:
        return t
    return f"{score}/{info.depth if info.depth is not None else 0} {t}"


def game_pgn(
    rec: GameRecord,
    event: str = "?",
    site: str = "?",
    round_: str = "?",
    time_control: str | None = None,
) -> str:
    """The game as PGN text (one game, ending in a blank line)."""
    op = rec.opening
    board = chess.Board(op.fen or chess.STARTING_FEN, chess960=op.chess960)
    game = chess.pgn.Game()
    game.headers["Event"] = event
    game.headers["Site"] = site
    game.headers["Date"] = time.strftime("%Y.%m.%d", time.localtime(rec.start_time))
    game.headers["Round"] = str(round_)
    game.headers["White"] = rec.white
    game.headers["Black"] = rec.black
    game.headers["Result"] = rec.result
    if op.chess960:  # Chess960: always the tags, the FEN's castling field as the book wrote it
        game.headers["Variant"] = "Chess960"
        game.headers["SetUp"] = "1"
        game.headers["FEN"] = op.fen or chess.STARTING_FEN
    elif op.fen:
        game.setup(board)
    game.headers["PlyCount"] = str(len(op.moves) + rec.plies)
    game.headers["Termination"] = PGN_TERMINATION.get(rec.termination, "unterminated")
    if time_control:
        game.headers["TimeControl"] = time_control
    game.headers["GameStartTime"] = _iso(rec.start_time)
    game.headers["GameEndTime"] = _iso(rec.end_time)
    game.headers["GameDuration"] = time.strftime("%H:%M:%S", time.gmtime(rec.duration))
    node = game
    for m in op.moves:
        node = node.add_variation(chess.Move.from_uci(m), comment="book")
    for info in rec.moves:
        node = node.add_variation(chess.Move.from_uci(info.uci), comment=move_comment(info))
    if rec.reason:
        if node is game:
            game.comment = rec.reason
        else:
            node.comment = (node.comment + ", " if node.comment else "") + rec.reason
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n\n"


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
