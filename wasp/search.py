"""The Wasp 1.02 search kernels: alpha-beta with PVS, quiescence, a transposition table and
Wasp's selectivity (razoring, early stand-pat, null move, late-move pruning, LMR), plus Mizar's
countermove, and the later techniques on trial (off by default until an SPRT accepts them):
history-driven LMR and pruning, continuation history, the improving flag, correction history,
singular extensions.
Kernels only (numba, nogil): iterative deepening, aspiration windows, MultiPV and the clock
are the engine layer's (`wasp.driver`), which calls `root_search` once per iteration.

Depths are in eighths of a ply (ONE_PLY = 8) so that Wasp's 1/8-ply extensions fit.
Every technique is a numbered step below and can be switched off through SD[SD_FLAGS + F_*];
every number it uses is a search parameter (`wasp.searchparams`) read from SD[SD_PARAMS + P_*].
"""

import math

import numpy as np
from numba import njit

from wasp.bitboards import (
    ONE,
    T_KING,
    T_KNIGHT,
    T_PAWN,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    rook_attacks,
)

# The evaluation: this one line chooses it (same interface in wasp.evaluate).
from wasp.evaluate import (
    eval_prefetch,
    evaluate,
)
from wasp.movegen import generate
from wasp.movepick import (
    CORR_ENTRIES,
    SD_AGE,
    SD_CORR_HIST,
    SD_CURRMOVE,
    SD_CURRMOVENUM,
    SD_EXCLUDED,
    SD_FLAGS,
    SD_INFO,
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
    SD_ROOT_SCORE,
    SD_ROOT_SKIP,
    SD_SELDEPTH,
    SD_STACK_EVAL,
    SD_STACK_MOVE,
    SD_STOP,
    SD_TT_HITS,
    SD_TT_PROBES,
    cont_rows,
    move_piece_to,
    penalise_quiet,
    pick_next,
    quiet_history,
    score_moves,
    update_quiet_stats,
)
from wasp.nnue.accumulator import acc_make, acc_null, acc_refresh
from wasp.nnue.evaluate import evaluate as nnue_evaluate
from wasp.position import (
    check_squares,
    current_key,
    gives_check,
    gives_check_fast,
    in_check,
    insufficient_material,
    is_repetition,
    make_move,
    make_null,
    unmake_move,
    unmake_null,
)
from wasp.searchparams import (
    F_CHECK_EXT,
    F_CONT_HIST,
    F_CORR_HIST,
    F_DELTA,
    F_FRACTIONAL_EXT,
    F_FUTILITY,
    F_HIST_LMR,
    F_HISTORY,
    F_IID,
    F_IMPROVING,
    F_LMR,
    F_MATE_DISTANCE,
    F_NULL_MOVE,
    F_NULL_VERIFY,
    F_PAWN7_EXT,
    F_PVS,
    F_QS_SEE,
    F_RAZORING,
    F_SINGULAR,
    F_STAND_PAT,
    F_TT_CUTOFF,
    P_CAPTURE_EXT,
    P_CHECK_EXT,
    P_CORR_HIST_MAX,
    P_CORR_HIST_WEIGHT,
    P_DELTA_MARGIN,
    P_FRACTIONAL_PLIES,
    P_HIST_LMR_DIV,
    P_HIST_LMR_MAX,
    P_HIST_PRUNE_DEPTH,
    P_HIST_PRUNE_MARGIN,
    P_IID_R,
    P_IID_R_PV,
    P_IMPROVING_FUTILITY,
    P_IMPROVING_LMR,
    P_IMPROVING_RAZOR,
    P_IMPROVING_STAND_PAT,
    P_LMP_BASE,
    P_LMP_DEPTH,
    P_LMP_MOVE_COST,
    P_LMP_MOVES,
    P_LMR_DEPTH,
    P_LMR_LATE_MOVES,
    P_LMR_LATE_REDUCTION,
    P_LMR_LOG_BASE,
    P_LMR_LOG_SCALE,
    P_LMR_MOVES,
    P_LMR_REDUCTION,
    P_NULL_DEPTH,
    P_NULL_R,
    P_NULL_VERIFY_DEPTH,
    P_NULL_VERIFY_R,
    P_PAWN7_DEPTH,
    P_PAWN7_EXT,
    P_PV_EXT,
    P_RAZOR_MARGIN_1,
    P_RAZOR_MARGIN_2,
    P_SINGULAR_DEPTH,
    P_SINGULAR_EXT,
    P_SINGULAR_MARGIN,
    P_STAND_PAT_DEPTH,
    P_STAND_PAT_HUNG,
    P_STAND_PAT_MARGIN,
)
from wasp.see import captured_type, see_ge0, see_value
from wasp.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    EVAL_OFFSET,
    data_bound,
    data_depth,
    data_eval,
    data_move,
    data_score,
    tt_prefetch,
    tt_probe,
    tt_store,
)
from wasp.types import (
    B_PAWN,
    BISHOP,
    GEN_ALL,
    GEN_NOISY,
    INFO_HUNG,
    INFO_MATE_THREAT,
    INFO_PAWN_ENDING,
    INFO_PROMO_THREAT,
    KING,
    KNIGHT,
    MAILBOX,
    MATE,
    MATE_BOUND,
    MAX_PLY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_INFO,
    N_UNDO,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    UNDO,
    UNDO_MOVE,
    W_PAWN,
    WHITE,
)

