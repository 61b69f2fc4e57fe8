"""Polyglot opening books: probing with weighted random choice, and building from PGN.

A Polyglot book is a sorted array of 16-byte big-endian entries (key, move, weight,
learn). Our position key is Polyglot's, so probing is a binary search on it.
"""

import random

import numpy as np

from wasp.board import Position
from wasp.types import (
    CASTLING_ROOK,
    FLAG_CASTLE,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
)

ENTRY = np.dtype([("key", ">u8"), ("move", ">u2"), ("weight", ">u2"), ("learn", ">u4")])

def encode_move(code: int, S=None) -> int:
    """Polyglot's 16-bit move for one of our move codes. Polyglot writes castling as the king
    taking its own rook: its square comes from the game's State `S` (standard chess's
    corners when None)."""
    frm = code & MOVE_FROM_MASK
    to = (code >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    if code & FLAG_CASTLE:
        kingside = (to & 7) == 6
        if S is None:
            to = (to & 56) | (7 if kingside else 0)
        else:
            to = int(S.st[CASTLING_ROOK + 2 * (to >> 5) + (0 if kingside else 1)])
    promo = (code >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK  # knight 1 .. queen 4, as Polyglot
    return (to & 7) | ((to >> 3) << 3) | ((frm & 7) << 6) | ((frm >> 3) << 9) | (promo << 12)


class Book:
    """An opened Polyglot book (the whole file is read: books are small)."""

    def __init__(self, path):
        data = np.fromfile(path, dtype=np.uint8)
        if data.size % ENTRY.itemsize:
            raise ValueError(f"{path}: not a Polyglot book (size {data.size} is not a "
                             f"multiple of {ENTRY.itemsize})")
        self.path = str(path)
        self.entries = data.view(ENTRY)
        keys = self.entries["key"]
        if keys.size > 1 and np.any(keys[1:] < keys[:-1]):
            raise ValueError(f"{path}: not a Polyglot book (entries are not sorted by key)")
        self._keys = keys.astype(np.uint64)

    def __len__(self):
        return int(self.entries.size)

    def moves(self, position: Position) -> list[tuple[str, int]]:
        """(UCI move, weight) of every legal book move for the position, best first."""
        key = np.uint64(position.key)
        lo = int(np.searchsorted(self._keys, key, side="left"))
        hi = int(np.searchsorted(self._keys, key, side="right"))
        if lo == hi:
            return []
        legal = {encode_move(m, position.S): m for m in position.legal_move_codes()}
        found = []
        for entry in self.entries[lo:hi]:
            code = legal.get(int(entry["move"]))
            if code is not None:  # a key collision or a corrupt entry is skipped
                found.append((position.uci(code), int(entry["weight"])))
        found.sort(key=lambda mw: -mw[1])
        return found

    def choose(self, position: Position, rng=None) -> str | None:
        """A book move drawn with probability proportional to its weight, or None."""
        found = [(m, w) for m, w in self.moves(position) if w > 0]
        if not found:
            return None
        rng = rng or random
        return rng.choices([m for m, _ in found], weights=[w for _, w in found])[0]


def build(pgn_paths, plies: int, out_path, min_count: int = 1, progress: bool = False) -> dict:
    """Write a Polyglot book of the first `plies` plies of every game in the PGN files.

    Weights follow Polyglot's make-book: 2 per win and 1 per draw for the side that
    played the move (games without a result count 1), scaled to fit 16 bits; moves
    played fewer than `min_count` times are left out. Returns a summary.
    """
    import chess.pgn

    counts: dict[tuple[int, int], list[int]] = {}
    games = bad = 0
    for path in [pgn_paths] if isinstance(pgn_paths, str) else pgn_paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            while True:
                try:
                    game = chess.pgn.read_game(f)
                except IndexError:  # python-chess on a stray `)` (text that is not PGN)
                    bad += 1
                    continue
                if game is None:
                    break
                if game.errors:
                    bad += 1
                    continue
                result = game.headers.get("Result", "*")
                played = []  # (key, move, score): counted once the whole game has parsed
                try:
                    board = game.board()
                    position = Position(board.fen(), board.chess960)
                    for ply, move in enumerate(game.mainline_moves()):
                        if ply >= plies:
                            break
                        code = position.parse_uci(move.uci())  # a null move `--` fails here
                        white = position.turn == 0
                        if result == "1/2-1/2":
                            score = 1
                        elif result in ("1-0", "0-1"):
                            score = 2 if (result == "1-0") == white else 0
                        else:
                            score = 1
                        played.append((position.key, encode_move(code, position.S), score))
                        position.push(code)
                except ValueError:
                    bad += 1
                    continue
                if not played:  # no moves (text that is not PGN reads as empty games)
                    bad += 1
                    continue
                games += 1
                for key, move, score in played:
                    slot = counts.setdefault((key, move), [0, 0])
                    slot[0] += 1
                    slot[1] += score
    rows = [(k, m, c, s) for (k, m), (c, s) in counts.items() if c >= min_count]
    entries = np.zeros(len(rows), dtype=ENTRY)
    if rows:
        scores = np.array([s for *_, s in rows], dtype=np.float64)
        top = scores.max()
        scale = 65535.0 / top if top > 65535 else 1.0
        entries["key"] = [k for k, *_ in rows]
        entries["move"] = [m for _, m, *_ in rows]
        # A move that was played keeps a weight of at least 1 unless it never scored.
        entries["weight"] = np.where(scores > 0, np.maximum(1, np.floor(scores * scale)), 0)
        order = np.lexsort((-entries["weight"].astype(np.int64), entries["key"].astype(np.uint64)))
        entries = entries[order]
    entries.tofile(out_path)
    return {"games": games, "skipped_games": bad, "entries": int(entries.size),
            "positions": len({int(k) for k in entries["key"]})}
