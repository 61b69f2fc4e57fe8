"""The net in the engine: one int16 array `NN` holding the quantised weights and a stack of
accumulators, one for each ply of the game's history, and the kernels that keep them.

Two kinds of NN, told by NN[NN_KIND]. KIND_SIMPLE, bullet's example 1 (any N): NN[NN_HIDDEN]
= N (0: no net loaded, and NN is the header alone), NN[NN_L1B] = the output bias; from
NN_HEADER the weights in the file's order (`l0w` [768][N], `l0b` [N], `l1w` [2N]); then,
32-slot aligned, the accumulators: for the position after `ply` moves of the history
(S.st[ST_PLY]) White's N values then Black's, each `l0b` plus the `l0w` rows of its pieces'
features (`wasp.nnue.inputs`). KIND_GENERAL, every other `wasp.nnue.arch.Arch`: a longer
header (the fields, the regions' int64 offsets, the king-bucket table, the output bucket of
each piece count) and regions for the weights (int16, and float32 seen through views), the
accumulator stack, the finny table and the output layers' scratch (`general_layout`).

`acc_make` runs after `make_move` and writes the child's accumulators from the parent's with
the move's few rows added and subtracted (KIND_GENERAL: records the move, and `acc_update`
applies it when an evaluation asks); taking a move back costs nothing (the parent's are still
below it in the stack). A null move copies them. `acc_refresh` computes them from the pieces:
the search does it once at the root. With king buckets a king move that changes its
side's bucket or half of the board changes all of that side's rows: that side's accumulator
then comes from the finny table (Stockfish's AccumulatorCaches), one accumulator for each
perspective, bucket and half, kept with the pieces it was computed for, so only the pieces
that differ from those are added and taken.
"""

import numpy as np
from numba import njit

from wasp.bitboards import U64, lsb
from wasp.nnue.arch import QuantisedNet, output_bucket
from wasp.nnue.inputs import FEATURES, FLIP, PIECE_TYPES, bucket_table, feature, mirror
from wasp.nnue.netfile import QA, Net
from wasp.types import (
    CASTLING_ROOK,
    EMPTY,
    FLAG_CASTLE,
    FLAG_EP,
    KING,
    MAILBOX,
    MAX_HISTORY,
    MOVE_FROM_MASK,
    MOVE_PROMO_MASK,
    MOVE_PROMO_SHIFT,
    MOVE_TO_SHIFT,
    N_UNDO,
    PAWN,
    ROOK,
    ST_PLY,
    ST_SIDE,
    UNDO,
    UNDO_CAPTURED,
    UNDO_MOVE,
    WHITE,
)

NN_HIDDEN = 0  # N, 0 when no net is loaded
NN_L1B = 1  # the output bias (scale QA * QB), KIND_SIMPLE
NN_KIND = 2  # KIND_SIMPLE or KIND_GENERAL
NN_HEADER = 32  # slots before the weights (64 bytes), KIND_SIMPLE
ACC_ALIGN = 32  # the accumulator stack starts on a 64-byte boundary of NN
STACK = MAX_HISTORY + 1  # one entry for every position a history can hold

