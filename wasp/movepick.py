"""Move ordering, and the layout of the search-data array `SD` that ordering shares with search.

Order (Wasp 1.02 plus Mizar's countermove): hash move, IID move (stored in the TT, so it comes
back as the hash move), good captures by MVV-LVA, queen promotions, three killers, the
countermove, quiets with a good history score, bad captures, the rest. With `ContHistory` a
quiet move's history score adds the continuation history of the moves one and two plies before.
"""

import numpy as np
from numba import njit

from wasp.bitboards import U64
from wasp.layout import Layout
from wasp.searchparams import (
    F_CONT_HIST,
    F_COUNTERMOVE,
    F_HISTORY,
    F_KILLERS,
    N_SEARCH_PARAMS,
    N_TECHNIQUES,
    ORDER_HASH,
    ORDER_UNDER_PROMO,
    P_CONT_HIST_BONUS,
    P_CONT_HIST_BONUS_MAX,
    P_CONT_HIST_MAX,
    P_CONT_HIST_WEIGHT,
    P_HISTORY_MAX,
    P_ORDER_BAD_CAPTURE,
    P_ORDER_COUNTER,
    P_ORDER_GOOD_CAPTURE,
    P_ORDER_GOOD_HISTORY,
    P_ORDER_KILLER,
    P_ORDER_QUEEN_PROMO,
)
from wasp.see import captured_type, see_ge0
from wasp.types import (
    MAILBOX,
    MAX_MOVES,
    MAX_PLY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_INFO,
    N_UNDO,
    QUEEN,
    ST_PLY,
    UNDO,
    UNDO_MOVE,
)

# ---------------------------------------------------------------------------
# SD: one flat int64 array with everything the search keeps besides the TT, block after block.
_SD = Layout("search data")
SD_FLAGS = _SD.add(N_TECHNIQUES)  # technique switches (wasp.searchparams' F_*), 1 = on
SD_STOP = _SD.add()  # set to 1 by the Python side (timer, `stop`): the search unwinds
SD_NODES = _SD.add()
SD_NODE_LIMIT = _SD.add()  # 0 = none
SD_SELDEPTH = _SD.add()
SD_TT_HITS = _SD.add()
SD_TT_PROBES = _SD.add()
SD_AGE = _SD.add()  # TT generation, one per `go`
SD_ROOT_N = _SD.add()
SD_CURRMOVE = _SD.add()
SD_CURRMOVENUM = _SD.add()
SD_QNODES = _SD.add()
SD_ROOT_BEST = _SD.add()  # best root move of the iteration so far (0 = none)
SD_ROOT_PLY = _SD.add()  # ST_PLY at the root (the history index where the search starts)
SD_INFO = _SD.add(N_INFO)  # the evaluation's info array
SD_PARAMS = _SD.add(N_SEARCH_PARAMS)  # the search parameters (wasp.searchparams, P_* indices)
SD_KILLERS = _SD.add(MAX_PLY * 3)
SD_COUNTER = _SD.add(12 * 64)  # [piece * 64 + to of the previous move]
SD_HISTORY = _SD.add(12 * 64)  # [piece * 64 + to]
N_PIECE_TO = 12 * 64
SD_CONT_HIST = _SD.add(N_PIECE_TO * N_PIECE_TO)  # [earlier move's piece-to * 768 + piece-to]
CORR_ENTRIES = 1 << 14  # correction history entries per side (a power of two)
SD_CORR_HIST = _SD.add(2 * CORR_ENTRIES)  # [side * CORR_ENTRIES + pawn-structure index]
SD_PVLEN = _SD.add(MAX_PLY)  # [ply]
SD_PV = _SD.add(MAX_PLY * MAX_PLY)  # [ply * MAX_PLY + i] triangular PV table
SD_SCORES = _SD.add(MAX_PLY * MAX_MOVES)  # [ply * MAX_MOVES + i] ordering scores
SD_ROOT_MOVES = _SD.add(MAX_MOVES)
SD_ROOT_NODES = _SD.add(MAX_MOVES)  # nodes under each root move
SD_ROOT_SKIP = _SD.add(MAX_MOVES)  # 1 = excluded (MultiPV lines found)
SD_ROOT_SCORE = _SD.add(MAX_MOVES)  # last score of each root move
SD_NO_NULL = _SD.add(MAX_PLY)  # [ply] 1 = null move off (verification search)
SD_STACK_MOVE = _SD.add(MAX_PLY)  # [ply] piece * 64 + to of the move searched at ply, -1: null
SD_STACK_EVAL = _SD.add(MAX_PLY)  # [ply] the static evaluation at ply (-INF: in check)
SD_EXCLUDED = _SD.add(MAX_PLY)  # [ply] the move a singular search at ply leaves out (0: none)
SD_SIZE = _SD.size

