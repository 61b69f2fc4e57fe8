"""The measurement behind the trace tuner's default -reg (docs/traces.md, "How the default was
chosen"): valid and test E of `wasp-tune trace` runs over a grid of -reg values and set sizes.

    python benchmarks/tuner_reg.py ~/wasp-data/run5 -o runs/reg          # the docs' table (hours)
    python benchmarks/tuner_reg.py ~/wasp-data/run5 -o runs/reg-tiny --sizes 5k --termsets pst \\
        --starts start --regs 0,rule --test-positions 5000              # a few minutes

From a `wasp-tune datagen` run directory: its first --games games, the last --test-games of them
the test set (whole games up to --test-positions), the others in a --seed-ed order; nested
pools of each --sizes positions in that order, nine games in ten for training and the tenth for
validation. Two term sets: Wasp-Py's own trace (`wasp-tune trace --write`) and "pst", one
tapered term per piece and square plus five material terms (778 weights) with Tiny's phase
(examples/tiny_engine), from Tiny's start values (its material, every square 0). Each from its
start values (lr 1) and from a weak start, material x 0.3 (lr 5). A run is `wasp-tune trace
-max-passes 5 -valid-every 10 -patience 3` with each -reg of --regs ("rule": none given, the
default); its test E is that of params.txt on the test trace with the run's K.

OUT/results.csv gets a row a run (a killed measurement resumes: runs with a row are skipped,
sets and traces already written are kept); OUT/table.md holds the docs' markdown rows.
"""

import argparse
import csv
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TINY = ROOT / "examples" / "tiny_engine"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(TINY))

import chess  # noqa: E402
import engine as tiny  # noqa: E402

from wasp.atomicfile import replacing  # noqa: E402

FIELDS = ["termset", "start", "size", "n_train", "n_valid", "n_weights", "reg", "lr", "k",
          "best_step", "valid_start", "valid_best", "test_start", "test_best", "seconds"]
TERMSETS = ("pst", "wasp")
STARTS = {"start": 1.0, "weak": 5.0}  # the start and its learning rate
WEAK_MATERIAL = 0.3  # `wasp-tune loop --quick`'s weakened start
LABEL = {"pst": "PST", "wasp": "Wasp-Py"}
SQUARE_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)


def size(text: str) -> int:
    """'40k', '1m' or '300000' as a number of positions."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def reg_value(text: str) -> str:
    """A --regs entry as its CSV key: 'rule', or the number's repr ('0.0001')."""
    return "rule" if text == "rule" else repr(float(text))


# -- sets ---------------------------------------------------------------------------

def read_games(run_dir, n_games: int) -> list:
    """The records of the run's first `n_games` games, a list of records a game."""
    from tuner.datagen import read_records

    games, index = [], {}
    for r in read_records(run_dir):
        if r.game not in index:
            if len(index) == n_games:
                break
            index[r.game] = len(games)
            games.append([])
        games[index[r.game]].append(r)
    if len(games) < n_games:
        raise ValueError(f"{run_dir}: {len(games)} games, fewer than --games {n_games}")
    return games


def split(n_games: int, test_games: int, seed: int) -> tuple:
    """(test game indices, training pool in its seeded order): the last `test_games` are the
    test set's, the others shuffled."""
    pool = list(range(n_games - test_games))
    random.Random(seed).shuffle(pool)
    return list(range(n_games - test_games, n_games)), pool


def pool_prefix(pool: list, counts: list, n: int) -> tuple:
    """(training games, validation games) of the pool's first games up to `n` positions:
    every tenth game validation, the rest training. Nested: a larger n adds games."""
    train, valid, k, total = [], [], 0, 0
    while total < n and k < len(pool):
        (valid if k % 10 == 9 else train).append(pool[k])
        total += counts[pool[k]]
        k += 1
    if total < n:
        raise ValueError(f"the pool holds {total} positions, fewer than {n}")
    return train, valid


def write_epd(path, games, ids, limit=0) -> int:
    """Write games `ids` as labelled EPD (whole games, stopping once `limit` positions are
    written when limit); the number of positions."""
    from tuner.formats import EpdWriter

    n = 0
    with replacing(path, ".epd") as tmp, EpdWriter(tmp) as w:
        for i in ids:
            if limit and n >= limit:
                break
            for r in games[i]:
                w.write(r)
            n += len(games[i])
    return n


def build_sets(args, out: pathlib.Path) -> dict:
    """{name: EPD path} of the test set and each size's train and valid sets (written unless
    there)."""
    sets = out / "sets"
    paths = {"test": sets / "test.epd"}
    for s in args.sizes:
        paths[f"{s}-train"] = sets / s / "train.epd"
        paths[f"{s}-valid"] = sets / s / "valid.epd"
    if all(p.exists() for p in paths.values()):
        return paths
    sets.mkdir(parents=True, exist_ok=True)
    games = read_games(args.run, args.games)
    counts = [len(g) for g in games]
    test, pool = split(args.games, args.test_games, args.seed)
    n = write_epd(paths["test"], games, test, args.test_positions)
    print(f"test: {n} positions from {args.test_games} games at most")
    for s in args.sizes:
        (sets / s).mkdir(parents=True, exist_ok=True)
        train, valid = pool_prefix(pool, counts, size(s))
        nt = write_epd(paths[f"{s}-train"], games, train)
        nv = write_epd(paths[f"{s}-valid"], games, valid)
        print(f"{s}: {len(train) + len(valid)} games, {nt} training and {nv} validation positions")
    return paths


