"""Texel tuning of any engine's evaluation from its traces (`wasp-tune trace`): the trace text
format with its reader and writer, the tuning run, and Wasp-Py's own evaluation as a trace."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "run": "TraceConfig TraceRun moved_most",
    "tracefile": ("CACHE_SUFFIX BoardTerms Trace TraceError TraceWriter check_trace "
                 "labelled_boards read_terms read_trace write_board_trace write_linear"),
    "wasp_eval": "write_wasp_trace",
})