# The ordering score bands and the history limit are search parameters (OrderHash, ...,
# HistoryMax), read from SD[SD_PARAMS + P_*]; the hash move scores ORDER_HASH.


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def move_piece_to(S, m):
    """History index (piece * 64 + to) of a move not yet made."""
    return S.st[MAILBOX + (m & MOVE_FROM_MASK)] * 64 + ((m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def counter_index(S):
    """Countermove slot of the previous move (its piece and destination), -1 if none."""
    ply = S.st[ST_PLY]
    if ply == 0:
        return -1
    prev = S.st[UNDO + (ply - 1) * N_UNDO + UNDO_MOVE]
    if prev == 0:
        return -1
    to = (prev >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    return S.st[MAILBOX + to] * 64 + to


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def cont_rows(SD, ply):
    """The continuation history rows of the moves one and two plies before `ply` (offsets into
    SD; -1 where there is none: before the root, or a null move)."""
    r1 = r2 = -1
    if ply >= 1 and SD[SD_STACK_MOVE + ply - 1] >= 0:
        r1 = SD_CONT_HIST + SD[SD_STACK_MOVE + ply - 1] * N_PIECE_TO
    if ply >= 2 and SD[SD_STACK_MOVE + ply - 2] >= 0:
        r2 = SD_CONT_HIST + SD[SD_STACK_MOVE + ply - 2] * N_PIECE_TO
    return r1, r2


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def quiet_history(SD, pt, use_history, r1, r2):
    """A quiet move's history score (piece-to `pt`): the history table's, plus the weighted
    continuation history of rows r1 and r2 (see cont_rows; -1 for none)."""
    h = SD[SD_HISTORY + pt] if use_history else 0
    c = 0
    if r1 >= 0:
        c += SD[r1 + pt]
    if r2 >= 0:
        c += SD[r2 + pt]
    return h + c * SD[SD_PARAMS + P_CONT_HIST_WEIGHT] // 100


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _order_score(T, S, m, hash_move, noisy_only, k0, k1, k2, use_killers, counter, use_history,
                 SD, r1, r2):
    """The ordering score of one move (the Order* bands of the search parameters)."""
    if m == hash_move:
        return ORDER_HASH
    victim = captured_type(S, m)
    promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
    if victim >= 0 or promo == QUEEN:
        attacker = S.st[MAILBOX + (m & MOVE_FROM_MASK)] % 6
        mvv_lva = 64 * (victim + 1) + 8 * promo - attacker
        if promo == QUEEN and victim < 0:
            return SD[SD_PARAMS + P_ORDER_QUEEN_PROMO]
        if noisy_only or see_ge0(T, S, m, SD, SD_PARAMS):
            return SD[SD_PARAMS + P_ORDER_GOOD_CAPTURE] + mvv_lva
        return SD[SD_PARAMS + P_ORDER_BAD_CAPTURE] + mvv_lva
    if promo:
        return ORDER_UNDER_PROMO + promo
    if use_killers:
        if m == k0:
            return SD[SD_PARAMS + P_ORDER_KILLER] + 3
        if m == k1:
            return SD[SD_PARAMS + P_ORDER_KILLER] + 2
        if m == k2:
            return SD[SD_PARAMS + P_ORDER_KILLER] + 1
    if m == counter:
        return SD[SD_PARAMS + P_ORDER_COUNTER]
    h = quiet_history(SD, move_piece_to(S, m), use_history, r1, r2)
    return SD[SD_PARAMS + P_ORDER_GOOD_HISTORY] + h if h > 0 else h


@njit(cache=True, nogil=True, _nrt=False)
def score_moves(T, S, SD, moves, n, ply, hash_move, noisy_only):
    """Write the ordering keys of moves[0:n] into SD[SD_SCORES + ply * MAX_MOVES + i].

    A key is score * 256 + (255 - index): the largest key is the best score at the lowest
    index, so pick_next needs one max per pick and no index bookkeeping (MAX_MOVES = 256).
    """
    base = SD_SCORES + ply * MAX_MOVES
    k0 = SD[SD_KILLERS + 3 * ply]
    k1 = SD[SD_KILLERS + 3 * ply + 1]
    k2 = SD[SD_KILLERS + 3 * ply + 2]
    use_killers = SD[SD_FLAGS + F_KILLERS] != 0
    use_history = SD[SD_FLAGS + F_HISTORY] != 0
    counter = 0
    if SD[SD_FLAGS + F_COUNTERMOVE] != 0:
        ci = counter_index(S)
        if ci >= 0:
            counter = SD[SD_COUNTER + ci]
    r1 = r2 = -1
    if SD[SD_FLAGS + F_CONT_HIST] != 0:
        r1, r2 = cont_rows(SD, ply)
    for i in range(n):
        s = _order_score(T, S, np.int64(moves[i]), hash_move, noisy_only, k0, k1, k2, use_killers,
                         counter, use_history, SD, r1, r2)
        SD[base + i] = s * 256 + (255 - i)


@njit(cache=True, nogil=True, _nrt=False)
def pick_next(SD, moves, n, i, ply):
    """Bring the best-scored move of moves[i:n] to index i (the first of equals) and return
    it: a selection sort step; the move it displaces takes the picked one's index."""
    base = SD_SCORES + ply * MAX_MOVES
    bk = SD[base + i]
    for j in range(U64(base + i + 1), U64(base + n)):  # unsigned: vectorised loads
        k = SD[j]
        if k > bk:
            bk = k
    best = 255 - (bk & 255)
    if best != i:
        m = moves[i]
        moves[i] = moves[best]
        moves[best] = m
        SD[base + best] = SD[base + i] + i - best  # same score, its new index
        SD[base + i] = bk
    return np.int64(moves[i])  # a move is int64 everywhere: one make_move for all callers


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _cont_update(SD, ply, pt, depth_plies, sign):
    """Continuation history of piece-to `pt` after the moves one and two plies before: a
    bonus (sign 1) or malus (-1) of ContHistBonus * depth^2 (at most ContHistBonusMax),
    pulled towards the bound ContHistMax as it nears it (v += b - v * |b| / max)."""
    if SD[SD_FLAGS + F_CONT_HIST] == 0:
        return
    b = min(SD[SD_PARAMS + P_CONT_HIST_BONUS] * depth_plies * depth_plies,
            SD[SD_PARAMS + P_CONT_HIST_BONUS_MAX])
    bound = SD[SD_PARAMS + P_CONT_HIST_MAX]
    r1, r2 = cont_rows(SD, ply)
    for r in (r1, r2):
        if r >= 0:
            v = SD[r + pt]
            SD[r + pt] = v + sign * b - v * b // bound


@njit(cache=True, nogil=True, _nrt=False)
def update_quiet_stats(S, SD, ply, m, depth_plies):
    """A quiet move caused a cutoff: killers, countermove, history, continuation history."""
    kb = SD_KILLERS + 3 * ply
    if SD[kb] != m:
        if SD[kb + 1] != m:
            SD[kb + 2] = SD[kb + 1]
        SD[kb + 1] = SD[kb]
        SD[kb] = m
    ci = counter_index(S)
    if ci >= 0:
        SD[SD_COUNTER + ci] = m
    _cont_update(SD, ply, move_piece_to(S, m), depth_plies, 1)
    idx = SD_HISTORY + move_piece_to(S, m)
    SD[idx] += depth_plies * depth_plies
    if SD[idx] > SD[SD_PARAMS + P_HISTORY_MAX]:
        for j in range(12 * 64):
            SD[SD_HISTORY + j] //= 2


@njit(cache=True, nogil=True, _nrt=False)
def penalise_quiet(S, SD, ply, m, depth_plies):
    """A quiet move searched before the cutoff move: lower its history and continuation
    history."""
    _cont_update(SD, ply, move_piece_to(S, m), depth_plies, -1)
    idx = SD_HISTORY + move_piece_to(S, m)
    SD[idx] -= depth_plies * depth_plies
    if SD[idx] < -SD[SD_PARAMS + P_HISTORY_MAX]:
        SD[idx] = -SD[SD_PARAMS + P_HISTORY_MAX]

