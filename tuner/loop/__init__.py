"""The tuning loop (`wasp-tune loop`): self-play games -> labelled set -> Texel tuning -> an
SPRT of the tuned evaluation against its start, each stage resumable, with its report."""

from .run import Loop, LoopConfig, closing_summary, start_weights

__all__ = ["Loop", "LoopConfig", "closing_summary", "start_weights"]
