"""The evaluation's one parameter table: names, shapes, defaults, and the flat weight vector W.

Every term is a `Param` with a name, a shape, whether it has an opening and an endgame value
(`phased`), whether the evaluation is linear in it (`linear`) and a default in integer
centipawns. The evaluation kernel reads one flat int64 vector `W`, so changing values needs no
recompile; each row of the table below declares the offsets of its parameter in W as
module-level int constants (`<NAME>` for the opening block, `<NAME>_EG` for the endgame block of
a phased parameter), laid out in table order by `wasp.layout`.

Layout of a phased parameter of n values: the n opening values, then the n endgame values.

The text file format (`save`/`load`, the UCI option EvalFile): one entry per line,
``name = value`` or ``name = [v1, v2, ...]``; phased parameters have two entries,
``name.mg`` and ``name.eg``. ``#`` starts a comment. Entries missing from a file keep their
default; an unknown name, a wrong number of values or a non-number raises ValueError naming
the parameter and the line.
"""

from dataclasses import dataclass

import numpy as np

from wasp.layout import Layout
from wasp.paramfile import assignments, finite_number, read


@dataclass(frozen=True)
class Param:
    name: str
    size: int  # number of values per phase (1 for a scalar)
    phased: bool  # opening and endgame values
    linear: bool  # the evaluation is linear in it (the tuner's gradient path)
    group: str  # trace grouping
    mg: tuple  # default opening (or only) values
    eg: tuple = ()  # default endgame values (phased only)

    @property
    def shape(self):
        return () if self.size == 1 else (self.size,)


_TABLE = Layout("evaluation weights")
OFFSETS = {}  # parameter name -> offset of its (opening) block in W


def _declare(param: Param) -> int:
    """Append `param` to the table; the offset of its block in W."""
    offset = _TABLE.add(param.size * (2 if param.phased else 1), param)
    OFFSETS[param.name] = offset
    return offset


def _ph(name, group, mg, eg, linear=True) -> tuple[int, int]:
    """A phased parameter; the offsets of its opening and endgame values in W."""
    mg = tuple(mg) if isinstance(mg, (list, tuple)) else (mg,)
    eg = tuple(eg) if isinstance(eg, (list, tuple)) else (eg,)
    offset = _declare(Param(name, len(mg), True, linear, group, mg, eg))
    return offset, offset + len(mg)


def _nl(name, group, values) -> int:
    """An unphased parameter the evaluation is not linear in; its offset in W."""
    values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
    return _declare(Param(name, len(values), False, False, group, values))


# The terms in evaluation order, each row declaring the offset constants the kernels read,
# with their default values: Wasp 1.02's terms, the values tuned by Texel's method
# (`datasets/tuned/union-deep-ks.txt`, +64 Elo against Wasp's own at 10+0.1; those are kept in
# `wasp/evalfiles/wasp-1.02.txt`).

# Material.
PAWN_VALUE, PAWN_VALUE_EG = _ph("pawn_value", "material", 71, 94)
KNIGHT_VALUE, KNIGHT_VALUE_EG = _ph("knight_value", "material", 328, 309)
BISHOP_VALUE, BISHOP_VALUE_EG = _ph("bishop_value", "material", 337, 332)
ROOK_VALUE, ROOK_VALUE_EG = _ph("rook_value", "material", 466, 552)
QUEEN_VALUE, QUEEN_VALUE_EG = _ph("queen_value", "material", 976, 1038)
BISHOP_PAIR, BISHOP_PAIR_EG = _ph("bishop_pair", "material", 33, 43)
PST_PAWN, PST_PAWN_EG = _ph(
    "pst_pawn", "pst",  # white's view, a1 first
    mg=[
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
      -1,    1,    3,    6,    6,    3,    1,   -1,
      -2,    2,    6,   12,   12,    6,    2,   -2,
      -3,    3,    9,   18,   18,    9,    3,   -3,
      -1,    5,   11,   20,   20,   11,    5,   -1,
       1,    7,   13,   22,   22,   13,    7,    1,
       0,    0,    0,    0,    0,    0,    0,    0,
    ],
    eg=[
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       3,    3,    3,    3,    3,    3,    3,    3,
       6,    6,    6,    6,    6,    6,    6,    6,
       9,    9,    9,    9,    9,    9,    9,    9,
      12,   12,   12,   12,   12,   12,   12,   12,
      15,   15,   15,   15,   15,   15,   15,   15,
       0,    0,    0,    0,    0,    0,    0,    0,
    ])
