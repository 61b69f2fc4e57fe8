"""The search's one parameter table: every number Wasp's search uses, with its name, default,
range and meaning, as `wasp.params` is for the evaluation.

The kernels read the values from one runtime int64 vector (the block `SD[SD_PARAMS:...]` of
the search data, laid out as `PARAMS`; each row below declares its index constant `P_<NAME>`),
so a match, a tuner or a user can try another value without a recompile. The defaults are
Wasp 1.02's numbers as this engine had them written into its kernels: with them `wasp bench`
keeps its node count.
Each parameter is a UCI `spin` option and an xboard `-spin` option of the same name.

A search parameter file (`SearchFile`) has the evaluation file's format, one `Name = value`
per line, `#` comments; names are case-insensitive there, as UCI option names are.
"""

from dataclasses import dataclass

from wasp.layout import Layout
from wasp.paramfile import assignments, read

# The search's technique switches, each a UCI check option so a match can measure what it is
# worth, and an index F_* into the switch block SD[SD_FLAGS:] of the kernels. Wasp 1.02's own
# are on by default; a later technique (`_later`) is on only once its SPRT accepted it.
_SWITCHES = Layout("technique switches")
_LATER: dict[str, bool] = {}


def _later(name: str, on: bool) -> int:
    """Declare the switch of a technique after Wasp 1.02 and its default; its F_* index."""
    _LATER[name] = on
    return _SWITCHES.add(entry=name)


F_ASPIRATION = _SWITCHES.add(entry="Aspiration")
F_PVS = _SWITCHES.add(entry="PVS")
F_TT_CUTOFF = _SWITCHES.add(entry="TTCutoff")
F_IID = _SWITCHES.add(entry="IID")
F_RAZORING = _SWITCHES.add(entry="Razoring")
F_STAND_PAT = _SWITCHES.add(entry="StandPat")  # early stand-pat (beta) pruning
F_NULL_MOVE = _SWITCHES.add(entry="NullMove")
F_NULL_VERIFY = _SWITCHES.add(entry="NullVerify")
F_FUTILITY = _SWITCHES.add(entry="Futility")  # late-move / futility pruning
F_LMR = _SWITCHES.add(entry="LMR")
F_CHECK_EXT = _SWITCHES.add(entry="CheckExt")
F_PAWN7_EXT = _SWITCHES.add(entry="Pawn7Ext")
F_FRACTIONAL_EXT = _SWITCHES.add(entry="FractionalExt")
F_KILLERS = _SWITCHES.add(entry="Killers")
F_COUNTERMOVE = _SWITCHES.add(entry="Countermove")
F_HISTORY = _SWITCHES.add(entry="History")
F_QS_SEE = _SWITCHES.add(entry="QSearchSEE")
F_DELTA = _SWITCHES.add(entry="DeltaPruning")
F_MATE_DISTANCE = _SWITCHES.add(entry="MateDistance")
F_HIST_LMR = _later("HistoryLMR", False)  # history-driven LMR, history pruning of late quiets
F_CONT_HIST = _later("ContHistory", False)  # continuation history (1- and 2-ply follow-ups)
F_IMPROVING = _later("Improving", False)  # margins and reductions by the improving flag
F_CORR_HIST = _later("CorrHistory", False)  # pawn-structure correction of the static evaluation
F_SINGULAR = _later("SingularExt", False)  # singular extension of the hash move
TECHNIQUES = tuple(_SWITCHES.entries)
N_TECHNIQUES = _SWITCHES.size
LATER_TECHNIQUES = tuple(_LATER)  # after Wasp 1.02: all off, the search is Wasp's
SWITCH_DEFAULTS = {name: _LATER.get(name, True) for name in TECHNIQUES}


@dataclass(frozen=True)
class SearchParam:
    name: str  # the UCI option name
    default: int
    lo: int
    hi: int
    meaning: str


_TABLE = Layout("search parameters")


def _param(name: str, default: int, lo: int, hi: int, meaning: str) -> int:
    """Declare the next search parameter; its index in the vector (its P_* constant)."""
    return _TABLE.add(entry=SearchParam(name, default, lo, hi, meaning))


