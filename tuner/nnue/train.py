"""A training run of the net in a run directory: split, epochs, schedule, checkpoints, export.

The directory holds `run.json` (the settings and the data), `checkpoint.npz` (the net, AdamW's
moments and where the run is, written after every epoch, every few minutes and on Ctrl-C),
`best.npz` (the net of the lowest validation loss), `history.csv` (a line an epoch) and
`nets/epoch-N.nnue` (each epoch's net in bullet's layout, to play against one another). A
resumed run continues bit for bit as if it had not stopped: each epoch's order of positions
comes from the seed and the epoch alone, and the kernels' sums do not depend on the threads.
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
from wasp.nnue import netfile
from wasp.nnue.arch import meta_path
from wasp.nnue.inputs import FEATURES

from . import data as D
from .model import AdamW, FloatNet, Kernels, evaluate, set_threads

RUN_FILE, CHECKPOINT, BEST, HISTORY = "run.json", "checkpoint.npz", "best.npz", "history.csv"
NETS = "nets"  # the quantised net at the end of every epoch: nets/epoch-N.nnue
SAVE_SECONDS = 300.0  # a checkpoint at least this often inside an epoch
BLOCKS = 100  # a split by blocks cuts the data into about this many pieces or more
MAX_BLOCK = 4096


@dataclass
class Config:
    """The settings of a run (kept in run.json)."""

    data: list
    output: str
    hidden: int = 128
    epochs: int = 10
    batch_size: int = 16384
    lr: float = 0.001
    lr_schedule: str = "step"  # "step" or "cosine"
    lr_gamma: float = 0.1  # step: the factor at each step
    lr_step: int = 0  # step: epochs between steps (0: 90 % of the epochs, as bullet's example)
    lr_final: float = 0.0  # cosine: the last rate (0: lr / 1000)
    wdl: float = 0.75
    mirror: bool = False  # each epoch, half the positions at random mirrored left to right
    valid: float = 0.05
    seed: int = 1
    cache: bool = True
    command: str = ""
    adamw: dict = field(default_factory=lambda: asdict(AdamW()))

    def check(self):
        """ValueError naming the first setting out of range."""
        rules = [("hidden", self.hidden >= 1, "at least 1"),
                 ("epochs", self.epochs >= 1, "at least 1"),
                 ("batch-size", self.batch_size >= 1, "at least 1"),
                 ("lr", self.lr > 0, "above 0"),
                 ("lr-schedule", self.lr_schedule in ("step", "cosine"), "step or cosine"),
                 ("lr-gamma", 0 < self.lr_gamma <= 1, "in (0, 1]"),
                 ("lr-step", self.lr_step >= 0, "0 or more"),
                 ("lr-final", self.lr_final >= 0, "0 or more"),
                 ("wdl", 0 <= self.wdl <= 1, "in [0, 1]"),
                 ("valid", 0 <= self.valid < 1, "in [0, 1)")]
        for name, ok, what in rules:
            if not ok:
                raise ValueError(f"-{name} must be {what}")

    def learning_rate(self, epoch, batch, batches):
        """The rate of batch `batch` of `batches` in epoch `epoch` (from 0)."""
        if self.lr_schedule == "cosine":
            final = self.lr_final or self.lr / 1000
            progress = (epoch + batch / batches) / self.epochs
            return final + (self.lr - final) * 0.5 * (1 + math.cos(math.pi * progress))
        step = self.lr_step or max(1, round(0.9 * self.epochs))
        return self.lr * self.lr_gamma ** (epoch // step)


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
            rows.append({k: (None if v == "" else int(v) if k in ("epoch", "positions") else
                             float(v)) for k, v in row.items()})
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


def epoch_order(train, seed, epoch, mirror=False):
    """The training positions in the order of epoch `epoch` (depends on nothing else); with
    `mirror`, half of them at random as ~index: mirrored left to right. Chess768 inputs do not
    see castling rights, so to the net a mirrored position is as good a sample as its original,
    and the data count nearly double."""
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
        self.opt = AdamW(**config.adamw)
        self.net = FloatNet.random(config.hidden, config.seed)
        self.moments = {k: (np.zeros_like(a), np.zeros_like(a))
                        for k, a in self.net.arrays().items()}
        self.best = None  # (FloatNet, epoch, valid loss)
        self.epoch = self.batch = self.step = 0
        self.loss_sum = 0.0  # of the current epoch so far
        self.seen = 0
        self.seconds = 0.0
        self.history = []
        self.resumed = []  # the commands that continued the run

    # ---- creation and checkpoints

    @classmethod
    def create(cls, directory, config: Config, dataset=None, threads=None, progress=False):
        """A new run in `directory` (which must not hold one)."""
        config.check()
        directory = Path(directory)
        if (directory / RUN_FILE).exists():
            raise FileExistsError(f"{directory} already holds a run: continue it with "
                                  f"-resume {directory}, or choose another -dir")
        if dataset is None:
            dataset = D.load(config.data, progress, config.cache)
        if len(dataset) == 0:
            raise D.DataError(f"no positions in {', '.join(map(str, config.data))}")
        run = cls(directory, config, dataset, threads)
        directory.mkdir(parents=True, exist_ok=True)
        info = asdict(config)
        info["positions"] = len(dataset)
        (directory / RUN_FILE).write_text(json.dumps(info, indent=1) + "\n")
        run.save()
        return run

    @classmethod
    def open(cls, directory, epochs=None, threads=None, progress=False, command=""):
        """The run in `directory`, at its last checkpoint (`epochs` may extend it; `command`,
        the one that continues it, goes into the net's metadata)."""
        directory = Path(directory)
        if not (directory / CHECKPOINT).exists():
            raise FileNotFoundError(f"{directory}: no run to resume (no {CHECKPOINT})")
        config, positions = read_config(directory)
        if epochs:
            config.epochs = epochs
            config.check()
        dataset = D.load(config.data, progress, config.cache)
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
            self.net = FloatNet(*(z[k] for k in ("l0w", "l0b", "l1w", "l1b")))
            self.moments = {k: (z[f"m_{k}"].copy(), z[f"v_{k}"].copy()) for k in
                            self.net.arrays()}
            state = json.loads(str(z["state"]))
        for key in ("epoch", "batch", "step", "loss_sum", "seen", "seconds", "history",
                    "resumed"):
            setattr(self, key, state[key])
        if (self.dir / BEST).exists():
            with np.load(self.dir / BEST) as z:
                net = FloatNet(*(z[k] for k in ("l0w", "l0b", "l1w", "l1b")))
                self.best = (net, int(z["epoch"]), float(z["valid"]))

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
        return self.epoch >= self.config.epochs

    def batches(self):
        """Batches an epoch (the last may be smaller; data smaller than a batch: one)."""
        return max(1, -(-len(self.train_idx) // self.config.batch_size))

    def valid_loss(self):
        if len(self.valid_idx) == 0:
            return None
        loss, _ = evaluate(self.net, self.dataset.boards, self.config.wdl, self.valid_idx)
        return loss

    def train(self, progress=True, stop_after=None) -> bool:
        """Train to the last epoch; True when done. Stops early (checkpointed, False) on
        Ctrl-C/SIGTERM or after `stop_after` more batches."""
        from tqdm import tqdm

        cfg = self.config
        boards = self.dataset.boards
        kernels = Kernels(self.net)
        nb = self.batches()
        done_batches = 0
        with Interrupt() as interrupt:
            while not self.done:
                order = epoch_order(self.train_idx, cfg.seed, self.epoch, cfg.mirror)
                start = time.perf_counter()
                saved = start
                bar = tqdm(total=len(order), initial=min(len(order), self.batch *
                           cfg.batch_size), unit="pos", unit_scale=True, leave=False,
                           desc=f"epoch {self.epoch + 1}/{cfg.epochs}", disable=not progress)
                with bar:
                    while self.batch < nb:
                        if interrupt.stop or (stop_after is not None and
                                              done_batches >= stop_after):
                            self.seconds += time.perf_counter() - start
                            self.save()
                            return False
                        lr = cfg.learning_rate(self.epoch, self.batch, nb)
                        idx = order[self.batch * cfg.batch_size:(self.batch + 1) *
                                    cfg.batch_size]
                        loss = kernels.run(boards, idx, cfg.wdl, True)
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
        valid = self.valid_loss()
        row = {"epoch": self.epoch + 1, "train_loss": round(self.loss_sum / max(1, self.seen), 8),
               "valid_loss": "" if valid is None else round(valid, 8), "lr": float(f"{lr:.6g}"),
               "positions": self.seen, "seconds": round(self.seconds, 2),
               "positions_per_s": round(self.seen / max(self.seconds, 1e-9))}
        self.history.append(row)
        (self.dir / NETS).mkdir(exist_ok=True)
        netfile.write(self.net.quantised(), self.dir / NETS / f"epoch-{self.epoch + 1}.nnue")
        if valid is not None and (self.best is None or valid < self.best[2]):
            self.best = (self.net.copy(), self.epoch + 1, valid)
            a = self.best[0].arrays()
            _save_npz(self.dir / BEST, epoch=np.array(self.epoch + 1), valid=np.array(valid), **a)
        if progress:
            best = "" if self.best is None else f"  (best valid {self.best[2]:.6f} at epoch " \
                                                f"{self.best[1]})"
            valid_text = "" if valid is None else f"  valid loss {valid:.6f}"
            print(f"epoch {row['epoch']}/{self.config.epochs}: train loss {row['train_loss']:.6f}"
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

    def export(self, path=None):
        """Write the final net in bullet's layout and its metadata beside it (NET.json,
        `wasp.nnue.arch.meta_path`)."""
        path = Path(path or self.config.output)
        net = self.final_net()
        path.parent.mkdir(parents=True, exist_ok=True)
        netfile.write(net.quantised(), path)
        cfg = self.config
        split_kind = ("none" if len(self.valid_idx) == 0 else
                      "by game" if self.dataset.games is not None else "contiguous blocks")
        meta = {
            "architecture": f"({FEATURES} -> {cfg.hidden})x2 -> 1, SCReLU, bullet Chess768 inputs",
            "format": f"bullet simple layout, QA {netfile.QA}, QB {netfile.QB}, "
                      f"scale {netfile.SCALE}",
            "hidden": cfg.hidden, "bytes": path.stat().st_size,
            "data": [{"path": p, "positions": n} for p, n in self.dataset.files],
            "positions": {"train": len(self.train_idx), "valid": len(self.valid_idx),
                          "split": split_kind},
            "epochs": len(self.history),
            "net_epoch": self.best[1] if self.best is not None else len(self.history),
            "losses": self.history,
            "settings": {k: v for k, v in asdict(cfg).items()
                         if k not in ("data", "output", "command")},
            "command": cfg.command,
            "resumed": self.resumed,
        }
        meta_path(path).write_text(json.dumps(meta, indent=1) + "\n")
        return path

    def __repr__(self):
        return (f"<Training {self.dir} epoch {self.epoch}/{self.config.epochs} "
                f"{len(self.train_idx):,}+{len(self.valid_idx):,} positions>")
