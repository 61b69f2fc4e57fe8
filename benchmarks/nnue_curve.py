"""What more data gives a net: validation loss and Elo against the number of training positions.

Trains one net on the first K positions of a `wasp-tune datagen` run for each K of --sizes (whole
games, in the order they were played), scores each on the same held-out games (the run's last
--valid-games fraction of games, never trained on) and plays it against the hand-written
evaluation (`wasp-match`, --nodes a move, --games games in pairs). Writes OUT/curve.csv (a row a
size and architecture, kept across runs: a killed run resumes at the first size without a row)
and OUT/curve.png, a line an architecture (its `series`).

    python benchmarks/nnue_curve.py ~/wasp-data/run1 -o runs/curve --sizes 250k,500k,1m,2m
    python benchmarks/nnue_curve.py RUN -o OUT --hidden 128 --wdl 0 --games 200 --nodes 5000 \\
        --openings ../shared/data/openings/UHO_4060_v2.epd --concurrency 2 --mirror
    python benchmarks/nnue_curve.py RUN -o OUT --arch ob8.json   # another line, same curve.csv
    python benchmarks/nnue_curve.py -o OUT --redraw    # OUT/curve.png again from OUT/curve.csv

The run is text (data.txt with its data.moves) or viriformat (data.vf). --arch FILE trains
another of bullet's progression (a JSON file's "arch" object, as NET.json's; --factoriser with
king buckets) instead of N = --hidden's simple net. --redraw also draws rows measured
elsewhere: a `series` column, where present, draws a line for each of its values.

The validation loss is measured with --wdl's target on the held-out games, so rows of one curve
compare; the Elo is the net's against the hand-written evaluation at equal nodes (the net's
speed does not enter), with its 95 % error.
"""

import argparse
import csv
import pathlib
import shutil
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wasp import kernelcache  # noqa: E402

kernelcache.setup(("wasp", "tuner"))  # before the kernels are imported

from testing import run_match  # noqa: E402
from tuner.nnue import (  # noqa: E402
    Config,
    Training,
    evaluate,  # noqa: E402
)
from tuner.nnue import data as D  # noqa: E402
from wasp.nnue.arch import Arch, read_arch_file  # noqa: E402

FIELDS = ["positions", "games", "valid_loss", "train_loss", "epochs", "match_games", "score",
          "elo", "elo_error", "net", "series"]


