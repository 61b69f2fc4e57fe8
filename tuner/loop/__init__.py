"""The tuning loop (`wasp-tune loop`): self-play games -> labelled set -> Texel tuning -> an
SPRT of the tuned evaluation against its start, each stage resumable, with its report."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "run": "Loop LoopConfig closing_summary start_weights",
})
