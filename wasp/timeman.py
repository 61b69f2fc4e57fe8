"""Time management: how long to think for one move, from the `go` clock parameters.

Two limits come back, in milliseconds from the arrival of `go`: `soft` (no new iteration
is started after it) and `hard` (the search is stopped there). Sudden death assumes about
`MOVES_HORIZON` moves to go; increments are mostly spent; `Move Overhead` is kept back for
the GUI and the pipes.

Low on the clock, the engine lives on its increment, and every move really costs its search
plus whatever the operating system, the pipes and the GUI add. On a loaded machine that cost
swings by tens of milliseconds, now and then by hundreds, so the clock is never planned below
a reserve of two overheads and two increments, and only the part of the increment above the
overhead is counted on (a 2-core machine running two games and a compile lost games at
3+0.03 and 10+0.1 with a reserve of one overhead, and one of 76 at 10+0.1 to a 300 ms stall
with two overheads and half an increment).
"""

from dataclasses import dataclass

MOVES_HORIZON = 30  # moves to plan for in sudden death
INC_SHARE = 0.75  # share of the increment spent on this move
HARD_FACTOR = 4.0  # the hard limit may exceed the soft one by this much ...
MAX_SHARE = 0.35  # ... but never spend more than this share of the clock on one move


def learn_lag(lag, last_clock, thought, inc, clock) -> float:
    """The lag (ms) to keep in reserve after a move: the clock the GUI sends now, against the
    one it sent for our previous move, tells how much more it charged than we spent thinking
    (`thought`); a slowly fading maximum of that, never more than half the earlier clock."""
    seen = (last_clock - thought + inc) - clock
    return max(min(seen, 0.5 * last_clock), 0.9 * lag, 0.0)


@dataclass
class TimeBudget:
    soft: float | None
    hard: float | None


def allocate(time_left=None, inc=0, movestogo=None, movetime=None, overhead=30,
             infinite=False) -> TimeBudget:
    """The budget for one move. All arguments in milliseconds; None: not given."""
    overhead = max(0, int(overhead or 0))
    if infinite:
        return TimeBudget(None, None)
    if movetime is not None:
        hard = max(1.0, float(movetime) - overhead)
        return TimeBudget(hard, hard)
    if time_left is None:
        return TimeBudget(None, None)
    inc = max(0, int(inc or 0))
    reserve = 2 * overhead + 2 * inc
    usable = max(1.0, float(time_left) - reserve)
    inc = max(0, inc - overhead)  # the part of the increment the search may count on
    mtg = MOVES_HORIZON if not movestogo or movestogo <= 0 else min(int(movestogo), MOVES_HORIZON)
    soft = usable / mtg + INC_SHARE * inc
    share = MAX_SHARE if mtg > 1 else 0.8
    hard = min(soft * HARD_FACTOR, usable * share + (inc * INC_SHARE if mtg > 1 else 0))
    hard = min(hard, usable * 0.9)
    soft = min(soft, hard)
    return TimeBudget(max(1.0, soft * 0.6), max(1.0, hard))
