"""Write Tiny's evaluation trace of labelled positions, for `wasp-tune trace`.

    python examples/tiny_engine/write_trace.py datasets/sample/train.epd runs/tiny/train.trace
    python examples/tiny_engine/write_trace.py datasets/sample/valid.epd runs/tiny/valid.trace

Each line holds the position's result, Tiny's phase (in 24ths, as a fraction), its term counts
and its own integer evaluation, so the trace check compares the model with what Tiny plays.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import engine as tiny  # noqa: E402

from tuner.traces import BoardTerms, TraceError, labelled_boards, write_board_trace  # noqa: E402


def trace_terms(params):
    """The trace's `terms` with Tiny's values: (name, opening, endgame) or (name, value)."""
    return [(name, *params[i]) if tapered else (name, params[i][0])
            for i, (name, tapered) in enumerate(tiny.TERMS)]


def board_terms(board):
    coefs, ph = tiny.features(board)
    return BoardTerms(coefs, phase=ph / tiny.MAX_PHASE)


def write(epd, out, params_path=tiny.START_PARAMS, progress=True) -> int:
    params = tiny.load_params(params_path)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    return write_board_trace(out, trace_terms(params), labelled_boards(epd), board_terms,
                             lambda b: tiny.evaluate(b, params), progress=progress)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("epd", help="labelled positions (FEN and result, e.g. c9 \"1-0\";)")
    ap.add_argument("out", help="the trace to write")
    ap.add_argument("--params", default=tiny.START_PARAMS, help="Tiny's values (start.txt)")
    args = ap.parse_args(argv)
    try:
        n = write(args.epd, args.out, args.params)
    except (OSError, ValueError, TraceError) as e:
        print(f"write_trace: error: {e}", file=sys.stderr)
        return 1
    print(f"{args.out}: {n} positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
