"""The net trainer (`wasp-tune nnue train`): a (768 -> N)x2 -> 1 net trained on the CPU from
bullet text or bulletformat records, written in bullet's layout for the engine's EvalFile."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "data": "DataError is_bf",
    "model": "AdamW FloatNet Kernels evaluate set_threads",
    "train": "NETS Config Training read_config read_history",
})