# Depths and extensions are in eighths of a ply where the meaning says so, else in plies.
# Move ordering: the hash move comes first and under-promotions last (rules, not parameters:
# ORDER_HASH and ORDER_UNDER_PROMO); the bands between are parameters. A band only counts by
# where it falls among the others (and the history scores, +-HistoryMax at most), so each range
# reaches past its neighbours. The ranges keep the search finite: a check extension past one
# ply would extend every check of a checking sequence, so it stops at 10/8; fractional ones
# stop at half a ply.
P_RAZOR_MARGIN_1 = _param("RazorMargin1", 175, 0, 1000,
                          "razoring margin at depth 1 (cp below alpha)")
P_RAZOR_MARGIN_2 = _param("RazorMargin2", 250, 0, 1000,
                          "razoring margin at depth 2 (cp below alpha)")
P_STAND_PAT_DEPTH = _param("StandPatDepth", 4, 0, 12,
                           "early stand-pat pruning up to this depth (plies)")
P_STAND_PAT_MARGIN = _param("StandPatMargin", 50, 0, 400,
                            "early stand-pat margin per ply of depth (cp)")
P_STAND_PAT_HUNG = _param("StandPatHung", 50, 0, 200,
                          "early stand-pat margin at least this % of the hung material")
P_NULL_R = _param("NullMoveR", 3, 1, 6, "null-move reduction R (plies, besides the move)")
P_NULL_DEPTH = _param("NullMoveDepth", 3, 1, 12, "null move from this depth (plies)")
P_NULL_VERIFY_DEPTH = _param("NullVerifyDepth", 5, 1, 30,
                             "verify a null-move cutoff from this depth (plies)")
P_NULL_VERIFY_R = _param("NullVerifyR", 4, 1, 8, "the verification search's reduction (plies)")
P_LMP_DEPTH = _param("LmpDepth", 4, 0, 12, "late-move pruning up to this depth (plies)")
P_LMP_MOVES = _param("LmpMoves", 3, 0, 30, "late-move pruning after this many searched moves")
P_LMP_BASE = _param(
    "LmpBase", 128, 0, 1000,
    "late-move pruning: prune when eval <= alpha - (LmpBase*depth - LmpMoveCost*moves)")
P_LMP_MOVE_COST = _param("LmpMoveCost", 32, 0, 200,
                         "late-move pruning: margin taken off per move (cp)")
P_LMR_DEPTH = _param("LmrDepth", 4, 1, 20, "late-move reductions from this depth (plies)")
P_LMR_MOVES = _param("LmrMoves", 3, 0, 30, "late-move reductions after this many searched moves")
P_LMR_LATE_MOVES = _param("LmrLateMoves", 6, 0, 60,
                          "after this many moves non-PV moves reduce more")
P_LMR_REDUCTION = _param("LmrReduction", 8, 0, 24, "late-move reduction (eighths of a ply)")
P_LMR_LATE_REDUCTION = _param("LmrLateReduction", 16, 0, 32,
                              "late-move reduction of later non-PV moves (eighths of a ply)")
P_LMR_LOG_SCALE = _param(
    "LmrLogScale", 0, 0, 800,
    "depth- and move-scaled reduction (off at 0, Wasp 1.02's fixed ones): at least "
    "LmrLogBase + LmrLogScale/100 * ln(depth) * ln(moves) eighths, a ply less at PV nodes")
P_LMR_LOG_BASE = _param("LmrLogBase", 6, -16, 24,
                        "the scaled reduction's constant (eighths of a ply)")
P_ASPIRATION_DEPTH = _param("AspirationDepth", 5, 1, 64,
                            "aspiration windows from this iteration on")
P_ASPIRATION_WINDOW = _param("AspirationWindow", 25, 5, 400, "first aspiration half-window (cp)")
P_ASPIRATION_WIDEN = _param("AspirationWiden", 200, 110, 800,
                            "a failed window grows to this % of itself")
P_DELTA_MARGIN = _param("DeltaMargin", 200, 0, 1000,
                        "quiescence delta pruning: margin above the captured piece (cp)")
P_IID_R_PV = _param("IidReductionPv", 3, 1, 8, "internal iterative deepening reduction, PV (plies)")
P_IID_R = _param("IidReduction", 4, 1, 8, "internal iterative deepening reduction, others")
P_CHECK_EXT = _param("CheckExtension", 8, 0, 10, "extension of a checking move (eighths of a ply)")
P_PAWN7_EXT = _param("Pawn7Extension", 8, 0, 10,
                     "extension of a pawn push to the 7th near the horizon (eighths of a ply)")