PST_KNIGHT, PST_KNIGHT_EG = _ph(
    "pst_knight", "pst",  # white's view, a1 first
    mg=[
     -12,  -12,  -12,  -12,  -12,  -12,  -12,  -12,
     -12,   -4,   -4,   -4,   -4,   -4,   -4,  -12,
     -12,   -4,    8,    8,    8,    8,   -4,  -12,
     -12,   -4,    8,   16,   16,    8,   -4,  -12,
     -12,   -4,    8,   16,   16,    8,   -4,  -12,
     -12,   -4,    8,    8,    8,    8,   -4,  -12,
     -12,   -4,   -4,   -4,   -4,   -4,   -4,  -12,
     -12,  -12,  -12,  -12,  -12,  -12,  -12,  -12,
    ],
    eg=[
      -9,   -9,   -9,   -9,   -9,   -9,   -9,   -9,
      -9,   -3,   -3,   -3,   -3,   -3,   -3,   -9,
      -9,   -3,    3,    3,    3,    3,   -3,   -9,
      -9,   -3,    3,    9,    9,    3,   -3,   -9,
      -9,   -3,    3,    9,    9,    3,   -3,   -9,
      -9,   -3,    3,    3,    3,    3,   -3,   -9,
      -9,   -3,   -3,   -3,   -3,   -3,   -3,   -9,
      -9,   -9,   -9,   -9,   -9,   -9,   -9,   -9,
    ])
PST_BISHOP, PST_BISHOP_EG = _ph(
    "pst_bishop", "pst",  # white's view, a1 first
    mg=[
      -2,   -6,   -6,   -6,   -6,   -6,   -6,   -2,
      -6,    2,   -2,   -2,   -2,   -2,    2,   -6,
      -6,   -2,    6,    2,    2,    6,   -2,   -6,
      -6,   -2,    2,   10,   10,    2,   -2,   -6,
      -6,   -2,    2,   10,   10,    2,   -2,   -6,
      -6,   -2,    6,    2,    2,    6,   -2,   -6,
      -6,    2,   -2,   -2,   -2,   -2,    2,   -6,
      -2,   -6,   -6,   -6,   -6,   -6,   -6,   -2,
    ],
    eg=[
      -5,   -5,   -5,   -5,   -5,   -5,   -5,   -5,
      -5,   -2,   -2,   -2,   -2,   -2,   -2,   -5,
      -5,   -2,    1,    1,    1,    1,   -2,   -5,
      -5,   -2,    1,    4,    4,    1,   -2,   -5,
      -5,   -2,    1,    4,    4,    1,   -2,   -5,
      -5,   -2,    1,    1,    1,    1,   -2,   -5,
      -5,   -2,   -2,   -2,   -2,   -2,   -2,   -5,
      -5,   -5,   -5,   -5,   -5,   -5,   -5,   -5,
    ])
PST_ROOK, PST_ROOK_EG = _ph(
    "pst_rook", "pst",  # white's view, a1 first
    mg=[
      -3,    0,    0,    3,    3,    0,    0,   -3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
       3,    6,    6,    9,    9,    6,    6,    3,
      -3,    0,    0,    3,    3,    0,    0,   -3,
    ],
    eg=[
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       0,    0,    0,    0,    0,    0,    0,    0,
       3,    3,    3,    3,    3,    3,    3,    3,
       0,    0,    0,    0,    0,    0,    0,    0,
    ])
