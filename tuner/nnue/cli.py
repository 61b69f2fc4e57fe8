"""`wasp-tune nnue train`: train a net of bullet's progression on the CPU, written as bullet's
examples write it."""

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
  wasp-tune nnue train data.vf -o nets/e.nnue -hidden 1024 -output-buckets 8 \
      -buckets 0,1,2,3,4,4,5,5,6,6,6,6,7,7,7,7,8,8,8,8,8,8,8,8,9,9,9,9,9,9,9,9 -factoriser \
      -superbatches 640 -lr-schedule cosine -lr-final 2.43e-6   # bullet's example 3
  wasp-tune nnue train data.vf -o nets/f.nnue -arch arch.json  # an "arch" object as NET.json's
  wasp-tune nnue train data.vf -o nets/g.nnue -init nets/a.nnue -hidden 256 -output-buckets 8 \
      -epochs 5                    # grow the next net from the last one (docs/nnue.md)
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

NET: by default bullet's example 1, (768 -> N)x2 -> 1 with SCReLU; -output-buckets K
(MaterialCount<K>), -buckets LAYOUT (ChessBucketsMirrored's 32 king buckets, files a-d, rank 1
first) with -factoriser, -activation crelu and -layers 16,32 (example 4) give bullet's other
examples, or -arch FILE names them as NET.json's "arch" object (docs/formats/nets.md).
-init NET starts from an existing net (read as the engine reads it: its NET.json, or example
1 told by its size) instead of random weights, mapped so that the new net starts as the old
one: the same architecture; 1 output bucket into K; Chess768 into king buckets (with
-factoriser in l0f); more neurons (new ones with zero output weights). Anything else (fewer
neurons, example 4 from a net without its layers, another activation, king buckets into
Chess768) is refused (exit 2). run.json and NET.json record the old net's path and sha256.

