"""Positions for the property tests (random legal play from the sampled openings), and the
clock referee's allowance for CPU the host withheld (steal, other busy processes), and an
output stream to run a protocol engine on."""

import os
import random
import threading
import time

import chess

from tests.conftest import DATA


def opening_fens():
    with open(DATA / "openings-sample.epd", encoding="utf-8") as f:
        return [" ".join(line.split()[:4]) for line in f if line.strip()]


def random_positions(count, seed=1, max_plies=60):
    """`count` python-chess boards reached by random legal play from the sample openings.

    The walks run through the middlegame into endings, so en passant, castling,
    promotions, checks, mates and stalemates all occur.
    """
    rng = random.Random(seed)
    fens = opening_fens()
    boards = []
    while len(boards) < count:
        board = chess.Board(rng.choice(fens))
        for _ in range(rng.randint(0, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # Prefer captures and promotions now and then so endings are reached.
            noisy = [m for m in moves if board.is_capture(m) or m.promotion]
            pool = noisy if noisy and rng.random() < 0.4 else moves
            board.push(rng.choice(pool))
        boards.append(board)
    return boards


def stolen_seconds() -> float:
    """Seconds the hypervisor has taken from an average CPU of this machine since boot
    (/proc/stat's steal; 0 where there is none). A referee that keeps an engine's clock does
    not charge what was stolen during the move: on a virtual machine the host can stop the
    guest for a second at a time, and no engine can answer while its machine does not run."""
    from testing.tournament import host_steal

    reading = host_steal()
    if reading is None:
        return 0.0
    return reading[0] / (os.cpu_count() or 1) / os.sysconf("SC_CLK_TCK")


def pressure_seconds() -> float:
    """Seconds during which some runnable task of this machine waited for a CPU (the kernel's
    pressure-stall count, /proc/pressure/cpu's `some` total; 0 where there is none). Other
    processes busy on every core show here: an engine's thread that wants to run waits."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            for line in f:
                if line.startswith("some "):
                    return int(line.rsplit("total=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def withheld_seconds() -> float:
    """Seconds the machine withheld the CPU from work that was ready to run: the hypervisor's
    steal (`stolen_seconds`) and the time runnable tasks queued for a core (`pressure_seconds`).
    Cumulative: take differences."""
    return stolen_seconds() + pressure_seconds()


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid`, all its threads (None when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def charged_seconds(wall: float, cpu: float | None, withheld: float, stolen: float) -> float:
    """The referee's charge for a step of `wall` seconds: the wall time less what the machine
    `withheld` from it, but never less than the `cpu` seconds the engine used; when its CPU
    time cannot be read (`cpu` None), the wall time less the hypervisor's steal (`stolen`)."""
    if cpu is None:
        return wall - stolen
    return max(cpu, wall - withheld)


class Charge:
    """A referee's stopwatch for one step (a move, a reply) on a busy or virtual machine.

    `seconds` is the step's wall time less what the machine withheld meanwhile
    (`withheld_seconds`), but never less than the CPU time that the watched processes
    (`pids`, or this process with `own=True`) used in it: an engine may not be charged for
    seconds it could not run, and still loses what it spent working. On an idle machine
    this is the wall time. Where a process's CPU time cannot be read, the wall time less the
    hypervisor's steal (the old referee). After the step: `wall`, `cpu` (None when
    unreadable) and `withheld` seconds."""

    def __init__(self, pids=(), own=False):
        self.pids = [p for p in pids if p]
        self.own = own

    def _cpu(self):
        total = time.process_time() if self.own else 0.0
        for pid in self.pids:
            cpu = process_cpu_seconds(pid)
            if cpu is None:
                return None
            total += cpu
        return total

    def __enter__(self):
        # the readings first and the clock last (and the other way round in `stop`), so the
        # referee's own work (the first reading imports a module) is not the step's wall time
        self.withheld0, self.stolen0 = withheld_seconds(), stolen_seconds()
        self.cpu0 = self._cpu()
        self.wall = None
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self) -> float:
        """End the step (once); returns `seconds`."""
        if self.wall is None:
            self.wall = time.monotonic() - self.t0
            cpu = self._cpu()
            self.withheld = withheld_seconds() - self.withheld0
            if cpu is None or self.cpu0 is None or not (self.pids or self.own):
                self.cpu = None
            else:
                self.cpu = cpu - self.cpu0
            self.charged = charged_seconds(self.wall, self.cpu, self.withheld,
                                           stolen_seconds() - self.stolen0)
        return self.charged

    @property
    def seconds(self) -> float:
        return self.stop()


class Output:
    """An output stream for a protocol engine under test: keeps whole lines (under a lock: the
    engine writes from its threads); `seen` is set when a written line starts with `mark`."""

    def __init__(self, mark=None):
        self.lines = []
        self.lock = threading.Lock()
        self.mark = mark
        self.seen = threading.Event()

    def write(self, text):
        with self.lock:
            self.lines.extend(text.splitlines())
        if self.mark is not None and text.startswith(self.mark):
            self.seen.set()

    def flush(self):
        pass


def compiling_kernels(monkeypatch):
    """The engine's kernels compiling in the background (a cold cache), as `wasp.background`
    tells the engine, until the returned object's `done()`: then they are ready (loaded here
    from the run's cache)."""
    from wasp import background

    state = {"ready": False}
    monkeypatch.setattr(background, "request", lambda group: None)
    monkeypatch.setattr(background, "wait_loaded", lambda group: state["ready"])
    monkeypatch.setattr(background, "wait_ready", lambda group: state["ready"] or finish())
    news = ("kernels compiling (net search: 3 of about 55 compiled, now search._search, "
            "5 s so far): the fallback search plays meanwhile")
    monkeypatch.setattr(background, "status", lambda group: None if state["ready"] else news)

    def finish():
        from wasp.warmup import warmup

        warmup(kernels="net")  # as the background thread loads them
        state["ready"] = True
        return True

    class Compiling:
        done = staticmethod(finish)

    return Compiling