PST_QUEEN, PST_QUEEN_EG = _ph(
    "pst_queen", "pst",  # white's view, a1 first
    mg=[
      -6,   -6,   -6,   -3,   -6,   -6,   -6,   -6,
      -3,   -1,   -1,   -1,   -1,   -1,   -1,   -3,
      -3,   -1,    1,    1,    1,    1,   -1,   -3,
      -3,   -1,    1,    3,    3,    1,   -1,   -3,
      -3,   -1,    1,    3,    3,    1,   -1,   -3,
      -3,   -1,    1,    1,    1,    1,   -1,   -3,
      -3,   -1,   -1,   -1,   -1,   -1,   -1,   -3,
      -3,   -3,   -3,   -3,   -3,   -3,   -3,   -3,
    ],
    eg=[
      -6,   -6,   -6,   -6,   -6,   -6,   -6,   -6,
      -6,   -2,   -2,   -2,   -2,   -2,   -2,   -6,
      -6,   -2,    2,    2,    2,    2,   -2,   -6,
      -6,   -2,    2,    6,    6,    2,   -2,   -6,
      -6,   -2,    2,    6,    6,    2,   -2,   -6,
      -6,   -2,    2,    2,    2,    2,   -2,   -6,
      -6,   -2,   -2,   -2,   -2,   -2,   -2,   -6,
      -6,   -6,   -6,   -6,   -6,   -6,   -6,   -6,
    ])
PST_KING, PST_KING_EG = _ph(
    "pst_king", "pst",  # white's view, a1 first
    mg=[
      20,   28,   12,    0,    0,    6,   30,   22,
       6,   14,   -2,  -14,  -14,   -8,   16,    8,
      -8,    0,  -16,  -28,  -28,  -22,    2,   -6,
     -50,  -50,  -50,  -50,  -50,  -50,  -50,  -50,
     -50,  -50,  -50,  -50,  -50,  -50,  -50,  -50,
     -50,  -50,  -50,  -50,  -50,  -50,  -50,  -50,
     -50,  -50,  -50,  -50,  -50,  -50,  -50,  -50,
     -50,  -50,  -50,  -50,  -50,  -50,  -50,  -50,
    ],
    eg=[
     -35,  -35,  -35,  -35,  -35,  -35,  -35,  -35,
     -35,  -12,  -12,  -12,  -12,  -12,  -12,  -35,
     -35,  -12,   11,   11,   11,   11,  -12,  -35,
     -35,  -12,   11,   34,   34,   11,  -12,  -35,
     -35,  -12,   11,   34,   34,   11,  -12,  -35,
     -35,  -12,   11,   11,   11,   11,  -12,  -35,
     -35,  -12,  -12,  -12,  -12,  -12,  -12,  -35,
     -35,  -35,  -35,  -35,  -35,  -35,  -35,  -35,
    ])
# Pawn structure: penalties per pawn, candidate bonus by relative rank.
PAWN_DOUBLED, PAWN_DOUBLED_EG = _ph("pawn_doubled", "pawns", -14, -20)
PAWN_ISOLATED, PAWN_ISOLATED_EG = _ph("pawn_isolated", "pawns", -5, -12)
PAWN_BACKWARD, PAWN_BACKWARD_EG = _ph("pawn_backward", "pawns", -2, -10)
PAWN_WEAK, PAWN_WEAK_EG = _ph("pawn_weak", "pawns", -10, -5)
PAWN_CANDIDATE, PAWN_CANDIDATE_EG = _ph(
    "pawn_candidate", "pawns", [0, 0, 3, -2, 11, 23, 0, 0], [0, 4, 12, 2, 17, 43, 0, 0])
# Passed pawns, all by relative rank of the pawn.
PASSED_RANK, PASSED_RANK_EG = _ph(
    "passed_rank", "passed", [0, 0, 4, 5, 20, 42, 62, 0], [0, 9, 8, 19, 40, 76, 106, 0])
PASSED_SAFE, PASSED_SAFE_EG = _ph(
    "passed_safe", "passed", [0, -4, 1, -1, 8, 11, 27, 0], [0, 3, 5, 6, 18, 35, 58, 0])
PASSED_BLOCKED, PASSED_BLOCKED_EG = _ph(
    "passed_blocked", "passed", [0, 3, -6, -6, -3, -9, -17, 0], [0, 0, -11, -9, -13, -18, -36, 0])
