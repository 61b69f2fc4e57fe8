"""The net trainer (`wasp-tune nnue train`): a (768 -> N)x2 -> 1 net trained on the CPU from
bullet text or bulletformat records, written in bullet's layout for the engine's EvalFile."""

from .data import DataError, is_bf
from .model import AdamW, FloatNet, Kernels, evaluate, set_threads
from .train import NETS, Config, Training, read_config, read_history

__all__ = [
    "NETS", "AdamW", "Config", "DataError", "FloatNet", "Kernels", "Training", "evaluate",
    "is_bf", "read_config", "read_history", "set_threads",
]
