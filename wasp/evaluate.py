"""The Wasp evaluation: `evaluate(T, S, W, E, info)`, centipawns from the side to move's view.

All terms read the flat weight vector `W` (layout: `wasp.params`). Linear terms go through
`_add`, which also counts the term's coefficient when tracing (the tuner's sparse trace, see
`wasp.trace`). Opening and endgame sums are tapered by the phase 24..0 (minor 1, rook 2,
queen 4); the king safety table (opening) and the draw factor are the non-linear parts.

`E` (made by `new_eval_cache`) holds the pawn hash, the evaluation cache, hit counters and the
KPK bitbase; call `clear_eval_cache(E)` whenever W changes.

The small helpers called from many places (`_add`'s `_term`, `_dist`, `_tdiv`,
`_pawn_attacks`) are plain kernels, not numba-inlined: LLVM inlines them all the same, and
numba's own inlining of each of their 60-odd call sites took half of the evaluation's compile.
Their call sites pass int64, not literal constants: numba compiles a kernel once for each
literal it is called with.
"""

import numpy as np
from numba import njit
from numba.extending import register_jitable

from wasp import kpk
from wasp import params as P
from wasp.bitboards import (
    DARK_SQUARES,
    FILE_A,
    FILE_H,
    ONE,
    RANK_2,
    RANK_7,
    T_BETWEEN,
    T_KING,
    T_KNIGHT,
    T_PAWN,
    U64,
    ZERO,
    bishop_attacks,
    lsb,
    popcount,
    prefetch,
    rook_attacks,
)
from wasp.kpk import N_WORDS, probe_words
from wasp.types import (
    B_PAWN,
    BISHOP,
    INFO_HUNG,
    INFO_MATE_THREAT,
    INFO_PAWN_ENDING,
    INFO_PROMO_THREAT,
    KEYS,
    KING,
    KNIGHT,
    MAILBOX,
    N_INFO,
    OCC_ALL,
    OCC_WHITE,
    PAWN,
    QUEEN,
    ROOK,
    ST_PLY,
    ST_SIDE,
    W_PAWN,
)

default_weights = P.default_weights

# ---------------------------------------------------------------------------
# Layout of E: pawn hash, counters, KPK bitbase, then the evaluation cache, whose size (a power
# of two) follows from E's length: new_eval_cache(entries).
PAWN_ENTRIES = 8192
PH_WIDTH = 6  # white pawns, black pawns, mg, eg, white passed, black passed
EVAL_ENTRIES = 16384  # the default evaluation cache (the search asks for more)
EC_WIDTH = 2  # key, packed (score, hung, pawn ending, mate threat, promotion threat)
E_PAWN = 0
E_STATS = E_PAWN + PAWN_ENTRIES * PH_WIDTH
STAT_PAWN_PROBES, STAT_PAWN_HITS, STAT_EVAL_PROBES, STAT_EVAL_HITS = 0, 1, 2, 3
E_KPK = E_STATS + 8
E_EVAL = E_KPK + N_WORDS
E_SIZE = E_EVAL + EVAL_ENTRIES * EC_WIDTH
EC_OFFSET = 1 << 23  # packed score and hung material: 24 bits each, offset
EC_MASK = (1 << 24) - 1

# Extra trace slots, after the 2 * N_WEIGHTS coefficient counts.
X_PHASE = 0  # game phase 24..0
X_KS_WHITE = 1  # king safety table index of white's king (0..63)
X_KS_BLACK = 2
X_KS_MG = 3  # king safety, opening, white's view
X_SCALE = 4  # draw factor in 64ths
X_SPECIAL = 5  # 1 when an endgame rule replaced the tapered score (draw, KBNK, KPK)
X_MG = 6  # opening sum, white's view (linear terms + king safety)
X_EG = 7
X_TAPERED = 8  # tapered score before endgame rules and draw factor
X_FINAL = 9  # final score, white's view
N_EXTRA = 12
TRACE_SIZE = 2 * P.N_WEIGHTS + N_EXTRA

# Small masks (globals: frozen into the code; 1 KB each).
_FRONT = np.zeros(128, dtype=np.uint64)  # [c*64+sq] same file, ahead
_SPAN = np.zeros(128, dtype=np.uint64)  # [c*64+sq] adjacent files, ahead
_SUPPORT = np.zeros(128, dtype=np.uint64)  # [c*64+sq] adjacent files, same rank or behind
_SHIELD = np.zeros(128, dtype=np.uint64)  # [c*64+ksq] three files, one or two ranks ahead
_STORM = np.zeros(128, dtype=np.uint64)  # [c*64+ksq] three files, two to four ranks ahead
_ADJ = np.zeros(8, dtype=np.uint64)  # [file] the neighbouring files
_RING = np.zeros(512, dtype=np.uint64)  # [sq*8+d] squares at king distance d from sq (4 KB)