# -- traces -------------------------------------------------------------------------

def pst_terms(material: float) -> list:
    """The PST term set's (name, opening, endgame): a term a piece and square, 0 to start,
    then the five material terms at Tiny's start values times `material`."""
    values = tiny.load_params(tiny.START_PARAMS)
    terms = [(f"{chess.piece_name(p)}[{sq}]", 0, 0) for p in SQUARE_PIECES for sq in range(64)]
    for p in tiny.PIECES:
        mg, eg = values[tiny.INDEX[chess.piece_name(p)]]
        terms.append((chess.piece_name(p), round(mg * material), round(eg * material)))
    return terms


def pst_features(board):
    """The PST set's counts (white's minus black's; black's squares mirrored) and Tiny's
    phase."""
    from tuner.traces import BoardTerms

    coefs = {}
    material = 6 * 64 - 1  # the material terms follow the squares: pawn at 384
    for sq, piece in board.piece_map().items():
        sign = 1 if piece.color == chess.WHITE else -1
        i = (piece.piece_type - 1) * 64 + (sq if piece.color == chess.WHITE else sq ^ 56)
        coefs[i] = coefs.get(i, 0) + sign
        if piece.piece_type != chess.KING:
            m = material + piece.piece_type
            coefs[m] = coefs.get(m, 0) + sign
    return BoardTerms({i: c for i, c in coefs.items() if c},
                      phase=tiny.phase_of(board) / tiny.MAX_PHASE)


def write_trace(termset, start, epd, trace, out, quiet) -> None:
    """The trace of `epd` in `termset` from `start`'s values (its EVAL the model's)."""
    if termset == "pst":
        from tuner.traces import labelled_boards, write_board_trace

        material = WEAK_MATERIAL if start == "weak" else 1.0
        with replacing(trace, ".trace") as tmp:
            write_board_trace(tmp, pst_terms(material), labelled_boards(epd), pst_features,
                              progress=not quiet)
        return
    init = []
    if start == "weak":
        from tuner.loop import start_weights
        from wasp import params

        weak = out / "wasp-weak.txt"
        if not weak.exists():
            with replacing(weak, ".txt") as tmp:
                params.save(start_weights(f"material*{WEAK_MATERIAL}"), tmp)
        init = ["-init", str(weak)]
    with replacing(trace, ".trace") as tmp:
        subprocess.run([sys.executable, "-m", "tuner.cli", "trace", "--write", str(epd), "-o",
                        tmp, *init, *(["-quiet"] if quiet else [])], cwd=ROOT, check=True)


def trace_path(out, termset, start, name) -> pathlib.Path:
    return out / "traces" / f"{termset}-{start}-{name}.trace"


# -- runs ---------------------------------------------------------------------------

def done_keys(csv_path) -> set:
    if not csv_path.exists():
        return set()
    with open(csv_path, newline="", encoding="utf-8") as f:
        return {(r["termset"], r["start"], r["size"], r["reg"].split("=")[0])
                for r in csv.DictReader(f)}


