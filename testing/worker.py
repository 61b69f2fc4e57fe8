"""Playing pairs: a worker's engine processes, the one game-pair player and the rows it hands
to the store.

The player runs in the local worker processes and in the Dask tasks of ``testing.executor``,
for wasp-match, SPSA and self-play alike.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .config import MatchConfig
from .driver import Engine
from .engine import make_engine
from .enginestats import move_stats
from .game import play_game
from .openings import Opening
from .pgn import game_pgn
from .process import EngineError, Logger
from .schedule import GameSpec, PairSpec
from .store import log_rows


class EngineStartError(RuntimeError):
    pass


class PairError(RuntimeError):
    """A pair that cannot be played: an engine that lacks an option it is given, or that
    failed while its options were set."""


@dataclass(frozen=True)
class PairTask:
    """The games of `pair` not in `skip`, from `opening`; with `options`, engine i gets
    ``options[i]`` (by setoption) before each game (SPSA's theta + c and theta - c)."""

    pair: PairSpec
    opening: Opening
    skip: frozenset[int] = frozenset()
    options: tuple[dict, ...] | None = None

    @property
    def key(self) -> str:
        """The task's name among a run's tasks."""
        return f"pair-{self.pair.pair_id}"

    @property
    def games(self) -> list[GameSpec]:
        return [g for g in self.pair.games if g.game_in_pair not in self.skip]


class EngineSet:
    """One worker's engine processes, started lazily and restarted after failures."""

    def __init__(self, cfg: MatchConfig, logger: Logger | None = None, env: dict | None = None):
        self.cfg = cfg
        self.logger = logger
        self.env = env or {}
        self.engines: dict[int, Engine] = {}
        self.cores: list[int] | None = None  # -use-affinity: the current game's cores

    def pin(self, cores: list[int]) -> None:
        """Run this worker and its engines (running or started later) on ``cores``."""
        from .affinity import pin

        if cores == self.cores:
            return
        self.cores = list(cores)
        os.sched_setaffinity(0, self.cores)  # engines started from now on inherit it
        for e in self.engines.values():
            if e.p is not None:
                pin(e.p.proc.pid, self.cores)

    def get(self, idx: int) -> Engine:
        ecfg = self.cfg.engines[idx]
        e = self.engines.get(idx)
        if e is not None and (e.broken or not e.alive()):
            e.kill()
            e = None
        if e is None:
            if self.env:
                ecfg = type(ecfg).from_dict({**ecfg.to_dict(), "env": {**ecfg.env, **self.env}})
            e = make_engine(ecfg, self.logger, ponder=self.cfg.ponder,
                            chess960=self.cfg.chess960)
            try:
                e.start()
            except EngineError as err:
                e.kill()
                raise EngineStartError(f"engine {ecfg.name!r} failed to start: {err}") from err
            self.engines[idx] = e
        return e

    def after_game(self, idx: int) -> None:
        e = self.engines.get(idx)
        if e is None:
            return
        if e.broken:
            e.kill()
            del self.engines[idx]
        elif self.cfg.engines[idx].restart:
            e.quit()
            del self.engines[idx]

    def close(self) -> None:
        for e in self.engines.values():
            e.quit()
        self.engines.clear()

    def kill(self) -> None:
        for e in list(self.engines.values()):
            e.kill()
        self.engines.clear()


def game_row(cfg: MatchConfig, spec: GameSpec, rec, opening: Opening) -> dict:
    """The store row of a finished game (plus a few runner-only keys starting with ``_``)."""
    names = [e.name for e in cfg.engines]
    tc = cfg.engines[spec.white].tc
    pgn = game_pgn(
        rec,
        event=cfg.event,
        site=cfg.site,
        round_=str(spec.number),
        time_control=tc.pgn_tag() if tc else None,
        options=cfg.pgn,
    )
    first_white = opening.board().turn
    sides = {"white": names[spec.white], "black": names[spec.black]}
    return {
        "pair_id": spec.pair_id,
        "game_in_pair": spec.game_in_pair,
        "round": spec.round,
        "engine1": names[spec.e1],
        "engine2": names[spec.e2],
        "white": names[spec.white],
        "black": names[spec.black],
        "opening_index": opening.index,
        "opening_fen": opening.fen,
        "opening_moves": " ".join(opening.moves),
        "result": rec.result,
        "termination": rec.termination,
        "reason": rec.reason,
        "plies": rec.plies,
        "white_time": rec.white_time,
        "black_time": rec.black_time,
        "time_loss": int(rec.time_loss),
        "start_time": rec.start_time,
        "end_time": rec.end_time,
        "moves": " ".join(m.uci for m in rec.moves),
        "final_fen": rec.final_fen,
        "pgn": pgn,
        "number": spec.number,
        "move_stats": move_stats(rec, first_white),
        "_logs": log_rows(sides, rec.transcripts, rec.stderr),
        "_latencies": rec.latencies,
        "_failed": [spec.white if f == "white" else spec.black for f in rec.failed],
    }


def _set_options(engines: EngineSet, spec: GameSpec, options: tuple[dict, ...]) -> None:
    for idx in (spec.white, spec.black):
        e = engines.get(idx)
        known = getattr(e, "options", None)  # the option names the engine declared, lower case
        lacking = [n for n in options[idx] if known is not None and n.lower() not in known]
        if lacking:
            raise PairError(f"engine {e.name!r} has no option {lacking[0]!r}")
        try:
            e.set_options(options[idx])
        except EngineError as err:
            engines.kill()
            raise PairError(f"engine failed while its options were set: {err}") from None


def play_pair(cfg: MatchConfig, task: PairTask, engines: EngineSet) -> list[dict]:
    """Play `task`'s games with `engines` and return their store rows.

    Stops early when an engine failed and ``cfg.recover`` is off. Raises EngineStartError or
    PairError when the pair cannot be played. A task with a ``play(cfg, engines)`` method
    plays its games itself with these engines (`tuner.datagen.run`'s games) and returns them."""
    own = getattr(task, "play", None)
    if own is not None:
        return own(cfg, engines)
    rows = []
    for spec in task.games:
        white = engines.get(spec.white)
        black = engines.get(spec.black)
        if task.options is not None:
            _set_options(engines, spec, task.options)
        rec = play_game(white, black, task.opening, cfg.game_settings())
        engines.after_game(spec.white)
        engines.after_game(spec.black)
        rows.append(game_row(cfg, spec, rec, task.opening))
        if rows[-1]["_failed"] and not cfg.recover:
            break
    return rows
