"""CPU affinity (``-use-affinity``): each running game's engines on cores of their own.

Cores are split into one slot per concurrent game; a slot is handed to a game when
it starts and returned when it ends. Pinning uses ``os.sched_setaffinity`` on every
thread of an engine process, and on the worker, so engines started later inherit it.
"""

from __future__ import annotations

import os


def parse_cores(text: str) -> list[int]:
    """``"0,2,4-7"`` -> [0, 2, 4, 5, 6, 7]; ValueError naming a bad item."""
    cores: list[int] = []
    for item in str(text).replace(" ", "").split(","):
        if not item:
            continue
        lo, sep, hi = item.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad core list item {item!r} (expected N or N-M)")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise ValueError(f"bad core range {item!r}")
        cores.extend(c for c in range(a, b + 1) if c not in cores)
    if not cores:
        raise ValueError("no cores in the list")
    return cores


def available_cores() -> list[int]:
    """The cores this process may run on."""
    return sorted(os.sched_getaffinity(0))


def slots(cores: list[int], games: int) -> list[list[int]]:
    """``cores`` split into ``games`` equal slots (the remainder stays unused)."""
    k = len(cores) // games
    if k < 1:
        raise ValueError(f"{len(cores)} core(s) for {games} concurrent games: each game "
                         "needs a core of its own")
    return [cores[i * k:(i + 1) * k] for i in range(games)]


def pin(pid: int, cores: list[int]) -> None:
    """Every thread of process ``pid`` onto ``cores`` (threads that exit meanwhile are skipped)."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tids = [pid]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cores)
        except (ProcessLookupError, PermissionError):
            pass


def describe(cores: list[int]) -> str:
    return ",".join(str(c) for c in cores)
