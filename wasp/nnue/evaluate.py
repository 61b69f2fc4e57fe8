"""The evaluation the search uses with a net loaded: `evaluate(T, S, E, NN, info)`, centipawns
from the side to move's view, as `wasp.evaluate.evaluate` gives without one.

The net's output (`wasp.nnue.network.forward`) is the score, with exact endgame knowledge on
top: king and pawn against king is scored from the KPK bitbase (a draw 0, a win KPK_WIN plus
the net's size of it), insufficient material is a draw before any evaluation (the search's
draw test), and Syzygy tables, when given, decide at the root (`wasp.engine`). The score is
kept within +-EVAL_LIMIT, clear of the mate scores. The `info`
the search's pruning reads is filled cheaply: the hung material is that of the side to move's
pieces attacked by enemy pawns, the pawn-ending and promotion-threat flags as the hand-written
evaluation sets them; no mate threat is reported.
"""

import numpy as np
from numba import njit

from wasp.bitboards import RANK_2, RANK_7, U64, ZERO, lsb, popcount
from wasp.evaluate import E_KPK, _pawn_attacks
from wasp.kpk import probe_words
from wasp.nnue.network import forward
from wasp.types import (
    B_PAWN,
    BISHOP,
    INFO_HUNG,
    INFO_MATE_THREAT,
    INFO_PAWN_ENDING,
    INFO_PROMO_THREAT,
    KING,
    KNIGHT,
    MAILBOX,
    N_INFO,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_SIDE,
    W_PAWN,
)

KPK_WIN = 800  # centipawns of a won KPK position, before the net's own score is added
EVAL_LIMIT = 20000  # the search's evaluation stays this far from the mate scores (32000 - ply)
HUNG_VALUES = np.array([100, 300, 300, 500, 900, 0], dtype=np.int64)  # by piece type


@njit(cache=True, nogil=True, _nrt=False)
def evaluate(T, S, E, NN, info):
    """Centipawns from the side to move's view; fills info (hung, pawn ending, threats)."""
    bb = S.bb
    stm = S.st[ST_SIDE]
    score = forward(NN, S)

    own = 6 * stm
    op = 6 * (1 - stm)
    pawns = bb[W_PAWN] | bb[B_PAWN]
    pieces = ZERO
    for t in (KNIGHT, BISHOP, ROOK, QUEEN):
        pieces |= bb[t] | bb[6 + t]
    if pieces == ZERO and popcount(pawns) == 1:
        strong = 0 if bb[W_PAWN] else 1
        won = probe_words(E, E_KPK, strong, stm, lsb(bb[6 * strong + KING]),
                          lsb(bb[6 * (1 - strong) + KING]), lsb(pawns))
        if won:
            v = KPK_WIN + abs(score)
            score = v if strong == stm else -v
        else:
            score = 0
    score = max(-EVAL_LIMIT, min(EVAL_LIMIT, score))  # a wild net cannot fake a mate

    # What the search's pruning asks of the evaluation.
    opp_pawn_att = _pawn_attacks(bb[op + PAWN], 1 - stm)
    hung = 0
    attacked = opp_pawn_att & (bb[own + KNIGHT] | bb[own + BISHOP] | bb[own + ROOK]
                               | bb[own + QUEEN])
    while attacked:
        sq = lsb(attacked)
        attacked &= attacked - U64(1)
        hung += HUNG_VALUES[S.st[MAILBOX + sq] - own]
    occ = bb[OCC_ALL]
    if stm == 0:
        p7 = bb[op + PAWN] & RANK_2
        promo = p7 != ZERO and (((p7 >> U64(8)) & ~occ) != ZERO
                                or (_pawn_attacks(p7, np.int64(1)) & bb[OCC_WHITE]) != ZERO)
    else:
        p7 = bb[op + PAWN] & RANK_7
        promo = p7 != ZERO and (((p7 << U64(8)) & ~occ) != ZERO
                                or (_pawn_attacks(p7, np.int64(0)) & bb[OCC_WHITE + 1]) != ZERO)
    only_kp = (bb[own + KNIGHT] | bb[own + BISHOP] | bb[own + ROOK] | bb[own + QUEEN]) == ZERO
    info[INFO_HUNG] = hung
    info[INFO_PAWN_ENDING] = 1 if only_kp else 0
    info[INFO_MATE_THREAT] = 0
    info[INFO_PROMO_THREAT] = 1 if promo else 0
    return score


def evaluate_position(NN, position, E=None) -> tuple[int, int]:
    """(the net's output, the evaluation the search uses) of a wasp Position, both from the
    side to move's view; the second is 0 when neither side can mate (the search's draw)."""
    from wasp.evaluate import new_eval_cache
    from wasp.nnue.network import output
    from wasp.position import copy_state, insufficient_material

    S = copy_state(position.S)
    net = output(NN, S)  # also computes the accumulators evaluate() reads
    E = new_eval_cache(1) if E is None else E
    info = np.zeros(N_INFO, dtype=np.int64)
    used = 0 if insufficient_material(S) else int(evaluate(position.T, S, E, NN, info))
    return net, used