PASSED_OWN_KING_DISTANCE, PASSED_OWN_KING_DISTANCE_EG = _ph(
    "passed_own_king_distance", "passed",
    [0, 3, 2, -3, -4, 1, 8, 0],
    [0, 0, -4, -6, -5, -11, -16, 0])
PASSED_ENEMY_KING_DISTANCE, PASSED_ENEMY_KING_DISTANCE_EG = _ph(
    "passed_enemy_king_distance", "passed",
    [0, -2, -6, -1, -6, 0, -3, 0],
    [0, -1, 6, 13, 18, 26, 40, 0])
PASSED_UNSTOPPABLE, PASSED_UNSTOPPABLE_EG = _ph("passed_unstoppable", "passed", 0, 295)
# Pieces.
KNIGHT_MOBILITY, KNIGHT_MOBILITY_EG = _ph(
    "knight_mobility", "knights",
    [-28, -18, -9, -3, 3, 5, 8, 16, 12],
    [-27, -19, -15, -7, 4, 7, 12, 14, 11])
KNIGHT_OUTPOST, KNIGHT_OUTPOST_EG = _ph("knight_outpost", "knights", 27, 8)
BISHOP_MOBILITY, BISHOP_MOBILITY_EG = _ph(
    "bishop_mobility", "bishops",
    [-38, -23, -17, -12, -3, 3, 4, 6, 6, 15, 13, 19, 23, 26],
    [-35, -31, -25, -11, -4, -2, 7, 7, 14, 14, 18, 22, 28, 31])
BISHOP_OUTPOST, BISHOP_OUTPOST_EG = _ph("bishop_outpost", "bishops", 22, 11)
BISHOP_TRAPPED, BISHOP_TRAPPED_EG = _ph("bishop_trapped", "bishops", -100, -80)
ROOK_MOBILITY, ROOK_MOBILITY_EG = _ph(
    "rook_mobility", "rooks",
    [-28, -11, -16, -13, -7, 2, 0, 10, 8, 3, 8, 12, 6, 7, 14],
    [-37, -19, -22, -14, -4, 1, 3, 2, 8, 12, 17, 17, 21, 17, 8])
ROOK_OPEN_FILE, ROOK_OPEN_FILE_EG = _ph("rook_open_file", "rooks", 36, -1)
ROOK_SEMI_OPEN_FILE, ROOK_SEMI_OPEN_FILE_EG = _ph("rook_semi_open_file", "rooks", 15, 12)
ROOK_SEVENTH, ROOK_SEVENTH_EG = _ph("rook_seventh", "rooks", 11, 18)
ROOK_TRAPPED, ROOK_TRAPPED_EG = _ph("rook_trapped", "rooks", -42, -10)
QUEEN_MOBILITY, QUEEN_MOBILITY_EG = _ph(
    "queen_mobility", "queens",
    [-17, -8, -13, -15, -12, -14, -9, -8, -4, -4, -4, 1, 4, 4, 4, 5, 4, 7, 2, 7, 7, 7, 8, 9, 11,
     11, 13, 14],
    [-30, -24, -22, -22, -20, -18, -14, -15, -11, -10, -3, 2, 1, 2, 5, 6, 7, 9, 9, 13, 14, 15, 16,
     18, 22, 22, 26, 28])
QUEEN_SEVENTH, QUEEN_SEVENTH_EG = _ph("queen_seventh", "queens", -7, 13)
KING_PAWN_DISTANCE, KING_PAWN_DISTANCE_EG = _ph("king_pawn_distance", "king", -18, -14)
# Hung (en prise) or pinned pieces, Wasp: 12 each, about 24 more for several.
HUNG_PIECE, HUNG_PIECE_EG = _ph("hung_piece", "threats", -34, -24)
HUNG_MULTIPLE, HUNG_MULTIPLE_EG = _ph("hung_multiple", "threats", -35, -29)
TEMPO, TEMPO_EG = _ph("tempo", "tempo", 1, -1)
# King safety (non-linear): attack units, then a table lookup (opening value only).
# Attack units per attacker and per safe check: knight, bishop, rook, queen.
KS_ATTACKER_WEIGHT = _nl("ks_attacker_weight", "king safety", [2, 1, 1, 4])
KS_UNDEFENDED = _nl("ks_undefended", "king safety", 0)
KS_SHIELD = _nl("ks_shield", "king safety", 1)
KS_STORM = _nl("ks_storm", "king safety", 2)
KS_SAFE_CHECK = _nl("ks_safe_check", "king safety", [10, 6, 6, 5])
KS_TABLE = _nl(
    "ks_table", "king safety", [
       0,    0,    1,    3,    6,    9,   13,   18,
      24,   30,   37,   45,   54,   63,   73,   84,
      96,  108,  121,  135,  150,  165,  181,  198,
     216,  234,  253,  273,  294,  300,  300,  300,
     300,  300,  300,  300,  300,  300,  300,  300,
     300,  300,  300,  300,  300,  300,  300,  300,
     300,  300,  300,  300,  300,  300,  300,  300,
     300,  300,  300,  300,  300,  300,  300,  300,
    ])
