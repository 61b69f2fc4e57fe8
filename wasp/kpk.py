"""The KPK bitbase: won or drawn for every king + pawn against king position.

Positions are normalised so the strong side is White with the pawn on files a..d. Index:
``((stm * 24 + pawn) * 64 + wk) * 64 + bk`` with stm 0 when the strong side is to move and
pawn = (rank - 1) * 4 + file for the pawn's rank 1..6 (0-based, a2 = rank 1). One bit per
position (1 = the strong side wins), packed in N_WORDS int64 words. The build is a retrograde
fixpoint over all 196608 positions: promotions count as won unless the new queen (or rook) is
captured or the defender is stalemated. It is built once and kept beside numba's cache.
"""

import numpy as np
from numba import njit

from wasp.bitboards import cache_file, load_array, save_array

N_POSITIONS = 2 * 24 * 64 * 64
N_WORDS = N_POSITIONS // 64

_UNKNOWN, _INVALID, _DRAW, _WIN = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def kpk_index(stm, psq, wk, bk):
    """Index of a normalised position (psq on files a..d, ranks 2..7)."""
    p = ((psq >> 3) - 1) * 4 + (psq & 7)
    return ((stm * 24 + p) * 64 + wk) * 64 + bk


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _dist(a, b):
    return max(abs((a & 7) - (b & 7)), abs((a >> 3) - (b >> 3)))


@njit(cache=True, nogil=True, _nrt=False)
def _slider_hits(frm, to, block, diagonal):
    """Does a rook (or queen when diagonal) on frm attack `to`, with one blocker `block`?"""
    df = (to & 7) - (frm & 7)
    dr = (to >> 3) - (frm >> 3)
    if frm == to:
        return False
    if df != 0 and dr != 0 and (not diagonal or abs(df) != abs(dr)):
        return False
    sf = (df > 0) - (df < 0)
    sr = (dr > 0) - (dr < 0)
    f = (frm & 7) + sf
    r = (frm >> 3) + sr
    while True:
        s = r * 8 + f
        if s == to:
            return True
        if s == block:
            return False
        f += sf
        r += sr


@njit(cache=True, nogil=True, _nrt=False)
def _promotion_wins(q, wk, bk, queen):
    """Black to move after a promotion on q: is it won (no capture of the piece, no stalemate)?"""
    if _dist(bk, q) == 1 and _dist(wk, q) > 1:
        return False  # the new piece is lost
    in_check = _slider_hits(q, bk, wk, queen)
    if in_check:
        return True  # K+Q (K+R) against a king that cannot capture: won
    for df in range(-1, 2):
        for dr in range(-1, 2):
            if df == 0 and dr == 0:
                continue
            f = (bk & 7) + df
            r = (bk >> 3) + dr
            if f < 0 or f > 7 or r < 0 or r > 7:
                continue
            t = r * 8 + f
            if _dist(t, wk) <= 1:
                continue
            if t == q:
                continue  # defended (checked above)
            if _slider_hits(q, t, wk, queen):
                continue
            return True  # black has a move: not stalemate
    return False  # stalemate


@njit(cache=True, nogil=True, _nrt=False)
def _classify(v, stm, psq, wk, bk):
    """Value of one position from the current table (UNKNOWN when not yet decided)."""
    if stm == 0:
        # strong side to move: a win if any move reaches a won position
        all_draw = True
        for df in range(-1, 2):
            for dr in range(-1, 2):
                if df == 0 and dr == 0:
                    continue
                f = (wk & 7) + df
                r = (wk >> 3) + dr
                if f < 0 or f > 7 or r < 0 or r > 7:
                    continue
                t = r * 8 + f
                if t == psq or _dist(t, bk) <= 1:
                    continue
                x = v[kpk_index(1, psq, t, bk)]
                if x == _WIN:
                    return _WIN
                if x == _UNKNOWN:
                    all_draw = False
        to = psq + 8
        if to != wk and to != bk:
            if (to >> 3) == 7:
                if _promotion_wins(to, wk, bk, np.bool_(True)) or \
                        _promotion_wins(to, wk, bk, np.bool_(False)):
                    return _WIN
            else:
                x = v[kpk_index(1, to, wk, bk)]
                if x == _WIN:
                    return _WIN
                if x == _UNKNOWN:
                    all_draw = False
                if (psq >> 3) == 1:
                    to2 = psq + 16
                    if to2 != wk and to2 != bk:
                        x = v[kpk_index(1, to2, wk, bk)]
                        if x == _WIN:
                            return _WIN
                        if x == _UNKNOWN:
                            all_draw = False
        return _DRAW if all_draw else _UNKNOWN
    # defender to move: a draw if any move reaches a drawn position
    all_win = True
    n_moves = 0
    for df in range(-1, 2):
        for dr in range(-1, 2):
            if df == 0 and dr == 0:
                continue
            f = (bk & 7) + df
            r = (bk >> 3) + dr
            if f < 0 or f > 7 or r < 0 or r > 7:
                continue
            t = r * 8 + f
            if _dist(t, wk) <= 1:
                continue
            # squares attacked by the pawn
            if (t >> 3) == (psq >> 3) + 1 and abs((t & 7) - (psq & 7)) == 1:
                continue
            n_moves += 1
            if t == psq:
                return _DRAW  # captures the undefended pawn
            x = v[kpk_index(0, psq, wk, t)]
            if x == _DRAW:
                return _DRAW
            if x == _UNKNOWN:
                all_win = False
    if n_moves == 0:
        checked = (bk >> 3) == (psq >> 3) + 1 and abs((bk & 7) - (psq & 7)) == 1
        return _WIN if checked else _DRAW
    return _WIN if all_win else _UNKNOWN


