"""The search driver: iterative deepening, aspiration windows, MultiPV, the clock and the stop
flag, in Python around the kernels of `wasp.search` (one `root_search` call per iteration and
window), so `info` lines print between iterations and a timer thread can stop the search.

`Searcher` owns the arrays a search needs (tables, weights, evaluation cache, TT, the search
data SD with its switches and parameters, move buffers); `wasp.engine.Engine` owns a Searcher
and everything else a front end needs.
"""

import threading
import time

import numpy as np

from wasp.board import move_to_uci
from wasp.evaluate import clear_eval_cache, default_weights, new_eval_cache
from wasp.limits import Limits, Line, Result
from wasp.movepick import (
    SD_AGE,
    SD_COUNTER,
    SD_CURRMOVE,
    SD_CURRMOVENUM,
    SD_EXCLUDED,
    SD_FLAGS,
    SD_HISTORY,
    SD_KILLERS,
    SD_NO_NULL,
    SD_NODE_LIMIT,
    SD_NODES,
    SD_PARAMS,
    SD_PV,
    SD_PVLEN,
    SD_QNODES,
    SD_ROOT_BEST,
    SD_ROOT_MOVES,
    SD_ROOT_N,
    SD_ROOT_NODES,
    SD_ROOT_SKIP,
    SD_SELDEPTH,
    SD_SIZE,
    SD_STOP,
    SD_TT_HITS,
    SD_TT_PROBES,
)
from wasp.nnue.accumulator import NN_HIDDEN, nn_array
from wasp.nnue.netfile import is_net
from wasp.position import copy_state
from wasp.search import (
    INF,
    MATE,
    MATE_BOUND,
    ONE_PLY,
    hash_reply,
    qsearch_root,
    root_prepare,
    root_search,
)
from wasp.searchparams import (
    F_ASPIRATION,
    N_SEARCH_PARAMS,
    N_TECHNIQUES,
    P_ASPIRATION_DEPTH,
    P_ASPIRATION_WIDEN,
    P_ASPIRATION_WINDOW,
    PARAMS,
    SWITCH_DEFAULTS,
    TECHNIQUES,
    check_value,
    default_search_params,
)
from wasp.tt import new_table, tt_hashfull
from wasp.types import MAX_MOVES, MAX_PLY

EVAL_CACHE_ENTRIES = 1 << 18  # the search's evaluation cache: 4 MB


def technique_names() -> tuple[str, ...]:
    return TECHNIQUES


