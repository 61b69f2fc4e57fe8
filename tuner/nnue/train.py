"""A training run of a net in a run directory: split, epochs or superbatches, schedules,
checkpoints, export.

The directory holds `run.json` (the settings, the architecture and the data), `checkpoint.npz`
(the net, AdamW's moments and where the run is, written after every epoch or superbatch, every
few minutes and on Ctrl-C), `best.npz` (the net of the lowest validation loss), `history.csv` (a
line an epoch or superbatch) and `nets/epoch-N.nnue` or `nets/superbatch-N.nnue` (the net in
bullet's layout, to play against one another). A resumed run continues bit for bit as if it had
not stopped: the positions are the epochs' orders one after another, each from the seed and the
epoch alone, and the kernels' sums do not depend on the threads.
"""

import csv
import io
import json
import math
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from wasp.atomicfile import replacing
from wasp.nnue.arch import Arch, write_meta

from . import data as D
from .model import FACTORISER_CLIP, AdamW, FloatNet, Kernels, evaluate, set_threads

RUN_FILE, CHECKPOINT, BEST, HISTORY = "run.json", "checkpoint.npz", "best.npz", "history.csv"
NETS = "nets"  # the net at the end of units: nets/epoch-N.nnue or nets/superbatch-N.nnue
INTEGERS = ("epoch", "superbatch", "positions")  # history.csv's integer columns
SAVE_SECONDS = 300.0  # a checkpoint at least this often inside an epoch
BLOCKS = 100  # a split by blocks cuts the data into about this many pieces or more
MAX_BLOCK = 4096


