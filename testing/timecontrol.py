"""Time controls (``[moves/]time[+inc]``) and the chess clock kept by the runner."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_TC_RE = re.compile(
    r"^(?:(?P<moves>\d+)/)?(?P<base>(?:\d+:)?\d+(?:\.\d*)?|\.\d+|inf)(?:\+(?P<inc>\d+(?:\.\d*)?|\.\d+))?$"
)


@dataclass(frozen=True)
class TimeControl:
    """``moves`` per period (0: the whole game), ``base`` and ``inc`` in seconds."""

    base: float
    inc: float = 0.0
    moves: int = 0

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse cutechess-style ``40/60+0.6``, ``1+0.01``, ``0:15+0.15`` or ``inf``."""
        m = _TC_RE.match(text.strip())
        if not m:
            raise ValueError(
                f"bad time control {text!r} (expected [moves/]time[+inc], e.g. 10+0.1)"
            )
        base_s = m.group("base")
        if base_s == "inf":
            base = math.inf
        elif ":" in base_s:
            minutes, seconds = base_s.split(":", 1)
            base = int(minutes) * 60 + float(seconds)
        else:
            base = float(base_s)
        inc = float(m.group("inc") or 0.0)
        moves = int(m.group("moves") or 0)
        if base <= 0:
            raise ValueError(f"bad time control {text!r}: time must be positive")
        return cls(base=base, inc=inc, moves=moves)

    @property
    def infinite(self) -> bool:
        return math.isinf(self.base)

    def pgn_tag(self) -> str:
        """The PGN ``TimeControl`` tag value (``moves/seconds`` or ``seconds+inc``)."""
        if self.infinite:
            return "-"
        base = _num(self.base)
        if self.moves:
            return f"{self.moves}/{base}" + (f"+{_num(self.inc)}" if self.inc else "")
        return f"{base}+{_num(self.inc)}" if self.inc else base

    def __str__(self) -> str:
        if self.infinite:
            return "inf"
        s = (f"{self.moves}/" if self.moves else "") + _num(self.base)
        return s + (f"+{_num(self.inc)}" if self.inc else "")


def _num(x: float) -> str:
    return f"{x:g}" if x != int(x) else str(int(x))


class Clock:
    """One side's clock. Times in seconds."""

    __slots__ = ("tc", "remaining", "moves_made", "used")

    def __init__(self, tc: TimeControl):
        self.tc = tc
        self.remaining = tc.base
        self.moves_made = 0
        self.used = 0.0

    def moves_to_go(self) -> int:
        if not self.tc.moves:
            return 0
        return self.tc.moves - (self.moves_made % self.tc.moves)

    def punch(self, elapsed: float, margin: float) -> bool:
        """Charge ``elapsed`` seconds for a move; return False on a loss on time."""
        self.used += elapsed
        if self.tc.infinite:
            self.moves_made += 1
            return True
        self.remaining -= elapsed
        if self.remaining < -margin:
            return False
        if self.remaining < 0:
            self.remaining = 0.0
        self.remaining += self.tc.inc
        self.moves_made += 1
        if self.tc.moves and self.moves_made % self.tc.moves == 0:
            self.remaining += self.tc.base
        return True