KIND_SIMPLE, KIND_GENERAL = 0, 1
# KIND_GENERAL's header: the architecture's fields ...
NN_BUCKETS = 3  # king buckets (1: Chess768)
NN_MIRRORED = 4  # 1: ChessBucketsMirrored
NN_OUTPUTS = 5  # K, output buckets
NN_CRELU = 6  # 1: CReLU, 0: SCReLU
NN_LAYERS = 7  # 1: example 4's pairwise product, L1, L2 and output
NN_QA, NN_QB, NN_SCALE = 8, 9, 10
NN_L1, NN_L2 = 11, 12  # example 4's layer widths a bucket
NN_CHUNK = 13  # both kinds: > 0, the output layer's products fit in int16 and this many of
#                them in an int32 sum (`wasp.nnue.network`); 0: int64 throughout
# ... the slot of each region, int64 through a view of NN[NN_OFFSETS:NN_OFFSETS + 48] ...
NN_OFFSETS = 16
OFF_L0W, OFF_L0B, OFF_L1W, OFF_L1B, OFF_L2W, OFF_L2B, OFF_L3W, OFF_L3B = range(8)
OFF_ACC, OFF_FINNY, OFF_SCRATCH, OFF_FINNY_STRIDE, OFF_PLIES = range(8, 13)
N_OFFSETS = 13
# ... the bucket of each king square (as its own side sees the board) ...
NN_TABLE = 96
# ... and the output bucket of each count of pieces on the board (0 to 64).
NN_OUTPUT_TABLE = 160
GENERAL_HEADER = 256
FINNY_BOARDS = 64  # slots of a finny entry before its accumulator: 12 uint64 bitboards
SCRATCH = 256  # slots of example 4's scratch: 16 int64, 16 and 32 float64
# KIND_GENERAL's record of each ply: is each perspective's accumulator computed, must it be
# refreshed (its king changed bucket or half), and what the move put down and took away.
PLY_COMPUTED = 0  # + perspective
PLY_REFRESH = 2  # + perspective
PLY_CHANGES = 4  # eight slots: (piece, square) added twice, taken twice (EMPTY: none)
PLY_SLOTS = 16