ONE_PLY = 8
INF = 32500
NODE_PV, NODE_CUT, NODE_ALL = 0, 1, 2


# ---------------------------------------------------------------------------
# Helpers


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _to_tt(score, ply):
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _from_tt(score, ply):
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _eval(T, S, W, E, NN, SD):
    """The net's evaluation when NN is a net (wasp.nnue; W is None), else the hand-written one
    (NN is None). The evaluation is chosen by the arguments' types: numba prunes the branch
    of the None argument, so a search compiles (and waits for) its own evaluation only."""
    if NN is not None:
        return nnue_evaluate(T, S, E, NN, SD[SD_INFO:SD_INFO + N_INFO])
    if W is not None:
        return evaluate(T, S, W, E, SD[SD_INFO:SD_INFO + N_INFO])
    return 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _make(T, S, NN, m):
    """make_move, and the net's accumulators of the child when a net is loaded (unmake_move
    needs nothing: the parent's stay below them in NN's stack)."""
    make_move(T, S, m)
    if NN is not None:
        acc_make(S, NN)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _make_null(T, S, NN):
    make_null(T, S)
    if NN is not None:
        acc_null(S, NN)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _prefetch(S, E, TT):
    """Right after a move: start loading the TT bucket and the evaluation cache and pawn hash
    entries the child will probe, so that its other work hides the memory latency."""
    tt_prefetch(TT, current_key(S))
    eval_prefetch(S, E)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _count_node(SD):
    """Count a node; True when the search must unwind (stop flag or node limit)."""
    SD[SD_NODES] += 1
    if SD[SD_NODE_LIMIT] > 0 and SD[SD_NODES] >= SD[SD_NODE_LIMIT]:
        SD[SD_STOP] = 1
    return SD[SD_STOP] != 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _is_draw(S):
    """50-move rule, repetition (of any earlier position, game or search path), bare material."""
    return S.st[ST_HALFMOVE] >= 100 or is_repetition(S, np.int64(1)) or insufficient_material(S)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _copy_pv(SD, ply, m):
    row = SD_PV + ply * MAX_PLY
    nxt = SD_PV + (ply + 1) * MAX_PLY
    SD[row + ply] = m
    end = SD[SD_PVLEN + ply + 1]
    for j in range(ply + 1, end):
        SD[row + j] = SD[nxt + j]
    SD[SD_PVLEN + ply] = end if end > ply + 1 else ply + 1


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _fractional(SD, ext, capture, pv_node):
    """A move's extension `ext` (check or pawn to the 7th) plus the fractional ones for a
    capture and at a PV node, capped at one ply, or at `ext` when that is more."""
    cap = ext if ext > ONE_PLY else ONE_PLY
    if capture:
        ext += SD[SD_PARAMS + P_CAPTURE_EXT]
    if pv_node:
        ext += SD[SD_PARAMS + P_PV_EXT]
    return ext if ext < cap else cap


CORR_GRAIN = 256  # correction history entries hold centipawns * CORR_GRAIN


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _corr_slot(S):
    """The correction history entry of the side to move and its pawn structure."""
    h = (S.bb[W_PAWN] * U64(0x9E3779B97F4A7C15)) ^ (S.bb[B_PAWN] * U64(0xC2B2AE3D27D4EB4F))
    return SD_CORR_HIST + S.st[ST_SIDE] * CORR_ENTRIES + np.int64(
        (h >> U64(40)) & U64(CORR_ENTRIES - 1))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _corrected(S, SD, ev):
    """The static evaluation plus CorrHistWeight % of what the searches of this pawn
    structure learnt it misses, kept inside the range of non-mate scores."""
    c = SD[_corr_slot(S)] * SD[SD_PARAMS + P_CORR_HIST_WEIGHT] // (100 * CORR_GRAIN)
    v = ev + c
    return max(-MATE_BOUND + 1, min(MATE_BOUND - 1, v))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _corr_update(S, SD, diff, d_plies):
    """Move the entry towards `diff` (search score - static evaluation, cp) by a weight that
    grows with the depth (d+1)/256, at most 16/256; entries stay within +-CorrHistMax cp."""
    slot = _corr_slot(S)
    w = min(d_plies + 1, 16)
    bound = SD[SD_PARAMS + P_CORR_HIST_MAX] * CORR_GRAIN
    v = (SD[slot] * (256 - w) + diff * CORR_GRAIN * w) // 256
    SD[slot] = max(-bound, min(bound, v))


