"""A match planned once: `plan_match` turns a `MatchConfig` (or ``wasp-match``'s arguments) and
a run directory into a `MatchPlan`, the settings to play, the directory and whether the run is
new or resumed. The config is validated, the seed drawn and the openings read here and nowhere
else; `testing.run_match` plays a plan.
"""

from __future__ import annotations

import copy
import os
import secrets
import time
from dataclasses import dataclass

from .args import read
from .config import InputError, MatchConfig, UsageError
from .store import DB_NAME


@dataclass(frozen=True)
class MatchPlan:
    """What `testing.run_match` plays: the checked settings (`srand` drawn), the run directory
    and whether it resumes the run stored there (`resume`) or starts a new one."""

    config: MatchConfig
    rundir: str
    resume: bool

    def __repr__(self) -> str:
        names = " vs ".join(e.name for e in self.config.engines)
        how = "resumed" if self.resume else "new"
        return f"MatchPlan({self.rundir!r}, {how}, {names}, srand {self.config.srand})"


def plan_match(config: MatchConfig | list[str] | None = None, rundir: str | None = None, *,
               session: dict | None = None, new: bool = False,
               spsa: bool = False) -> MatchPlan:
    """The plan of a match: validated, seeded, its openings read, its run directory chosen.

    `config` is one of:

    - a `MatchConfig` (left as given: the plan holds a copy). A `rundir` holding no run starts
      one (default ``runs/<timestamp>``); one holding this match resumes it (its seed kept,
      `MatchConfig.SESSION_FIELDS` as given); one holding another match is refused;
    - the arguments ``wasp-match`` takes (``["-engine", "cmd=stockfish", ...]``,
      ``["-resume", DIR]``), read by its parser and planned as above;
    - None: resume the run stored in `rundir` with its own settings, `session` changing some
      of `MatchConfig.SESSION_FIELDS` (``{"concurrency": 2}``).

    `new` refuses a `rundir` that holds a run (the command lines: a run goes on with
    ``-resume``); `spsa` lets a ``wasp-tune spsa`` run's store be resumed. Raises UsageError
    (a ValueError; InputError for a file) naming the flag and the reason.

    >>> plan = plan_match(["-engine", "cmd=stockfish", "-engine", "cmd=stockfish",
    ...                    "-each", "nodes=1000", "-games", "2"], "runs/two")  # doctest: +SKIP
    >>> plan  # doctest: +SKIP
    MatchPlan('runs/two', new, stockfish vs stockfish-2, srand 1486018012)
    """
    if config is None:
        if rundir is None:
            raise TypeError("plan_match: a config, or the run directory to resume")
        return _resumed(str(rundir), session or {}, spsa)
    if session:
        raise TypeError("plan_match: session changes a stored run's settings: give config=None")
    if isinstance(config, MatchConfig):
        return _planned(copy.deepcopy(config), rundir, new, spsa)
    if isinstance(config, str) or not hasattr(config, "__iter__"):
        raise TypeError("config: a MatchConfig, a list of wasp-match arguments, or None")
    flags = read([str(a) for a in config])
    if rundir is not None:
        if flags.rundir not in (None, str(rundir)):
            flag = "-resume" if flags.resume else "-rundir"
            raise UsageError(f"{flag} {flags.rundir} and rundir={str(rundir)!r} differ")
        flags.rundir = str(rundir)
    if flags.resume:
        return _resumed(flags.rundir, flags.session, spsa)
    return _planned(flags.config, flags.rundir, new, spsa)


def _planned(cfg: MatchConfig, rundir: str | None, new: bool, spsa: bool) -> MatchPlan:
    """`cfg` (the plan's own object) checked, into `rundir`: a new run, or the same match."""
    cfg.validate()
    rundir = str(rundir) if rundir is not None else default_rundir()
    if os.path.exists(os.path.join(rundir, DB_NAME)):
        if new:
            raise UsageError(f"-rundir: {rundir!r} already holds a run (use -resume {rundir})")
        saved = saved_config(rundir, spsa)
        if cfg.srand is None:
            cfg.srand = saved.srand
        if cfg.played() != saved.played():
            raise UsageError(f"{rundir!r} holds a run with other settings (a new run needs a "
                             f"new directory)")
        return MatchPlan(cfg, rundir, True)
    if cfg.srand is None:
        cfg.srand = secrets.randbelow(2**31)
    cfg.check_openings()
    return MatchPlan(cfg, rundir, False)


def _resumed(rundir: str, session: dict, spsa: bool) -> MatchPlan:
    """The run stored in `rundir`, its session settings changed by `session`."""
    bad = sorted(set(session) - set(MatchConfig.SESSION_FIELDS))
    if bad:
        raise TypeError(f"session: {bad[0]!r} is not one of the settings a resumed run may "
                        f"change ({', '.join(MatchConfig.SESSION_FIELDS)})")
    cfg = saved_config(rundir, spsa)
    for key, value in session.items():
        setattr(cfg, key, value)
    cfg.validate()
    return MatchPlan(cfg, rundir, True)


def default_rundir() -> str:
    """``runs/<timestamp>``, numbered when that exists already."""
    base = os.path.join("runs", time.strftime("%Y%m%d-%H%M%S"))
    path, k = base, 1
    while os.path.exists(path):
        k += 1
        path = f"{base}-{k}"
    return path


def saved_config(rundir: str, spsa: bool = False) -> MatchConfig:
    """The settings stored with the run in `rundir` (InputError when it holds none; a
    ``wasp-tune spsa`` run only when `spsa`)."""
    from .store import RunStore

    if not os.path.isfile(os.path.join(rundir, DB_NAME)):
        raise InputError(f"-resume: {rundir!r} holds no run ({DB_NAME} missing)")
    store = RunStore(rundir)
    saved = store.get_meta("config")
    tuned = store.get_meta("spsa")
    store.close()
    if tuned is not None and not spsa:
        raise InputError(f"-resume: {rundir!r} holds a wasp-tune spsa run: resume it with "
                         f"wasp-tune spsa -resume {rundir}")
    if saved is None:
        raise InputError(f"-resume: {rundir!r} has no saved settings")
    return MatchConfig.from_dict(saved)