def offsets(hidden: int):
    """(l0w, l0b, l1w, acc, size) slot offsets of NN for a net of `hidden` neurons."""
    l0w = NN_HEADER
    l0b = l0w + FEATURES * hidden
    l1w = l0b + hidden
    acc = -(-(l1w + 2 * hidden) // ACC_ALIGN) * ACC_ALIGN
    return l0w, l0b, l1w, acc, acc + STACK * 2 * hidden


def no_net() -> np.ndarray:
    """The NN of the hand-written evaluation: the header alone, N = 0."""
    return np.zeros(NN_HEADER, dtype=np.int16)


def nn_array(net) -> np.ndarray:
    """The NN array of `net` (a `Net`, a `QuantisedNet`, or None for no_net()), its
    accumulators not yet computed."""
    if net is None:
        return no_net()
    if isinstance(net, QuantisedNet):
        if not net.arch.simple:
            return _general_nn(net)
        t = net.tensors
        net = Net(t["l0w"], t["l0b"], t["l1w"].ravel(), int(t["l1b"][0]))
    hidden = net.hidden
    if not 0 < hidden <= 32767:
        raise ValueError(f"a net of N = {hidden} neurons cannot be loaded")
    l0w, l0b, l1w, acc, size = offsets(hidden)
    NN = np.zeros(size, dtype=np.int16)
    NN[NN_HIDDEN] = hidden
    NN[NN_L1B] = net.l1b
    NN[NN_CHUNK] = narrow_chunk(net.l1w, hidden, 1, QA, False)
    NN[l0w:l0b] = net.l0w.ravel()
    NN[l0b:l1w] = net.l0b
    NN[l1w:l1w + 2 * hidden] = net.l1w
    return NN


def _aligned(slots: int) -> int:
    return -(-slots // ACC_ALIGN) * ACC_ALIGN


def general_layout(arch) -> dict:
    """The slot of each region of a KIND_GENERAL NN (each 64-byte aligned) and its size."""
    n, b, k = arch.hidden, arch.input_buckets, arch.output_buckets
    sizes = [("l0w", arch.features * n), ("l0b", n)]
    if not arch.layers:
        sizes += [("l1w", k * 2 * n), ("l1b", k), ("l2w", 0), ("l2b", 0), ("l3w", 0),
                  ("l3b", 0)]
    else:
        l1, l2 = arch.layers  # float32 tensors take two slots a value
        sizes += [("l1w", k * n * l1), ("l1b", 2 * k * l1), ("l2w", 2 * k * l2 * l1),
                  ("l2b", 2 * k * l2), ("l3w", 2 * k * l2), ("l3b", 2 * k)]
    stride = FINNY_BOARDS + _aligned(n)
    sizes += [("acc", STACK * 2 * n), ("finny", 2 * b * 2 * stride), ("scratch", SCRATCH),
              ("plies", STACK * PLY_SLOTS)]
    layout, slot = {}, GENERAL_HEADER
    for name, size in sizes:
        layout[name] = slot
        slot += _aligned(size)
    layout["finny_stride"] = stride
    layout["size"] = slot
    return layout


INT16_MAX, INT32_MAX = 32767, 2**31 - 1
MAX_CHUNK = 4096  # beyond any N


def narrow_chunk(l1w, hidden, buckets, qa, crelu) -> int:
    """How many of the output layer's terms an int32 sum holds exactly, when each product
    clamp(x, 0, qa) * w fits in int16 (0 when it does not, or when fewer than 16 terms fit):
    the whole of a perspective's N when qa^2 (SCReLU; qa for CReLU) times the largest sum of
    |w| over one bucket's half of l1w fits in int32, as with any trained net, else as many
    terms as fit at the largest |w|."""
    w = np.abs(np.asarray(l1w, dtype=np.int64)).reshape(buckets, 2, hidden)
    top = max(1, int(w.max()))
    if qa * top > INT16_MAX:
        return 0
    unit = qa if crelu else qa * qa
    if unit * int(w.sum(axis=2).max()) <= INT32_MAX:
        return hidden
    chunk = min(INT32_MAX // (unit * top), MAX_CHUNK)
    return chunk - chunk % 16 if chunk >= 16 else 0


def _general_nn(net: QuantisedNet) -> np.ndarray:
    a, t = net.arch, net.tensors
    n, k = a.hidden, a.output_buckets
    at = general_layout(a)
    NN = np.zeros(at["size"], dtype=np.int16)
    NN[NN_HIDDEN], NN[NN_KIND], NN[NN_BUCKETS] = n, KIND_GENERAL, a.input_buckets
    NN[NN_MIRRORED], NN[NN_OUTPUTS] = int(a.mirrored), k
    NN[NN_CRELU], NN[NN_LAYERS] = int(a.activation == "crelu"), int(a.multi_layer)
    NN[NN_QA], NN[NN_QB], NN[NN_SCALE] = a.qa, a.qb, a.scale
    if a.layers:
        NN[NN_L1], NN[NN_L2] = a.layers
    else:
        NN[NN_CHUNK] = narrow_chunk(t["l1w"], a.hidden, a.output_buckets, a.qa,
                                    a.activation == "crelu")
    offsets_ = NN[NN_OFFSETS:NN_OFFSETS + 4 * N_OFFSETS].view(np.int64)
    for i, name in enumerate(("l0w", "l0b", "l1w", "l1b", "l2w", "l2b", "l3w", "l3b", "acc",
                              "finny", "scratch", "finny_stride", "plies")):
        offsets_[i] = at[name]
    NN[NN_TABLE:NN_TABLE + 64] = bucket_table(a.layout)
    NN[NN_OUTPUT_TABLE:NN_OUTPUT_TABLE + 65] = [output_bucket.py_func(c, k) for c in range(65)]

    def put(name, values, dtype=np.int16):
        values = np.ascontiguousarray(values, dtype=dtype).ravel()
        NN[at[name]:at[name] + values.nbytes // 2].view(dtype)[:] = values

    put("l0w", t["l0w"])
    put("l0b", t["l0b"])
    if not a.layers:
        put("l1w", t["l1w"])
        put("l1b", t["l1b"])
    else:
        l1 = a.layers[0]
        # file (K * 16, N) -> [K][N][16]: the 16 weights of one input together (sparse L1)
        put("l1w", t["l1w"].reshape(k, l1, n).transpose(0, 2, 1))
        for name in ("l1b", "l2w", "l2b", "l3w", "l3b"):
            put(name, t[name], np.float32)
    # Each finny entry starts as the empty board: l0b, no pieces.
    for e in range(2 * a.input_buckets * 2):
        acc = at["finny"] + e * at["finny_stride"] + FINNY_BOARDS
        NN[acc:acc + n] = t["l0b"]
    return NN


# ---------------------------------------------------------------------------
# Kernels


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def acc_offset(NN, ply):
    """Slot of the accumulators (White's, then Black's) of the position after `ply` moves,
    KIND_SIMPLE."""
    n = np.int64(NN[NN_HIDDEN])
    l1w = NN_HEADER + (FEATURES + 1) * n
    return ((l1w + 2 * n + ACC_ALIGN - 1) // ACC_ALIGN) * ACC_ALIGN + ply * 2 * n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def nn_offsets(NN):
    """KIND_GENERAL's region slots (OFF_*), an int64 view of its header."""
    return NN[NN_OFFSETS:NN_OFFSETS + 4 * N_OFFSETS].view(np.int64)


@njit(cache=True, nogil=True, _nrt=False)
def acc_slot(NN, ply):
    """Slot of the accumulators of the position after `ply` moves, either kind."""
    if NN[NN_KIND] == KIND_SIMPLE:
        return acc_offset(NN, ply)
    return nn_offsets(NN)[OFF_ACC] + ply * 2 * np.int64(NN[NN_HIDDEN])


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _row(base, n, perspective, piece, sq):
    """Slot of the weight row of `piece` (colour * 6 + type) on `sq` as `perspective` sees
    it, in the l0w block that starts at `base` (a king bucket's; sq already mirrored)."""
    colour = 1 if piece >= PIECE_TYPES else 0
    return base + feature(perspective, colour, piece - PIECE_TYPES * colour, sq) * n


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def king_view(NN, bb, perspective):
    """(bucket, mirror) of `perspective` in a KIND_GENERAL NN: its king's square as it sees
    the board gives the bucket, and files e-h the mirror (0 or MIRROR) of every square."""
    if NN[NN_MIRRORED] == 0:
        return np.int64(0), np.int64(0)
    k = np.int64(lsb(bb[6 * perspective + KING])) ^ (FLIP * perspective)
    return np.int64(NN[NN_TABLE + k]), np.int64(mirror(k))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _fill(S, NN, n, perspective, dst, l0b, base, mirror_):
    """NN[dst:dst + n] = l0b plus the rows of every piece on the board (block `base`)."""
    d = NN[dst:dst + n]
    b = NN[l0b:l0b + n]
    for i in range(n):
        d[i] = b[i]
    for sq in range(64):
        piece = S.st[MAILBOX + sq]
        if piece != EMPTY:
            row = _row(base, n, perspective, piece, sq ^ mirror_)
            w = NN[row:row + n]
            for i in range(n):
                d[i] += w[i]


@njit(cache=True, nogil=True, _nrt=False)
def acc_refresh(S, NN):
    """The accumulators of the current position from its pieces."""
    n = np.int64(NN[NN_HIDDEN])
    if NN[NN_KIND] == KIND_SIMPLE:
        base = acc_offset(NN, S.st[ST_PLY])
        for p in range(2):
            _fill(S, NN, n, p, base + p * n, NN_HEADER + FEATURES * n, NN_HEADER, 0)
        return
    off = nn_offsets(NN)
    ply = S.st[ST_PLY]
    base = off[OFF_ACC] + ply * 2 * n
    record = off[OFF_PLIES] + ply * PLY_SLOTS
    for p in range(2):
        bucket, mirror_ = king_view(NN, S.bb, p)
        _fill(S, NN, n, p, base + p * n, off[OFF_L0B], off[OFF_L0W] + FEATURES * bucket * n,
              mirror_)
        NN[record + PLY_COMPUTED + p] = 1
        NN[record + PLY_REFRESH + p] = 0


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add_sub(NN, n, src, dst, a1, s1):
    # Slices, not NN[x + i]: with indices known to be >= 0 the loops vectorise.
    d, s, a, b = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[s1:s1 + n]
    for i in range(n):
        d[i] = s[i] + a[i] - b[i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add_sub2(NN, n, src, dst, a1, s1, s2):
    d, s, a, b, c = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[s1:s1 + n], \
        NN[s2:s2 + n]
    for i in range(n):
        d[i] = s[i] + a[i] - b[i] - c[i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _add2_sub2(NN, n, src, dst, a1, a2, s1, s2):
    d, s, a, a_, b, c = NN[dst:dst + n], NN[src:src + n], NN[a1:a1 + n], NN[a2:a2 + n], \
        NN[s1:s1 + n], NN[s2:s2 + n]
    for i in range(n):
        d[i] = s[i] + a[i] + a_[i] - b[i] - c[i]


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _changes(st):
    """What the last move did to the board: (piece, square) put down twice and taken away
    twice (EMPTY where it did less: a castling puts down and takes two, a capture takes two,
    any other move one of each), the side that moved and its from-square."""
    ply = st[ST_PLY]
    u = UNDO + (ply - 1) * N_UNDO
    m = st[u + UNDO_MOVE]
    frm = m & MOVE_FROM_MASK
    to = (m >> MOVE_TO_SHIFT) & MOVE_FROM_MASK
    us = 1 - st[ST_SIDE]
    if m & FLAG_CASTLE:
        # The king runs from frm to to (the g or c file), the rook to the f or d file.
        king = 6 * us + KING
        rook = 6 * us + ROOK
        if (to & 7) == 6:
            rook_from, rook_to = st[CASTLING_ROOK + 2 * us], to - 1
        else:
            rook_from, rook_to = st[CASTLING_ROOK + 2 * us + 1], to + 1
        return king, to, rook, rook_to, king, frm, rook, rook_from, us, frm
    landed = st[MAILBOX + to]  # the promoted piece after a promotion
    moved = 6 * us + PAWN if (m >> MOVE_PROMO_SHIFT) & MOVE_PROMO_MASK else landed
    captured = st[u + UNDO_CAPTURED]
    cap_sq = to
    if m & FLAG_EP:
        captured = 6 * (1 - us) + PAWN
        cap_sq = to - 8 if us == WHITE else to + 8
    return landed, to, EMPTY, to, moved, frm, captured, cap_sq, us, frm


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _apply(NN, n, src, dst, base, p, mirror_, a1, a1s, a2, a2s, s1, s1s, s2, s2s):
    """dst = src with the changes' rows (block `base`, squares xor `mirror_`) added and
    taken."""
    ra1 = _row(base, n, p, a1, a1s ^ mirror_)
    rs1 = _row(base, n, p, s1, s1s ^ mirror_)
    if a2 != EMPTY:
        _add2_sub2(NN, n, src, dst, ra1, _row(base, n, p, a2, a2s ^ mirror_), rs1,
                   _row(base, n, p, s2, s2s ^ mirror_))
    elif s2 == EMPTY:
        _add_sub(NN, n, src, dst, ra1, rs1)
    else:
        _add_sub2(NN, n, src, dst, ra1, rs1, _row(base, n, p, s2, s2s ^ mirror_))


@njit(cache=True, nogil=True, _nrt=False)
def acc_make(S, NN):
    """After make_move: the new position's accumulators from its parent's (one ply below),
    the rows of the move's pieces added where they land and taken where they left."""
    if NN[NN_KIND] != KIND_SIMPLE:
        _acc_make_general(S, NN)
        return
    n = np.int64(NN[NN_HIDDEN])
    dst = acc_offset(NN, S.st[ST_PLY])
    src = dst - 2 * n
    a1, a1s, a2, a2s, s1, s1s, s2, s2s, us, frm = _changes(S.st)
    for p in range(2):
        _apply(NN, n, src + p * n, dst + p * n, NN_HEADER, p, 0, a1, a1s, a2, a2s, s1, s1s,
               s2, s2s)


@njit(cache=True, nogil=True, _nrt=False)
def _acc_make_general(S, NN):
    """acc_make of a KIND_GENERAL NN, lazily: the move's changes are recorded at the new ply,
    and whether its side's king left its bucket or half; `acc_update` computes the
    accumulators when an evaluation needs them, so a position never evaluated (a cutoff from
    the table, say) costs none of the rows."""
    record = nn_offsets(NN)[OFF_PLIES] + S.st[ST_PLY] * PLY_SLOTS
    a1, a1s, a2, a2s, s1, s1s, s2, s2s, us, frm = _changes(S.st)
    changes = NN[record + PLY_CHANGES:record + PLY_CHANGES + 8]
    changes[0], changes[1], changes[2], changes[3] = a1, a1s, a2, a2s
    changes[4], changes[5], changes[6], changes[7] = s1, s1s, s2, s2s
    refresh = 0
    if s1 == 6 * us + KING and NN[NN_MIRRORED] != 0:
        bucket, mirror_ = king_view(NN, S.bb, us)
        before = frm ^ (FLIP * us)
        refresh = 1 if NN[NN_TABLE + before] != bucket or mirror(before) != mirror_ else 0
    NN[record + PLY_COMPUTED] = NN[record + PLY_COMPUTED + 1] = 0
    NN[record + PLY_REFRESH + us] = refresh
    NN[record + PLY_REFRESH + 1 - us] = 0


@njit(cache=True, nogil=True, _nrt=False)
def acc_update(S, NN):
    """Bring the accumulators of the current position up to date (KIND_GENERAL; a simple NN
    is always up to date). For each perspective: from the nearest ply below whose accumulator
    is computed, each recorded move is applied in turn (in the block of the perspective's
    king bucket, which no move between changed), each ply's accumulator kept for its
    siblings; when a move between changed the king's bucket or half, the accumulator comes
    from the finny table instead."""
    if NN[NN_KIND] == KIND_SIMPLE:
        return
    n = np.int64(NN[NN_HIDDEN])
    off = nn_offsets(NN)
    ply = S.st[ST_PLY]
    plies = off[OFF_PLIES]
    for p in range(2):
        if NN[plies + ply * PLY_SLOTS + PLY_COMPUTED + p] != 0:
            continue
        bucket, mirror_ = king_view(NN, S.bb, p)
        q = ply
        while q > 0 and NN[plies + q * PLY_SLOTS + PLY_COMPUTED + p] == 0 \
                and NN[plies + q * PLY_SLOTS + PLY_REFRESH + p] == 0:
            q -= 1
        record = plies + q * PLY_SLOTS
        if NN[record + PLY_COMPUTED + p] == 0:  # a refresh between (or no computed ply)
            finny_refresh(S, NN, p, bucket, mirror_, off[OFF_ACC] + ply * 2 * n + p * n)
            NN[plies + ply * PLY_SLOTS + PLY_COMPUTED + p] = 1
            continue
        base = off[OFF_L0W] + FEATURES * bucket * n
        for r in range(q + 1, ply + 1):
            record = plies + r * PLY_SLOTS
            c = NN[record + PLY_CHANGES:record + PLY_CHANGES + 8]
            dst = off[OFF_ACC] + r * 2 * n + p * n
            if c[0] == EMPTY:  # a null move
                d, s = NN[dst:dst + n], NN[dst - 2 * n:dst - n]
                for i in range(n):
                    d[i] = s[i]
            else:
                _apply(NN, n, dst - 2 * n, dst, base, p, mirror_, np.int64(c[0]),
                       np.int64(c[1]), np.int64(c[2]), np.int64(c[3]), np.int64(c[4]),
                       np.int64(c[5]), np.int64(c[6]), np.int64(c[7]))
            NN[record + PLY_COMPUTED + p] = 1


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def _two_rows(NN, n, acc, dst, r1, plus1, r2, plus2):
    """NN[acc:acc + n] (and NN[dst:dst + n], when dst >= 0) = the accumulator with row r1
    and, when r2 >= 0, row r2 added (plus) or taken: one pass for two rows."""
    a, w1 = NN[acc:acc + n], NN[r1:r1 + n]
    if r2 < 0:
        w2 = w1[:0]
    else:
        w2 = NN[r2:r2 + n]
    if dst >= 0:
        d = NN[dst:dst + n]
    else:
        d = a
    if r2 < 0:
        if plus1:
            for i in range(n):
                d[i] = a[i] = a[i] + w1[i]
        else:
            for i in range(n):
                d[i] = a[i] = a[i] - w1[i]
    elif plus1 and plus2:
        for i in range(n):
            d[i] = a[i] = a[i] + w1[i] + w2[i]
    elif plus1 != plus2:
        add, sub = (w1, w2) if plus1 else (w2, w1)
        for i in range(n):
            d[i] = a[i] = a[i] + add[i] - sub[i]
    else:
        for i in range(n):
            d[i] = a[i] = a[i] - w1[i] - w2[i]


@njit(cache=True, nogil=True, _nrt=False)
def finny_refresh(S, NN, perspective, bucket, mirror_, dst):
    """NN[dst:dst + N] = the accumulator of `perspective` (king in `bucket`, `mirror_`) for
    the current pieces, from the finny table's entry for that bucket and half: the rows of
    the pieces that differ from the entry's are added or taken two a pass (the last pass
    writing dst too), then the entry holds the current ones."""
    n = np.int64(NN[NN_HIDDEN])
    off = nn_offsets(NN)
    entry = off[OFF_FINNY] + ((perspective * NN[NN_BUCKETS] + bucket) * 2
                              + (1 if mirror_ else 0)) * off[OFF_FINNY_STRIDE]
    boards = NN[entry:entry + 48].view(np.uint64)
    acc = entry + FINNY_BOARDS
    base = off[OFF_L0W] + FEATURES * bucket * n
    bb = S.bb
    pending, pending_plus = np.int64(-1), True  # a row not yet applied
    for piece in range(12):
        now = bb[piece]
        before = boards[piece]
        for plus in (True, False):
            diff = now & ~before if plus else before & ~now
            while diff:
                sq = lsb(diff)
                diff &= diff - U64(1)
                row = _row(base, n, perspective, piece, np.int64(sq) ^ mirror_)
                if pending < 0:
                    pending, pending_plus = row, plus
                else:
                    _two_rows(NN, n, acc, np.int64(-1), pending, pending_plus, row, plus)
                    pending = np.int64(-1)
        boards[piece] = now
    if pending >= 0:
        _two_rows(NN, n, acc, dst, pending, pending_plus, np.int64(-1), True)
    else:
        a, d = NN[acc:acc + n], NN[dst:dst + n]
        for i in range(n):
            d[i] = a[i]


@njit(cache=True, nogil=True, _nrt=False)
def acc_null(S, NN):
    """After make_null: the parent's accumulators, unchanged (KIND_GENERAL: recorded as a
    move that changes nothing)."""
    n = np.int64(NN[NN_HIDDEN])
    if NN[NN_KIND] != KIND_SIMPLE:
        record = nn_offsets(NN)[OFF_PLIES] + S.st[ST_PLY] * PLY_SLOTS
        NN[record + PLY_CHANGES] = EMPTY
        for p in range(2):
            NN[record + PLY_COMPUTED + p] = 0
            NN[record + PLY_REFRESH + p] = 0
        return
    dst = acc_offset(NN, S.st[ST_PLY])
    d, s = NN[dst:dst + 2 * n], NN[dst - 2 * n:dst]
    for i in range(2 * n):
        d[i] = s[i]