Target: wdl * result + (1 - wdl) * sigmoid(score / 400) (-wdl START,END: linear from START to
END), loss (sigmoid(out) - target)^2, AdamW (decay 0.01) with weights clipped to +-1.98 (with
-factoriser l0w and l0f to +-0.99, as bullet's example 3), batches of 16,384. Progress is in
epochs, or with -superbatches S in bullet's superbatches of -batches-per-superbatch batches
(6104: 100 M positions), the schedules then bullet's. The run directory (-dir, default NET.run)
holds run.json, checkpoint.npz (each epoch or superbatch, every 5 minutes and on Ctrl-C),
best.npz, history.csv and nets/epoch-N.nnue or nets/superbatch-N.nnue (every -save-rate
units). NET is the net of the lowest validation loss, written as bullet's example writes it
(QA 255, QB 64, scale 400); NET.json beside it (NET's own name plus .json) holds its "arch"
and says how it was made.

exit codes: 0 done, 1 a data file that cannot be used, 2 a bad command line, 130 interrupted
(continue with -resume DIR)
"""


def build_parser():
    ap = argparse.ArgumentParser(
        prog="wasp-tune nnue", description="Train a learned evaluation on the CPU.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="{train}")
    t = sub.add_parser("train", help="train a net of bullet's progression on the CPU",
                       description="Train a net of bullet's progression (examples 1 to 4) on "
                                   "the CPU and write it as bullet's examples write it.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("data", nargs="*", help="bullet text, .bf or viriformat .vf files")
    t.add_argument("-o", "--output", "-output", help="the net file to write (NET.nnue)")
    t.add_argument("-dir", "--dir", help="the run directory (default NET.run)")
    t.add_argument("-resume", "--resume", metavar="DIR", help="continue the run in DIR")
    t.add_argument("-hidden", "--hidden", type=int, default=128,
                   help="neurons a perspective, N, 16 to 2048 (default 128)")
    t.add_argument("-activation", "--activation", choices=["screlu", "crelu"], default=None,
                   help="of the accumulator (default screlu; crelu with -layers)")
    t.add_argument("-buckets", "--buckets", metavar="LAYOUT", default=None,
                   help="king buckets with horizontal mirroring (bullet's "
                        "ChessBucketsMirrored): 32 comma-separated bucket numbers, files a-d "
                        "of ranks 1 to 8 as the king's side sees the board")
    t.add_argument("-factoriser", "--factoriser", action="store_true",
                   help="with -buckets: train l0f, shared by every bucket, merged into each "
                        "when saved")
    t.add_argument("-output-buckets", "--output-buckets", type=int, default=1, metavar="K",
                   help="output buckets by material, bullet's MaterialCount<K> (default 1)")
    t.add_argument("-layers", "--layers", default=None, metavar="16,32",
                   help="example 4: the accumulator's halves multiplied pairwise, then L1 16 "
                        "and L2 32 a bucket (SCReLU)")
    t.add_argument("-arch", "--arch", metavar="FILE", default=None,
                   help="the architecture from a JSON file's \"arch\" object (as NET.json's), "
                        "instead of the flags above")
    t.add_argument("-init", "--init", metavar="NET", default=None,
                   help="start from this net file (its NET.json beside it, or example 1 told "
                        "by its size), mapped into the architecture trained, instead of "
                        "random weights")
    t.add_argument("-epochs", "--epochs", type=int, default=None,
                   help="passes over the training data (default 10; with -resume: extend)")
    t.add_argument("-superbatches", "--superbatches", type=int, default=None,
                   help="train S superbatches instead of epochs (with -resume: extend)")
    t.add_argument("-batches-per-superbatch", "--batches-per-superbatch", type=int,
                   default=6104, help="batches a superbatch (default 6104, bullet's examples')")
    t.add_argument("-save-rate", "--save-rate", type=int, default=0,
                   help="a net in the run directory every this many epochs or superbatches "
                        "(default 1 epoch, 10 superbatches)")
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
    t.add_argument("-wdl", "--wdl", default="0.75", metavar="W or START,END",
                   help="weight of the game result in the target (default 0.75), or a linear "
                        "schedule from START at the first epoch or superbatch to END at the last")
    t.add_argument("-l0-clip", "--l0-clip", type=float, default=0.0,
                   help="clip l0w (and l0f) to +-X (default: 0.99 with -factoriser, else "
                        "1.98 as every weight)")
    t.add_argument("-mirror", "--mirror", action="store_true",
                   help="each epoch, train half the positions at random mirrored left to right "
                        "(the inputs do not see castling rights; default off)")
    t.add_argument("-valid", "--valid", type=float, default=0.05,
                   help="validation fraction (default 0.05; 0: none, the last net is kept)")
    t.add_argument("-seed", "--seed", type=int, default=1,
                   help="initial weights, split and order seed (default 1)")
    t.add_argument("-threads", "--threads", type=int, default=2,
                   help="threads (default 2; the result does not depend on it)")
    t.add_argument("-stream", "--stream", action="store_true",
                   help="read the records from disk as training goes (memory-mapped .bf; text "
                        "and .vf decoded once into a .bfcache beside them) instead of holding "
                        "them in memory: the same net")
    t.add_argument("-shuffle-buffer", "--shuffle-buffer", type=int, default=0, metavar="N",
                   help="shuffle windows of N consecutive positions, taken in a shuffled order, "
                        "instead of the whole data (default 0: the whole; for -stream over "
                        "data beyond memory)")
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


def _numbers(flag, text, kind=int) -> list:
    try:
        return [kind(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"{flag} takes comma-separated numbers, not {text!r}") from None


def _arch(args):
    """The architecture of the flags, or of -arch FILE (with none of the flags)."""
    from wasp.nnue.arch import Arch, read_arch_file

    flags = {"-activation": args.activation, "-buckets": args.buckets,
             "-output-buckets": args.output_buckets != 1, "-layers": args.layers,
             "-hidden": args.hidden != 128}
    try:
        if args.arch:
            given = [name for name, value in flags.items() if value]
            if given:
                raise UsageError(f"-arch FILE gives the architecture; {given[0]} cannot be "
                                 "given with it")
            problem = file_problem(args.arch, text=True)
            if problem:
                raise UsageError(f"-arch file {problem}", EXIT_INPUT)
            return read_arch_file(args.arch)
        layout = _numbers("-buckets", args.buckets) if args.buckets else [0] * 32
        layers = _numbers("-layers", args.layers) if args.layers else []
        if args.buckets and len(layout) != 32:
            raise UsageError(f"-buckets takes 32 bucket numbers (files a-d, ranks 1 to 8), not "
                             f"{len(layout)}")
        return Arch(inputs="buckets-mirrored" if args.buckets else "chess768", layout=layout,
                    hidden=args.hidden,
                    activation=args.activation or ("crelu" if layers else "screlu"),
                    output_buckets=args.output_buckets, layers=layers)
    except ValueError as e:
        if args.arch:
            raise UsageError(e) from None
        text = str(e)
        for field, flag in (("output_buckets", "-output-buckets"), ("layout", "-buckets"),
                            ("layers", "-layers"), ("hidden", "-hidden"),
                            ("activation", "-activation")):
            text = text.replace(f"arch: {field}", flag, 1)
        raise UsageError(text) from None


def _wdl(text):
    """(start, end or None) of -wdl W or -wdl START,END."""
    values = _numbers("-wdl", text, float)
    if len(values) > 2:
        raise UsageError(f"-wdl takes W or START,END, not {text!r}")
    return values[0], values[1] if len(values) == 2 else None


def _start(args, argv):
    """The run to train: a new one from the data, or the one in -resume DIR."""
    from dataclasses import asdict

    from .model import AdamW
    from .train import Config, Training

    if args.resume:
        if args.data or args.output:
            raise UsageError("-resume DIR takes its data and net from DIR's run.json; give "
                             "no data files or -o")
        if args.init:
            raise UsageError("-init starts a new run; -resume DIR continues from DIR's "
                             "checkpoint (its run.json names the net it started from)")
        defaults = vars(build_parser().parse_args(["train"]))
        kept = set(defaults) - {"command", "data", "output", "resume", "epochs", "threads",
                                "quiet", "superbatches", "stream"}
        fixed = sorted(name for name in kept if getattr(args, name) != defaults[name])
        if fixed:
            raise UsageError(f"-{fixed[0].replace('_', '-')} cannot change with -resume (the "
                             f"run keeps its settings and architecture; -epochs, "
                             f"-superbatches, -stream and -threads can)")
        if not args.quiet:
            print(f"resuming {args.resume}", flush=True)
        return Training.open(args.resume, args.epochs, args.threads, not args.quiet,
                             shlex.join(["wasp-tune", "nnue", *argv]), args.superbatches,
                             args.stream or None)
    if not args.data:
        raise UsageError("no data files given")
    if not args.output:
        raise UsageError("-o NET.nnue is required")
    _check_data(args.data)
    arch = _arch(args)
    if args.epochs and args.superbatches:
        raise UsageError("-epochs and -superbatches: give one (the unit of progress)")
    wdl, wdl_end = _wdl(args.wdl)
    adamw = asdict(AdamW(l0_clip=args.l0_clip))
    config = Config(data=_data(args), output=args.output, hidden=arch.hidden,
                    arch=arch.to_json(), factoriser=args.factoriser,
                    epochs=args.epochs or 10, superbatches=args.superbatches or 0,
                    batches_per_superbatch=args.batches_per_superbatch,
                    save_rate=args.save_rate, batch_size=args.batch_size,
                    lr=args.lr, lr_schedule=args.lr_schedule, lr_gamma=args.lr_gamma,
                    lr_step=args.lr_step, lr_final=args.lr_final, wdl=wdl, wdl_end=wdl_end,
                    mirror=args.mirror, adamw=adamw, stream=args.stream,
                    shuffle_buffer=args.shuffle_buffer,
                    valid=args.valid, seed=args.seed, cache=not args.no_cache,
                    command=shlex.join(["wasp-tune", "nnue", *argv]))
    try:
        config.check()
    except ValueError as e:
        raise UsageError(e) from None
    start = _init(args.init, config, args.quiet) if args.init else None
    directory = args.dir or f"{args.output}.run"
    run = Training.create(directory, config, threads=args.threads, progress=not args.quiet,
                          net=start.net if start else None)
    if not args.quiet:
        games = "by game" if run.dataset.games is not None else "contiguous blocks"
        print(f"data: {len(run.dataset):,} positions ({len(run.train_idx):,} train, "
              f"{len(run.valid_idx):,} valid, {games}); run directory {directory}", flush=True)
    return run


def _init(path, config, quiet):
    """-init NET: the old net grown into the run's architecture (`tuner.nnue.grow`), its
    record in config.init; a file that is no net exits 1, a mapping that cannot be made 2."""
    from .grow import GrowError, start_from

    problem = file_problem(path, text=False)
    if problem:
        raise UsageError(f"-init net {problem}", EXIT_INPUT)
    try:
        start = start_from(path, config)
    except GrowError as e:
        raise UsageError(f"-init {path}: {e}") from None
    except ValueError as e:
        raise UsageError(f"-init net {e}", EXIT_INPUT) from None
    config.init = start.record
    if not quiet:
        print(f"starting from {path} ({start.record['architecture']})", flush=True)
    for note in start.notes:
        print(f"{PROG}: note: {note}", file=sys.stderr, flush=True)
    return start


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