def size(text: str) -> int:
    """'250k', '1.5m' or '300000' as a number of positions."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def held_out(games: np.ndarray, fraction: float):
    """(training candidates, validation indices): the last `fraction` of games held out."""
    ids = np.unique(games)
    cut = ids[int(len(ids) * (1 - fraction))]
    return np.flatnonzero(games < cut), np.flatnonzero(games >= cut)


def first_positions(candidates: np.ndarray, games: np.ndarray, k: int) -> np.ndarray:
    """The first `k` candidates, cut back to the end of a whole game."""
    if k >= len(candidates):
        return candidates
    last_game = games[candidates[k - 1]]
    if k < len(candidates) and games[candidates[k]] == last_game:
        keep = candidates[:k]
        keep = keep[games[keep] != last_game]
        return keep if len(keep) else candidates[:k]
    return candidates[:k]


def short(n: int) -> str:
    """250000 as '250k', 2000000 as '2M'."""
    if n >= 950_000:
        return f"{n / 1e6:.1f}".rstrip("0").rstrip(".") + "M"
    return f"{n / 1e3:.0f}k"


def finite(x) -> str:
    """A figure for the CSV; empty where it is undefined (a score of 0 or 1 has no Elo)."""
    return f"{x:.1f}" if x is not None and np.isfinite(x) else ""


def read_rows(path: pathlib.Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path: pathlib.Path, rows: list[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def plot(rows: list[dict], path: pathlib.Path, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e .[notebooks])")
        return
    x = sorted({int(r["positions"]) for r in rows})
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    series = list(dict.fromkeys(r.get("series") or "" for r in rows))
    for name in series:
        line = [r for r in rows if (r.get("series") or "") == name]
        a.plot([int(r["positions"]) for r in line], [float(r["valid_loss"]) for r in line], "o-",
               label=name or None)
        known = [r for r in line if r["elo"] and r["elo_error"]]
        b.errorbar([int(r["positions"]) for r in known], [float(r["elo"]) for r in known],
                   yerr=[float(r["elo_error"]) for r in known], fmt="o-", capsize=3,
                   label=name or None)
    a.set_xscale("log")
    a.set_xlabel("training positions")
    a.set_ylabel("validation loss (held-out games)")
    b.axhline(0, color="grey", lw=0.8)
    if any(r["elo"] for r in rows):
        b.set_xscale("log")
    if len(series) > 1:
        b.legend(fontsize=8)
    b.set_xlabel("training positions")
    b.set_ylabel("Elo against the hand-written evaluation")
    for ax in (a, b):  # the sizes themselves as ticks: 250k, 1M, ...
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xticks(x, [short(v) for v in x], rotation=45, fontsize=8)  # close sizes
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="?", help="a wasp-tune datagen directory (data.txt and "
                    "data.moves, or data.vf)")
    ap.add_argument("-o", "--out", required=True, help="the curve's directory")
    ap.add_argument("--redraw", action="store_true",
                    help="only draw OUT/curve.png again from OUT/curve.csv")
    ap.add_argument("--title", default=None, help="the plot's title")
    ap.add_argument("--sizes", default="250k,500k,1m,2m,4m,8m",
                    help="training positions of each net (sizes beyond the data: all of it)")
    ap.add_argument("--valid-games", type=float, default=0.05,
                    help="the fraction of games held out (default 0.05)")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--arch", default=None, metavar="FILE",
                    help="the architecture from a JSON file's \"arch\" object (as NET.json's)")
    ap.add_argument("--factoriser", action="store_true", help="with king buckets: a factoriser")
    ap.add_argument("--series", default=None,
                    help="the architecture's name in curve.csv and the plot (default: its "
                         "description)")
    ap.add_argument("--srand", type=int, default=7,
                    help="the match's opening seed (default 7)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--wdl", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--mirror", action="store_true",
                    help="train with wasp-tune nnue train's -mirror")
    ap.add_argument("--games", type=int, default=200, help="match games a net (in pairs)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--openings", default=str(ROOT / "tests" / "data" / "uho_sample.epd"))
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="training threads")
    args = ap.parse_args(argv)

    out = pathlib.Path(args.out)
    try:
        arch = (read_arch_file(args.arch) if args.arch else
                Arch("chess768", [0] * 32, args.hidden, "screlu", 1, ()))
    except (OSError, ValueError) as e:
        print(f"nnue_curve: error: --arch {args.arch}: {e}", file=sys.stderr)
        return 1
    if args.factoriser and not arch.mirrored:
        print("nnue_curve: error: --factoriser needs king buckets (an --arch with "
              "\"inputs\": \"buckets-mirrored\")", file=sys.stderr)
        return 1
    series = args.series or ("" if not (args.arch or args.factoriser) else
                             arch.describe() + (" + factoriser" if args.factoriser else ""))
    tag = "-" + "-".join("".join(c if c.isalnum() else " " for c in series).split()) if series \
        else ""  # the nets' and matches' names: net-SIZE-TAG.nnue
    title = args.title or (f"{'' if args.arch else f'N = {args.hidden}, '}wdl {args.wdl}, "
                           f"{args.epochs} epochs"
                           f"{', mirrored' if args.mirror else ''}, {args.nodes:,} nodes a move, "
                           f"{pathlib.Path(args.openings).stem} openings")
    if args.redraw:
        rows = read_rows(out / "curve.csv")
        if not rows:
            print(f"nnue_curve: error: {out / 'curve.csv'} has no rows to draw", file=sys.stderr)
            return 1
        plot(rows, out / "curve.png", title)
        print(f"drew {out / 'curve.png'} ({len(rows)} rows)")
        return 0
    if args.run is None:
        print("nnue_curve: error: the datagen run to train from is missing (or --redraw)",
              file=sys.stderr)
        return 1
    run = pathlib.Path(args.run).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    data_file = run / "data.vf" if (run / "data.vf").exists() else run / "data.txt"
    try:
        dataset = D.load([data_file], progress=True)
    except (OSError, D.DataError) as e:
        print(f"nnue_curve: error: {e}", file=sys.stderr)
        return 1
    if dataset.games is None:
        print(f"nnue_curve: error: {run}/data.moves is missing: the curve needs whole games",
              file=sys.stderr)
        return 1
    candidates, valid_idx = held_out(dataset.games, args.valid_games)
    print(f"{len(dataset):,} positions: {len(candidates):,} to train from, {len(valid_idx):,} "
          f"held out ({args.valid_games:.0%} of the games)")
    csv_path = out / "curve.csv"
    rows = read_rows(csv_path)
    done = {int(r["positions"]) for r in rows if (r.get("series") or "") == series}
    for k in sorted({min(size(s), len(candidates)) for s in args.sizes.split(",")}):
        train_idx = first_positions(candidates, dataset.games, k)
        if len(train_idx) in done:
            continue
        n = len(train_idx)
        subset = D.Dataset(dataset.boards[train_idx], dataset.games[train_idx],
                           [(str(data_file), n)])
        net_path = out / f"net-{n}{tag}.nnue"
        config = Config(data=[str(data_file)], output=str(net_path), hidden=arch.hidden,
                        arch=arch.to_json(), factoriser=args.factoriser, epochs=args.epochs,
                        lr=args.lr, lr_schedule="cosine", wdl=args.wdl, mirror=args.mirror,
                        valid=0.0, command=" ".join(sys.argv))
        rundir = out / f"net-{n}{tag}.run"
        if rundir.exists():  # a training cut short starts again: it takes minutes, not hours
            shutil.rmtree(rundir)
        training = Training.create(rundir, config, subset, args.threads)
        print(f"training on {n:,} positions ({len(np.unique(subset.games)):,} games)")
        training.train(progress=True)
        training.export()
        valid_loss, _ = evaluate(training.net, dataset.boards, args.wdl, valid_idx)
        match = run_match(["-engine", "cmd=wasp", "name=net", f"option.EvalFile={net_path}",
                           "-engine", "cmd=wasp", "name=hce", "option.EvalFile=<empty>",
                           "-each", "proto=uci", f"nodes={args.nodes}", "option.Hash=16",
                           "startup=300", "-games", str(args.games), "-repeat",
                           "-concurrency", str(args.concurrency), "-openings",
                           f"file={args.openings}", "order=random", "-srand",
                           str(args.srand)], str(out / f"match-{n}{tag}"))
        if not match.ok:
            print(f"nnue_curve: error: the match of {net_path} failed: {match.error}",
                  file=sys.stderr)
            return 1
        rows.append({"positions": n, "games": len(np.unique(subset.games)),
                     "valid_loss": f"{valid_loss:.6f}",
                     "train_loss": training.history[-1]["train_loss"], "epochs": args.epochs,
                     "match_games": match.games, "score": f"{match.score:.4f}",
                     "elo": finite(match.elo), "elo_error": finite(match.elo_error),
                     "net": net_path.name, "series": series})
        rows.sort(key=lambda r: (r.get("series") or "", int(r["positions"])))
        write_rows(csv_path, rows)
        plot(rows, out / "curve.png", title)
        print(f"{n:,} positions: valid loss {valid_loss:.6f}, score {match.score:.3f}, "
              f"Elo {finite(match.elo) or 'undefined'} +/- {finite(match.elo_error) or '-'}")
    for r in rows:
        print(f"{r.get('series') or '':36s}{int(r['positions']):>10,}  valid "
              f"{r['valid_loss']}  Elo {r['elo'] or 'undefined':>9} +/- {r['elo_error'] or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
