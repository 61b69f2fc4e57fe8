"""`wasp-tune nnue train`: train a (768 -> N)x2 -> 1 net on the CPU, written in bullet's layout."""

import argparse
import shlex
import sys
from pathlib import Path

from wasp.exitcodes import EXIT_INPUT, UsageError, fail, file_problem

PROG = "wasp-tune nnue train"
EXAMPLES = """examples:
  wasp-tune nnue train ~/wasp-data/*.bf -o nets/a.nnue -epochs 20
  wasp-tune nnue train positions.txt -o nets/b.nnue -hidden 256 -lr-schedule cosine
  wasp-tune nnue train data.txt -o nets/c.nnue -mirror -epochs 100 -lr-schedule cosine -wdl 0
  wasp-tune nnue train runs/dg/data.vf -o nets/d.nnue -min-ply 16 -no-check -no-capture \
      -max-score 10000                                    # viriformat, filtered as bullet's
  wasp-tune nnue train -resume nets/a.nnue.run            # continue a stopped run
  wasp-tune nnue train -resume nets/a.nnue.run -epochs 30 # or train it for longer

DATA: bullet text lines 'FEN | score | result' (White's view; result 1.0, 0.5 or 0.0),
bulletformat .bf files (32-byte records, side-to-move relative) or viriformat .vf files
(Viridithas's games, replayed as they are read; -min-ply, -no-check, -no-capture and -max-score
filter them as bullet's binpack loaders do, and read no other kind of file). A text file of 16
MB or more gets a binary cache beside it (FILE.bfcache). With the side record of wasp-tune
datagen beside every data file (X.moves beside X.txt or X.bf, 'game ply move' line for line),
or with .vf files, which hold their games, the validation set is whole games, otherwise random
contiguous blocks.

Target: wdl * result + (1 - wdl) * sigmoid(score / 400), loss (sigmoid(out) - target)^2, AdamW
(decay 0.01) with weights clipped to +-1.98, batches of 16,384. The run directory (-dir,
default NET.run) holds run.json, checkpoint.npz (each epoch, every 5 minutes and on Ctrl-C),
best.npz, history.csv and nets/epoch-N.nnue (every epoch's net). NET is the net of the lowest
validation loss in bullet's quantised layout (QA 255, QB 64, scale 400); NET.json beside it
(NET's own name plus .json) says how it was made.

exit codes: 0 done, 1 a data file that cannot be used, 2 a bad command line, 130 interrupted
(continue with -resume DIR)
"""


