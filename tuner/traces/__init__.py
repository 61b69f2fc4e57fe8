"""Texel tuning of any engine's evaluation from its traces (`wasp-tune trace`): the trace text
format with its reader and writer, the tuning run, and Wasp-Py's own evaluation as a trace."""

from .run import TraceConfig, TraceRun
from .tracefile import (
    CACHE_SUFFIX,
    BoardTerms,
    Trace,
    TraceError,
    TraceWriter,
    check_trace,
    labelled_boards,
    read_terms,
    read_trace,
    write_board_trace,
    write_linear,
)
from .wasp_eval import write_wasp_trace

__all__ = [
    "CACHE_SUFFIX", "BoardTerms", "Trace", "TraceConfig", "TraceError", "TraceRun",
    "TraceWriter", "check_trace", "labelled_boards", "read_terms", "read_trace",
    "write_board_trace", "write_linear", "write_wasp_trace",
]