def _fill_masks():
    files = [0x0101010101010101 << f for f in range(8)]
    for f in range(8):
        m = 0
        if f > 0:
            m |= files[f - 1]
        if f < 7:
            m |= files[f + 1]
        _ADJ[f] = m
    for sq in range(64):
        for s in range(64):
            d = max(abs((s & 7) - (sq & 7)), abs((s >> 3) - (sq >> 3)))
            _RING[sq * 8 + d] |= np.uint64(1 << s)
    for c in range(2):
        for sq in range(64):
            f, r = sq & 7, sq >> 3
            front = span = support = shield = storm = 0
            for s in range(64):
                sf, sr = s & 7, s >> 3
                ahead = sr - r if c == 0 else r - sr
                if sf == f and ahead > 0:
                    front |= 1 << s
                if abs(sf - f) == 1 and ahead > 0:
                    span |= 1 << s
                if abs(sf - f) == 1 and ahead <= 0:
                    support |= 1 << s
                if abs(sf - f) <= 1 and 1 <= ahead <= 2:
                    shield |= 1 << s
                if abs(sf - f) <= 1 and 2 <= ahead <= 4:
                    storm |= 1 << s
            i = c * 64 + sq
            _FRONT[i], _SPAN[i], _SUPPORT[i] = front, span, support
            _SHIELD[i], _STORM[i] = shield, storm


_fill_masks()


def new_eval_cache(entries: int = EVAL_ENTRIES) -> np.ndarray:
    """A fresh E: empty pawn hash and evaluation cache (`entries`, a power of two), zero
    counters, the KPK bitbase."""
    if entries < 1 or entries & (entries - 1):
        raise ValueError(f"evaluation cache entries must be a power of two: {entries}")
    E = np.zeros(E_EVAL + entries * EC_WIDTH, dtype=np.int64)
    E[E_KPK:E_KPK + N_WORDS] = kpk.build()
    return E


@njit(cache=True, nogil=True, _nrt=False)
def clear_caches(E):
    """Forget cached pawn and evaluation entries and counters (a kernel, for the tuner)."""
    for i in range(E_KPK):
        E[i] = 0
    for i in range(E_EVAL, E.shape[0]):
        E[i] = 0


def clear_eval_cache(E) -> None:
    """Forget cached pawn and evaluation entries and counters (after W changes)."""
    E[:E_KPK] = 0
    E[E_EVAL:] = 0


def cache_stats(E) -> dict:
    """Probes and hit rates of the pawn hash and the evaluation cache."""
    s = E[E_STATS:E_STATS + 4]
    return {
        "pawn_probes": int(s[0]), "pawn_hit_rate": float(s[1] / max(1, s[0])),
        "eval_probes": int(s[2]), "eval_hit_rate": float(s[3] / max(1, s[2])),
    }


# ---------------------------------------------------------------------------
# Helpers


@njit(cache=True, nogil=True, _nrt=False)
def _tdiv(a, b):
    """a / b truncated toward zero (keeps the evaluation colour-symmetric)."""
    q = abs(a) // b
    return q if a >= 0 else -q


@njit(cache=True, nogil=True, _nrt=False)
def _dist(a, b):
    return max(abs((a & 7) - (b & 7)), abs((a >> 3) - (b >> 3)))


@register_jitable(nogil=True, _nrt=False)
def _add(W, TR, tracing, mg_off, eg_off, c, k, mg, eg):
    """Add k times a linear term for colour c (white +, black -) to (mg, eg); trace it.
    A numba overload (`register_jitable`): typed for the types of its arguments, not the
    literals of each call site, so that it compiles once, and not copied into each caller
    (numba's inlining of its 40 call sites took most of the evaluation's compile)."""
    return _term(W, TR, tracing, np.int64(mg_off), np.int64(eg_off), np.int64(c), np.int64(k),
                 np.int64(mg), np.int64(eg))