@njit(cache=True, nogil=True, _nrt=False)
def _is_tactical_quiet(T, S, SD, m):
    """Wasp's exclusions from pruning and reduction, for a quiet move: a safe pawn push to the
    6th rank or beyond, a safe attack on a bigger piece, a safe attack next to the enemy king."""
    bb = S.bb
    us = S.st[ST_SIDE]
    them = 1 - us
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    pt = S.st[MAILBOX + frm] - 6 * us
    if pt == KING:
        return False
    if pt == PAWN:
        rank = (to >> 3) if us == WHITE else 7 - (to >> 3)
        if rank >= 5:
            return see_ge0(T, S, m, SD, SD_PARAMS)
    occ = (bb[OCC_ALL] ^ (ONE << U64(frm))) | (ONE << U64(to))
    if pt == PAWN:
        att = T[T_PAWN + 64 * us + to]
    elif pt == KNIGHT:
        att = T[T_KNIGHT + to]
    elif pt == BISHOP:
        att = bishop_attacks(T, to, occ)
    elif pt == ROOK:
        att = rook_attacks(T, to, occ)
    else:
        att = rook_attacks(T, to, occ) | bishop_attacks(T, to, occ)
    o = 6 * them
    bigger = ZERO
    if pt == PAWN:
        bigger = bb[o + KNIGHT] | bb[o + BISHOP] | bb[o + ROOK] | bb[o + QUEEN]
    elif pt == KNIGHT or pt == BISHOP:
        bigger = bb[o + ROOK] | bb[o + QUEEN]
    elif pt == ROOK:
        bigger = bb[o + QUEEN]
    near_king = T[T_KING + lsb(bb[6 * them + KING])]
    if (att & bigger) or (att & near_king & ~bb[OCC_WHITE + us]):
        return see_ge0(T, S, m, SD, SD_PARAMS)
    return False


# ---------------------------------------------------------------------------
# Quiescence search


@njit(cache=True, nogil=True, _nrt=False)
def _qsearch(T, S, W, E, NN, TT, SD, MB, alpha, beta, ply, known_check):
    """Captures and queen promotions (all evasions when in check) until the position is quiet.
    `known_check`: 1 or 0 when the caller knows whether the side to move is in check, else -1."""
    SD[SD_PVLEN + ply] = ply
    if _count_node(SD):
        return 0
    SD[SD_QNODES] += 1
    if ply > SD[SD_SELDEPTH]:
        SD[SD_SELDEPTH] = ply
    if _is_draw(S):
        return 0
    if ply >= MAX_PLY - 4:
        return _eval(T, S, W, E, NN, SD)
    pv_node = beta - alpha > 1

    # Step Q1. Transposition table (qsearch entries have depth 0).
    key = current_key(S)
    hash_move = 0
    tt_ev = -INF
    SD[SD_TT_PROBES] += 1
    data = tt_probe(TT, key)
    if data != -1:
        SD[SD_TT_HITS] += 1
        hash_move = data_move(data)
        tt_ev = data_eval(data)
        if SD[SD_FLAGS + F_TT_CUTOFF] != 0 and not pv_node:
            s = _from_tt(data_score(data), ply)
            b = data_bound(data)
            if b == BOUND_EXACT or (b == BOUND_LOWER and s >= beta) or (
                    b == BOUND_UPPER and s <= alpha):
                return s

    # Step Q2. Stand pat (not in check): the side to move may decline every capture.
    checked = in_check(T, S) if known_check < 0 else known_check != 0
    orig_alpha = alpha
    moves = MB[ply]
    stand = -INF
    raw = 0  # the static evaluation as the TT keeps it (uncorrected)
    if checked:
        best = -MATE + ply
        n = generate(T, S, moves, np.int64(GEN_ALL), np.bool_(True))
        if n == 0:
            return best
        score_moves(T, S, SD, moves, n, ply, hash_move, np.bool_(False))
    else:
        # The static evaluation; an entry of this position stored it exactly (not in check
        # there either) unless clamped to the field's range.
        if -EVAL_OFFSET < tt_ev < EVAL_OFFSET - 1:
            raw = tt_ev
        else:
            raw = _eval(T, S, W, E, NN, SD)
        stand = _corrected(S, SD, raw) if SD[SD_FLAGS + F_CORR_HIST] != 0 else raw
        if stand >= beta:
            return stand
        best = stand
        if stand > alpha:
            alpha = stand
        n = generate(T, S, moves, np.int64(GEN_NOISY), np.bool_(True))
        score_moves(T, S, SD, moves, n, ply, hash_move, np.bool_(True))

    best_move = 0
    for i in range(n):
        m = pick_next(SD, moves, n, i, ply)
        if not checked:
            promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
            if promo != 0 and promo != QUEEN:
                continue  # under-promotions are left to the main search
            # Step Q3. Delta pruning: even winning the piece cannot lift the score to alpha.
            if SD[SD_FLAGS + F_DELTA] != 0:
                victim = captured_type(S, m)
                gain = see_value(SD, SD_PARAMS, victim) if victim >= 0 else 0
                if promo == QUEEN:
                    gain += see_value(SD, SD_PARAMS, QUEEN) - see_value(SD, SD_PARAMS, PAWN)
                if stand + gain + SD[SD_PARAMS + P_DELTA_MARGIN] <= alpha:
                    continue
            # Step Q4. SEE pruning: losing captures are not searched.
            if SD[SD_FLAGS + F_QS_SEE] != 0 and not see_ge0(T, S, m, SD, SD_PARAMS):
                continue
        SD[SD_STACK_MOVE + ply] = move_piece_to(S, m)
        _make(T, S, NN, m)
        _prefetch(S, E, TT)
        score = -_qsearch(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, ply + 1, np.int64(-1))
        unmake_move(T, S)
        if SD[SD_STOP] != 0:
            return 0
        if score > best:
            best = score
            if score > alpha:
                best_move = m
                if pv_node:
                    _copy_pv(SD, ply, m)
                if score >= beta:
                    break
                alpha = score

    # Step Q5. Store.
    if best >= beta:
        bound = BOUND_LOWER
    elif pv_node and best > orig_alpha:
        bound = BOUND_EXACT
    else:
        bound = BOUND_UPPER
    tt_store(TT, key, best_move, _to_tt(best, ply), raw, np.int64(0), bound, SD[SD_AGE])
    return best