# Draw factor, in 64ths (64 = no scaling).
DF_PAWNLESS = _nl("df_pawnless", "draw factor", 5)
DF_OPPOSITE_BISHOPS = _nl("df_opposite_bishops", "draw factor", 62)
DF_OPPOSITE_BISHOPS_PURE = _nl("df_opposite_bishops_pure", "draw factor", 20)
DF_WRONG_BISHOP = _nl("df_wrong_bishop", "draw factor", 0)
DF_MINOR_FOR_PAWN = _nl("df_minor_for_pawn", "draw factor", 30)
DF_KRPKR = _nl("df_krpkr", "draw factor", 1)
# Special endgames.
KBNK_BASE = _nl("kbnk_base", "endgame", 600)
KBNK_CORNER = _nl("kbnk_corner", "endgame", 20)
KPK_WIN = _nl("kpk_win", "endgame", 400)

PARAMS = tuple(_TABLE.entries)
BY_NAME = {p.name: p for p in PARAMS}
N_WEIGHTS = _TABLE.size

# Per weight index: 0 opening value, 1 endgame value, 2 unphased (non-linear).
PHASE_OF = np.zeros(N_WEIGHTS, dtype=np.int8)
# Per weight index: True when the evaluation is linear in it.
LINEAR = np.zeros(N_WEIGHTS, dtype=bool)
# For an opening index of a linear parameter, the index of its endgame partner (else -1).
EG_INDEX = np.full(N_WEIGHTS, -1, dtype=np.int64)
# Per weight index, the parameter it belongs to (index into PARAMS) and the position in it.
PARAM_OF = np.zeros(N_WEIGHTS, dtype=np.int64)
ELEMENT_OF = np.zeros(N_WEIGHTS, dtype=np.int64)
for _i, _p in enumerate(PARAMS):
    _o = OFFSETS[_p.name]
    _n = _p.size * (2 if _p.phased else 1)
    PARAM_OF[_o:_o + _n] = _i
    ELEMENT_OF[_o:_o + _n] = np.arange(_n) % _p.size
    if _p.phased:
        PHASE_OF[_o:_o + _p.size] = 0
        PHASE_OF[_o + _p.size:_o + 2 * _p.size] = 1
        EG_INDEX[_o:_o + _p.size] = np.arange(_o + _p.size, _o + 2 * _p.size)
    else:
        PHASE_OF[_o:_o + _n] = 2
    LINEAR[_o:_o + _n] = _p.linear
del _i, _p, _o, _n


def default_weights() -> np.ndarray:
    """The default flat weight vector W (int64)."""
    W = np.zeros(N_WEIGHTS, dtype=np.int64)
    for p in PARAMS:
        o = OFFSETS[p.name]
        W[o:o + p.size] = p.mg
        if p.phased:
            W[o + p.size:o + 2 * p.size] = p.eg
    return W


def material_pst_weights() -> np.ndarray:
    """The defaults with every term but material and the piece-square tables switched off.

    Wasp's evaluation reduced to the tapered material + PST baseline, so a match of the
    defaults against it (`EvalFile`) measures what the other terms are worth. Draw
    factors go to 64 (no scaling) and the king-safety table to zero; the special
    endgames (KBNK, KPK) stay.
    """
    W = default_weights()
    for p in PARAMS:
        o = OFFSETS[p.name]
        n = p.size * (2 if p.phased else 1)
        if p.group in ("material", "pst", "endgame"):
            continue
        W[o:o + n] = 64 if p.group == "draw factor" else 0
    return W