@njit(cache=True, nogil=True, _nrt=False)
def _term(W, TR, tracing, mg_off, eg_off, c, k, mg, eg):
    """`_add`'s work."""
    if tracing:
        TR[2 * mg_off + c] += k
    if c == 0:
        return mg + k * W[mg_off], eg + k * W[eg_off]
    return mg - k * W[mg_off], eg - k * W[eg_off]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _eval_slot(E, key):
    """Index in E of the evaluation cache entry of `key` (an int64)."""
    return E_EVAL + (key & ((E.shape[0] - E_EVAL) // EC_WIDTH - 1)) * EC_WIDTH


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _pawn_slot(wp, bp):
    """Index in E of the pawn hash entry of these pawns."""
    h = (wp * U64(0x9E3779B97F4A7C15)) ^ (bp * U64(0xC2B2AE3D27D4EB4F))
    return E_PAWN + np.int64((h >> U64(51)) & U64(PAWN_ENTRIES - 1)) * PH_WIDTH


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def eval_prefetch(S, E):
    """Start loading the evaluation cache and pawn hash entries of the position (after a
    move: the evaluation a little later finds them in cache)."""
    bb = S.bb
    prefetch(E, _eval_slot(E, np.int64(bb[KEYS + S.st[ST_PLY]])))
    prefetch(E, _pawn_slot(bb[W_PAWN], bb[B_PAWN]))


@njit(cache=True, nogil=True, _nrt=False)
def _pawn_attacks(pawns, c):
    if c == 0:
        return ((pawns & ~FILE_A) << U64(7)) | ((pawns & ~FILE_H) << U64(9))
    return ((pawns & ~FILE_A) >> U64(9)) | ((pawns & ~FILE_H) >> U64(7))


# ---------------------------------------------------------------------------
# Pawn structure (cached in the pawn hash)


@njit(cache=True, nogil=True, _nrt=False)
def _pawn_structure(T, W, TR, tracing, wp, bp):
    """Pawn material, PSTs and structure; returns (mg, eg, white passed, black passed)."""
    mg = 0
    eg = 0
    passed_w = ZERO
    passed_b = ZERO
    for c in range(2):
        own = wp if c == 0 else bp
        opp = bp if c == 0 else wp
        b = own
        while b:
            sq = lsb(b)
            b &= b - ONE
            f = sq & 7
            rsq = sq if c == 0 else sq ^ 56
            rr = rsq >> 3
            i = c * 64 + sq
            mg, eg = _add(W, TR, tracing, P.PAWN_VALUE, P.PAWN_VALUE_EG, c, 1, mg, eg)
            mg, eg = _add(W, TR, tracing, P.PST_PAWN + rsq, P.PST_PAWN_EG + rsq, c, 1, mg, eg)
            if own & _FRONT[i]:
                mg, eg = _add(W, TR, tracing, P.PAWN_DOUBLED, P.PAWN_DOUBLED_EG, c, 1, mg, eg)
            isolated = (own & _ADJ[f]) == ZERO
            backward = False
            if isolated:
                mg, eg = _add(W, TR, tracing, P.PAWN_ISOLATED, P.PAWN_ISOLATED_EG, c, 1, mg, eg)
            elif (own & _SUPPORT[i]) == ZERO:
                stop = sq + 8 if c == 0 else sq - 8
                if opp & T[T_PAWN + c * 64 + stop]:
                    backward = True
                    mg, eg = _add(W, TR, tracing, P.PAWN_BACKWARD, P.PAWN_BACKWARD_EG, c, 1,
                                  mg, eg)
            open_file = (opp & _FRONT[i]) == ZERO
            if (isolated or backward) and open_file:
                mg, eg = _add(W, TR, tracing, P.PAWN_WEAK, P.PAWN_WEAK_EG, c, 1, mg, eg)
            if (opp & (_FRONT[i] | _SPAN[i])) == ZERO and (own & _FRONT[i]) == ZERO:
                if c == 0:
                    passed_w |= ONE << U64(sq)
                else:
                    passed_b |= ONE << U64(sq)
            elif open_file and popcount(own & _SUPPORT[i]) >= popcount(opp & _SPAN[i]):
                mg, eg = _add(W, TR, tracing, P.PAWN_CANDIDATE + rr, P.PAWN_CANDIDATE_EG + rr,
                              c, 1, mg, eg)
    return mg, eg, passed_w, passed_b


# ---------------------------------------------------------------------------
# Pieces of one colour


@njit(cache=True, nogil=True, _nrt=False)
def _pieces(T, S, W, TR, tracing, c, mg, eg, own_pawn_att, opp_pawn_att):
    """Knights, bishops, rooks, queens of colour c: PST, mobility, outposts, files, 7th rank.

    Returns (mg, eg, knight attacks, bishop attacks, rook attacks, queen attacks,
    king attack units on the enemy king zone, number of attackers of that zone).
    """
    bb = S.bb
    o = 6 * c
    opp = 6 * (1 - c)
    occ = bb[OCC_ALL]
    own_occ = bb[OCC_WHITE + c]
    own_pawns = bb[o + PAWN]
    opp_pawns = bb[opp + PAWN]
    eksq = lsb(bb[opp + KING])
    zone = T[T_KING + eksq] | (ONE << U64(eksq))
    ksq = lsb(bb[o + KING])
    safe = ~own_occ & ~opp_pawn_att
    seventh = RANK_7 if c == 0 else RANK_2
    eighth_king = ((eksq >> 3) == 7) if c == 0 else ((eksq >> 3) == 0)
    on_seventh_ok = eighth_king or (opp_pawns & seventh) != ZERO
    a_n = ZERO
    a_b = ZERO
    a_r = ZERO
    a_q = ZERO
    units = 0
    attackers = 0

    b = bb[o + KNIGHT]
    n = popcount(b)
    if n:
        mg, eg = _add(W, TR, tracing, P.KNIGHT_VALUE, P.KNIGHT_VALUE_EG, c, n, mg, eg)
    while b:
        sq = lsb(b)
        b &= b - ONE
        rsq = sq if c == 0 else sq ^ 56
        att = T[T_KNIGHT + sq]
        a_n |= att
        mg, eg = _add(W, TR, tracing, P.PST_KNIGHT + rsq, P.PST_KNIGHT_EG + rsq, c, 1, mg, eg)
        m = popcount(att & safe)
        mg, eg = _add(W, TR, tracing, P.KNIGHT_MOBILITY + m, P.KNIGHT_MOBILITY_EG + m, c, 1,
                      mg, eg)
        rr = rsq >> 3
        if 3 <= rr <= 5 and (own_pawn_att >> U64(sq)) & ONE and \
                (opp_pawns & _SPAN[c * 64 + sq]) == ZERO:
            mg, eg = _add(W, TR, tracing, P.KNIGHT_OUTPOST, P.KNIGHT_OUTPOST_EG, c, 1, mg, eg)
        if att & zone:
            attackers += 1
            units += W[P.KS_ATTACKER_WEIGHT + 0] * popcount(att & zone)

    b = bb[o + BISHOP]
    n = popcount(b)
    if n:
        mg, eg = _add(W, TR, tracing, P.BISHOP_VALUE, P.BISHOP_VALUE_EG, c, n, mg, eg)
    if n >= 2:
        mg, eg = _add(W, TR, tracing, P.BISHOP_PAIR, P.BISHOP_PAIR_EG, c, 1, mg, eg)
    while b:
        sq = lsb(b)
        b &= b - ONE
        rsq = sq if c == 0 else sq ^ 56
        att = bishop_attacks(T, sq, occ)
        a_b |= att
        mg, eg = _add(W, TR, tracing, P.PST_BISHOP + rsq, P.PST_BISHOP_EG + rsq, c, 1, mg, eg)
        m = popcount(att & safe)
        mg, eg = _add(W, TR, tracing, P.BISHOP_MOBILITY + m, P.BISHOP_MOBILITY_EG + m, c, 1,
                      mg, eg)
        rr = rsq >> 3
        if 3 <= rr <= 5 and (own_pawn_att >> U64(sq)) & ONE and \
                (opp_pawns & _SPAN[c * 64 + sq]) == ZERO:
            mg, eg = _add(W, TR, tracing, P.BISHOP_OUTPOST, P.BISHOP_OUTPOST_EG, c, 1, mg, eg)
        # trapped on a7/b8/h7/g8 (relative) by the pawn that takes its way out
        blocker = -1
        if rsq == 48:
            blocker = 41
        elif rsq == 57:
            blocker = 50
        elif rsq == 55:
            blocker = 46
        elif rsq == 62:
            blocker = 53
        if blocker >= 0:
            bsq = blocker if c == 0 else blocker ^ 56
            if (opp_pawns >> U64(bsq)) & ONE:
                mg, eg = _add(W, TR, tracing, P.BISHOP_TRAPPED, P.BISHOP_TRAPPED_EG, c, 1,
                              mg, eg)
        if att & zone:
            attackers += 1
            units += W[P.KS_ATTACKER_WEIGHT + 1] * popcount(att & zone)

    b = bb[o + ROOK]
    n = popcount(b)
    if n:
        mg, eg = _add(W, TR, tracing, P.ROOK_VALUE, P.ROOK_VALUE_EG, c, n, mg, eg)
    while b:
        sq = lsb(b)
        b &= b - ONE
        rsq = sq if c == 0 else sq ^ 56
        att = rook_attacks(T, sq, occ)
        a_r |= att
        mg, eg = _add(W, TR, tracing, P.PST_ROOK + rsq, P.PST_ROOK_EG + rsq, c, 1, mg, eg)
        m = popcount(att & safe)
        mg, eg = _add(W, TR, tracing, P.ROOK_MOBILITY + m, P.ROOK_MOBILITY_EG + m, c, 1, mg, eg)
        fm = FILE_A << U64(sq & 7)
        if (own_pawns & fm) == ZERO:
            if (opp_pawns & fm) == ZERO:
                mg, eg = _add(W, TR, tracing, P.ROOK_OPEN_FILE, P.ROOK_OPEN_FILE_EG, c, 1, mg, eg)
            else:
                mg, eg = _add(W, TR, tracing, P.ROOK_SEMI_OPEN_FILE, P.ROOK_SEMI_OPEN_FILE_EG,
                              c, 1, mg, eg)
        if (rsq >> 3) == 6 and on_seventh_ok:
            mg, eg = _add(W, TR, tracing, P.ROOK_SEVENTH, P.ROOK_SEVENTH_EG, c, 1, mg, eg)
        # trapped in the corner by its own uncastled king
        rksq = ksq if c == 0 else ksq ^ 56
        if (rsq >> 3) == 0 and (rksq >> 3) == 0 and m <= 3:
            kf = rksq & 7
            rf = rsq & 7
            if (kf >= 5 and rf > kf) or (kf <= 2 and rf < kf):
                mg, eg = _add(W, TR, tracing, P.ROOK_TRAPPED, P.ROOK_TRAPPED_EG, c, 1, mg, eg)
        if att & zone:
            attackers += 1
            units += W[P.KS_ATTACKER_WEIGHT + 2] * popcount(att & zone)

    b = bb[o + QUEEN]
    n = popcount(b)
    if n:
        mg, eg = _add(W, TR, tracing, P.QUEEN_VALUE, P.QUEEN_VALUE_EG, c, n, mg, eg)
    while b:
        sq = lsb(b)
        b &= b - ONE
        rsq = sq if c == 0 else sq ^ 56
        att = rook_attacks(T, sq, occ) | bishop_attacks(T, sq, occ)
        a_q |= att
        mg, eg = _add(W, TR, tracing, P.PST_QUEEN + rsq, P.PST_QUEEN_EG + rsq, c, 1, mg, eg)
        m = popcount(att & safe)
        mg, eg = _add(W, TR, tracing, P.QUEEN_MOBILITY + m, P.QUEEN_MOBILITY_EG + m, c, 1,
                      mg, eg)
        if (rsq >> 3) == 6 and on_seventh_ok:
            mg, eg = _add(W, TR, tracing, P.QUEEN_SEVENTH, P.QUEEN_SEVENTH_EG, c, 1, mg, eg)
        if att & zone:
            attackers += 1
            units += W[P.KS_ATTACKER_WEIGHT + 3] * popcount(att & zone)

    # king: PST and, in the endgame, distance to the nearest pawn
    rksq = ksq if c == 0 else ksq ^ 56
    mg, eg = _add(W, TR, tracing, P.PST_KING + rksq, P.PST_KING_EG + rksq, c, 1, mg, eg)
    pawns = bb[W_PAWN] | bb[B_PAWN]
    if pawns:
        d = 1
        while (pawns & _RING[ksq * 8 + d]) == ZERO:
            d += 1
        mg, eg = _add(W, TR, tracing, P.KING_PAWN_DISTANCE, P.KING_PAWN_DISTANCE_EG, c, d,
                      mg, eg)
    return mg, eg, a_n, a_b, a_r, a_q, units, attackers


# ---------------------------------------------------------------------------
# The evaluation


@njit(cache=True, nogil=True, _nrt=False)
def _king_danger(T, S, W, c, units, attackers, defended, a_n, a_b, a_r, a_q, opp_all):
    """King safety table index (0..63) of colour c's king, given the enemy's attacks."""
    bb = S.bb
    occ = bb[OCC_ALL]
    ksq = lsb(bb[6 * c + KING])
    zone = T[T_KING + ksq]
    if attackers < 2:
        units = 0
    units += W[P.KS_UNDEFENDED] * popcount(zone & opp_all & ~defended)
    units -= W[P.KS_SHIELD] * popcount(bb[6 * c + PAWN] & _SHIELD[c * 64 + ksq])
    units += W[P.KS_STORM] * popcount(bb[6 * (1 - c) + PAWN] & _STORM[c * 64 + ksq])
    safe = ~defended & ~bb[OCC_WHITE + 1 - c]
    ra = rook_attacks(T, ksq, occ)
    ba = bishop_attacks(T, ksq, occ)
    units += W[P.KS_SAFE_CHECK + 0] * popcount(T[T_KNIGHT + ksq] & a_n & safe)
    units += W[P.KS_SAFE_CHECK + 1] * popcount(ba & a_b & safe)
    units += W[P.KS_SAFE_CHECK + 2] * popcount(ra & a_r & safe)
    units += W[P.KS_SAFE_CHECK + 3] * popcount((ra | ba) & a_q & safe)
    return min(63, max(0, units))


@njit(cache=True, nogil=True, _nrt=False)
def _evaluate(T, S, W, E, info, TR, tracing):
    bb = S.bb
    stm = S.st[ST_SIDE]
    key = np.int64(bb[KEYS + S.st[ST_PLY]])
    slot = _eval_slot(E, key)
    if not tracing:
        E[E_STATS + STAT_EVAL_PROBES] += 1
        if E[slot] == key and key != 0:
            E[E_STATS + STAT_EVAL_HITS] += 1
            v = E[slot + 1]
            info[INFO_HUNG] = ((v >> 24) & EC_MASK) - EC_OFFSET
            info[INFO_PAWN_ENDING] = (v >> 48) & 1
            info[INFO_MATE_THREAT] = (v >> 49) & 1
            info[INFO_PROMO_THREAT] = (v >> 50) & 1
            return (v & EC_MASK) - EC_OFFSET

    wp = bb[W_PAWN]
    bp = bb[B_PAWN]
    occ = bb[OCC_ALL]

    # pawn structure, through the pawn hash
    if tracing:
        mg, eg, passed_w, passed_b = _pawn_structure(T, W, TR, tracing, wp, bp)
    else:
        ps = _pawn_slot(wp, bp)
        E[E_STATS + STAT_PAWN_PROBES] += 1
        if E[ps] == np.int64(wp) and E[ps + 1] == np.int64(bp):
            E[E_STATS + STAT_PAWN_HITS] += 1
            mg = E[ps + 2]
            eg = E[ps + 3]
            passed_w = U64(E[ps + 4])
            passed_b = U64(E[ps + 5])
        else:
            mg, eg, passed_w, passed_b = _pawn_structure(T, W, TR, tracing, wp, bp)
            E[ps] = np.int64(wp)
            E[ps + 1] = np.int64(bp)
            E[ps + 2] = mg
            E[ps + 3] = eg
            E[ps + 4] = np.int64(passed_w)
            E[ps + 5] = np.int64(passed_b)

    wpa = _pawn_attacks(wp, np.int64(0))
    bpa = _pawn_attacks(bp, np.int64(1))
    mg, eg, wa_n, wa_b, wa_r, wa_q, w_units, w_att = _pieces(T, S, W, TR, tracing, 0, mg, eg,
                                                            wpa, bpa)
    mg, eg, ba_n, ba_b, ba_r, ba_q, b_units, b_att = _pieces(T, S, W, TR, tracing, 1, mg, eg,
                                                            bpa, wpa)
    wk = lsb(bb[KING])
    bk = lsb(bb[6 + KING])
    w_all = wpa | wa_n | wa_b | wa_r | wa_q | T[T_KING + wk]
    b_all = bpa | ba_n | ba_b | ba_r | ba_q | T[T_KING + bk]
    w_def = wpa | wa_n | wa_b | wa_r | wa_q
    b_def = bpa | ba_n | ba_b | ba_r | ba_q

    # passed pawns
    for c in range(2):
        pb = passed_w if c == 0 else passed_b
        own_k = wk if c == 0 else bk
        opp_k = bk if c == 0 else wk
        opp_all = b_all if c == 0 else w_all
        opp_pieces = bb[6 * (1 - c) + KNIGHT] | bb[6 * (1 - c) + BISHOP] | \
            bb[6 * (1 - c) + ROOK] | bb[6 * (1 - c) + QUEEN]
        while pb:
            sq = lsb(pb)
            pb &= pb - ONE
            rr = (sq >> 3) if c == 0 else 7 - (sq >> 3)
            stop = sq + 8 if c == 0 else sq - 8
            mg, eg = _add(W, TR, tracing, P.PASSED_RANK + rr, P.PASSED_RANK_EG + rr, c, 1, mg, eg)
            if (occ >> U64(stop)) & ONE:
                mg, eg = _add(W, TR, tracing, P.PASSED_BLOCKED + rr, P.PASSED_BLOCKED_EG + rr,
                              c, 1, mg, eg)
            elif ((opp_all >> U64(stop)) & ONE) == ZERO:
                mg, eg = _add(W, TR, tracing, P.PASSED_SAFE + rr, P.PASSED_SAFE_EG + rr,
                              c, 1, mg, eg)
            mg, eg = _add(W, TR, tracing, P.PASSED_OWN_KING_DISTANCE + rr,
                          P.PASSED_OWN_KING_DISTANCE_EG + rr, c, _dist(own_k, stop), mg, eg)
            mg, eg = _add(W, TR, tracing, P.PASSED_ENEMY_KING_DISTANCE + rr,
                          P.PASSED_ENEMY_KING_DISTANCE_EG + rr, c, _dist(opp_k, stop), mg, eg)
            # rule of the square: the defender has only pawns and its king cannot catch it
            if opp_pieces == ZERO and (occ & _FRONT[c * 64 + sq]) == ZERO:
                promo = (sq & 7) + (56 if c == 0 else 0)
                moves = min(5, 7 - rr)
                dk = _dist(opp_k, promo) - (1 if stm != c else 0)
                if dk > moves:
                    mg, eg = _add(W, TR, tracing, P.PASSED_UNSTOPPABLE,
                                  P.PASSED_UNSTOPPABLE_EG, c, 1, mg, eg)

    # hung (en prise) and pinned pieces
    hung_stm = 0
    for c in range(2):
        o = 6 * c
        op = 6 * (1 - c)
        opp_pawn_att = bpa if c == 0 else wpa
        opp_minor = (ba_n | ba_b) if c == 0 else (wa_n | wa_b)
        opp_rook = ba_r if c == 0 else wa_r
        opp_all = b_all if c == 0 else w_all
        own_def = w_all if c == 0 else b_all
        minors = bb[o + KNIGHT] | bb[o + BISHOP]
        rooks = bb[o + ROOK]
        queens = bb[o + QUEEN]
        pieces = minors | rooks | queens
        hung = (pieces & opp_pawn_att) | (rooks & opp_minor) | \
            (queens & (opp_minor | opp_rook)) | (pieces & opp_all & ~own_def)
        ksq = lsb(bb[o + KING])
        snipers = (rook_attacks(T, ksq, bb[OCC_WHITE + 1 - c]) & (bb[op + ROOK] | bb[op + QUEEN])) \
            | (bishop_attacks(T, ksq, bb[OCC_WHITE + 1 - c]) & (bb[op + BISHOP] | bb[op + QUEEN]))
        pinned = ZERO
        while snipers:
            s = lsb(snipers)
            snipers &= snipers - ONE
            between = T[T_BETWEEN + ksq * 64 + s] & occ
            if popcount(between) == 1:
                pinned |= between & pieces
        n = popcount(hung | pinned)
        if n > 0:
            mg, eg = _add(W, TR, tracing, P.HUNG_PIECE, P.HUNG_PIECE_EG, c, n, mg, eg)
            if n >= 2:
                mg, eg = _add(W, TR, tracing, P.HUNG_MULTIPLE, P.HUNG_MULTIPLE_EG, c, 1, mg, eg)
        if c == stm:
            hb = hung
            while hb:
                s = lsb(hb)
                hb &= hb - ONE
                t = S.st[MAILBOX + s] % 6
                hung_stm += W[P.PAWN_VALUE + 2 * t]  # material values: pairs in type order

    mg, eg = _add(W, TR, tracing, P.TEMPO, P.TEMPO_EG, stm, 1, mg, eg)

    # king safety (non-linear: opening value from the table)
    ks_w = _king_danger(T, S, W, 0, b_units, b_att, w_def, ba_n, ba_b, ba_r, ba_q, b_all)
    ks_b = _king_danger(T, S, W, 1, w_units, w_att, b_def, wa_n, wa_b, wa_r, wa_q, w_all)
    ks_mg = W[P.KS_TABLE + ks_b] - W[P.KS_TABLE + ks_w]
    mg += ks_mg

    # phase and taper
    n_minor = popcount(bb[KNIGHT] | bb[BISHOP] | bb[6 + KNIGHT] | bb[6 + BISHOP])
    n_rook = popcount(bb[ROOK] | bb[6 + ROOK])
    n_queen = popcount(bb[QUEEN] | bb[6 + QUEEN])
    phase = min(24, n_minor + 2 * n_rook + 4 * n_queen)
    score = _tdiv(mg * phase + eg * (24 - phase), np.int64(24))
    tapered = score

    # endgame knowledge and the draw factor
    scale, special, score = _endgame(T, S, W, E, score, stm)

    if tracing:
        x = 2 * P.N_WEIGHTS
        TR[x + X_PHASE] = phase
        TR[x + X_KS_WHITE] = ks_w
        TR[x + X_KS_BLACK] = ks_b
        TR[x + X_KS_MG] = ks_mg
        TR[x + X_SCALE] = scale
        TR[x + X_SPECIAL] = special
        TR[x + X_MG] = mg
        TR[x + X_EG] = eg
        TR[x + X_TAPERED] = tapered
        TR[x + X_FINAL] = score

    # information for the search
    own = 6 * stm
    op = 6 * (1 - stm)
    only_kp = (bb[own + KNIGHT] | bb[own + BISHOP] | bb[own + ROOK] | bb[own + QUEEN]) == ZERO
    ksq = wk if stm == 0 else bk
    opp_q = wa_q if stm == 1 else ba_q
    opp_other = (wpa | wa_n | wa_b | wa_r | T[T_KING + wk]) if stm == 1 else \
        (bpa | ba_n | ba_b | ba_r | T[T_KING + bk])
    own_def = w_def if stm == 0 else b_def
    mate = (T[T_KING + ksq] & opp_q & opp_other & ~own_def & ~bb[OCC_WHITE + stm]) != ZERO
    opp_pawns = bb[op + PAWN]
    promo = False
    if stm == 0:
        p7 = opp_pawns & RANK_2
        if p7 and (((p7 >> U64(8)) & ~occ) or (_pawn_attacks(p7, np.int64(1)) & bb[OCC_WHITE])):
            promo = True
    else:
        p7 = opp_pawns & RANK_7
        if p7 and (((p7 << U64(8)) & ~occ) or (_pawn_attacks(p7, np.int64(0)) & bb[OCC_WHITE + 1])):
            promo = True
    result = score if stm == 0 else -score
    info[INFO_HUNG] = hung_stm
    info[INFO_PAWN_ENDING] = 1 if only_kp else 0
    info[INFO_MATE_THREAT] = 1 if mate else 0
    info[INFO_PROMO_THREAT] = 1 if promo else 0
    if not tracing:
        E[slot] = key
        E[slot + 1] = ((result + EC_OFFSET) & EC_MASK) | \
            (((hung_stm + EC_OFFSET) & EC_MASK) << 24) | \
            (info[INFO_PAWN_ENDING] << 48) | (info[INFO_MATE_THREAT] << 49) | \
            (info[INFO_PROMO_THREAT] << 50)
    return result


@njit(cache=True, nogil=True, _nrt=False)
def _endgame(T, S, W, E, score, stm):
    """(draw factor in 64ths, 1 when a special rule set the score, final white-view score)."""
    bb = S.bb
    wn = popcount(bb[KNIGHT])
    bn = popcount(bb[6 + KNIGHT])
    wb = popcount(bb[BISHOP])
    bbs = popcount(bb[6 + BISHOP])
    wr = popcount(bb[ROOK])
    br = popcount(bb[6 + ROOK])
    wq = popcount(bb[QUEEN])
    bq = popcount(bb[6 + QUEEN])
    wpn = popcount(bb[PAWN])
    bpn = popcount(bb[6 + PAWN])
    w_npm = 3 * (wn + wb) + 5 * wr + 9 * wq
    b_npm = 3 * (bn + bbs) + 5 * br + 9 * bq
    wk = lsb(bb[KING])
    bk = lsb(bb[6 + KING])

    if wpn + bpn == 0:
        # KK, KBK, KNK, KBKN, KNNK (and any minor against a minor): draws
        if w_npm <= 3 and b_npm <= 3:
            return 0, 1, 0
        if (w_npm == 0 and wq + wr + wb == 0 and bn == 2 and b_npm == 6) or \
                (b_npm == 0 and bq + br + bbs == 0 and wn == 2 and w_npm == 6):
            return 0, 1, 0
        # KBNK: drive the king to a corner of the bishop's colour
        for c in range(2):
            if (c == 0 and wn == 1 and wb == 1 and w_npm == 6 and b_npm == 0) or \
                    (c == 1 and bn == 1 and bbs == 1 and b_npm == 6 and w_npm == 0):
                bish = bb[6 * c + BISHOP]
                weak_k = bk if c == 0 else wk
                strong_k = wk if c == 0 else bk
                if bish & DARK_SQUARES:
                    d = min(_dist(weak_k, np.int64(0)), _dist(weak_k, np.int64(63)))
                else:
                    d = min(_dist(weak_k, np.int64(7)), _dist(weak_k, np.int64(56)))
                v = W[P.KBNK_BASE] + W[P.KBNK_CORNER] * (7 - d) + \
                    2 * (7 - _dist(strong_k, weak_k))
                return 64, 1, v if c == 0 else -v

    # KPK from the bitbase
    if wpn + bpn == 1 and w_npm + b_npm == 0:
        strong = 0 if wpn == 1 else 1
        psq = lsb(bb[6 * strong + PAWN])
        sk = wk if strong == 0 else bk
        dk = bk if strong == 0 else wk
        if probe_words(E, E_KPK, strong, stm, sk, dk, psq):
            v = W[P.KPK_WIN] + abs(score)
            return 64, 1, v if strong == 0 else -v
        return 0, 1, 0

    if score == 0:
        return 64, 0, 0
    strong = 0 if score > 0 else 1
    weak = 1 - strong
    s_npm = w_npm if strong == 0 else b_npm
    d_npm = b_npm if strong == 0 else w_npm
    s_pawns = bb[6 * strong + PAWN]
    s_np = popcount(s_pawns)
    d_minors = bn + bbs if strong == 0 else wn + wb
    scale = 64
    if s_np == 0 and s_npm - d_npm <= 3:
        scale = min(scale, W[P.DF_PAWNLESS])
    if s_np == 1 and d_minors >= 1 and s_npm <= d_npm:
        scale = min(scale, W[P.DF_MINOR_FOR_PAWN])
    if wb == 1 and bbs == 1:
        light_w = (bb[BISHOP] & DARK_SQUARES) == ZERO
        light_b = (bb[6 + BISHOP] & DARK_SQUARES) == ZERO
        if light_w != light_b:
            if wn + bn + wr + br + wq + bq == 0:
                scale = min(scale, W[P.DF_OPPOSITE_BISHOPS_PURE])
            else:
                scale = min(scale, W[P.DF_OPPOSITE_BISHOPS])
    # rook pawns with the wrong bishop (or no bishop): the defending king holds the corner
    s_b = wb if strong == 0 else bbs
    if s_np >= 1 and s_npm == 3 * s_b and s_b <= 1:
        for f in (0, 7):
            if (s_pawns & ~(FILE_A << U64(f))) == ZERO:
                promo = f + (56 if strong == 0 else 0)
                bish = bb[6 * strong + BISHOP]
                wrong = bish == ZERO or \
                    ((bish & DARK_SQUARES) != ZERO) != (((DARK_SQUARES >> U64(promo)) & ONE) != 0)
                dk = bk if strong == 0 else wk
                if wrong and _dist(dk, promo) <= 1:
                    scale = min(scale, W[P.DF_WRONG_BISHOP])
    # KRPKR: the defending king in front of the pawn
    if s_np == 1 and s_npm == 5 and d_npm == 5 and (wr == 1 and br == 1):
        d_pawns = bb[6 * weak + PAWN]
        if d_pawns == ZERO:
            psq = lsb(s_pawns)
            dk = bk if strong == 0 else wk
            if (_FRONT[strong * 64 + psq] >> U64(dk)) & ONE:
                scale = min(scale, W[P.DF_KRPKR])
    if scale < 64:
        score = _tdiv(score * scale, np.int64(64))
    return scale, 0, score


@njit(cache=True, nogil=True, _nrt=False)
def evaluate(T, S, W, E, info):
    """Centipawns from the side to move's view; fills info (hung, pawn ending, threats)."""
    return _evaluate(T, S, W, E, info, E, False)


@njit(cache=True, nogil=True, _nrt=False)
def evaluate_traced(T, S, W, E, info, TR):
    """Like evaluate (caches bypassed), and adds each linear term's coefficient to TR.

    TR (int64, TRACE_SIZE, zeroed by the caller): TR[2*i + colour] counts weight i (opening
    index) for white/black; TR[2*N_WEIGHTS + X_*] the phase and the non-linear parts.
    """
    return _evaluate(T, S, W, E, info, TR, True)


# ---------------------------------------------------------------------------
# Python face

_W_DEFAULT = None
_E_PY = None


def evaluate_white(fen_or_position, W=None) -> int:
    """White's-view evaluation of a FEN, a wasp Position or a chess.Board (tests, notebooks)."""
    from wasp.board import Position

    global _W_DEFAULT, _E_PY
    if _W_DEFAULT is None:
        _W_DEFAULT = default_weights()
        _E_PY = new_eval_cache()
    if isinstance(fen_or_position, str):
        pos = Position(fen_or_position)
    elif isinstance(fen_or_position, Position):
        pos = fen_or_position
    else:  # chess.Board or anything with .fen()
        pos = Position(fen_or_position.fen())
    if W is None:
        W = _W_DEFAULT
        E = _E_PY
    else:
        W = np.asarray(W, dtype=np.int64)
        E = new_eval_cache()
    info = np.zeros(N_INFO, dtype=np.int64)
    v = int(evaluate(pos.T, pos.S, W, E, info))
    return v if pos.S.st[ST_SIDE] == 0 else -v
