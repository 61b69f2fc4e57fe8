"""A run directory's kind, marked by its writer: ``kind.json`` holds ``{"kind": "match"}``.

Each tool marks the directories it creates (`mark`): the match runner "match", SPSA "spsa", the
Texel tuner "tuning". Readers (the dashboard, notebooks) ask `marked_kind` and open the run with
the reader its tool ships; directories written before the mark existed are recognised by that
reader (`is_run` of each), never by the caller.
"""

from __future__ import annotations

import json
import os

from wasp.atomicfile import write_text

KIND_FILE = "kind.json"


def mark(rundir: str, kind: str) -> None:
    """Record that `rundir` holds a run of `kind` (replaced atomically)."""
    os.makedirs(rundir, exist_ok=True)
    path = os.path.join(rundir, KIND_FILE)
    write_text(path, json.dumps({"kind": kind}) + "\n")


def last_write(rundir: str, names) -> float:
    """When the writer of `rundir` last wrote one of its files `names` (their latest
    modification time), 0.0 if it never did: how readers tell a live run from a stopped one."""
    times = [os.path.getmtime(p) for p in (os.path.join(rundir, n) for n in names)
             if os.path.exists(p)]
    return max(times, default=0.0)


def marked_kind(rundir: str) -> str | None:
    """The kind `rundir` is marked with, or None (no mark, or one that cannot be read)."""
    try:
        with open(os.path.join(rundir, KIND_FILE), encoding="utf-8") as f:
            kind = json.load(f).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None
