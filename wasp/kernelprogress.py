"""A progress bar (tqdm, on stderr) while numba compiles the project's kernels.

numba reports each compile (a cache miss) as a "numba:compile" event with its dispatcher;
`kernel_progress()` listens for them and, from the first one on, shows a bar: kernels ready
out of those defined in the loaded project modules, the kernel being compiled and its time
so far, refreshed every second by a ticker thread even while one big kernel compiles. A
warm cache (every kernel loaded, nothing compiled) shows nothing and costs nothing: no
thread, no bar.
"""

import contextlib
import os
import shutil
import sys
import threading
import time

TICK = 1.0  # seconds between refreshes of the bar while a kernel compiles
IDLE = 3.0  # seconds without a compile after which the bar closes (reopens at the next)


def _is_ours(module: str) -> bool:
    """A module of the packages whose kernels are counted: those the process set up its kernel
    cache for (`wasp.kernelcache`), `wasp` at least."""
    from wasp import kernelcache

    return module.split(".", 1)[0] in {"wasp", *kernelcache.packages()}


def kernel_counts() -> tuple:
    """(ready, defined): the project's numba dispatchers in the loaded modules, and how
    many of them have a compiled or loaded overload."""
    from numba.core.dispatcher import Dispatcher

    seen = set()
    ready = 0
    for name, module in list(sys.modules.items()):
        if module is None or not _is_ours(name):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher) and id(value) not in seen \
                    and _is_ours(getattr(value.py_func, "__module__", "") or ""):
                seen.add(id(value))
                ready += bool(value.overloads)
    return ready, len(seen)


def kernel_name(dispatcher) -> str:
    """`module.function` of a dispatcher, without the package prefix."""
    func = dispatcher.py_func
    module = (getattr(func, "__module__", "") or "").split(".", 1)[-1]
    return f"{module}.{getattr(func, '__qualname__', func.__name__)}"


class _Progress:
    """The listener behind `kernel_progress`: the bar starts at the first compile."""

    def __init__(self, file, desc):
        self.file = file
        self.desc = desc
        self.lock = threading.Lock()
        self.bar = None
        self.stack = []  # (name, start): kernels being compiled, a caller's callees on top
        self.compiled = 0  # compilations (kernel, signature) since the bar opened
        self.t0 = None
        self.idle_since = None  # when the last compile ended (nothing compiling since)
        self.stop = threading.Event()
        self.ticker = None

    # numba.core.event.Listener's interface (registered as its virtual subclass)
    def notify(self, event):
        if event.is_start:
            self.on_start(event)
        else:
            self.on_end(event)

    def on_start(self, event):
        dispatcher = event.data["dispatcher"]
        if not _is_ours(getattr(dispatcher.py_func, "__module__", "") or ""):
            return  # numba's own helpers compile inside ours: the bar shows ours
        with self.lock:
            self.stack.append((kernel_name(dispatcher), time.perf_counter()))
            self.idle_since = None
            if self.bar is None:
                self._open()
        self.update()

    def on_end(self, event):
        dispatcher = event.data["dispatcher"]
        if not _is_ours(getattr(dispatcher.py_func, "__module__", "") or ""):
            return
        with self.lock:
            name = kernel_name(dispatcher)
            for i in range(len(self.stack) - 1, -1, -1):
                if self.stack[i][0] == name:
                    del self.stack[i]
                    break
            self.compiled += 1
            if not self.stack:
                self.idle_since = time.perf_counter()
        self.update()

    def _open(self):
        from tqdm import tqdm

        self.t0 = time.perf_counter()
        self.compiled = 0
        tty = hasattr(self.file, "isatty") and self.file.isatty()
        # A log (not a terminal) gets a line every few seconds, a terminal one a second.
        # The terminal's size (a pseudo-terminal of 0 x 0 counts as 80 x 24: tqdm would
        # hide its bar there)
        size = shutil.get_terminal_size() if tty else None
        try:
            ready, defined = kernel_counts()
        except Exception:  # noqa: BLE001 - a module changing under us: the ticks correct it
            ready, defined = 0, 1
        self.bar = tqdm(total=max(defined, ready, 1), initial=ready, desc=self.desc,
                        unit="kernel", file=self.file,
                        mininterval=TICK if tty else 5 * TICK,
                        ncols=size and size.columns, nrows=size and size.lines,
                        bar_format="{desc}: {n}/{total} {unit}s [{elapsed}{postfix}]")
        if self.ticker is None:
            self.ticker = threading.Thread(target=self._tick, name="wasp-kernel-progress",
                                           daemon=True)
            self.ticker.start()

    def _tick(self):
        while not self.stop.wait(TICK):
            with self.lock:
                idle = self.idle_since is not None and \
                    time.perf_counter() - self.idle_since > IDLE
            if idle:  # the compiles are over for now: the bar gives way to other output
                self._finish(if_idle=True)
            else:
                self.update(refresh=True)

    def update(self, refresh=False):
        with self.lock:
            bar = self.bar
            if bar is None:
                return
            try:
                ready, defined = kernel_counts()
            except Exception:  # noqa: BLE001 - a module changing under us: next tick
                return
            bar.total = max(defined, ready, 1)
            bar.n = ready
            if self.stack:
                name, start = self.stack[-1]
                bar.set_postfix_str(f"{name} {time.perf_counter() - start:.0f}s", refresh=False)
            if refresh:
                bar.refresh()
            else:
                bar.update(0)  # refreshes when mininterval has passed

    def close(self, done=True):
        self.stop.set()
        if self.ticker is not None:
            self.ticker.join()
        self._finish(done)

    def _finish(self, done=True, if_idle=False):
        """Close the bar (if open) with the count compiled and the time (with `if_idle`,
        unless a compile began meanwhile)."""
        with self.lock:
            if self.bar is None or if_idle and self.idle_since is None:
                return
            self.stack.clear()
            if done:
                self.bar.total = max(self.bar.n, 1)
                self.bar.set_postfix_str(
                    f"{self.compiled} compilations in {time.perf_counter() - self.t0:.0f}s",
                    refresh=False)
            self.bar.close()
            self.bar = None
            self.idle_since = None