class Searcher:
    """Owns the search arrays (TT, SD, move buffers) and runs iterative deepening."""

    def __init__(self, hash_mb: int = 16):
        from wasp.bitboards import tables

        self.T = tables()
        self.W = default_weights()
        self.E = new_eval_cache(EVAL_CACHE_ENTRIES)
        self.NN = None  # a net and its accumulators (wasp.nnue) when one is loaded
        self.TT = new_table(hash_mb)
        self.SD = np.zeros(SD_SIZE, dtype=np.int64)
        self.SD[SD_FLAGS:SD_FLAGS + N_TECHNIQUES] = [int(SWITCH_DEFAULTS[n]) for n in TECHNIQUES]
        self.SD[SD_PARAMS:SD_PARAMS + N_SEARCH_PARAMS] = default_search_params()
        self.MB = np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int32)
        self.multipv = 1
        self.age = 0
        self.hard_deadline: float | None = None  # time.monotonic() value; None: no limit
        self._timer_stop = threading.Event()
        self.external_stop: threading.Event | None = None  # set by the UCI `stop`
        self.search_start: float | None = None
        self.on_currmove = None  # called as (depth, move, number) about once a second
        self._depth = 0
        self._S = None

    # -- options -----------------------------------------------------------------------
    def set_hash(self, mb: int) -> None:
        self.TT = new_table(mb)

    def set_technique(self, name: str, on: bool) -> None:
        self.SD[SD_FLAGS + TECHNIQUES.index(name)] = 1 if on else 0

    def technique(self, name: str) -> bool:
        return bool(self.SD[SD_FLAGS + TECHNIQUES.index(name)])

    def set_search_param(self, name: str, value) -> None:
        """One search parameter by name; ValueError (naming it) when unknown or out of range."""
        i, v = check_value(name, value)
        self.SD[SD_PARAMS + i] = v

    def set_search_params(self, values) -> None:
        """All search parameters, in table order (checked against their ranges first)."""
        values = [int(v) for v in values]
        if len(values) != N_SEARCH_PARAMS:
            raise ValueError(f"{len(values)} search parameters, expected {N_SEARCH_PARAMS}")
        for p, v in zip(PARAMS, values, strict=True):
            check_value(p.name, v)
        self.SD[SD_PARAMS:SD_PARAMS + N_SEARCH_PARAMS] = values

    @property
    def search_params(self) -> list[int]:
        return [int(v) for v in self.SD[SD_PARAMS:SD_PARAMS + N_SEARCH_PARAMS]]

    def set_weights(self, W) -> None:
        """New evaluation weights: the hand-written evaluation's vector, or a net
        (`wasp.nnue.netfile.read_net`) that then evaluates instead (none: the vector's weights
        do). The TT and the evaluation caches are cleared."""
        if is_net(W):
            self.NN = nn_array(W)
        else:
            self.W = np.ascontiguousarray(W, dtype=np.int64)
            self.NN = None
        self.clear()

    @property
    def net_hidden(self) -> int:
        """N of the net that evaluates, 0 when the hand-written evaluation does."""
        return 0 if self.NN is None else int(self.NN[NN_HIDDEN])

    def evaluation(self):
        """(W, NN) as the search kernels take them: (None, the net) when a net evaluates,
        (the weights, None) when the hand-written evaluation does. The None tells numba which
        evaluation to compile (`wasp.search._eval`)."""
        return (None, self.NN) if self.NN is not None else (self.W, None)

    def clear(self) -> None:
        """Forget everything learnt (`ucinewgame`, `Clear Hash`)."""
        self.TT[:] = 0
        clear_eval_cache(self.E)
        SD = self.SD
        SD[SD_KILLERS:SD_PVLEN] = 0  # killers, countermoves, history
        self.age = 0

    def stop(self) -> None:
        self.SD[SD_STOP] = 1

    # -- the search --------------------------------------------------------------------
    def _timer(self) -> None:
        last_currmove = time.monotonic()
        while not self._timer_stop.wait(0.002):
            if self.external_stop is not None and self.external_stop.is_set():
                self.SD[SD_STOP] = 1
                return
            now = time.monotonic()
            d = self.hard_deadline
            if d is not None and now >= d:
                self.SD[SD_STOP] = 1
                return
            if self.on_currmove is not None and now - last_currmove >= 1.0:
                last_currmove = now
                m = int(self.SD[SD_CURRMOVE])
                if m and self._depth > 0:
                    self.on_currmove(self._depth, move_to_uci(m, self._S),
                                     int(self.SD[SD_CURRMOVENUM]))

    def search(self, position, limits: Limits | None = None, on_info=None) -> Result:
        """Iterative deepening on a copy of `position` (a wasp.board.Position)."""
        limits = limits or Limits()
        SD = self.SD
        S = copy_state(position.S)
        self._S = S  # for move text: Chess960 castling reads the game's rook squares
        start = time.monotonic()
        self.search_start = start
        SD[SD_STOP] = 0
        SD[SD_CURRMOVE] = 0
        SD[SD_NODES] = 0
        SD[SD_QNODES] = 0
        SD[SD_SELDEPTH] = 0
        SD[SD_TT_HITS] = 0
        SD[SD_TT_PROBES] = 0
        SD[SD_NODE_LIMIT] = limits.nodes or 0
        SD[SD_NO_NULL:SD_NO_NULL + MAX_PLY] = 0
        SD[SD_EXCLUDED:SD_EXCLUDED + MAX_PLY] = 0
        SD[SD_KILLERS:SD_COUNTER] = 0
        SD[SD_HISTORY:SD_HISTORY + 768] //= 4
        self.age = (self.age + 1) & 0x3F
        SD[SD_AGE] = self.age
        clock_start = start if limits.start is None else min(limits.start, start)
        if limits.hard_ms is not None:
            self.hard_deadline = clock_start + limits.hard_ms / 1000.0
        elif limits.movetime is not None:
            self.hard_deadline = clock_start + limits.movetime / 1000.0
        else:
            self.hard_deadline = None
        if self.hard_deadline is None and self.external_stop is None \
                and self.on_currmove is None:
            # Nothing for a timer to watch (a node or depth limit, as self-play data uses):
            # no thread, whose start and join cost more than a 5,000-node search.
            return self._iterate(S, limits, on_info, start, clock_start)
        self._timer_stop.clear()
        timer = threading.Thread(target=self._timer, daemon=True)
        timer.start()
        try:
            return self._iterate(S, limits, on_info, start, clock_start)
        finally:
            self._timer_stop.set()
            timer.join()

    def _root_moves(self):
        n = int(self.SD[SD_ROOT_N])
        return self.SD[SD_ROOT_MOVES:SD_ROOT_MOVES + n].tolist()

    def _set_root_moves(self, moves):
        SD = self.SD
        n = len(moves)
        SD[SD_ROOT_MOVES:SD_ROOT_MOVES + n] = moves
        SD[SD_ROOT_N] = n

    def _pv(self):
        SD = self.SD
        end = int(SD[SD_PVLEN])
        return [m for m in SD[SD_PV:SD_PV + end].tolist() if m != 0]

    def _iterate(self, S, limits, on_info, start, clock_start) -> Result:
        T, E, TT, SD, MB = self.T, self.E, self.TT, self.SD, self.MB
        W, NN = self.evaluation()
        n = root_prepare(T, S, TT, SD, MB)
        moves = self._root_moves()
        if limits.searchmoves:
            wanted = set(limits.searchmoves)
            chosen = [m for m in moves if move_to_uci(m, S) in wanted or move_to_uci(m) in wanted]
            if chosen:
                moves = chosen
                self._set_root_moves(moves)
                SD[SD_ROOT_NODES:SD_ROOT_NODES + len(moves)] = 0
        n = len(moves)
        if n == 0:
            return Result("0000", None, 0, 0, 0, 0, [])
        max_depth = min(limits.depth or (MAX_PLY - 8), MAX_PLY - 8)
        multipv = max(1, min(self.multipv, n))
        best_pv = [moves[0]]
        best_score = 0
        scores = [0] * multipv
        completed = 0
        depth_nodes = []

        def elapsed_ms():
            return int((time.monotonic() - start) * 1000)

        def report(depth, pv_index, score, bound, pv):
            if on_info is None:
                return
            on_info(Line(depth, int(SD[SD_SELDEPTH]), pv_index + 1, int(score), bound,
                         int(SD[SD_NODES]), elapsed_ms(), [move_to_uci(m, S) for m in pv],
                         int(tt_hashfull(TT, self.age))))

        for depth in range(1, max_depth + 1):
            self._depth = depth
            nodes_before = int(SD[SD_NODES])
            SD[SD_ROOT_SKIP:SD_ROOT_SKIP + n] = 0
            lines = []
            for pv_index in range(multipv):
                prev = scores[pv_index]
                delta = int(SD[SD_PARAMS + P_ASPIRATION_WINDOW])
                if (SD[SD_FLAGS + F_ASPIRATION] and depth >= SD[SD_PARAMS + P_ASPIRATION_DEPTH]
                        and abs(prev) < MATE_BOUND):
                    alpha, beta = max(prev - delta, -INF), min(prev + delta, INF)
                else:
                    alpha, beta = -INF, INF
                while True:
                    SD[SD_ROOT_BEST] = 0
                    v = int(root_search(T, S, W, E, NN, TT, SD, MB, alpha, beta,
                                              depth * ONE_PLY))
                    if SD[SD_STOP]:
                        break
                    if v <= alpha:
                        report(depth, pv_index, alpha, "upperbound", self._pv() or best_pv)
                        beta = (alpha + beta) // 2
                        alpha = max(v - delta, -INF)
                    elif v >= beta:
                        report(depth, pv_index, beta, "lowerbound", self._pv())
                        beta = min(v + delta, INF)
                    else:
                        break
                    delta = delta * int(SD[SD_PARAMS + P_ASPIRATION_WIDEN]) // 100
                if SD[SD_STOP]:
                    # A partial iteration counts when a root move beat the window.
                    if pv_index == 0 and SD[SD_ROOT_BEST] != 0 and completed > 0:
                        pv = self._pv()
                        if pv and pv[0] == SD[SD_ROOT_BEST] and v > -INF:
                            best_pv = pv
                    break
                pv = self._pv() or [int(SD[SD_ROOT_BEST]) or moves[0]]
                scores[pv_index] = v
                lines.append((v, pv))
                report(depth, pv_index, v, "", pv)
                # Exclude this line's move for the next MultiPV line.
                rm = self._root_moves()
                idx = rm.index(pv[0]) if pv[0] in rm else -1
                if idx >= 0:
                    SD[SD_ROOT_SKIP + idx] = 1
                if pv_index == 0:
                    best_pv, best_score = pv, v
            if SD[SD_STOP] and not lines:
                break
            completed = depth
            depth_nodes.append(int(SD[SD_NODES]) - nodes_before)
            # Root move order: the best lines first, the others by subtree size.
            rm = self._root_moves()
            node_counts = dict(zip(rm, SD[SD_ROOT_NODES:SD_ROOT_NODES + len(rm)].tolist(),
                                   strict=True))
            firsts = [pv[0] for _, pv in lines]
            rest = sorted((m for m in rm if m not in firsts), key=lambda m: -node_counts[m])
            order = firsts + rest
            self._set_root_moves(order)
            SD[SD_ROOT_NODES:SD_ROOT_NODES + n] = [node_counts[m] for m in order]
            if SD[SD_STOP]:
                break
            if limits.mate and abs(best_score) >= MATE_BOUND and best_score > 0:
                if (MATE - best_score + 1) // 2 <= limits.mate:
                    break
            if abs(best_score) >= MATE_BOUND and not limits.infinite and depth >= 2 * (
                    MATE - abs(best_score)) + 4 and limits.depth is None:
                break  # a mate found and confirmed: deeper iterations cannot change it
            if limits.soft_ms is not None and \
                    (time.monotonic() - clock_start) * 1000 >= limits.soft_ms:
                break
            if n == 1 and limits.soft_ms is not None and depth >= 4:
                break  # a single legal reply: no need to think long
        best = best_pv[0]
        ponder = None
        if len(best_pv) > 1:
            ponder = move_to_uci(best_pv[1], S)
        else:
            ponder = self._tt_reply(S, best)
        return Result(move_to_uci(best, S), ponder, int(best_score), completed, int(SD[SD_NODES]),
                      elapsed_ms(), [move_to_uci(m, S) for m in best_pv], depth_nodes,
                      int(SD[SD_TT_HITS]), int(SD[SD_TT_PROBES]), int(SD[SD_SELDEPTH]))

    def _tt_reply(self, S, best):
        """The hash move after `best`, when legal (a ponder move when the PV is one move)."""
        m = int(hash_reply(self.T, S, self.TT, self.MB, np.int64(best)))
        return move_to_uci(m, S) if m else None

    def qsearch(self, position) -> int:
        S = copy_state(position.S)
        self.SD[SD_STOP] = 0
        self.SD[SD_NODE_LIMIT] = 0
        W, NN = self.evaluation()
        return int(qsearch_root(self.T, S, W, self.E, NN, self.TT, self.SD, self.MB,
                                -INF, INF))


__all__ = ["Limits", "Line", "Result", "Searcher", "MATE", "MATE_BOUND", "INF", "ONE_PLY",
           "technique_names"]
