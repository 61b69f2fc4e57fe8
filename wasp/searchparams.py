"""The search's one parameter table: every number Wasp's search uses, with its name, default,
range and meaning, as `wasp.params` is for the evaluation.

The kernels read the values from one runtime int64 vector (the block `SD[SD_PARAMS:...]` of
the search data, laid out as `PARAMS`; index constants `P_<NAME>` below), so a match, a tuner
or a user can try another value without a recompile. The defaults are Wasp 1.02's numbers as
this engine had them written into its kernels: with them `wasp bench` keeps its node count.
Each parameter is a UCI `spin` option and an xboard `-spin` option of the same name.

A search parameter file (`SearchFile`) has the evaluation file's format, one `Name = value`
per line, `#` comments; names are case-insensitive there, as UCI option names are.
"""

from dataclasses import dataclass

from wasp.paramfile import assignments, read

# The search's technique switches, in the order of wasp.movepick's F_* indices: each is a UCI
# check option (on by default) so a match can measure what it is worth.
TECHNIQUES = (
    "Aspiration", "PVS", "TTCutoff", "IID", "Razoring", "StandPat", "NullMove",
    "NullVerify", "Futility", "LMR", "CheckExt", "Pawn7Ext", "FractionalExt", "Killers",
    "Countermove", "History", "QSearchSEE", "DeltaPruning", "MateDistance",
)


@dataclass(frozen=True)
class SearchParam:
    name: str  # the UCI option name
    default: int
    lo: int
    hi: int
    meaning: str


# Depths and extensions are in eighths of a ply where the meaning says so, else in plies.
# Move ordering: the hash move comes first and under-promotions last (rules, not parameters:
# ORDER_HASH and ORDER_UNDER_PROMO); the bands between are parameters. A band only counts by
# where it falls among the others (and the history scores, +-HistoryMax at most), so each range
# reaches past its neighbours. The
# ranges keep the search finite: a check extension past one ply would extend every check of a
# checking sequence, so it stops at 10/8; fractional ones stop at half a ply.
PARAMS = (
    SearchParam("RazorMargin1", 175, 0, 1000, "razoring margin at depth 1 (cp below alpha)"),
    SearchParam("RazorMargin2", 250, 0, 1000, "razoring margin at depth 2 (cp below alpha)"),
    SearchParam("StandPatDepth", 4, 0, 12, "early stand-pat pruning up to this depth (plies)"),
    SearchParam("StandPatMargin", 50, 0, 400, "early stand-pat margin per ply of depth (cp)"),
    SearchParam("StandPatHung", 50, 0, 200,
                "early stand-pat margin at least this % of the hung material"),
    SearchParam("NullMoveR", 3, 1, 6, "null-move reduction R (plies, besides the move)"),
    SearchParam("NullMoveDepth", 3, 1, 12, "null move from this depth (plies)"),
    SearchParam("NullVerifyDepth", 5, 1, 30, "verify a null-move cutoff from this depth (plies)"),
    SearchParam("NullVerifyR", 4, 1, 8, "the verification search's reduction (plies)"),
    SearchParam("LmpDepth", 4, 0, 12, "late-move pruning up to this depth (plies)"),
    SearchParam("LmpMoves", 3, 0, 30, "late-move pruning after this many searched moves"),
    SearchParam("LmpBase", 128, 0, 1000,
                "late-move pruning: prune when eval <= alpha - (LmpBase*depth - "
                "LmpMoveCost*moves)"),
    SearchParam("LmpMoveCost", 32, 0, 200, "late-move pruning: margin taken off per move (cp)"),
    SearchParam("LmrDepth", 4, 1, 20, "late-move reductions from this depth (plies)"),
    SearchParam("LmrMoves", 3, 0, 30, "late-move reductions after this many searched moves"),
    SearchParam("LmrLateMoves", 6, 0, 60, "after this many moves non-PV moves reduce more"),
    SearchParam("LmrReduction", 8, 0, 24, "late-move reduction (eighths of a ply)"),
    SearchParam("LmrLateReduction", 16, 0, 32,
                "late-move reduction of later non-PV moves (eighths of a ply)"),
    SearchParam("LmrLogScale", 0, 0, 800,
                "depth- and move-scaled reduction (off at 0, Wasp 1.02's fixed ones): at least "
                "LmrLogBase + LmrLogScale/100 * ln(depth) * ln(moves) eighths, a ply less at "
                "PV nodes"),
    SearchParam("LmrLogBase", 6, -16, 24, "the scaled reduction's constant (eighths of a ply)"),
    SearchParam("AspirationDepth", 5, 1, 64, "aspiration windows from this iteration on"),
    SearchParam("AspirationWindow", 25, 5, 400, "first aspiration half-window (cp)"),
    SearchParam("AspirationWiden", 200, 110, 800, "a failed window grows to this % of itself"),
    SearchParam("DeltaMargin", 200, 0, 1000,
                "quiescence delta pruning: margin above the captured piece (cp)"),
    SearchParam("IidReductionPv", 3, 1, 8, "internal iterative deepening reduction, PV (plies)"),
    SearchParam("IidReduction", 4, 1, 8, "internal iterative deepening reduction, others"),
    SearchParam("CheckExtension", 8, 0, 10, "extension of a checking move (eighths of a ply)"),
    SearchParam("Pawn7Extension", 8, 0, 10,
                "extension of a pawn push to the 7th near the horizon (eighths of a ply)"),
    SearchParam("Pawn7Depth", 4, 0, 20, "pawn-to-7th extension up to this depth (plies)"),
    SearchParam("CaptureExtension", 1, 0, 4, "fractional extension of captures (eighths)"),
    SearchParam("PvExtension", 1, 0, 4, "fractional extension at PV nodes (eighths)"),
    SearchParam("FractionalPlies", 10, 0, 32, "fractional extensions in the first N plies"),
    SearchParam("OrderGoodCapture", 5_000_000, 3_000_000, 12_000_000,
                "ordering band: captures that do not lose material (plus MVV-LVA)"),
    SearchParam("OrderQueenPromo", 4_500_000, 3_000_000, 8_000_000,
                "ordering band: quiet queen promotions"),
    SearchParam("OrderKiller", 4_000_000, 1_500_000, 6_000_000, "ordering band: killer moves"),
    SearchParam("OrderCounter", 3_900_000, 1_500_000, 6_000_000,
                "ordering band: the countermove"),
    SearchParam("OrderGoodHistory", 2_000_000, 0, 4_500_000,
                "ordering band: quiet moves with a positive history (plus the history)"),
    SearchParam("OrderBadCapture", 1_000_000, -4_000_000, 3_000_000,
                "ordering band: captures that lose material (plus MVV-LVA)"),
    SearchParam("HistoryMax", 900_000, 100, 4_000_000,
                "history scores are halved when one passes this"),
    SearchParam("SeePawn", 100, 50, 200, "exchange value of a pawn (SEE, delta pruning)"),
    SearchParam("SeeKnight", 325, 150, 600, "exchange value of a knight"),
    SearchParam("SeeBishop", 325, 150, 600, "exchange value of a bishop"),
    SearchParam("SeeRook", 500, 250, 900, "exchange value of a rook"),
    SearchParam("SeeQueen", 1000, 500, 1800, "exchange value of a queen"),
)
N_SEARCH_PARAMS = len(PARAMS)
# Techniques after Wasp 1.02 on trial: 0 (the minimum) switches them off, and off is the
# default until an SPRT says otherwise; ENABLES: a parameter that only counts with another one
# on, and a value that turns it on (LmrLogScale's trial value, 0.75 + ln d ln m / 2.25 plies).
OFF_AT_ZERO = ("LmrLogScale",)
ENABLES = {"LmrLogBase": (("LmrLogScale", 356),)}
BY_NAME = {p.name.lower(): p for p in PARAMS}
INDEX = {p.name: i for i, p in enumerate(PARAMS)}