# ---------------------------------------------------------------------------
# Main search


@njit(cache=True, nogil=True, _nrt=False)
def _search(T, S, W, E, NN, TT, SD, MB, alpha, beta, depth, ply, node, known_check):
    """Alpha-beta (PVS) to `depth` eighths of a ply; `node` is the expected node type;
    `known_check` 1 or 0 when the caller knows whether the side to move is in check, else -1."""
    pv_node = node == NODE_PV
    SD[SD_PVLEN + ply] = ply
    checked = in_check(T, S) if known_check < 0 else known_check != 0

    # Step 1. Horizon: quiescence search unless in check.
    if depth < ONE_PLY and not checked:
        return _qsearch(T, S, W, E, NN, TT, SD, MB, alpha, beta, ply, np.int64(0))

    # Step 2. Count the node; unwind when stopped.
    if _count_node(SD):
        return 0
    if ply > SD[SD_SELDEPTH]:
        SD[SD_SELDEPTH] = ply

    # Step 3. Draws (repetition, 50 moves, insufficient material) and mate distance pruning.
    if _is_draw(S):
        return 0
    if ply >= MAX_PLY - 4:
        return _eval(T, S, W, E, NN, SD)
    if SD[SD_FLAGS + F_MATE_DISTANCE] != 0:
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha

    # Step 4. Transposition table lookup; cutoff at non-PV nodes. A singular search
    # (Step 11a: `excluded` is the move it leaves out) takes no cutoff: the entry is the
    # value of the position with every move.
    d_plies = depth // ONE_PLY
    key = current_key(S)
    hash_move = 0
    excluded = SD[SD_EXCLUDED + ply]
    SD[SD_TT_PROBES] += 1
    data = tt_probe(TT, key)
    if data != -1:
        SD[SD_TT_HITS] += 1
        hash_move = data_move(data)
        if (SD[SD_FLAGS + F_TT_CUTOFF] != 0 and not pv_node and data_depth(data) >= d_plies
                and excluded == 0):
            s = _from_tt(data_score(data), ply)
            b = data_bound(data)
            if b == BOUND_EXACT or (b == BOUND_LOWER and s >= beta) or (
                    b == BOUND_UPPER and s <= alpha):
                return s

    # Step 5. Static evaluation and what the evaluation knows about threats.
    if checked:
        ev = raw_ev = -INF
        hung = 0
        pawn_ending = 0
        threat = 1
    else:
        ev = raw_ev = _eval(T, S, W, E, NN, SD)
        hung = SD[SD_INFO + INFO_HUNG]
        pawn_ending = SD[SD_INFO + INFO_PAWN_ENDING]
        threat = SD[SD_INFO + INFO_MATE_THREAT] | SD[SD_INFO + INFO_PROMO_THREAT]
        # Step 5a. Correction history (CorrHistory): add what the searches of positions with
        # these pawns found the evaluation to miss (pawn structures are misjudged alike).
        if SD[SD_FLAGS + F_CORR_HIST] != 0:
            ev = _corrected(S, SD, raw_ev)
    SD[SD_STACK_EVAL + ply] = ev

    # Step 5b. Improving (Improving): the static score is above the one two plies before,
    # with the same side to move; then fail-high pruning is safer and fail-low pruning and
    # reductions less so. Unknown (in check now or then, near the root): improving.
    improving = True
    use_improving = SD[SD_FLAGS + F_IMPROVING] != 0
    if use_improving and ply >= 2 and not checked:
        before = SD[SD_STACK_EVAL + ply - 2]
        improving = before == -INF or ev > before

    # Step 6. Razoring at expected ALL nodes: far below alpha near the horizon, and the
    # captures confirm it, so the node fails low.
    # Steps 6 to 9 are skipped in a singular search: its result is only a test of the
    # other moves, and the parent prunes or searches this position itself.
    if (SD[SD_FLAGS + F_RAZORING] != 0 and node == NODE_ALL and not checked and d_plies <= 2
            and alpha > -MATE_BOUND and excluded == 0):
        margin = SD[SD_PARAMS + (P_RAZOR_MARGIN_1 if d_plies <= 1 else P_RAZOR_MARGIN_2)]
        if use_improving and improving:
            margin += SD[SD_PARAMS + P_IMPROVING_RAZOR]
        if ev <= alpha - margin:
            q = _qsearch(T, S, W, E, NN, TT, SD, MB, alpha, alpha + 1, ply, np.int64(0))
            if q <= alpha:
                return q

    # Step 7. Early stand-pat (beta) pruning at expected CUT nodes: far enough above beta
    # (a margin per ply, and at least a share of the hung material), with no threat the
    # static score misses, the node fails high.
    if (SD[SD_FLAGS + F_STAND_PAT] != 0 and node == NODE_CUT and not checked
            and d_plies <= SD[SD_PARAMS + P_STAND_PAT_DEPTH]
            and threat == 0 and pawn_ending == 0 and beta < MATE_BOUND and excluded == 0):
        margin = max(hung * SD[SD_PARAMS + P_STAND_PAT_HUNG] // 100,
                     SD[SD_PARAMS + P_STAND_PAT_MARGIN] * d_plies)
        if use_improving and improving:
            margin = max(margin - SD[SD_PARAMS + P_IMPROVING_STAND_PAT], 0)
        if ev >= beta + margin:
            return ev

    # Step 8. Null move (R=3) at expected CUT nodes, verified by a search reduced by 4 plies
    # at depth >= 5 (zugzwang insurance; pawn endings are skipped altogether).
    if (SD[SD_FLAGS + F_NULL_MOVE] != 0 and node == NODE_CUT and not checked
            and d_plies >= SD[SD_PARAMS + P_NULL_DEPTH]
            and ev >= beta and pawn_ending == 0 and SD[SD_NO_NULL + ply] == 0 and excluded == 0
            and beta < MATE_BOUND and S.st[UNDO + (S.st[ST_PLY] - 1) * N_UNDO + UNDO_MOVE] != 0):
        SD[SD_STACK_MOVE + ply] = -1
        _make_null(T, S, NN)
        _prefetch(S, E, TT)
        v = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -beta + 1,
                     depth - (1 + SD[SD_PARAMS + P_NULL_R]) * ONE_PLY, ply + 1,
                     np.int64(NODE_ALL), np.int64(0))
        unmake_null(T, S)
        if SD[SD_STOP] != 0:
            return 0
        if v >= beta:
            if v >= MATE_BOUND:
                v = beta
            if SD[SD_FLAGS + F_NULL_VERIFY] == 0 or d_plies < SD[SD_PARAMS + P_NULL_VERIFY_DEPTH]:
                return v
            SD[SD_NO_NULL + ply] = 1
            v2 = _search(T, S, W, E, NN, TT, SD, MB, beta - 1, beta,
                         depth - SD[SD_PARAMS + P_NULL_VERIFY_R] * ONE_PLY, ply,
                         np.int64(NODE_CUT), np.int64(0))
            SD[SD_NO_NULL + ply] = 0
            if SD[SD_STOP] != 0:
                return 0
            if v2 >= beta:
                return v

    # Step 9. Internal iterative deepening when there is no hash move (R=3 PV, R=4 others).
    # With one, the same call is Step 11a's singular search (SingularExt): the hash move was
    # a lower bound of a search not much shallower; if no other move reaches a margin below
    # its score in a null-window search to half the depth, it is singular and is extended.
    # The singular search runs before the move list is made: it writes this ply's.
    pre_alpha = pre_beta = pre_depth = 0
    pre_node = node
    singular = False
    if excluded == 0:
        if SD[SD_FLAGS + F_IID] != 0 and hash_move == 0:
            r = SD[SD_PARAMS + (P_IID_R_PV if pv_node else P_IID_R)]
            if d_plies > r:
                pre_alpha, pre_beta, pre_depth = alpha, beta, depth - r * ONE_PLY
        elif (SD[SD_FLAGS + F_SINGULAR] != 0 and hash_move != 0
              and d_plies >= SD[SD_PARAMS + P_SINGULAR_DEPTH]
              and data_bound(data) != BOUND_UPPER and data_depth(data) >= d_plies - 3):
            tt_score = _from_tt(data_score(data), ply)
            if abs(tt_score) < MATE_BOUND:
                pre_beta = max(tt_score - SD[SD_PARAMS + P_SINGULAR_MARGIN] * depth // ONE_PLY,
                               -MATE_BOUND + 1)
                pre_alpha, pre_depth = pre_beta - 1, (depth - ONE_PLY) // 2
                pre_node = np.int64(NODE_CUT) if node == NODE_CUT else np.int64(NODE_ALL)
                SD[SD_EXCLUDED + ply] = hash_move
    if pre_depth > 0:
        v = _search(T, S, W, E, NN, TT, SD, MB, pre_alpha, pre_beta, pre_depth, ply, pre_node,
                    np.int64(1) if checked else np.int64(0))
        SD[SD_EXCLUDED + ply] = 0
        if SD[SD_STOP] != 0:
            return 0
        if hash_move == 0:
            data = tt_probe(TT, key)
            if data != -1:
                hash_move = data_move(data)
        else:
            singular = v < pre_beta

    # Step 10. Generate and order the moves.
    moves = MB[ply]
    n = generate(T, S, moves, np.int64(GEN_ALL), np.bool_(True))
    if n == 0:
        return -MATE + ply if checked else 0
    score_moves(T, S, SD, moves, n, ply, hash_move, np.bool_(False))

    orig_alpha = alpha
    best = -INF
    best_move = 0
    searched = 0
    child = np.int64(NODE_ALL) if node == NODE_CUT else np.int64(NODE_CUT)
    us = S.st[ST_SIDE]
    # What the check test needs, once the first move did not cut off.
    have_cs = False
    cs_p = cs_n = cs_b = cs_r = cs_disc = ZERO
    cs_k = 0
    # What history-driven LMR and history pruning read: the continuation rows of the moves
    # one and two plies before (with ContHistory).
    hist_lmr = SD[SD_FLAGS + F_HIST_LMR] != 0
    use_history = SD[SD_FLAGS + F_HISTORY] != 0
    r1 = r2 = -1
    if SD[SD_FLAGS + F_CONT_HIST] != 0:
        r1, r2 = cont_rows(SD, ply)
    for i in range(n):
        m = pick_next(SD, moves, n, i, ply)
        if m == excluded:
            continue
        capture = captured_type(S, m) >= 0
        promo = (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK
        quiet = not capture and promo == 0
        if i == 0:
            check = gives_check(T, S, m)
        else:
            if not have_cs:
                cs_p, cs_n, cs_b, cs_r, cs_disc, cs_k = check_squares(T, S)
                have_cs = True
            check = gives_check_fast(T, S, m, cs_p, cs_n, cs_b, cs_r, cs_disc, cs_k)

        # Step 11. Extensions: check +1 ply; pawn to the 7th near the horizon +1 ply;
        # captures and PV nodes +1/8 ply in the first plies from the root (never past one
        # ply in all, or past the full extension when that is more).
        ext = 0
        to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
        if check and SD[SD_FLAGS + F_CHECK_EXT] != 0:
            ext = SD[SD_PARAMS + P_CHECK_EXT]
        elif (SD[SD_FLAGS + F_PAWN7_EXT] != 0 and d_plies <= SD[SD_PARAMS + P_PAWN7_DEPTH]
              and S.st[MAILBOX + (m & MOVE_FROM_MASK)] == 6 * us + PAWN
              and ((to >> 3) == 6 if us == WHITE else (to >> 3) == 1)):
            ext = SD[SD_PARAMS + P_PAWN7_EXT]
        # Step 11a. Singular extension (SingularExt): the hash move, when the singular
        # search of Step 9 found no other move near its score.
        if singular and m == hash_move:
            ext = max(ext, SD[SD_PARAMS + P_SINGULAR_EXT])
        if SD[SD_FLAGS + F_FRACTIONAL_EXT] != 0 and ply < SD[SD_PARAMS + P_FRACTIONAL_PLIES]:
            ext = _fractional(SD, ext, capture, pv_node)
        new_depth = depth - ONE_PLY + ext

        # Step 12. Late-move / futility pruning at non-PV nodes: a late quiet move that
        # cannot be tactical, with the score well below alpha.
        # (Improving: the margin is ImprovingFutility smaller when not improving.)
        tactical = -1
        if (SD[SD_FLAGS + F_FUTILITY] != 0 and not pv_node and not checked
                and d_plies <= SD[SD_PARAMS + P_LMP_DEPTH]
                and searched >= SD[SD_PARAMS + P_LMP_MOVES] and not check and quiet
                and best > -MATE_BOUND):
            margin = (SD[SD_PARAMS + P_LMP_BASE] * d_plies
                      - SD[SD_PARAMS + P_LMP_MOVE_COST] * searched)
            if use_improving and not improving:
                margin -= SD[SD_PARAMS + P_IMPROVING_FUTILITY]
            if ev <= alpha - margin:
                tactical = 1 if _is_tactical_quiet(T, S, SD, m) else 0
                if tactical == 0:
                    continue

        # Step 12a. History pruning (HistoryLMR) at non-PV nodes near the horizon: a late
        # quiet move whose history (and continuation history) says it has long failed here.
        hist = 0
        if hist_lmr and quiet:
            hist = quiet_history(SD, move_piece_to(S, m), use_history, r1, r2)
            if (not pv_node and not checked and not check and searched >= 1
                    and best > -MATE_BOUND and d_plies <= SD[SD_PARAMS + P_HIST_PRUNE_DEPTH]
                    and hist < -SD[SD_PARAMS + P_HIST_PRUNE_MARGIN] * d_plies):
                continue

        # Step 13. Late move reduction: 1 ply at PV nodes and for moves 4..6, else 2 plies
        # (Wasp 1.02); with LmrLogScale, more for deep nodes and late moves.
        r = 0
        if (SD[SD_FLAGS + F_LMR] != 0 and d_plies >= SD[SD_PARAMS + P_LMR_DEPTH]
                and searched >= SD[SD_PARAMS + P_LMR_MOVES] and not checked
                and not check and quiet):
            if tactical < 0:
                tactical = 1 if _is_tactical_quiet(T, S, SD, m) else 0
            if tactical == 0:
                late = not pv_node and searched > SD[SD_PARAMS + P_LMR_LATE_MOVES]
                r = SD[SD_PARAMS + (P_LMR_LATE_REDUCTION if late else P_LMR_REDUCTION)]
                if SD[SD_PARAMS + P_LMR_LOG_SCALE] > 0:
                    # Deeper and later moves reduce more (ln depth * ln moves, as most
                    # engines after Wasp 1.02 do); never into the quiescence search.
                    scaled = SD[SD_PARAMS + P_LMR_LOG_BASE] + np.int64(
                        SD[SD_PARAMS + P_LMR_LOG_SCALE] * math.log(d_plies)
                        * math.log(searched + 1) / 100.0)
                    if pv_node:
                        scaled -= ONE_PLY
                    r = max(r, scaled)
                    r = min(r, max(new_depth - ONE_PLY, 0))
                # Step 13a. History-driven LMR (HistoryLMR): an eighth of a ply less per
                # HistLmrDivisor of history, more for a bad one (at most HistLmrMax either
                # way); Improving: ImprovingLmr more when not improving. Never below zero,
                # never into the quiescence search.
                if hist_lmr or use_improving:
                    if hist_lmr:
                        lim = SD[SD_PARAMS + P_HIST_LMR_MAX]
                        r -= max(-lim, min(lim, hist // SD[SD_PARAMS + P_HIST_LMR_DIV]))
                    if use_improving and not improving:
                        r += SD[SD_PARAMS + P_IMPROVING_LMR]
                    r = max(0, min(r, new_depth - ONE_PLY))

        # Step 14. Principal variation search (null window after the first move), with
        # re-searches when a reduced or null-window search beats alpha.
        kc = np.int64(1) if check else np.int64(0)  # the child knows it is in check
        SD[SD_STACK_MOVE + ply] = move_piece_to(S, m)
        _make(T, S, NN, m)
        _prefetch(S, E, TT)
        if searched == 0:
            score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth, ply + 1,
                             np.int64(NODE_PV) if pv_node else child, kc)
        elif SD[SD_FLAGS + F_PVS] != 0:
            score = -_search(T, S, W, E, NN, TT, SD, MB, -alpha - 1, -alpha, new_depth - r, ply + 1,
                             child, kc)
            if score > alpha and r > 0:
                score = -_search(T, S, W, E, NN, TT, SD, MB, -alpha - 1, -alpha, new_depth, ply + 1,
                                 child, kc)
            if pv_node and score > alpha and score < beta:
                score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth, ply + 1,
                                 np.int64(NODE_PV), kc)
        else:
            score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth - r, ply + 1,
                             np.int64(NODE_PV) if pv_node else child, kc)
            if score > alpha and r > 0:
                score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth, ply + 1,
                                 np.int64(NODE_PV) if pv_node else child, kc)
        unmake_move(T, S)
        searched += 1
        if SD[SD_STOP] != 0:
            return 0

        # Step 15. New best move; on a cutoff, killers, countermove and history learn it.
        if score > best:
            best = score
            if score > alpha:
                best_move = m
                if pv_node:
                    _copy_pv(SD, ply, m)
                if score >= beta:
                    if quiet:
                        update_quiet_stats(S, SD, ply, m, d_plies)
                        for j in range(i):
                            mj = moves[j]
                            if mj != excluded and captured_type(S, mj) < 0 and (
                                    (mj >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK) == 0:
                                penalise_quiet(S, SD, ply, mj, d_plies)
                    break
                alpha = score

    # Step 16. Every move pruned: the static score stands. A singular search whose only
    # move was the one left out fails low: that move is singular.
    if searched == 0:
        if excluded != 0:
            return alpha
        return ev if ev < alpha else alpha

    # Step 17. Store in the transposition table (the evaluation as it came, uncorrected);
    # not a singular search's score, which leaves a move out (nor does Step 17a learn it).
    if excluded != 0:
        return best
    if best >= beta:
        bound = BOUND_LOWER
    elif best > orig_alpha:
        bound = BOUND_EXACT
    else:
        bound = BOUND_UPPER
    tt_store(TT, key, best_move, _to_tt(best, ply), raw_ev if raw_ev > -INF else 0, d_plies,
             bound, SD[SD_AGE])

    # Step 17a. Correction history (CorrHistory) learns search score - static score, where
    # the bound says the score is at least as far from the static one as it claims: not in
    # check, no noisy best move, no mate score.
    if (SD[SD_FLAGS + F_CORR_HIST] != 0 and not checked and abs(best) < MATE_BOUND
            and (best_move == 0 or (captured_type(S, best_move) < 0
                                    and ((best_move >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK) == 0))
            and not (bound == BOUND_LOWER and best <= ev)
            and not (bound == BOUND_UPPER and best >= ev)):
        _corr_update(S, SD, best - raw_ev, d_plies)
    return best


@njit(cache=True, nogil=True, _nrt=False)
def root_search(T, S, W, E, NN, TT, SD, MB, alpha, beta, depth):
    """Search the root moves SD[SD_ROOT_MOVES:...] (skipping SD_ROOT_SKIP ones) in order;
    the best move and its PV go to SD_ROOT_BEST and PV row 0. Returns the best score."""
    SD[SD_PVLEN] = 0
    if NN is not None:
        acc_refresh(S, NN)
    n = SD[SD_ROOT_N]
    SD[SD_STACK_EVAL] = -INF  # the root's is not computed: its grandchildren count as improving
    best = -INF
    searched = 0
    for i in range(n):
        if SD[SD_ROOT_SKIP + i] != 0:
            continue
        m = SD[SD_ROOT_MOVES + i]
        SD[SD_CURRMOVE] = m
        SD[SD_CURRMOVENUM] = searched + 1
        nodes0 = SD[SD_NODES]
        ext = 0
        if SD[SD_FLAGS + F_CHECK_EXT] != 0 and gives_check(T, S, m):
            ext = SD[SD_PARAMS + P_CHECK_EXT]
        if SD[SD_FLAGS + F_FRACTIONAL_EXT] != 0 and SD[SD_PARAMS + P_FRACTIONAL_PLIES] > 0:
            ext = _fractional(SD, ext, captured_type(S, m) >= 0, True)
        new_depth = depth - ONE_PLY + ext
        SD[SD_STACK_MOVE] = move_piece_to(S, m)
        _make(T, S, NN, m)
        if searched == 0 or SD[SD_FLAGS + F_PVS] == 0:
            score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth, np.int64(1),
                             np.int64(NODE_PV), np.int64(-1))
        else:
            score = -_search(T, S, W, E, NN, TT, SD, MB, -alpha - 1, -alpha, new_depth, np.int64(1),
                             np.int64(NODE_CUT), np.int64(-1))
            if score > alpha and score < beta:
                score = -_search(T, S, W, E, NN, TT, SD, MB, -beta, -alpha, new_depth, np.int64(1),
                                 np.int64(NODE_PV), np.int64(-1))
        unmake_move(T, S)
        SD[SD_ROOT_NODES + i] += SD[SD_NODES] - nodes0
        if SD[SD_STOP] != 0:
            break
        searched += 1
        SD[SD_ROOT_SCORE + i] = score
        if score > best:
            best = score
            if score > alpha:
                SD[SD_ROOT_BEST] = m
                _copy_pv(SD, 0, m)
                if score >= beta:
                    break
                alpha = score
    return best


@njit(cache=True, nogil=True, _nrt=False)
def root_prepare(T, S, TT, SD, MB):
    """Generate and order the root moves into SD_ROOT_MOVES; returns their number."""
    moves = MB[0]
    n = generate(T, S, moves, np.int64(GEN_ALL), np.bool_(True))
    hash_move = 0
    data = tt_probe(TT, current_key(S))
    if data != -1:
        hash_move = data_move(data)
    score_moves(T, S, SD, moves, n, np.int64(0), hash_move, np.bool_(False))
    for i in range(n):
        SD[SD_ROOT_MOVES + i] = pick_next(SD, moves, n, i, np.int64(0))
        SD[SD_ROOT_NODES + i] = 0
        SD[SD_ROOT_SKIP + i] = 0
        SD[SD_ROOT_SCORE + i] = -INF
    SD[SD_ROOT_N] = n
    return n


@njit(cache=True, nogil=True, _nrt=False)
def hash_reply(T, S, TT, MB, m):
    """The legal hash move of the position after `m` (0 if none)."""
    make_move(T, S, m)
    reply = 0
    data = tt_probe(TT, current_key(S))
    if data != -1:
        h = data_move(data)
        moves = MB[0]
        n = generate(T, S, moves, np.int64(GEN_ALL), np.bool_(True))
        for i in range(n):
            if moves[i] == h:
                reply = h
    unmake_move(T, S)
    return reply


@njit(cache=True, nogil=True, _nrt=False)
def qsearch_root(T, S, W, E, NN, TT, SD, MB, alpha, beta):
    """Quiescence score of the position (for tests and the tuner)."""
    if NN is not None:
        acc_refresh(S, NN)
    return _qsearch(T, S, W, E, NN, TT, SD, MB, alpha, beta, np.int64(0), np.int64(-1))
