"""Bitboard primitives and the attack tables every kernel reads.

Sliding attacks use "fancy" magic bitboards: one multiply and one lookup per
piece. The tables are built by a cached kernel at first use (a few ms) and are
passed to kernels as one flat uint64 array `T` (layout: the T_* offsets): big
global arrays would be frozen into every compiled function, and a tuple of many
arrays costs an atomic reference count per array at every call.
"""

import contextlib
import hashlib
import os
import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from wasp.atomicfile import replacing

U64 = np.uint64
ZERO = U64(0)
ONE = U64(1)
ALL_SQUARES = U64(0xFFFFFFFFFFFFFFFF)

FILE_A = U64(0x0101010101010101)
FILE_H = U64(0x8080808080808080)
NOT_FILE_A = ~FILE_A
NOT_FILE_H = ~FILE_H
RANK_1 = U64(0x00000000000000FF)
RANK_2 = U64(0x000000000000FF00)
RANK_3 = U64(0x0000000000FF0000)
RANK_6 = U64(0x0000FF0000000000)
RANK_7 = U64(0x00FF000000000000)
RANK_8 = U64(0xFF00000000000000)
LIGHT_SQUARES = U64(0x55AA55AA55AA55AA)
DARK_SQUARES = U64(0xAA55AA55AA55AA55)


@intrinsic
def popcount(typingctx, x):
    """Number of set bits (LLVM ctpop: one POPCNT instruction)."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def lsb(typingctx, x):
    """Index of the lowest set bit (LLVM cttz); undefined for 0."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], cgutils.true_bit)

    return sig, codegen