@dataclass
class Config:
    """The settings of a run (kept in run.json)."""

    data: list
    output: str
    hidden: int = 128
    arch: dict | None = None  # NET.json's "arch" object (None: example 1 of N = hidden)
    factoriser: bool = False  # train l0f, shared by the king buckets, merged when saved
    epochs: int = 10
    batch_size: int = 16384
    lr: float = 0.001
    lr_schedule: str = "step"  # "step" or "cosine"
    lr_gamma: float = 0.1  # step: the factor at each step
    lr_step: int = 0  # step: epochs between steps (0: 90 % of the epochs, as bullet's example)
    lr_final: float = 0.0  # cosine: the last rate (0: lr / 1000)
    wdl: float = 0.75
    wdl_end: float | None = None  # a linear schedule from wdl to wdl_end (bullet's LinearWDL)
    superbatches: int = 0  # > 0: progress in superbatches of batches_per_superbatch batches
    batches_per_superbatch: int = 6104  # bullet's examples' (100 M positions at 16,384)
    save_rate: int = 0  # a net every this many epochs or superbatches (0: 1, or 10)
    mirror: bool = False  # each epoch, half the positions at random mirrored left to right
    stream: bool = False  # the records read from disk (memory-mapped), not held in memory
    shuffle_buffer: int = 0  # > 0: shuffle windows of this many positions (epoch_order)
    valid: float = 0.05
    seed: int = 1
    cache: bool = True
    command: str = ""
    init: dict | None = None  # the net the run started from: path, sha256, architecture
    adamw: dict = field(default_factory=lambda: asdict(AdamW()))

    def check(self):
        """ValueError naming the first setting out of range."""
        self.architecture()
        rules = [("epochs", self.epochs >= 1, "at least 1"),
                 ("superbatches", self.superbatches >= 0, "0 or more"),
                 ("batches-per-superbatch", self.batches_per_superbatch >= 1, "at least 1"),
                 ("save-rate", self.save_rate >= 0, "0 or more"),
                 ("shuffle-buffer", self.shuffle_buffer >= 0, "0 or more"),
                 ("batch-size", self.batch_size >= 1, "at least 1"),
                 ("lr", self.lr > 0, "above 0"),
                 ("lr-schedule", self.lr_schedule in ("step", "cosine"), "step or cosine"),
                 ("lr-gamma", 0 < self.lr_gamma <= 1, "in (0, 1]"),
                 ("lr-step", self.lr_step >= 0, "0 or more"),
                 ("lr-final", self.lr_final >= 0, "0 or more"),
                 ("wdl", 0 <= self.wdl <= 1 and (self.wdl_end is None or
                                                  0 <= self.wdl_end <= 1), "in [0, 1]"),
                 ("valid", 0 <= self.valid < 1, "in [0, 1)")]
        for name, ok, what in rules:
            if not ok:
                raise ValueError(f"-{name} must be {what}")

    def architecture(self) -> Arch:
        """The net's architecture; ValueError names a bad field."""
        arch = Arch.from_json(self.arch) if self.arch is not None else Arch(hidden=self.hidden)
        if arch.hidden != self.hidden:
            raise ValueError(f"-hidden {self.hidden} is not the architecture's {arch.hidden}")
        if self.factoriser and not arch.mirrored:
            raise ValueError("-factoriser needs king buckets (-buckets): it is shared by them")
        return arch

    def optimiser(self) -> AdamW:
        """AdamW's settings; with a factoriser l0w and l0f are clipped to +-0.99 unless
        set (example 3's stricter clipping: their sum stays within the clip)."""
        opt = AdamW(**self.adamw)
        if self.factoriser and not opt.l0_clip:
            opt.l0_clip = FACTORISER_CLIP
        return opt

    @property
    def unit(self) -> str:
        """The unit of progress: "superbatch" with superbatches, else "epoch"."""
        return "superbatch" if self.superbatches else "epoch"

    @property
    def units(self) -> int:
        """Superbatches or epochs to train."""
        return self.superbatches or self.epochs

    def every(self) -> int:
        """A net is written every this many units (and at the last)."""
        return self.save_rate or (10 if self.superbatches else 1)

    def learning_rate(self, unit, batch, batches):
        """The rate of batch `batch` of `batches` in unit `unit` (from 0). Epochs: cosine
        batch by batch down to -lr-final at the end. Superbatches as bullet's schedulers:
        CosineDecayLR of superbatch s (from 1) of S, the final rate from s = S on; StepLR."""
        final = self.lr_final or self.lr / 1000
        if self.lr_schedule == "cosine" and self.superbatches:
            s = unit + 1
            if s >= self.superbatches:
                return final
            lam = 1.0 - 0.5 * (1.0 + math.cos(math.pi * s / self.superbatches))
            return self.lr + lam * (final - self.lr)
        if self.lr_schedule == "cosine":
            progress = (unit + batch / batches) / self.epochs
            return final + (self.lr - final) * 0.5 * (1 + math.cos(math.pi * progress))
        step = self.lr_step or max(1, round(0.9 * self.units))
        return self.lr * self.lr_gamma ** (unit // step)

    def wdl_at(self, unit) -> float:
        """The result's weight in the target in unit `unit` (from 0): -wdl, or bullet's
        LinearWDL from -wdl at the first unit to its end at the last."""
        if self.wdl_end is None:
            return self.wdl
        return self.wdl + (self.wdl_end - self.wdl) / max(self.units - 1, 1) * unit


def read_config(directory) -> tuple[Config, int]:
    """(the settings, the number of positions) of the run in `directory` (its run.json)."""
    info = json.loads((Path(directory) / RUN_FILE).read_text())
    positions = info.pop("positions")
    return Config(**info), positions


def read_history(directory) -> list[dict]:
    """The rows of a run's history.csv, one an epoch ([] before the first ends): epoch,
    train_loss, valid_loss (None without validation), lr, positions, seconds, positions_per_s."""
    path = Path(directory) / HISTORY
    if not path.exists():
        return []
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows.append({k: (None if v == "" else int(v) if k in INTEGERS else float(v))
                         for k, v in row.items()})
    return rows


def split(n, games=None, fraction=0.05, seed=1):
    """(train, valid) index arrays: whole games to validation when `games` says which game a
    position is from, otherwise randomly chosen contiguous blocks (neighbours are usually of
    one game). Both sorted; every position in exactly one; train never empty."""
    everything = np.arange(n, dtype=np.int64)
    if fraction <= 0 or n < 2:
        return everything, everything[:0]
    rng = np.random.default_rng([seed, 0x5EED])
    if games is not None:
        unique = np.unique(games)
        if len(unique) >= 2:
            k = min(len(unique) - 1, max(1, round(fraction * len(unique))))
            mask = np.isin(games, rng.choice(unique, k, replace=False))
            return everything[~mask], everything[mask]
    block = max(1, min(MAX_BLOCK, n // BLOCKS))
    blocks = -(-n // block)
    k = min(blocks - 1, max(1, round(fraction * blocks)))
    mask = np.zeros(blocks, dtype=bool)
    mask[rng.choice(blocks, k, replace=False)] = True
    mask = np.repeat(mask, block)[:n]
    return everything[~mask], everything[mask]


def epoch_order(train, seed, epoch, mirror=False, buffer=0):
    """The training positions in the order of epoch `epoch` (depends on nothing else): all
    shuffled, or with a `buffer` smaller than the data, windows of `buffer` consecutive
    training positions taken in a shuffled order, each shuffled within (what a shuffle buffer
    over data read from disk can give, so that data streamed and in memory train alike). With
    `mirror`, half of them at random as ~index: mirrored left to right. Chess768 inputs do not
    see castling rights, so to the net a mirrored position is as good a sample as its original,
    and the data count nearly double."""
    if 0 < buffer < len(train):
        windows = -(-len(train) // buffer)
        parts = []
        for w in np.random.default_rng([seed, epoch, 2]).permutation(windows):
            part = train[w * buffer:(w + 1) * buffer]
            parts.append(part[np.random.default_rng([seed, epoch, 3, w]).permutation(len(part))])
        order = np.concatenate(parts)
    else:
        order = train[np.random.default_rng([seed, epoch]).permutation(len(train))]
    if mirror:
        flip = np.random.default_rng([seed, epoch, 1]).random(len(order)) < 0.5
        order = np.where(flip, ~order, order)
    return order


def _save_npz(path, **arrays):
    with replacing(path, ".npz") as tmp:
        np.savez(tmp, **arrays)


class Interrupt:
    """Ctrl-C (and SIGTERM) during training: noted, acted on at the next batch boundary."""

    def __init__(self):
        self.stop = False
        self._old = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, signum, frame):
        if self.stop:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.stop = True

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)


class Training:
    """A run: its settings, data split, net, AdamW state and history."""

    def __init__(self, directory, config: Config, dataset: D.Dataset, threads=None):
        self.dir = Path(directory)
        self.config = config
        self.dataset = dataset
        self.threads = set_threads(threads)
        self.train_idx, self.valid_idx = split(len(dataset), dataset.games, config.valid,
                                               config.seed)
        self.arch = config.architecture()
        self.opt = config.optimiser()
        self.net = FloatNet.random(self.arch, config.seed, factoriser=config.factoriser)
        self.moments = {k: (np.zeros_like(a), np.zeros_like(a))
                        for k, a in self.net.arrays().items()}
        self.best = None  # (FloatNet, epoch, valid loss)
        self.epoch = self.batch = self.step = 0
        self.loss_sum = 0.0  # of the current epoch so far
        self.seen = 0
        self.seconds = 0.0
        self.history = []
        self.resumed = []  # the commands that continued the run
        self._orders = {}  # epoch: its order (_order)

    # ---- creation and checkpoints

    @classmethod
    def create(cls, directory, config: Config, dataset=None, threads=None, progress=False,
               net: FloatNet | None = None):
        """A new run in `directory` (which must not hold one), from `net` (an old net grown
        into the run's architecture, `tuner.nnue.grow`; config.init says which) or from
        random weights."""
        config.check()
        directory = Path(directory)
        if (directory / RUN_FILE).exists():
            raise FileExistsError(f"{directory} already holds a run: continue it with "
                                  f"-resume {directory}, or choose another -dir")
        if dataset is None:
            dataset = D.load(config.data, progress, config.cache, config.stream)
        if len(dataset) == 0:
            raise D.DataError(f"no positions in {', '.join(map(str, config.data))}")
        run = cls(directory, config, dataset, threads)
        if net is not None:
            if (net.arch, net.factoriser) != (run.arch, config.factoriser):
                raise ValueError(f"{net!r} is not the run's net {run.net!r}")
            run.net = net.copy(run.net.dtype)
        directory.mkdir(parents=True, exist_ok=True)
        info = asdict(config)
        if info["init"] is None:  # from random weights: no "init" key
            del info["init"]
        info["positions"] = len(dataset)
        (directory / RUN_FILE).write_text(json.dumps(info, indent=1) + "\n")
        run.save()
        return run

    @classmethod
    def open(cls, directory, epochs=None, threads=None, progress=False, command="",
             superbatches=None, stream=None):
        """The run in `directory`, at its last checkpoint (`epochs`, or `superbatches` for a
        run in superbatches, may extend it; `stream` reads its data from disk or into memory,
        the same positions either way; `command`, the one that continues it, goes into the
        net's metadata)."""
        directory = Path(directory)
        if not (directory / CHECKPOINT).exists():
            raise FileNotFoundError(f"{directory}: no run to resume (no {CHECKPOINT})")
        config, positions = read_config(directory)
        if (epochs and config.superbatches) or (superbatches and not config.superbatches):
            units = "superbatches" if config.superbatches else "epochs"
            raise ValueError(f"the run in {directory} counts {units}: extend it with -{units}")
        if epochs or superbatches:
            config.epochs = epochs or config.epochs
            config.superbatches = superbatches or config.superbatches
            config.check()
        if stream is not None:
            config.stream = stream
        dataset = D.load(config.data, progress, config.cache, config.stream)
        if len(dataset) != positions:
            raise D.DataError(f"the data of {directory} now hold {len(dataset):,} positions, "
                              f"not {positions:,}: a resumed run needs the same data")
        run = cls(directory, config, dataset, threads)
        run._load()
        if command:
            run.resumed.append(command)
        return run

    def save(self):
        """Write the checkpoint (atomically)."""
        arrays = {}
        for name, a in self.net.arrays().items():
            m, v = self.moments[name]
            arrays.update({name: a, f"m_{name}": m, f"v_{name}": v})
        state = {"epoch": self.epoch, "batch": self.batch, "step": self.step,
                 "loss_sum": self.loss_sum, "seen": self.seen, "seconds": self.seconds,
                 "history": self.history, "resumed": self.resumed}
        _save_npz(self.dir / CHECKPOINT, state=np.array(json.dumps(state)), **arrays)
        self._write_history()

    def _load(self):
        with np.load(self.dir / CHECKPOINT) as z:
            self.net = self._net(z)
            self.moments = {k: (z[f"m_{k}"].copy(), z[f"v_{k}"].copy()) for k in
                            self.net.arrays()}
            state = json.loads(str(z["state"]))
        for key in ("epoch", "batch", "step", "loss_sum", "seen", "seconds", "history",
                    "resumed"):
            setattr(self, key, state[key])
        if (self.dir / BEST).exists():
            with np.load(self.dir / BEST) as z:
                net = self._net(z)
                self.best = (net, int(z["epoch"]), float(z["valid"]))

    def _net(self, z) -> FloatNet:
        return FloatNet(self.arch, {k: z[k] for k in self.net.params}, self.config.factoriser)

    def _write_history(self):
        if not self.history:
            return
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(self.history[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.history)
        (self.dir / HISTORY).write_text(out.getvalue())

    # ---- training

    @property
    def done(self):
        return self.epoch >= self.config.units

    def batches(self):
        """Batches a unit: a superbatch's, or an epoch's (the last may be smaller; data
        smaller than a batch: one)."""
        if self.config.superbatches:
            return self.config.batches_per_superbatch
        return max(1, -(-len(self.train_idx) // self.config.batch_size))

    def _order(self, epoch):
        """epoch_order of `epoch`, the last two kept."""
        if epoch not in self._orders:
            cfg = self.config
            self._orders = {e: o for e, o in self._orders.items() if e == epoch - 1}
            self._orders[epoch] = epoch_order(self.train_idx, cfg.seed, epoch, cfg.mirror,
                                              cfg.shuffle_buffer)
        return self._orders[epoch]

    def positions(self, start, count):
        """Positions start .. start + count - 1 of the stream the run trains on: the epochs'
        orders one after another (a superbatch may span two epochs)."""
        n = len(self.train_idx)
        parts = []
        while count > 0:
            epoch, offset = divmod(start, n)
            take = min(count, n - offset)
            parts.append(self._order(epoch)[offset:offset + take])
            start += take
            count -= take
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def batch_positions(self, unit, batch):
        """The positions of batch `batch` of unit `unit`: in an epoch its slice of the epoch's
        order; in superbatches the stream's next batch_size."""
        cfg, n = self.config, len(self.train_idx)
        if cfg.superbatches:
            start = (unit * cfg.batches_per_superbatch + batch) * cfg.batch_size
            return self.positions(start, cfg.batch_size)
        return self.positions(unit * n + batch * cfg.batch_size,
                              min(cfg.batch_size, n - batch * cfg.batch_size))

    def valid_loss(self):
        if len(self.valid_idx) == 0:
            return None
        loss, _ = evaluate(self.net, self.dataset.boards, self.config.wdl_at(self.epoch),
                           self.valid_idx)
        return loss

    def train(self, progress=True, stop_after=None) -> bool:
        """Train to the last epoch or superbatch; True when done. Stops early (checkpointed,
        False) on Ctrl-C/SIGTERM or after `stop_after` more batches."""
        from tqdm import tqdm

        cfg = self.config
        boards = self.dataset.boards
        kernels = Kernels(self.net)
        nb = self.batches()
        size = nb * cfg.batch_size if cfg.superbatches else len(self.train_idx)
        done_batches = 0
        with Interrupt() as interrupt:
            while not self.done:
                wdl = cfg.wdl_at(self.epoch)
                start = time.perf_counter()
                saved = start
                bar = tqdm(total=size, initial=min(size, self.batch * cfg.batch_size),
                           unit="pos", unit_scale=True, leave=False,
                           desc=f"{cfg.unit} {self.epoch + 1}/{cfg.units}", disable=not progress)
                with bar:
                    while self.batch < nb:
                        if interrupt.stop or (stop_after is not None and
                                              done_batches >= stop_after):
                            self.seconds += time.perf_counter() - start
                            self.save()
                            return False
                        lr = cfg.learning_rate(self.epoch, self.batch, nb)
                        idx = self.batch_positions(self.epoch, self.batch)
                        loss = kernels.run(*D.gather(boards, idx), wdl, True)
                        kernels.step(self.moments, lr, self.step + 1, self.opt)
                        self.step += 1
                        self.batch += 1
                        self.loss_sum += loss
                        self.seen += len(idx)
                        done_batches += 1
                        bar.set_postfix(loss=f"{self.loss_sum / self.seen:.5f}", lr=f"{lr:.2g}",
                                        refresh=False)
                        bar.update(len(idx))
                        now = time.perf_counter()
                        if now - saved > SAVE_SECONDS and self.batch < nb:
                            self.seconds += now - start
                            start = saved = now
                            self.save()
                self.seconds += time.perf_counter() - start
                self._end_epoch(lr, progress)
        return True

    def _end_epoch(self, lr, progress):
        cfg = self.config
        unit = cfg.unit
        n = self.epoch + 1
        valid = self.valid_loss()
        row = {unit: n, "train_loss": round(self.loss_sum / max(1, self.seen), 8),
               "valid_loss": "" if valid is None else round(valid, 8), "lr": float(f"{lr:.6g}"),
               "positions": self.seen, "seconds": round(self.seconds, 2),
               "positions_per_s": round(self.seen / max(self.seconds, 1e-9))}
        self.history.append(row)
        if n % cfg.every() == 0 or n == cfg.units:
            (self.dir / NETS).mkdir(exist_ok=True)
            self._save_net(self.net, self.dir / NETS / f"{unit}-{n}.nnue")
        if valid is not None and (self.best is None or valid < self.best[2]):
            self.best = (self.net.copy(), n, valid)
            a = self.best[0].arrays()
            _save_npz(self.dir / BEST, epoch=np.array(n), valid=np.array(valid), **a)
        if progress:
            best = "" if self.best is None else f"  (best valid {self.best[2]:.6f} at {unit} " \
                                                f"{self.best[1]})"
            valid_text = "" if valid is None else f"  valid loss {valid:.6f}"
            print(f"{unit} {n}/{cfg.units}: train loss {row['train_loss']:.6f}"
                  f"{valid_text}  lr {lr:.3g}  {row['positions_per_s']:,} pos/s{best}",
                  flush=True)
        self.epoch += 1
        self.batch = 0
        self.loss_sum = 0.0
        self.seen = 0
        self.seconds = 0.0
        self.save()

    # ---- the result

    def final_net(self) -> FloatNet:
        """The net of the lowest validation loss (the last one when there is no validation)."""
        return self.best[0] if self.best is not None else self.net

    def _save_net(self, net: FloatNet, path):
        """Write an epoch's net file, with NET.json's "arch" beside it for any net but
        example 1's (which the engine reads without one)."""
        net.save(path)
        if not self.arch.simple:
            write_meta(path, self.arch)

    def export(self, path=None):
        """Write the final net in bullet's layout and its metadata beside it (NET.json,
        `wasp.nnue.arch.meta_path`)."""
        path = Path(path or self.config.output)
        net = self.final_net()
        path.parent.mkdir(parents=True, exist_ok=True)
        cfg = self.config
        split_kind = ("none" if len(self.valid_idx) == 0 else
                      "by game" if self.dataset.games is not None else "contiguous blocks")
        arch = self.arch
        factoriser = ", a factoriser merged" if cfg.factoriser else ""
        net.save(path)
        meta = {
            "architecture": f"{arch.describe()}{factoriser}",
            "format": f"bullet's save_format, QA {arch.qa}, QB {arch.qb}, scale {arch.scale}",
            "hidden": arch.hidden, "bytes": path.stat().st_size,
            "data": [{"path": p, "positions": n} for p, n in self.dataset.files],
            "positions": {"train": len(self.train_idx), "valid": len(self.valid_idx),
                          "split": split_kind},
            "epochs": len(self.history),
            "net_epoch": self.best[1] if self.best is not None else len(self.history),
            "losses": self.history,
            "settings": {k: v for k, v in asdict(cfg).items()
                         if k not in ("data", "output", "command", "init")},
            "command": cfg.command,
            "resumed": self.resumed,
        }
        if cfg.init:
            meta["init"] = cfg.init  # the net the run started from
        write_meta(path, arch, meta)
        return path

    def __repr__(self):
        return (f"<Training {self.dir} epoch {self.epoch}/{self.config.epochs} "
                f"{len(self.train_idx):,}+{len(self.valid_idx):,} positions>")
