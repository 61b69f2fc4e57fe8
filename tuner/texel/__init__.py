"""Texel tuning of Wasp-Py's hand-written evaluation (`wasp-tune run`, `k`, `error`): labelled
positions as packed rows, the quiescence search and E, the linear model of the evaluation's
terms, the tuning methods, and the resumable run."""

from .kernels import illegal_rows, pack_state, state_of_row, unpack_row
from .methods import (
    ADAGRAD,
    ADAM,
    BINARY,
    LOCAL,
    METHODS,
    GradientState,
    gradient_epoch,
    select_matching,
    select_weights,
    tune_parameter,
)
from .objective import CHUNK, Scorer, error, fit_k, set_threads, sigmoid
from .positions import (
    DataError,
    PositionSet,
    has_mate_score,
    load,
    load_epd,
    load_many,
    pack_board,
    pack_fen,
    row_to_fen,
)
from .rows import NO_EP, R_CASTLE, R_EP, R_SIDE, ROW_WIDTH
from .run import VALID_FILE, Run, RunConfig, SplitRun, TuningReader, history, passes
from .sparse import (
    LinearObjective,
    LinearSet,
    as_linear,
    gradient,
    linear_scores,
    model_scores,
    sparse_traces,
    wasp_linear,
    weight_layout,
)
from .waspterms import WaspLinearE, wasp_terms, wasp_trace, wasp_weight_map

__all__ = [
    "ADAGRAD", "ADAM", "BINARY", "CHUNK", "LOCAL", "METHODS", "NO_EP", "ROW_WIDTH", "R_CASTLE",
    "R_EP", "R_SIDE", "VALID_FILE", "DataError", "GradientState", "LinearObjective", "LinearSet",
    "PositionSet", "Run", "RunConfig", "Scorer", "SplitRun", "TuningReader", "WaspLinearE",
    "as_linear", "error", "fit_k", "gradient", "gradient_epoch", "has_mate_score", "history",
    "illegal_rows", "linear_scores", "load", "load_epd", "load_many", "model_scores", "pack_board",
    "pack_fen", "pack_state", "passes", "row_to_fen", "select_matching",
    "select_weights", "set_threads", "sigmoid", "sparse_traces", "state_of_row", "tune_parameter",
    "unpack_row", "wasp_linear", "wasp_terms", "wasp_trace", "wasp_weight_map", "weight_layout",
]