P_PAWN7_DEPTH = _param("Pawn7Depth", 4, 0, 20, "pawn-to-7th extension up to this depth (plies)")
P_CAPTURE_EXT = _param("CaptureExtension", 1, 0, 4, "fractional extension of captures (eighths)")
P_PV_EXT = _param("PvExtension", 1, 0, 4, "fractional extension at PV nodes (eighths)")
P_FRACTIONAL_PLIES = _param("FractionalPlies", 10, 0, 32,
                            "fractional extensions in the first N plies")
P_ORDER_GOOD_CAPTURE = _param("OrderGoodCapture", 5_000_000, 3_000_000, 12_000_000,
                              "ordering band: captures that do not lose material (plus MVV-LVA)")
P_ORDER_QUEEN_PROMO = _param("OrderQueenPromo", 4_500_000, 3_000_000, 8_000_000,
                             "ordering band: quiet queen promotions")
P_ORDER_KILLER = _param("OrderKiller", 4_000_000, 1_500_000, 6_000_000,
                        "ordering band: killer moves")
P_ORDER_COUNTER = _param("OrderCounter", 3_900_000, 1_500_000, 6_000_000,
                         "ordering band: the countermove")
P_ORDER_GOOD_HISTORY = _param(
    "OrderGoodHistory", 2_000_000, 0, 4_500_000,
    "ordering band: quiet moves with a positive history (plus the history)")
P_ORDER_BAD_CAPTURE = _param("OrderBadCapture", 1_000_000, -4_000_000, 3_000_000,
                             "ordering band: captures that lose material (plus MVV-LVA)")
P_HISTORY_MAX = _param("HistoryMax", 900_000, 100, 4_000_000,
                       "history scores are halved when one passes this")
# The exchange values, in piece-type order: the kernels read SeeKnight as P_SEE + KNIGHT.
P_SEE = _param("SeePawn", 100, 50, 200, "exchange value of a pawn (SEE, delta pruning)")
_param("SeeKnight", 325, 150, 600, "exchange value of a knight")
_param("SeeBishop", 325, 150, 600, "exchange value of a bishop")
_param("SeeRook", 500, 250, 900, "exchange value of a rook")
_param("SeeQueen", 1000, 500, 1800, "exchange value of a queen")
# The techniques after Wasp 1.02 (switches off by default: their numbers only count with them on).
P_HIST_LMR_DIV = _param("HistLmrDivisor", 128, 16, 16000,
                        "history-driven LMR: an eighth of a ply less per this much history")
P_HIST_LMR_MAX = _param("HistLmrMax", 12, 1, 32,
                        "history-driven LMR: at most this much more or less (eighths of a ply)")
P_HIST_PRUNE_DEPTH = _param("HistPruneDepth", 3, 0, 12,
                            "history pruning of late quiet moves up to this depth (plies)")
P_HIST_PRUNE_MARGIN = _param("HistPruneMargin", 100, 0, 8000,
                             "history pruning: prune below -HistPruneMargin * depth of history")
P_CONT_HIST_BONUS = _param("ContHistBonus", 32, 1, 400,
                           "continuation history: the bonus is this times depth^2 ...")
P_CONT_HIST_BONUS_MAX = _param("ContHistBonusMax", 1200, 16, 8000, "... at most this")
P_CONT_HIST_MAX = _param("ContHistMax", 16384, 1024, 65536,
                         "continuation history: the entries' bound (gravity)")
P_CONT_HIST_WEIGHT = _param("ContHistWeight", 100, 1, 800,
                            "continuation history's weight in ordering and pruning (%)")
P_IMPROVING_RAZOR = _param("ImprovingRazor", 50, 0, 400,
                           "razoring margin larger by this when improving (cp)")
P_IMPROVING_STAND_PAT = _param("ImprovingStandPat", 25, 0, 200,
                               "early stand-pat margin smaller by this when improving (cp)")
P_IMPROVING_FUTILITY = _param("ImprovingFutility", 50, 0, 400,
                              "late-move pruning margin smaller by this when not improving (cp)")
P_IMPROVING_LMR = _param("ImprovingLmr", 4, 0, 16,
                         "LMR: this much more when not improving (eighths of a ply)")
P_CORR_HIST_WEIGHT = _param("CorrHistWeight", 100, 1, 400,
                            "correction history: % of the learnt correction applied")
