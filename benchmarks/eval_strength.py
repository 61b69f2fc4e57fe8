"""What the hand-written evaluation is worth: the engine with all of it (EvalFile empty, not
the default net) against the same engine reduced to material + piece-square tables (all other
terms zero, via EvalFile).

    python benchmarks/eval_strength.py                    # 200 games at 10+0.1 (issue 4)
    python benchmarks/eval_strength.py --games 40 --tc 5+0.05 --concurrency 2

Openings: UHO_4060_v2 from ../shared (sequential from a fixed start), game pairs with
colours swapped. Goal: >= +150 Elo for the full evaluation.
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT.parent / "shared" / "data" / "openings" / "UHO_4060_v2.epd"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--tc", default="10+0.1")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--rundir", default=None)
    ap.add_argument("--log", default=None, help="wasp-match's protocol log (per-move latency)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from wasp import params

    workdir = pathlib.Path(args.rundir or tempfile.mkdtemp(prefix="eval-strength-"))
    workdir.mkdir(parents=True, exist_ok=True)
    baseline = workdir / "material_pst.txt"
    params.save(params.material_pst_weights(), baseline)
    engine = f"cmd={sys.executable} arg=-m arg=wasp.cli dir={ROOT} proto=uci"
    cmd = ["wasp-match",
           "-engine", *engine.split(), "name=wasp-full", "option.EvalFile=<empty>",
           "-engine", *engine.split(), "name=wasp-material-pst", f"option.EvalFile={baseline}",
           "-each", f"tc={args.tc}", "option.Hash=16",
           "-games", str(args.games), "-repeat", "-concurrency", str(args.concurrency),
           "-openings", f"file={BOOK}", "format=epd", "order=sequential", "start=1",
           "-rundir", str(workdir / "run"), "-pgnout", str(workdir / "games.pgn"),
           "-recover"]
    if args.log:
        cmd += ["-log", args.log]
    print(" ".join(cmd), flush=True)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
