"""The net trainer (`wasp-tune nnue train`): the nets of bullet's progression (`wasp.nnue.arch`)
trained on the CPU from bullet text, bulletformat or viriformat data, written as bullet's
examples write them for the engine's EvalFile."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "data": "DataError is_bf",
    "model": "AdamW FloatNet Kernels evaluate set_threads",
    "train": "NETS Config Training read_config read_history",
})