@contextlib.contextmanager
def kernel_progress(file=None, desc="compiling kernels", enabled=True):
    """Show a progress bar on `file` (stderr) while numba compiles project kernels here.

    Nothing appears unless a kernel is compiled (a warm cache loads silently); the bar
    closes with the number compiled and the time. Import numba before entering (this
    imports numba.core.event). NUMBA-free hosts and `enabled=False` get a no-op.
    """
    if not enabled or os.environ.get("WASP_NO_PROGRESS"):
        yield None
        return
    try:
        from numba.core import event
    except ImportError:
        yield None
        return
    event.Listener.register(_Progress)  # a virtual subclass: numba checks isinstance
    progress = _Progress(file if file is not None else sys.stderr, desc)
    event.register("numba:compile", progress)
    ok = False
    try:
        yield progress
        ok = True
    finally:
        event.unregister("numba:compile", progress)
        progress.close(done=ok)


class ChildProgress:
    """One bar for the compiles of several child processes that report them (`wasp warmup
    --report` lines, read by `wasp.warmup.compile_parallel`): compiles ended out of the
    children's expected total (raised to the count when they compile more; which child
    compiles a kernel both need varies, the sum does not), the kernel compiling longest and
    its time, an ETA. Opened at the first compile: a warm
    cache shows nothing."""

    def __init__(self, expected: dict, file=None, desc="compiling kernels"):
        self.expected = dict(expected)  # child -> compiles it makes on an empty cache, about
        self.done = dict.fromkeys(self.expected, 0)  # child -> its compiles ended
        self.now = {}  # child -> (kernel compiling, since)
        self.file = file if file is not None else sys.stderr
        self.desc = desc
        self.lock = threading.Lock()
        self.bar = None
        self.t0 = None
        self.closed = False  # closed for good: later reports show nothing

    def total(self) -> int:
        return max(sum(self.expected.values()), self.compiled() + len(self.now))

    def compiled(self) -> int:
        return sum(self.done.values())

    def started(self, child, done: int, kernel: str) -> None:
        """`child` reports the start of a compile, `done` of its compiles having ended."""
        with self.lock:
            self.done[child] = max(self.done.get(child, 0), done)
            self.now[child] = (kernel, time.perf_counter())
            if self.bar is None and not self.closed:
                self._open()
            self._show()

    def ended(self, child) -> None:
        """`child` has ended: the compile it reported last has too."""
        with self.lock:
            if self.now.pop(child, None) is not None:
                self.done[child] += 1
            self._show()

    def tick(self) -> None:
        """Refresh the times shown (a big kernel compiles for many seconds), at most once a
        bar's interval."""
        with self.lock:
            self._show()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.bar is None:
                return
            self._show()
            self.bar.total = max(self.bar.n, 1)
            self.bar.set_postfix_str(f"{self.compiled()} compilations in "
                                     f"{time.perf_counter() - self.t0:.0f}s", refresh=False)
            self.bar.close()
            self.bar = None

    def _open(self):
        from tqdm import tqdm

        self.t0 = time.perf_counter()
        tty = hasattr(self.file, "isatty") and self.file.isatty()
        size = shutil.get_terminal_size() if tty else None  # see _Progress._open
        self.bar = tqdm(total=max(self.total(), 1), desc=self.desc, unit="kernel",
                        file=self.file, smoothing=0, mininterval=TICK if tty else 5 * TICK,
                        ncols=size and size.columns, nrows=size and size.lines,
                        bar_format="{desc}: {n}/{total} {unit}s [{elapsed}<{remaining}"
                                   "{postfix}]")

    def _show(self):
        bar = self.bar
        if bar is None:
            return
        bar.total = max(self.total(), 1)
        if self.now:  # the compile that has run longest
            kernel, since = min(self.now.values(), key=lambda ks: ks[1])
            bar.set_postfix_str(f"{kernel} {time.perf_counter() - since:.0f}s", refresh=False)
        bar.update(self.compiled() - bar.n)  # refreshes when the bar's interval has passed


class _Reports:
    """The listener behind `kernel_reports`."""

    def __init__(self, report):
        self.report = report
        self.compiled = 0  # compiles of project kernels ended so far
        self.lock = threading.Lock()

    def notify(self, event):
        dispatcher = event.data["dispatcher"]
        if not _is_ours(getattr(dispatcher.py_func, "__module__", "") or ""):
            return
        with self.lock:
            if event.is_start:
                self.report(f"compiling {self.compiled} {kernel_name(dispatcher)}")
            else:
                self.compiled += 1


@contextlib.contextmanager
def kernel_reports(report=None):
    """Call `report(line)` as each project kernel's compile starts, the line `compiling
    <compiles ended so far> <module.function>` (a child process that compiles for an engine
    tells it how far it is: `wasp.background`). None: nothing. Import numba before entering."""
    if report is None:
        yield None
        return
    from numba.core import event

    event.Listener.register(_Reports)
    listener = _Reports(report)
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)