P_CORR_HIST_MAX = _param("CorrHistMax", 48, 4, 400,
                         "correction history: a correction is at most this (cp)")
P_SINGULAR_DEPTH = _param("SingularDepth", 6, 3, 20,
                          "singular extension from this depth (plies)")
P_SINGULAR_MARGIN = _param("SingularMargin", 2, 0, 32,
                           "singular search: this much below the hash score per ply of depth (cp)")
P_SINGULAR_EXT = _param("SingularExtension", 8, 0, 10,
                        "extension of a singular hash move (eighths of a ply)")
PARAMS = tuple(_TABLE.entries)
N_SEARCH_PARAMS = _TABLE.size
# Techniques after Wasp 1.02 on trial: 0 (the minimum) switches them off, and off is the
# default until an SPRT says otherwise; ENABLES: a parameter that only counts with another one
# on, and a value that turns it on (LmrLogScale's trial value, 0.75 + ln d ln m / 2.25 plies);
# HistPruneDepth is tried with HistPruneMargin 0, as no history in a depth-10 search falls below
# the default margin times a depth above 3.
OFF_AT_ZERO = ("LmrLogScale",)
ENABLES = {
    "LmrLogBase": (("LmrLogScale", 356),),
    **{name: (("HistoryLMR", "true"),) for name in (
        "HistLmrDivisor", "HistLmrMax", "HistPruneMargin")},
    "HistPruneDepth": (("HistoryLMR", "true"), ("HistPruneMargin", "0")),
    **{name: (("HistoryLMR", "true"), ("ContHistory", "true")) for name in (
        "ContHistBonus", "ContHistBonusMax", "ContHistMax", "ContHistWeight")},
    **{name: (("Improving", "true"),) for name in (
        "ImprovingRazor", "ImprovingStandPat", "ImprovingFutility", "ImprovingLmr")},
    **{name: (("CorrHistory", "true"),) for name in ("CorrHistWeight", "CorrHistMax")},
    **{name: (("SingularExt", "true"),) for name in (
        "SingularDepth", "SingularMargin", "SingularExtension")},
}
BY_NAME = {p.name.lower(): p for p in PARAMS}
INDEX = {p.name: i for i, p in enumerate(PARAMS)}

ORDER_HASH = 10_000_000  # the hash move's score: above every band
ORDER_UNDER_PROMO = -3_000_000  # under-promotions: below every other move
SEE_KING = 20000  # the king is never lost: not a parameter


def defaults() -> list[int]:
    return [p.default for p in PARAMS]


def default_search_params():
    """The default vector (int64), in table order."""
    import numpy as np

    return np.array(defaults(), dtype=np.int64)


def check_spin(name: str, value, lo: int, hi: int) -> int:
    """The whole number `value` of the option `name`; ValueError naming it when the value is
    not one, or outside lo..hi."""
    text = str(value).strip()
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{name}: not a whole number: {text!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name}: {v} is outside its range {lo}..{hi}")
    return v


def check_value(name: str, value) -> tuple[int, int]:
    """(index, value) of `name = value`; ValueError naming an unknown name or a value that is
    not a whole number in the parameter's range."""
    p = BY_NAME.get(str(name).strip().lower())
    if p is None:
        raise ValueError(f"unknown search parameter {name!r}")
    return INDEX[p.name], check_spin(p.name, value, p.lo, p.hi)


def parse_search_params(text: str, base=None) -> list[int]:
    """Values from search-parameter-file text; names not given keep their value in `base`
    (the defaults). ValueError names the line and what is wrong; nothing is half-applied."""
    values = list(defaults() if base is None else (int(v) for v in base))
    for lineno, name, value in assignments(text):
        try:
            i, v = check_value(name, value)
        except ValueError as e:
            raise ValueError(f"line {lineno}: {e}") from None
        values[i] = v
    return values


def load(path) -> list[int]:
    """Values read from a search parameter file (missing names keep their default)."""
    return read(path, parse_search_params)


def format_search_params(values=None) -> str:
    """The text of a search parameter file holding `values` (default: the defaults)."""
    values = defaults() if values is None else [int(v) for v in values]
    lines = ["# Wasp-Py search parameters: Name = value (ranges and meanings in",
             "# wasp/searchparams.py; each is also a UCI spin option).", ""]
    lines += [f"{p.name} = {v}" for p, v in zip(PARAMS, values, strict=True)]
    return "\n".join(lines) + "\n"