def weight_index(name: str, element: int = 0, phase: str = "mg") -> int:
    """Index in W of one value of a parameter (phase "mg" or "eg" for phased ones)."""
    p = BY_NAME[name]
    if not 0 <= element < p.size:
        raise IndexError(f"{name}: element {element} out of range 0..{p.size - 1}")
    o = OFFSETS[name] + element
    if phase == "eg":
        if not p.phased:
            raise ValueError(f"{name} has no endgame value")
        o += p.size
    return o


def entries(W=None):
    """(entry name, list of values) of every file entry, in table order."""
    W = default_weights() if W is None else np.asarray(W)
    out = []
    for p in PARAMS:
        o = OFFSETS[p.name]
        if p.phased:
            out.append((p.name + ".mg", [int(v) for v in W[o:o + p.size]]))
            out.append((p.name + ".eg", [int(v) for v in W[o + p.size:o + 2 * p.size]]))
        else:
            out.append((p.name, [int(v) for v in W[o:o + p.size]]))
    return out


def _entry_slots():
    """entry name -> (W offset, size)."""
    slots = {}
    for p in PARAMS:
        o = OFFSETS[p.name]
        if p.phased:
            slots[p.name + ".mg"] = (o, p.size)
            slots[p.name + ".eg"] = (o + p.size, p.size)
        else:
            slots[p.name] = (o, p.size)
    return slots


def format_params(W=None) -> str:
    """The text of a parameter file holding W."""
    lines = ["# Wasp-Py evaluation parameters (centipawns). name = value or name = [v, ...];",
             "# phased terms have .mg (opening) and .eg (endgame) entries.", ""]
    group = None
    for name, values in entries(W):
        p = BY_NAME[name.split(".")[0]]
        if p.group != group:
            group = p.group
            lines.append(f"# {group}")
        text = str(values[0]) if p.size == 1 else "[" + ", ".join(map(str, values)) + "]"
        lines.append(f"{name} = {text}")
    return "\n".join(lines) + "\n"


def save(W, path) -> None:
    """Write W as a readable parameter file."""
    W = np.asarray(W)
    if W.shape != (N_WEIGHTS,):
        raise ValueError(f"weight vector has shape {W.shape}, expected ({N_WEIGHTS},)")
    with open(path, "w", encoding="utf-8") as f:
        f.write(format_params(W))


def _parse_int(text, name, lineno):
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return int(round(finite_number(t)))
    except ValueError as e:
        why = "not a finite number" if str(e) == "not finite" else str(e)
        raise ValueError(f"line {lineno}: parameter {name}: {why}: {t!r}") from None


def parse_params(text: str, base=None) -> np.ndarray:
    """W from parameter-file text; entries not given keep their value in `base` (defaults)."""
    W = default_weights() if base is None else np.array(base, dtype=np.int64)
    slots = _entry_slots()
    for lineno, name, value in assignments(text):
        if name not in slots:
            raise ValueError(f"line {lineno}: unknown parameter {name!r}")
        offset, size = slots[name]
        if value.startswith("["):
            if not value.endswith("]"):
                raise ValueError(f"line {lineno}: parameter {name}: missing ']'")
            items = [s for s in value[1:-1].split(",")]
            if items and not items[-1].strip():
                items = items[:-1]
            values = [_parse_int(s, name, lineno) for s in items]
            if size == 1 and len(values) == 1:
                pass
            elif len(values) != size:
                raise ValueError(f"line {lineno}: parameter {name}: expected {size} values, "
                                 f"got {len(values)}")
        else:
            if size != 1:
                raise ValueError(f"line {lineno}: parameter {name}: expected a list of {size} "
                                 f"values, got a single value")
            values = [_parse_int(value, name, lineno)]
        W[offset:offset + size] = values
    return W


def load(path) -> np.ndarray:
    """W read from a parameter file (missing entries keep their default)."""
    return read(path, parse_params)
