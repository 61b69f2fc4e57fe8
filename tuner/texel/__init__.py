"""Texel tuning of Wasp-Py's hand-written evaluation (`wasp-tune run`, `k`, `error`): labelled
positions as packed rows, the quiescence search and E, the linear model of the evaluation's
terms, the tuning methods, and the run in a directory with the lifecycle every tuning run
shares (`TuningRun`)."""

from .kernels import unpack_row
from .methods import (
    ADAM,
    BINARY,
    METHODS,
    GradientState,
    gradient_epoch,
    select_matching,
    select_weights,
    tune_parameter,
)
from .objective import Scorer, error, fit_k, set_threads
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
from .rows import R_CASTLE, R_SIDE, ROW_WIDTH
from .run import Run, RunConfig, SplitRun, TuningReader, history, passes
from .sparse import (
    LinearObjective,
    LinearSet,
    gradient,
    linear_scores,
    sparse_traces,
    weight_layout,
)
from .tuningrun import Best, TuningRun
from .waspterms import WaspLinearE, wasp_trace

__all__ = [
    "ADAM", "BINARY", "METHODS", "ROW_WIDTH", "R_CASTLE", "R_SIDE", "Best", "DataError",
    "GradientState", "LinearObjective", "LinearSet", "PositionSet", "Run", "RunConfig", "Scorer",
    "SplitRun", "TuningReader", "TuningRun", "WaspLinearE", "error", "fit_k", "gradient",
    "gradient_epoch", "has_mate_score", "history", "linear_scores", "load", "load_epd",
    "load_many", "pack_board", "pack_fen", "passes", "row_to_fen", "select_matching",
    "select_weights", "set_threads", "sparse_traces", "tune_parameter", "unpack_row",
    "wasp_trace", "weight_layout",
]