def tune(args, out, termset, start, s, reg) -> dict:
    """One `wasp-tune trace` run (resumed or reused when its directory holds one) and its
    CSV row."""
    from tuner.texel.objective import error
    from tuner.traces import read_trace

    train = trace_path(out, termset, start, f"{s}-train")
    valid = trace_path(out, termset, start, f"{s}-valid")
    run = out / "runs" / f"{termset}-{start}-{s}-{reg}"
    lr = STARTS[start]
    state_file = run / "state.json"
    t = time.time()
    if not (state_file.exists() and json.loads(state_file.read_text())["done"]):
        if (run / "run.json").exists() and state_file.exists():
            cmd = ["-resume", str(run)]
        else:
            shutil.rmtree(run, ignore_errors=True)
            cmd = [str(train), "-valid-data", str(valid), "-dir", str(run), "-lr", str(lr),
                   "-max-passes", str(args.max_passes), "-valid-every", "10", "-patience", "3",
                   "-threads", str(args.threads),
                   *([] if reg == "rule" else ["-reg", reg])]
        subprocess.run([sys.executable, "-m", "tuner.cli", "trace", *cmd, "-quiet"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
    state = json.loads(state_file.read_text())
    config = json.loads((run / "run.json").read_text())
    K = state["K"]
    tr = read_trace(train)
    te = read_trace(trace_path(out, termset, start, "test"))
    with open(run / "passes.csv", encoding="utf-8") as f:
        valid_start = float(list(csv.DictReader(f))[0]["e_valid"])
    W0, Wb = tr.start_weights(), np.rint(np.array(state["best"]["W"]))
    return {"termset": termset, "start": start, "size": s, "n_train": len(tr),
            "n_valid": len(read_trace(valid)), "n_weights": tr.n_weights,
            "reg": f"rule={config['reg']:.3g}" if reg == "rule" else reg, "lr": lr,
            "k": f"{K:.4f}", "best_step": state["best"].get("step"),
            "valid_start": f"{valid_start:.6f}", "valid_best": f"{state['best']['e_valid']:.6f}",
            "test_start": f"{error(te.scores(W0), te.results, K):.6f}",
            "test_best": f"{error(te.scores(Wb), te.results, K):.6f}",
            "seconds": f"{time.time() - t:.0f}"}


def markdown(rows: list) -> str:
    """The docs' table of `rows` (CSV dicts), by term set, start, size and reg."""
    def reg_of(r):
        return float(r["reg"].split("=")[-1])

    lines = ["| terms | start | training positions | a weight | reg | valid E (start) | "
             "test E (start) | step kept |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["termset"], r["start"], int(r["n_train"]),
                                         reg_of(r))):
        n, w, reg = int(r["n_train"]), int(r["n_weights"]), reg_of(r)
        lines.append(f"| {LABEL[r['termset']]} {w} | {r['start']} | {n:,} | {n / w:.0f} | "
                     f"{'0' if reg == 0 else f'{reg:.2g}'} | {float(r['valid_best']):.5f} "
                     f"({float(r['valid_start']):.5f}) | {float(r['test_best']):.5f} "
                     f"({float(r['test_start']):.5f}) | {r['best_step']} |")
    return "\n".join(lines) + "\n"


def measure(args) -> None:
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sets = build_sets(args, out)
    for termset in args.termsets:
        for start in args.starts:
            for name, epd in sets.items():
                trace = trace_path(out, termset, start, name)
                if not trace.exists():
                    trace.parent.mkdir(parents=True, exist_ok=True)
                    print(f"writing {trace}", flush=True)
                    write_trace(termset, start, epd, trace, out, args.quiet)
    csv_path = out / "results.csv"
    done = done_keys(csv_path)
    todo = [(ts, st, s, reg) for ts in args.termsets for st in args.starts for s in args.sizes
            for reg in args.regs if (ts, st, s, reg) not in done]
    from tqdm import tqdm

    for ts, st, s, reg in tqdm(todo, desc="runs", disable=args.quiet or not todo):
        row = tune(args, out, ts, st, s, reg)
        new = not csv_path.exists()
        with open(csv_path, "a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        tqdm.write(",".join(str(row[k]) for k in FIELDS))
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    table = markdown(rows)
    (out / "table.md").write_text(table, encoding="utf-8")
    print(table, end="")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a `wasp-tune datagen` run directory (data.txt + games.jsonl)")
    ap.add_argument("-o", "--out", required=True, help="the measurement's directory")
    ap.add_argument("--sizes", default="40k,100k,300k,1m",
                    help="pool sizes in positions, train and valid together (default "
                         "40k,100k,300k,1m)")
    ap.add_argument("--regs", default="0,1e-4,1e-3,1e-2,3e-2,rule",
                    help="-reg values; 'rule' is the default's (default 0,1e-4,1e-3,1e-2,3e-2,"
                         "rule)")
    ap.add_argument("--termsets", default="pst,wasp", help="pst, wasp (default both)")
    ap.add_argument("--starts", default="start,weak", help="start, weak (default both)")
    ap.add_argument("--games", type=int, default=20000, help="games read (default 20000)")
    ap.add_argument("--test-games", type=int, default=2000,
                    help="the last of those games kept for the test set (default 2000)")
    ap.add_argument("--test-positions", type=int, default=200000,
                    help="test positions, whole games, at least (default 200000)")
    ap.add_argument("--seed", type=int, default=1129, help="the pool's order (default 1129)")
    ap.add_argument("--max-passes", type=int, default=5, help="-max-passes (default 5)")
    ap.add_argument("--threads", type=int, default=2, help="the tuner's threads (default 2)")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    try:
        args.sizes = args.sizes.split(",")
        for s in args.sizes:
            size(s)
        args.regs = [reg_value(r) for r in args.regs.split(",")]
    except ValueError as e:
        print(f"tuner_reg: error: bad --sizes or --regs: {e}", file=sys.stderr)
        return 2
    args.termsets, args.starts = args.termsets.split(","), args.starts.split(",")
    bad = [t for t in args.termsets if t not in TERMSETS] + \
        [s for s in args.starts if s not in STARTS]
    if bad or not 0 < args.test_games < args.games:
        print(f"tuner_reg: error: bad --termsets, --starts or --test-games: {bad}",
              file=sys.stderr)
        return 2
    if not os.path.isdir(args.run):
        print(f"tuner_reg: error: {args.run}: no such run directory", file=sys.stderr)
        return 1
    try:
        measure(args)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"tuner_reg: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
