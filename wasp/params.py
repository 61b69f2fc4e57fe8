"""The evaluation's one parameter table: names, shapes, defaults, and the flat weight vector W.

Every term is a `Param` with a name, a shape, whether it has an opening and an endgame value
(`phased`), whether the evaluation is linear in it (`linear`) and a default in integer
centipawns. The evaluation kernel reads one flat int64 vector `W`; the offset of each parameter
in it is a module-level int constant (`<NAME>` for the opening block, `<NAME>_EG` for the
endgame block of a phased parameter), so changing values needs no recompile.

Layout of a phased parameter of n values: the n opening values, then the n endgame values.

The text file format (`save`/`load`, the UCI option EvalFile): one entry per line,
``name = value`` or ``name = [v1, v2, ...]``; phased parameters have two entries,
``name.mg`` and ``name.eg``. ``#`` starts a comment. Entries missing from a file keep their
default; an unknown name, a wrong number of values or a non-number raises ValueError naming
the parameter and the line.
"""

from dataclasses import dataclass

import numpy as np


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


def _sq_rank(sq):
    return sq >> 3


def _sq_file(sq):
    return sq & 7


def _centre(sq):
    """0 in the corners' region .. 3 in the four centre squares (Chebyshev rings)."""
    f, r = _sq_file(sq), _sq_rank(sq)
    return 3 - max(abs(2 * f - 7), abs(2 * r - 7)) // 2