@intrinsic
def msb(typingctx, x):
    """Index of the highest set bit (63 - LLVM ctlz); undefined for 0."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        lz = builder.ctlz(args[0], cgutils.true_bit)
        return builder.sub(lz.type(63), lz)

    return sig, codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask the CPU to start loading the cache line of arr[idx] (LLVM prefetch, read, keep in
    all levels): a hash table probe a little later then finds it in cache. idx >= 0."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def bit(sq):
    """The bitboard of one square (sq in 0..63)."""
    return ONE << U64(sq)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def shift_up(b):
    return b << U64(8)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def shift_down(b):
    return b >> U64(8)


# Layout of the one flat uint64 table array `T` that kernels take as an argument.
T_KNIGHT = 0  # [sq]
T_KING = 64  # [sq]
T_PAWN = 128  # [colour * 64 + sq]: squares a pawn of that colour on sq attacks
T_ROOK_MASK = 256  # [sq] relevant occupancy
T_ROOK_MAGIC = 320
T_ROOK_SHIFT = 384
T_ROOK_BASE = 448  # [sq] index in T of the square's attack block
T_BISHOP_MASK = 512
T_BISHOP_MAGIC = 576
T_BISHOP_SHIFT = 640
T_BISHOP_BASE = 704
T_BETWEEN = 768  # [a * 64 + b] squares strictly between two aligned squares
T_LINE = T_BETWEEN + 4096  # [a * 64 + b] the whole line through two aligned squares
T_ZOBRIST_PIECE = T_LINE + 4096  # [piece * 64 + sq] Polyglot keys, our piece numbering
T_ZOBRIST_CASTLE = T_ZOBRIST_PIECE + 768  # [rights] xor of the keys of each right set
T_ZOBRIST_EP = T_ZOBRIST_CASTLE + 16  # [file]
T_ZOBRIST_WHITE = T_ZOBRIST_EP + 8  # xor-ed in when white is to move
T_SLIDERS = T_ZOBRIST_WHITE + 8  # rook attack blocks, then bishop blocks


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def rook_attacks(T, sq, occ):
    i = ((occ & T[T_ROOK_MASK + sq]) * T[T_ROOK_MAGIC + sq]) >> T[T_ROOK_SHIFT + sq]
    return T[T[T_ROOK_BASE + sq] + i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def bishop_attacks(T, sq, occ):
    i = ((occ & T[T_BISHOP_MASK + sq]) * T[T_BISHOP_MAGIC + sq]) >> T[T_BISHOP_SHIFT + sq]
    return T[T[T_BISHOP_BASE + sq] + i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def queen_attacks(T, sq, occ):
    return rook_attacks(T, sq, occ) | bishop_attacks(T, sq, occ)


# ---------------------------------------------------------------------------
# Table construction


ROOK_DIRS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.int64)
BISHOP_DIRS = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.int64)
# read-only as the kernels see globals, so that _slow_slider compiles once for both callers
ROOK_DIRS.setflags(write=False)
BISHOP_DIRS.setflags(write=False)
KNIGHT_STEPS = np.array(
    [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]], dtype=np.int64
)
KING_STEPS = np.array(
    [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]], dtype=np.int64
)


@njit(cache=True)
def _slow_slider(sq, occ, dirs):
    """Attacks of a slider found by walking rays (for table building only)."""
    att = ZERO
    f0 = sq & 7
    r0 = sq >> 3
    for d in range(dirs.shape[0]):
        f = f0 + dirs[d, 0]
        r = r0 + dirs[d, 1]
        while 0 <= f < 8 and 0 <= r < 8:
            b = ONE << U64(r * 8 + f)
            att |= b
            if occ & b:
                break
            f += dirs[d, 0]
            r += dirs[d, 1]
    return att


@njit(cache=True)
def _relevant_mask(sq, dirs):
    """Squares whose occupancy matters to a slider: rays without their last square."""
    m = ZERO
    f0 = sq & 7
    r0 = sq >> 3
    for d in range(dirs.shape[0]):
        f = f0 + dirs[d, 0]
        r = r0 + dirs[d, 1]
        while 0 <= f + dirs[d, 0] < 8 and 0 <= r + dirs[d, 1] < 8:
            m |= ONE << U64(r * 8 + f)
            f += dirs[d, 0]
            r += dirs[d, 1]
    return m


@njit(cache=True)
def _steps(sq, steps):
    att = ZERO
    f0 = sq & 7
    r0 = sq >> 3
    for d in range(steps.shape[0]):
        f = f0 + steps[d, 0]
        r = r0 + steps[d, 1]
        if 0 <= f < 8 and 0 <= r < 8:
            att |= ONE << U64(r * 8 + f)
    return att


@njit(cache=True)
def _fill_slider_table(masks, magics, shifts, offsets, table, dirs):
    """Enumerate every occupancy subset of each mask (carry-rippler) into its slot.

    Returns False when a magic maps two subsets with different attacks to one slot.
    """
    for sq in range(64):
        mask = masks[sq]
        size = np.int64(1) << np.int64(64 - np.int64(shifts[sq]))
        for i in range(size):
            table[offsets[sq] + i] = ZERO
        used = np.zeros(size, dtype=np.bool_)
        sub = ZERO
        while True:
            att = _slow_slider(sq, sub, dirs)
            idx = np.int64((sub * magics[sq]) >> shifts[sq])
            if used[idx] and table[offsets[sq] + idx] != att:
                return False
            used[idx] = True
            table[offsets[sq] + idx] = att
            sub = (sub - mask) & mask
            if sub == ZERO:
                break
    return True


@njit(cache=True)
def _find_magic(sq, mask, dirs, seed):
    """Search sparse random numbers until one indexes every subset without collision."""
    mask = U64(mask)
    bits = 0
    m = mask
    while m:
        bits += 1
        m &= m - ONE
    size = 1 << bits
    occs = np.zeros(size, dtype=np.uint64)
    atts = np.zeros(size, dtype=np.uint64)
    sub = ZERO
    n = 0
    while True:
        occs[n] = sub
        atts[n] = _slow_slider(sq, sub, dirs)
        n += 1
        sub = (sub - mask) & mask
        if sub == ZERO:
            break
    state = U64(seed)
    table = np.zeros(size, dtype=np.uint64)
    stamp = np.zeros(size, dtype=np.int64)
    attempt = 0
    shift = U64(64 - bits)
    while True:
        attempt += 1
        cand = ALL_SQUARES
        for _ in range(3):  # sparse: AND of three xorshift draws
            state ^= state >> U64(12)
            state ^= state << U64(25)
            state ^= state >> U64(27)
            cand &= state * U64(2685821657736338717)
        ok = True
        for i in range(size):
            idx = np.int64((occs[i] * cand) >> shift)
            if stamp[idx] != attempt:
                stamp[idx] = attempt
                table[idx] = atts[i]
            elif table[idx] != atts[i]:
                ok = False
                break
        if ok:
            return cand


def find_magics(seed=0x9E3779B97F4A7C15):
    """Generate the magic numbers stored in wasp/magics.py (run once, offline)."""
    rook, bishop = [], []
    for sq in range(64):
        rook.append(int(_find_magic(sq, _relevant_mask(sq, ROOK_DIRS), ROOK_DIRS, seed + sq)))
        bishop.append(
            int(_find_magic(sq, _relevant_mask(sq, BISHOP_DIRS), BISHOP_DIRS, seed + 64 + sq))
        )
    return rook, bishop


@njit(cache=True)
def _fill_lines(between, line, rook_masks_empty, bishop_masks_empty):
    for a in range(64):
        for b in range(64):
            if a == b:
                continue
            ab = (ONE << U64(a)) | (ONE << U64(b))
            for dirs_is_rook in (True, False):
                dirs = ROOK_DIRS if dirs_is_rook else BISHOP_DIRS
                empty_att = rook_masks_empty[a] if dirs_is_rook else bishop_masks_empty[a]
                if empty_att & (ONE << U64(b)):
                    att_a = _slow_slider(a, ab, dirs)
                    att_b = _slow_slider(b, ab, dirs)
                    between[a, b] = att_a & att_b
                    line[a, b] = (
                        (_slow_slider(a, ZERO, dirs) & _slow_slider(b, ZERO, dirs)) | ab
                    )


def _zobrist_tables():
    """Polyglot's random numbers in our piece numbering (the key equals python-chess's)."""
    from chess.polyglot import POLYGLOT_RANDOM_ARRAY as R

    piece = np.zeros((12, 64), dtype=np.uint64)
    for color in range(2):
        for ptype in range(6):
            kind = 2 * ptype + (1 - color)  # Polyglot: black pawn 0, white pawn 1, ...
            for sq in range(64):
                piece[color * 6 + ptype, sq] = R[64 * kind + sq]
    castle = np.zeros(16, dtype=np.uint64)
    for rights in range(16):
        k = 0
        for b in range(4):
            if rights >> b & 1:
                k ^= R[768 + b]
        castle[rights] = k
    ep = np.array([R[772 + f] for f in range(8)], dtype=np.uint64)
    white = np.array([R[780]], dtype=np.uint64)
    return piece, castle, ep, white


def build_tables():
    """All attack and key tables in one array (about 0.9 MB), built in a few milliseconds."""
    from wasp.magics import BISHOP_MAGICS, ROOK_MAGICS

    knight = np.array([_steps(s, KNIGHT_STEPS) for s in range(64)], dtype=np.uint64)
    king = np.array([_steps(s, KING_STEPS) for s in range(64)], dtype=np.uint64)
    pawn = np.zeros((2, 64), dtype=np.uint64)
    for s in range(64):
        pawn[0, s] = _steps(s, np.array([[-1, 1], [1, 1]], dtype=np.int64))
        pawn[1, s] = _steps(s, np.array([[-1, -1], [1, -1]], dtype=np.int64))
    parts = {}
    offset = 0
    for name, dirs, magics in (("rook", ROOK_DIRS, ROOK_MAGICS), ("bishop", BISHOP_DIRS,
                                                                   BISHOP_MAGICS)):
        masks = np.array([_relevant_mask(s, dirs) for s in range(64)], dtype=np.uint64)
        bits = np.array([bin(int(m)).count("1") for m in masks], dtype=np.int64)
        offsets = np.zeros(64, dtype=np.int64)
        for s in range(64):
            offsets[s] = offset
            offset += 1 << int(bits[s])
        parts[name] = (masks, np.array(magics, dtype=np.uint64),
                       (64 - bits).astype(np.uint64), offsets, dirs)
    sliders = np.zeros(offset, dtype=np.uint64)
    for name in ("rook", "bishop"):
        masks, magics, shifts, offsets, dirs = parts[name]
        if not _fill_slider_table(masks, magics, shifts, offsets, sliders, dirs):
            raise RuntimeError(f"bad {name} magic numbers in wasp/magics.py")
    between = np.zeros((64, 64), dtype=np.uint64)
    line = np.zeros((64, 64), dtype=np.uint64)
    rook_empty = np.array([_slow_slider(s, ZERO, ROOK_DIRS) for s in range(64)], dtype=np.uint64)
    bishop_empty = np.array(
        [_slow_slider(s, ZERO, BISHOP_DIRS) for s in range(64)], dtype=np.uint64
    )
    _fill_lines(between, line, rook_empty, bishop_empty)
    zp, zc, ze, zw = _zobrist_tables()
    T = np.zeros(T_SLIDERS + offset, dtype=np.uint64)
    T[T_KNIGHT:T_KNIGHT + 64] = knight
    T[T_KING:T_KING + 64] = king
    T[T_PAWN:T_PAWN + 128] = pawn.ravel()
    for name, base in (("rook", T_ROOK_MASK), ("bishop", T_BISHOP_MASK)):
        masks, magics, shifts, offsets, _ = parts[name]
        T[base:base + 64] = masks
        T[base + 64:base + 128] = magics
        T[base + 128:base + 192] = shifts
        T[base + 192:base + 256] = (offsets + T_SLIDERS).astype(np.uint64)
    T[T_SLIDERS:] = sliders
    T[T_BETWEEN:T_BETWEEN + 4096] = between.ravel()
    T[T_LINE:T_LINE + 4096] = line.ravel()
    T[T_ZOBRIST_PIECE:T_ZOBRIST_PIECE + 768] = zp.ravel()
    T[T_ZOBRIST_CASTLE:T_ZOBRIST_CASTLE + 16] = zc
    T[T_ZOBRIST_EP:T_ZOBRIST_EP + 8] = ze
    T[T_ZOBRIST_WHITE] = zw[0]
    T.setflags(write=False)
    return T


_TABLES = None


@contextlib.contextmanager
def _without_blas_probe():
    """Hide scipy while numba loads its first kernel.

    Numba's array-math registry imports scipy.linalg only to see whether BLAS is
    there (about 0.3 s, a third of the engine's warm start-up); no kernel of ours
    uses BLAS. Where scipy is loaded already (the tuner), nothing changes.
    """
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        yield
        return
    sys.modules["scipy.linalg"] = None
    try:
        yield
    finally:
        if sys.modules.get("scipy.linalg", 0) is None:
            del sys.modules["scipy.linalg"]


def cache_file(stem: str, key: bytes) -> str:
    """Where a built array is kept: beside numba's cache, named by stem and a digest of key."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    return os.path.join(cache_dir, f"{stem}-{hashlib.sha1(key).hexdigest()[:16]}.npy")


def load_array(path: str):
    """A cached array, or None when missing or unreadable (the file is only a cache)."""
    if not os.path.exists(path):
        return None
    try:
        return np.load(path)
    except (OSError, ValueError):
        return None


def save_array(path: str, a) -> None:
    """Keep an array for later processes (atomically; an unwritable directory is no error)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with replacing(path, ".npy") as tmp:
            np.save(tmp, a)
    except OSError:
        pass


def _tables_file():
    """Where built tables are kept: keyed by the magics."""
    from wasp.magics import BISHOP_MAGICS, ROOK_MAGICS

    return cache_file("wasp-tables", repr((ROOK_MAGICS, BISHOP_MAGICS, T_SLIDERS)).encode())


def _numba_refreshes_on_load() -> bool:
    """False while wasp.warmup's lean cache loads are on (no registry refresh to steer)."""
    from numba.core import caching

    return not getattr(caching.Cache.load_overload, "_wasp_lean", False)


def tables():
    """The process-wide tables: loaded from the cache directory, else built (and saved)."""
    # The file is only a cache: a missing, unreadable or unwritable one means a rebuild.
    global _TABLES
    if _TABLES is None:
        path = _tables_file()
        T = load_array(path)
        with _without_blas_probe():
            if T is None:
                T = build_tables()
                save_array(path, T)
            elif _numba_refreshes_on_load():
                _steps(0, KING_STEPS)  # load numba's runtime with the probe hidden
        T.setflags(write=False)
        _TABLES = T
    return _TABLES
