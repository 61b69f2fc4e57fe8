"""The pairing schedule: which engines meet, with which colours and which opening.

A *pair* is the unit of work: the games of one encounter that share an opening
(two games with colours swapped under ``-repeat``, otherwise one game). Pair ids
are positions in a schedule that depends only on the run's settings, so a
resumed run plays the same pairs with the same openings.

Which opening a pair gets follows cutechess-cli's ``policy=``: ``default`` a new
opening for every pair (each opening is played ``-repeat`` times), ``encounter``
a new one only when the pair of players changes, ``round`` one per round.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GameSpec:
    pair_id: int
    game_in_pair: int
    number: int  # 1-based game number in the schedule (the PGN Round tag)
    round: int  # 0-based round
    white: int  # engine indices
    black: int
    e1: int  # the encounter's first engine (results are counted from its view)
    e2: int


@dataclass(frozen=True)
class PairSpec:
    pair_id: int
    round: int
    e1: int
    e2: int
    opening_k: int  # position in the run's opening sequence
    games: tuple[GameSpec, ...]


def encounters(n_engines: int, tournament: str) -> list[tuple[int, int]]:
    if tournament == "gauntlet":
        return [(0, j) for j in range(1, n_engines)]
    if tournament == "roundrobin":
        return [(i, j) for i in range(n_engines) for j in range(i + 1, n_engines)]
    raise ValueError(f"unknown tournament type {tournament!r} (gauntlet or roundrobin)")


POLICIES = ("default", "encounter", "round")


def make_schedule(
    n_engines: int, tournament: str, rounds: int, games: int, repeat: bool,
    policy: str = "default",
) -> list[PairSpec]:
    """All pairs of the run, in the order they are started."""
    if policy not in POLICIES:
        raise ValueError(f"unknown openings policy {policy!r} (default, encounter or round)")
    pairs: list[PairSpec] = []
    unit = 2 if repeat else 1
    number = 0
    enc = encounters(n_engines, tournament)
    opening_k = -1
    previous = None  # the encounter of the previous block of games
    for r in range(rounds):
        for e1, e2 in enc:
            if policy == "encounter" and (e1, e2) != previous:
                opening_k += 1  # as cutechess: a match of two engines keeps one opening
            elif policy == "round" and previous is None:
                opening_k += 1
            previous = (e1, e2)
            for start in range(0, games, unit):
                pid = len(pairs)
                specs = []
                for g in range(min(unit, games - start)):
                    k = r * games + start + g  # game index within the encounter
                    first_white = (g == 0) if repeat else (k % 2 == 0)
                    w, b = (e1, e2) if first_white else (e2, e1)
                    number += 1
                    specs.append(GameSpec(pid, g, number, r, w, b, e1, e2))
                k = pid if policy == "default" else opening_k
                pairs.append(PairSpec(pid, r, e1, e2, k, tuple(specs)))
        if policy == "round":
            previous = None
    return pairs
