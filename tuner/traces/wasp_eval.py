"""Wasp-Py's own evaluation as a trace (`wasp-tune trace --write`): its linear terms as terms,
each position traced at its quiescence leaf (`tuner.texel.wasp_trace`)."""

import numpy as np

from tuner.texel import Scorer, wasp_trace
from wasp import params as P

from .tracefile import write_linear

QSEARCH_BLOCK = 1 << 16  # positions a progress step


def write_wasp_trace(path, ps, W=None, threads=None, progress=False) -> int:
    """Write the trace of a labelled `tuner.texel.positions.PositionSet` at its quiescence leaves
    under W (default: the built-in parameters); returns the number of positions."""
    from tqdm import tqdm

    W = P.default_weights() if W is None else np.asarray(W, dtype=np.int64)
    sc = Scorer(threads)
    leaves = np.zeros_like(ps.rows)
    with tqdm(total=len(ps), desc="qsearch", unit="pos", disable=not progress) as bar:
        for a in range(0, len(ps), QSEARCH_BLOCK):  # a position's leaf is its own: blocks
            b = min(len(ps), a + QSEARCH_BLOCK)
            leaves[a:b] = sc.qsearch_scores(W, ps.rows[a:b])[1]
            bar.update(b - a)
    terms, ls, evals = wasp_trace(W, leaves, threads)
    return write_linear(path, terms, ls, ps.results, evals, progress=progress)