# Index constants for the kernels (module-level ints: numba folds them).
P_RAZOR_MARGIN_1 = INDEX["RazorMargin1"]
P_RAZOR_MARGIN_2 = INDEX["RazorMargin2"]
P_STAND_PAT_DEPTH = INDEX["StandPatDepth"]
P_STAND_PAT_MARGIN = INDEX["StandPatMargin"]
P_STAND_PAT_HUNG = INDEX["StandPatHung"]
P_NULL_R = INDEX["NullMoveR"]
P_NULL_DEPTH = INDEX["NullMoveDepth"]
P_NULL_VERIFY_DEPTH = INDEX["NullVerifyDepth"]
P_NULL_VERIFY_R = INDEX["NullVerifyR"]
P_LMP_DEPTH = INDEX["LmpDepth"]
P_LMP_MOVES = INDEX["LmpMoves"]
P_LMP_BASE = INDEX["LmpBase"]
P_LMP_MOVE_COST = INDEX["LmpMoveCost"]
P_LMR_DEPTH = INDEX["LmrDepth"]
P_LMR_MOVES = INDEX["LmrMoves"]
P_LMR_LATE_MOVES = INDEX["LmrLateMoves"]
P_LMR_REDUCTION = INDEX["LmrReduction"]
P_LMR_LATE_REDUCTION = INDEX["LmrLateReduction"]
P_LMR_LOG_SCALE = INDEX["LmrLogScale"]
P_LMR_LOG_BASE = INDEX["LmrLogBase"]
P_ASPIRATION_DEPTH = INDEX["AspirationDepth"]
P_ASPIRATION_WINDOW = INDEX["AspirationWindow"]
P_ASPIRATION_WIDEN = INDEX["AspirationWiden"]
P_DELTA_MARGIN = INDEX["DeltaMargin"]
P_IID_R_PV = INDEX["IidReductionPv"]
P_IID_R = INDEX["IidReduction"]
P_CHECK_EXT = INDEX["CheckExtension"]
P_PAWN7_EXT = INDEX["Pawn7Extension"]
P_PAWN7_DEPTH = INDEX["Pawn7Depth"]
P_CAPTURE_EXT = INDEX["CaptureExtension"]
P_PV_EXT = INDEX["PvExtension"]
P_FRACTIONAL_PLIES = INDEX["FractionalPlies"]
ORDER_HASH = 10_000_000  # the hash move's score: above every band
ORDER_UNDER_PROMO = -3_000_000  # under-promotions: below every other move
P_ORDER_GOOD_CAPTURE = INDEX["OrderGoodCapture"]
P_ORDER_QUEEN_PROMO = INDEX["OrderQueenPromo"]
P_ORDER_KILLER = INDEX["OrderKiller"]
P_ORDER_COUNTER = INDEX["OrderCounter"]
P_ORDER_GOOD_HISTORY = INDEX["OrderGoodHistory"]
P_ORDER_BAD_CAPTURE = INDEX["OrderBadCapture"]
P_HISTORY_MAX = INDEX["HistoryMax"]
P_SEE = INDEX["SeePawn"]  # SeePawn .. SeeQueen, in piece-type order
assert [p.name for p in PARAMS[P_SEE:P_SEE + 5]] == [
    "SeePawn", "SeeKnight", "SeeBishop", "SeeRook", "SeeQueen"]
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