def build_parser():
    ap = argparse.ArgumentParser(
        prog="wasp-tune nnue", description="Train a learned evaluation on the CPU.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="{train}")
    t = sub.add_parser("train", help="train a (768 -> N)x2 -> 1 net from bullet text or .bf",
                       description="Train a (768 -> N)x2 -> 1 SCReLU net on bullet Chess768 "
                                   "inputs and write it in bullet's quantised layout.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("data", nargs="*", help="bullet text, .bf or viriformat .vf files")
    t.add_argument("-o", "--output", "-output", help="the net file to write (NET.nnue)")
    t.add_argument("-dir", "--dir", help="the run directory (default NET.run)")
    t.add_argument("-resume", "--resume", metavar="DIR", help="continue the run in DIR")
    t.add_argument("-hidden", "--hidden", type=int, default=128,
                   help="neurons a perspective, N (default 128)")
    t.add_argument("-epochs", "--epochs", type=int, default=None,
                   help="passes over the training data (default 10; with -resume: extend)")
    t.add_argument("-batch-size", "--batch-size", type=int, default=16384,
                   help="positions a gradient step (default 16384)")
    t.add_argument("-lr", "--lr", type=float, default=0.001, help="learning rate (default 0.001)")
    t.add_argument("-lr-schedule", "--lr-schedule", choices=["step", "cosine"], default="step",
                   help="step: times -lr-gamma every -lr-step epochs; cosine: down to "
                        "-lr-final (default step)")
    t.add_argument("-lr-gamma", "--lr-gamma", type=float, default=0.1,
                   help="step: the factor at each step (default 0.1)")
    t.add_argument("-lr-step", "--lr-step", type=int, default=0,
                   help="step: epochs between steps (default 0: 90%% of -epochs, as bullet's "
                        "simple example steps at 18 of 20)")
    t.add_argument("-lr-final", "--lr-final", type=float, default=0.0,
                   help="cosine: the last learning rate (default lr / 1000)")
    t.add_argument("-wdl", "--wdl", type=float, default=0.75,
                   help="weight of the game result in the target (default 0.75)")
    t.add_argument("-mirror", "--mirror", action="store_true",
                   help="each epoch, train half the positions at random mirrored left to right "
                        "(the inputs do not see castling rights; default off)")
    t.add_argument("-valid", "--valid", type=float, default=0.05,
                   help="validation fraction (default 0.05; 0: none, the last net is kept)")
    t.add_argument("-seed", "--seed", type=int, default=1,
                   help="initial weights, split and order seed (default 1)")
    t.add_argument("-threads", "--threads", type=int, default=2,
                   help="threads (default 2; the result does not depend on it)")
    t.add_argument("-no-cache", "--no-cache", action="store_true",
                   help="neither read nor write the .bfcache of big text files")
    t.add_argument("-min-ply", "--min-ply", type=int, default=0, metavar="K",
                   help=".vf data: drop positions before ply K (default 0)")
    t.add_argument("-no-check", "--no-check", action="store_true",
                   help=".vf data: drop positions with the side to move in check")
    t.add_argument("-no-capture", "--no-capture", action="store_true",
                   help=".vf data: drop positions whose move played is a capture, en passant "
                        "or a promotion")
    t.add_argument("-max-score", "--max-score", type=int, default=None, metavar="CP",
                   help=".vf data: drop positions with |score| above CP (mates are +-32000)")
    t.add_argument("-quiet", "--quiet", action="store_true", help="no progress output")
    return ap


def _check_data(paths):
    from .data import is_binary

    for path in paths:
        problem = file_problem(path, text=not is_binary(path))
        if problem:
            raise UsageError(f"data file {problem}", EXIT_INPUT)


def _data(args) -> list:
    """The run's data entries: paths, or with a filter flag {"path", "filter"} for each (all
    .vf files, which the filter reads)."""
    from tuner.formats import is_viri

    paths = [str(Path(p)) for p in args.data]
    if args.min_ply < 0:
        raise UsageError("-min-ply must not be negative")
    if args.max_score is not None and args.max_score < 0:
        raise UsageError("-max-score must not be negative")
    flt = {"min_ply": args.min_ply, "no_check": args.no_check, "no_capture": args.no_capture,
           "max_score": args.max_score}
    if flt == {"min_ply": 0, "no_check": False, "no_capture": False, "max_score": None}:
        return paths
    other = [p for p in paths if not is_viri(p)]
    if other:
        raise UsageError(f"-min-ply, -no-check, -no-capture and -max-score filter viriformat "
                         f"(.vf) data; {other[0]} is not (filter it with 'wasp-tune data "
                         f"convert')")
    return [{"path": p, "filter": flt} for p in paths]


def _start(args, argv):
    """The run to train: a new one from the data, or the one in -resume DIR."""
    from .train import Config, Training

    if args.resume:
        if args.data or args.output:
            raise UsageError("-resume DIR takes its data and net from DIR's run.json; give "
                             "no data files or -o")
        defaults = vars(build_parser().parse_args(["train"]))
        kept = set(defaults) - {"command", "data", "output", "resume", "epochs", "threads",
                                "quiet"}
        fixed = sorted(name for name in kept if getattr(args, name) != defaults[name])
        if fixed:
            raise UsageError(f"-{fixed[0].replace('_', '-')} cannot change with -resume (the "
                             f"run keeps its settings; -epochs and -threads can)")
        if not args.quiet:
            print(f"resuming {args.resume}", flush=True)
        return Training.open(args.resume, args.epochs, args.threads, not args.quiet,
                             shlex.join(["wasp-tune", "nnue", *argv]))
    if not args.data:
        raise UsageError("no data files given")
    if not args.output:
        raise UsageError("-o NET.nnue is required")
    _check_data(args.data)
    config = Config(data=_data(args), output=args.output,
                    hidden=args.hidden, epochs=args.epochs or 10, batch_size=args.batch_size,
                    lr=args.lr, lr_schedule=args.lr_schedule, lr_gamma=args.lr_gamma,
                    lr_step=args.lr_step, lr_final=args.lr_final, wdl=args.wdl,
                    mirror=args.mirror,
                    valid=args.valid, seed=args.seed, cache=not args.no_cache,
                    command=shlex.join(["wasp-tune", "nnue", *argv]))
    try:
        config.check()
    except ValueError as e:
        raise UsageError(e) from None
    directory = args.dir or f"{args.output}.run"
    run = Training.create(directory, config, threads=args.threads, progress=not args.quiet)
    if not args.quiet:
        games = "by game" if run.dataset.games is not None else "contiguous blocks"
        print(f"data: {len(run.dataset):,} positions ({len(run.train_idx):,} train, "
              f"{len(run.valid_idx):,} valid, {games}); run directory {directory}", flush=True)
    return run


def cmd_train(args, argv):
    from .data import DataError

    if args.threads < 1:
        raise UsageError("-threads must be at least 1")
    try:
        run = _start(args, argv)
        if not run.train(progress=not args.quiet):
            print(f"interrupted: resume with {PROG} -resume {run.dir}", file=sys.stderr)
            return 130
        path = run.export()
    except UsageError:
        raise  # already one line with its exit code
    except (DataError, FileNotFoundError) as e:
        raise UsageError(e, EXIT_INPUT) from None
    except FileExistsError as e:
        raise UsageError(e) from None
    except ValueError as e:  # a setting out of range on -resume
        raise UsageError(e) from None
    except OSError as e:
        raise UsageError(f"{e.filename}: {e.strerror}", EXIT_INPUT) from None
    if not args.quiet:
        best = run.best
        which = (f"epoch {best[1]}, valid loss {best[2]:.6f}" if best else
                 f"last epoch, train loss {run.history[-1]['train_loss']:.6f}")
        from wasp.nnue.arch import meta_path

        print(f"done: {path} ({which}; {meta_path(path)})", flush=True)
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 0
    try:
        return cmd_train(args, argv)
    except UsageError as e:
        return fail(f"wasp-tune nnue {args.command}", e, e.code)
    except KeyboardInterrupt:
        print(f"interrupted (no checkpoint since the last one): resume with {PROG} -resume "
              f"{args.resume or args.dir or f'{args.output}.run'}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