def _pst_defaults():
    """Our own piece-square tables (white's view, a1 = 0), built from simple shapes."""
    pawn_mg, pawn_eg, n_mg, n_eg, b_mg, b_eg = [], [], [], [], [], []
    r_mg, r_eg, q_mg, q_eg, k_mg, k_eg = [], [], [], [], [], []
    file_pawn = [-6, -2, 2, 8, 8, 2, -2, -6]
    for sq in range(64):
        f, r, c = _sq_file(sq), _sq_rank(sq), _centre(sq)
        if r in (0, 7):
            pawn_mg.append(0)
            pawn_eg.append(0)
        else:
            pawn_mg.append(file_pawn[f] * min(r - 1, 3) // 2 + 2 * (r - 1))
            pawn_eg.append(3 * (r - 1))
        n_mg.append(8 * c - 12 + (4 if r in (2, 3, 4, 5) and f in (2, 3, 4, 5) else 0))
        n_eg.append(6 * c - 9)
        b_mg.append(4 * c - 6 + (4 if (f == r or f == 7 - r) else 0))
        b_eg.append(3 * c - 5)
        r_mg.append((6 if r == 6 else 0) + (3 if f in (3, 4) else 0) - (3 if f in (0, 7) else 0))
        r_eg.append(3 if r == 6 else 0)
        q_mg.append(2 * c - 3 - (6 if r == 0 and f not in (3,) else 0) // 2)
        q_eg.append(4 * c - 6)
        shelter = [20, 28, 12, 0, 0, 6, 30, 22][f]
        k_mg.append(shelter - 14 * min(r, 3) if r < 3 else -50)
        k_eg.append(23 * c - 35)
    return {
        "pst_pawn": (pawn_mg, pawn_eg),
        "pst_knight": (n_mg, n_eg),
        "pst_bishop": (b_mg, b_eg),
        "pst_rook": (r_mg, r_eg),
        "pst_queen": (q_mg, q_eg),
        "pst_king": (k_mg, k_eg),
    }


def _ramp(n, centre, mg_step, eg_step, lo_extra=0):
    mg = [mg_step * (i - centre) - (lo_extra if i == 0 else 0) for i in range(n)]
    eg = [eg_step * (i - centre) - (lo_extra if i == 0 else 0) for i in range(n)]
    return tuple(mg), tuple(eg)


def _ks_table():
    """King safety penalty by attack units: slow start, steep middle, capped (about 0..300)."""
    return tuple(min(300, (i * i * 3) // 8) for i in range(64))


def _build_table():
    pst = _pst_defaults()
    P = []

    def ph(name, group, mg, eg, linear=True):
        mg = tuple(mg) if isinstance(mg, (list, tuple)) else (mg,)
        eg = tuple(eg) if isinstance(eg, (list, tuple)) else (eg,)
        P.append(Param(name, len(mg), True, linear, group, mg, eg))

    def nl(name, group, values):
        values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
        P.append(Param(name, len(values), False, False, group, values))

    # Material (Wasp 1.02's values).
    ph("pawn_value", "material", 85, 100)
    ph("knight_value", "material", 335, 320)
    ph("bishop_value", "material", 335, 325)
    ph("rook_value", "material", 465, 535)
    ph("queen_value", "material", 975, 1035)
    ph("bishop_pair", "material", 35, 35)
    for piece in ("pawn", "knight", "bishop", "rook", "queen", "king"):
        mg, eg = pst["pst_" + piece]
        ph("pst_" + piece, "pst", mg, eg)
    # Pawn structure: penalties per pawn, candidate bonus by relative rank.
    ph("pawn_doubled", "pawns", -10, -18)
    ph("pawn_isolated", "pawns", -10, -12)
    ph("pawn_backward", "pawns", -8, -8)
    ph("pawn_weak", "pawns", -8, -6)
    ph("pawn_candidate", "pawns", [0, 2, 4, 8, 14, 22, 0, 0], [0, 4, 8, 14, 24, 40, 0, 0])
    # Passed pawns, all by relative rank of the pawn.
    ph("passed_rank", "passed", [0, 2, 4, 10, 22, 40, 60, 0], [0, 8, 10, 18, 36, 64, 100, 0])
    ph("passed_safe", "passed", [0, 0, 2, 4, 8, 14, 24, 0], [0, 2, 4, 8, 16, 30, 50, 0])
    ph("passed_blocked", "passed", [0, 0, -2, -4, -6, -10, -14, 0],
       [0, -2, -4, -8, -12, -20, -30, 0])
    ph("passed_own_king_distance", "passed", [0] * 8, [0, 0, -1, -2, -4, -6, -8, 0])
    ph("passed_enemy_king_distance", "passed", [0] * 8, [0, 0, 2, 5, 9, 13, 16, 0])
    ph("passed_unstoppable", "passed", 0, 300)
    # Pieces.
    mg, eg = _ramp(9, 4, 4, 4, 8)
    ph("knight_mobility", "knights", mg, eg)
    ph("knight_outpost", "knights", 14, 8)
    mg, eg = _ramp(14, 6, 4, 5, 8)
    ph("bishop_mobility", "bishops", mg, eg)
    ph("bishop_outpost", "bishops", 8, 4)
    ph("bishop_trapped", "bishops", -100, -80)
    mg, eg = _ramp(15, 7, 2, 4, 6)
    ph("rook_mobility", "rooks", mg, eg)
    ph("rook_open_file", "rooks", 22, 10)
    ph("rook_semi_open_file", "rooks", 10, 6)
    ph("rook_seventh", "rooks", 12, 24)
    ph("rook_trapped", "rooks", -40, -10)
    mg, eg = _ramp(28, 13, 1, 2, 4)
    ph("queen_mobility", "queens", mg, eg)
    ph("queen_seventh", "queens", 4, 12)
    ph("king_pawn_distance", "king", 0, -6)
    # Hung (en prise) or pinned pieces, Wasp: 12 each, about 24 more for several.
    ph("hung_piece", "threats", -12, -12)
    ph("hung_multiple", "threats", -24, -24)
    ph("tempo", "tempo", 10, 5)
    # King safety (non-linear): attack units, then a table lookup (opening value only).
    nl("ks_attacker_weight", "king safety", [2, 2, 3, 5])  # knight, bishop, rook, queen
    nl("ks_undefended", "king safety", 2)
    nl("ks_shield", "king safety", 2)
    nl("ks_storm", "king safety", 1)
    nl("ks_safe_check", "king safety", [3, 2, 4, 5])  # knight, bishop, rook, queen
    nl("ks_table", "king safety", _ks_table())
    # Draw factor, in 64ths (64 = no scaling).
    nl("df_pawnless", "draw factor", 16)
    nl("df_opposite_bishops", "draw factor", 48)
    nl("df_opposite_bishops_pure", "draw factor", 24)
    nl("df_wrong_bishop", "draw factor", 0)
    nl("df_minor_for_pawn", "draw factor", 24)
    nl("df_krpkr", "draw factor", 16)
    # Special endgames.
    nl("kbnk_base", "endgame", 600)
    nl("kbnk_corner", "endgame", 20)
    nl("kpk_win", "endgame", 400)
    return P


PARAMS = _build_table()
BY_NAME = {p.name: p for p in PARAMS}

# Offsets into W, published as module constants (NAME and NAME_EG).
OFFSETS = {}
_off = 0
for _p in PARAMS:
    OFFSETS[_p.name] = _off
    globals()[_p.name.upper()] = _off
    if _p.phased:
        globals()[_p.name.upper() + "_EG"] = _off + _p.size
        _off += 2 * _p.size
    else:
        _off += _p.size
N_WEIGHTS = _off
del _off, _p

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
        v = float(t)
    except ValueError:
        raise ValueError(f"line {lineno}: parameter {name}: not a number: {t!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"line {lineno}: parameter {name}: not a finite number: {t!r}")
    return int(round(v))


def parse_params(text: str, base=None) -> np.ndarray:
    """W from parameter-file text; entries not given keep their value in `base` (defaults)."""
    W = default_weights() if base is None else np.array(base, dtype=np.int64)
    slots = _entry_slots()
    seen = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise ValueError(f"line {lineno}: expected 'name = value', got {raw.strip()!r}")
        name, value = (s.strip() for s in line.split("=", 1))
        if name not in slots:
            raise ValueError(f"line {lineno}: unknown parameter {name!r}")
        if name in seen:
            raise ValueError(f"line {lineno}: parameter {name} given twice (also line "
                             f"{seen[name]})")
        seen[name] = lineno
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
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return parse_params(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
