"""The tuner's sparse traces (Ethereal's index / white count / black count form)."""

import numpy as np

from tests.wasp.helpers import random_positions
from tuner.texel.positions import pack_fen
from tuner.texel.sparse import sparse_traces
from wasp import params as P
from wasp.params import default_weights
from wasp.trace import trace_position

X = 2 * P.N_WEIGHTS


def test_sparse_batch_matches_the_dense_trace():
    fens = [b.fen() for b in random_positions(40, seed=23)]
    rows = np.stack([pack_fen(fen) for fen in fens])
    idx, cnt, offsets, extra = sparse_traces(default_weights(), rows, 2)
    assert idx.dtype == np.int16 and cnt.dtype == np.int8 and offsets[-1] == len(idx)
    for j, fen in enumerate(fens):
        TR, _ = trace_position(fen)
        dense = np.zeros((P.N_WEIGHTS, 2), dtype=np.int64)
        dense[idx[offsets[j]:offsets[j + 1]]] = cnt[offsets[j]:offsets[j + 1]]
        assert (dense.ravel() == TR[:X]).all()
        assert (extra[j] == TR[X:]).all()
