"""PGN text of a finished game: tags (opening, termination), ``{score/depth time ...}`` comments.

The comment switches follow fastchess's ``-pgnout``: ``nodes``, ``seldepth``, ``nps``,
``hashfull``, ``tbhits``, ``pv``, ``timeleft``, ``latency``, ``min`` and ``notation``.
"""

from __future__ import annotations

import re
import time

import chess

from .config import PgnOptions
from .game import PGN_TERMINATION, GameRecord, MoveInfo

LINE_WIDTH = 80
# the comment's extras in order: (PgnOptions switch and MoveInfo field, its text)
_EXTRAS = (("nodes", "n={}".format), ("seldepth", "sd={}".format), ("nps", "nps={}".format),
           ("hashfull", "hashfull={}".format), ("tbhits", "tbhits={}".format),
           ("timeleft", "tl={:.3f}s".format), ("latency", lambda v: f"latency={v * 1000:.0f}ms"))


def move_comment(info: MoveInfo, opts: PgnOptions | None = None) -> str:
    """cutechess-style ``+0.35/12 0.123s`` (``+M5`` for mates) from the mover's view, then
    fastchess's extras: ``n=`` ``sd=`` ``nps=`` ``hashfull=`` ``tbhits=`` ``tl=`` ``latency=``
    ``pv="..."`` for the switches that are on and the figures the engine sent."""
    if info.mate is not None:
        score = f"{'+' if info.mate > 0 else '-'}M{abs(info.mate)}"
    elif info.score is not None:
        score = f"{info.score / 100:+.2f}"
    else:
        score = None
    t = f"{info.elapsed:.3f}s"
    text = t if score is None else f"{score}/{info.depth if info.depth is not None else 0} {t}"
    if opts is None:
        return text
    extras = [fmt(getattr(info, name)) for name, fmt in _EXTRAS
              if getattr(opts, name) and getattr(info, name) is not None]
    if opts.pv and info.pv:
        extras.append(f'pv="{info.pv}"')
    return ", ".join([text, *extras])


_COMMENT = re.compile(r"(?:([+-]?)(?:M(\d+)|(\d+(?:\.\d+)?))/(\d+) )?(\d+(?:\.\d+)?)s(?:,|$)")


def read_move_comment(text: str) -> dict:
    """What `move_comment` wrote, read back: ``{"book": True}`` for a book move; else
    ``seconds`` and, when the engine gave a score, ``depth`` with ``score`` (centipawns) or
    ``mate`` (moves; both from the mover's view, + good for it); ``{}`` for other text."""
    text = text.strip()
    if text.startswith("book"):
        return {"book": True}
    m = _COMMENT.match(text)
    if m is None:
        return {}
    sign, mate, pawns, depth, seconds = m.groups()
    out = {"seconds": float(seconds)}
    if depth is not None:
        out["depth"] = int(depth)
        if mate is not None:
            out["mate"] = -int(mate) if sign == "-" else int(mate)
        else:
            out["score"] = round(float(pawns) * (-100 if sign == "-" else 100))
    return out


def _notate(board: chess.Board, move: chess.Move, notation: str) -> str:
    if notation == "uci":
        return move.uci()
    if notation == "lan":
        return board.lan(move)
    return board.san(move)


def _wrap(tokens: list[str]) -> str:
    lines, cur = [], ""
    for tok in tokens:
        if cur and len(cur) + 1 + len(tok) > LINE_WIDTH:
            lines.append(cur)
            cur = tok
        else:
            cur = f"{cur} {tok}" if cur else tok
    if cur:
        lines.append(cur)
    return "\n".join(lines)


def _tag(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def game_pgn(
    rec: GameRecord,
    event: str = "?",
    site: str = "?",
    round_: str = "?",
    time_control: str | None = None,
    options: PgnOptions | None = None,
) -> str:
    """The game as PGN text (one game, ending in a blank line)."""
    opts = options or PgnOptions()
    op = rec.opening
    board = chess.Board(op.fen or chess.STARTING_FEN, chess960=op.chess960)
    tags = [
        ("Event", event),
        ("Site", site),
        ("Date", time.strftime("%Y.%m.%d", time.localtime(rec.start_time))),
        ("Round", str(round_)),
        ("White", rec.white),
        ("Black", rec.black),
        ("Result", rec.result),
    ]
    if op.chess960:  # Chess960: always the tags, the FEN's castling field as the book wrote it
        tags += [("Variant", "Chess960"), ("FEN", op.fen or chess.STARTING_FEN), ("SetUp", "1")]
    elif op.fen:
        tags += [("FEN", op.fen), ("SetUp", "1")]
    if not opts.min:
        if op.name:
            tags.append(("Opening", op.name))
        tags.append(("PlyCount", str(len(op.moves) + rec.plies)))
        tags.append(("Termination", PGN_TERMINATION.get(rec.termination, "unterminated")))
        if time_control:
            tags.append(("TimeControl", time_control))
        tags += [
            ("GameStartTime", _iso(rec.start_time)),
            ("GameEndTime", _iso(rec.end_time)),
            ("GameDuration", time.strftime("%H:%M:%S", time.gmtime(rec.duration))),
        ]
    head = "".join(f'[{k} "{_tag(v)}"]\n' for k, v in tags)
    tokens: list[str] = []
    comments = [] if opts.min else ["book"] * len(op.moves)
    if not opts.min:
        comments += [move_comment(m, opts) for m in rec.moves]
        if rec.reason:
            if comments:
                comments[-1] = f"{comments[-1]}, {rec.reason}"
            else:
                tokens.append("{" + rec.reason + "}")
    need_number = True
    for k, uci in enumerate([*op.moves, *(m.uci for m in rec.moves)]):
        move = chess.Move.from_uci(uci)
        if board.turn == chess.WHITE:
            tokens.append(f"{board.fullmove_number}.")
        elif need_number:
            tokens.append(f"{board.fullmove_number}...")
        tokens.append(_notate(board, move, opts.notation))
        need_number = False
        if comments:
            tokens.append("{" + comments[k].replace("}", ")") + "}")
            need_number = True
        board.push(move)
    tokens.append(rec.result)
    return head + "\n" + _wrap(tokens) + "\n\n"


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
