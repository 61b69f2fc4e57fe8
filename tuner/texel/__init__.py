"""Texel tuning of Wasp-Py's hand-written evaluation (`wasp-tune run`, `k`, `error`): labelled
positions as packed rows, the quiescence search and E, the linear model of the evaluation's
terms, the tuning methods, and the run in a directory with the lifecycle every tuning run
shares (`TuningRun`)."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "cli": "add_fit_flags add_set_flags fit_settings",
    "kernels": "unpack_row",
    "methods": ("ADAM BINARY METHODS GradientState REG_HELP data_warnings default_reg frequent "
                "gradient_epoch linear_counts neighbour_pairs penalty select_matching "
                "select_weights settle_reg tune_parameter"),
    "objective": "Scorer error fit_k set_threads",
    "positions": ("DataError PositionSet has_mate_score load load_epd load_many load_set "
                 "pack_board pack_fen row_to_fen"),
    "rows": "R_CASTLE R_SIDE ROW_WIDTH",
    "run": "Run RunConfig SplitRun TuningReader history passes",
    "sparse": "LinearObjective LinearSet gradient linear_scores sparse_traces weight_layout",
    "tuningrun": "Best TuningRun",
    "waspterms": "WaspLinearE wasp_trace",
})
