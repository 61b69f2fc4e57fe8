"""Machines of different speed (``-scale-tc``): an engine's own ``bench`` as the yardstick.

As fishtest does, a worker runs the engine's ``bench``; its node count must equal the
reference's (the same engine, the same search) and its speed gives the factor
``reference_nps / worker_nps`` by which the worker's clocks are scaled, so a game
lasts as many nodes on a slow machine as on the reference one.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field, replace

from .engine import EngineConfig

BENCH_TIMEOUT = 900.0  # seconds for one bench run
_NODES_RE = re.compile(r"Nodes searched\s*:\s*(\d+)")
_NPS_RE = re.compile(r"Nodes/second\s*:\s*(\d+)")


@dataclass
class ScaleConfig:
    nps: int  # the reference machine's bench speed
    nodes: int | None = None  # the reference bench signature (None: not checked)
    engine: int = 0  # index of the engine whose bench is run
    maxfactor: float = 3.0  # a worker slower than this is refused
    bench: list[str] = field(default_factory=lambda: ["bench"])  # words after the command


def run_bench(cfg: EngineConfig, words: list[str], env: dict | None = None,
              timeout: float = BENCH_TIMEOUT) -> tuple[int, int]:
    """(nodes, nps) from ``cmd args... bench``'s output; RuntimeError saying what failed."""
    full = dict(os.environ)
    full.update(cfg.env)
    full.update(env or {})
    argv = [cfg.cmd, *cfg.args, *words]
    try:
        done = subprocess.run(argv, capture_output=True, cwd=cfg.dir or None, env=full,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"bench of {cfg.name} failed: {e}") from None
    text = (done.stdout + done.stderr).decode(errors="replace")
    nodes, nps = _NODES_RE.findall(text), _NPS_RE.findall(text)
    if done.returncode != 0 or not nodes or not nps:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise RuntimeError(f"bench of {cfg.name} (exit status {done.returncode}) printed no "
                           f"'Nodes searched : N' and 'Nodes/second : N': {tail[:200]!r}")
    return int(nodes[-1]), int(nps[-1])


def judge(nodes: int, nps: int, ref: ScaleConfig) -> tuple[float, str | None]:
    """(factor, None) for a worker that may play, or (factor, the reason it may not)."""
    factor = ref.nps / max(1, nps)
    if ref.nodes is not None and nodes != ref.nodes:
        return factor, (f"bench signature {nodes} differs from the reference {ref.nodes} "
                        f"(another engine build or search)")
    if factor > ref.maxfactor:
        return factor, (f"too slow: {nps} nps against the reference {ref.nps}, factor "
                        f"{factor:.2f} > maxfactor {ref.maxfactor:g}")
    return factor, None


def scale_engine(d: dict, factor: float) -> dict:
    """An engine's settings (``EngineConfig.to_dict``) with its clock scaled by ``factor``."""
    e = EngineConfig.from_dict(d)
    if e.tc is not None and not e.tc.infinite:
        e.tc = replace(e.tc, base=round(e.tc.base * factor, 3), inc=round(e.tc.inc * factor, 3))
    if e.st:
        e.st = round(e.st * factor, 3)
    return e.to_dict()