@njit(cache=True, nogil=True)
def _build(v, words):
    for idx in range(N_POSITIONS):
        bk = idx & 63
        wk = (idx >> 6) & 63
        p = (idx >> 12) % 24
        stm = (idx >> 12) // 24
        psq = (p // 4 + 1) * 8 + (p % 4)
        bad = wk == bk or wk == psq or bk == psq or _dist(wk, bk) <= 1
        if not bad and stm == 0:
            # the defender may not be in check with the strong side to move
            if (bk >> 3) == (psq >> 3) + 1 and abs((bk & 7) - (psq & 7)) == 1:
                bad = True
        v[idx] = _INVALID if bad else _UNKNOWN
    # Pawn moves only go forward: settle the slices from the 7th rank down, each to a fixpoint.
    for p in range(23, -1, -1):
        psq = (p // 4 + 1) * 8 + (p % 4)
        changed = True
        while changed:
            changed = False
            for stm in range(2):
                base = (stm * 24 + p) * 4096
                for k in range(4096):
                    idx = base + k
                    if v[idx] != _UNKNOWN:
                        continue
                    x = _classify(v, stm, psq, k >> 6, k & 63)
                    if x != _UNKNOWN:
                        v[idx] = x
                        changed = True
    for w in range(N_WORDS):
        words[w] = 0
    for idx in range(N_POSITIONS):
        if v[idx] == _WIN:
            words[idx >> 6] |= np.int64(1) << np.int64(idx & 63)


_BITBASE = None


def build() -> np.ndarray:
    """The packed bitbase (int64[N_WORDS]): from the cache directory, else built (and saved)."""
    global _BITBASE
    if _BITBASE is None:
        with open(__file__, "rb") as f:  # keyed by this file: an edit means a rebuild
            path = cache_file("wasp-kpk", f.read())
        words = load_array(path)
        if words is None or words.shape != (N_WORDS,) or words.dtype != np.int64:
            v = np.zeros(N_POSITIONS, dtype=np.uint8)
            words = np.zeros(N_WORDS, dtype=np.int64)
            _build(v, words)
            save_array(path, words)
        _BITBASE = words
    return _BITBASE


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def probe_words(words, base, strong, stm, wk, bk, psq):
    """Does the strong side (colour `strong`) win? words[base:] is the bitbase; squares real.

    wk/psq are the strong side's king and pawn, bk the defender's king; stm the side to move.
    """
    if strong == 1:  # flip vertically so the strong side is white
        wk ^= 56
        bk ^= 56
        psq ^= 56
    if (psq & 7) > 3:  # mirror to files a..d
        wk ^= 7
        bk ^= 7
        psq ^= 7
    s = 0 if stm == strong else 1
    i = kpk_index(s, psq, wk, bk)
    return (words[base + (i >> 6)] >> np.int64(i & 63)) & 1 == 1


def probe(strong_king: int, pawn: int, weak_king: int, strong: int = 0, stm: int = 0) -> bool:
    """Python face: does the side with the pawn (colour `strong`) win? Squares a1 = 0."""
    return bool(probe_words(build(), 0, strong, stm, strong_king, weak_king, pawn))
