"""Load (or compile) the kernels a command uses, so that the first search runs at full speed.

The kernels come in groups, so that a command waits only for its own: `net`, the engine's
search with a net (the default evaluation) and the board kernels around it; `hand`, the same
search with the hand-written evaluation (`EvalFile ''`, a params file, the tuner's engines);
`tools`, what only tools use (qsearch, SEE, perft, the position queries, `wasp eval`'s net).
`wasp warmup` compiles every group, each in a process of its own (`compile_parallel`), into the
one cache. An engine process loads its group in the background (`wasp.background`).
"""

import contextlib
import os
import subprocess
import sys
import threading
import time

GROUPS = ("net", "hand", "tools")
ALIASES = {"engine": ("net",), "all": GROUPS}  # "engine": what the default engine needs
_DONE = set()  # the groups loaded in this process
_LOCK = threading.Lock()  # one load at a time; a second caller waits for the first
_ENGINE_PROCESS = False  # numba's lean cache loads stay on (`keep_lean`)
_local = threading.local()  # .only_cached: a cache miss raises NotCached (`only_cached`)
REPORT = "wasp-warmup"  # the first word of `--report` lines (read by wasp.background)

WARMUP_FEN = "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1"  # promotions both ways


class NotCached(Exception):
    """A kernel this thread needs is not in the cache (`only_cached`)."""


def groups(kernels: str) -> tuple:
    """The groups `kernels` names: a group, "engine" (net) or "all"; ValueError otherwise."""
    if kernels in GROUPS:
        return (kernels,)
    if kernels in ALIASES:
        return ALIASES[kernels]
    raise ValueError(f"kernels must be one of {', '.join((*GROUPS, *ALIASES))}, not {kernels!r}")


def ready(kernels: str) -> bool:
    """Are the kernels of `kernels` loaded in this process?"""
    return _DONE.issuperset(groups(kernels))


def warmup(verbose: bool = False, kernels: str = "all", progress=None, report=None) -> int:
    """Run each kernel of the named groups once, so that it is compiled or loaded from the
    cache. Returns 0.

    Thread-safe: while another thread loads, this waits for it; if that load failed, this
    one tries again (and raises what goes wrong). While kernels compile (not while they load
    from the cache), a progress bar shows on stderr (`wasp.kernelprogress`) when `progress`,
    which defaults to `verbose` or stderr being a terminal; `report(line)` gets a line for
    each kernel whose compile starts (`wasp warmup --report`).
    """
    wanted = groups(kernels)
    if _DONE.issuperset(wanted):
        return 0
    with _LOCK:
        t0 = time.perf_counter()
        if verbose:
            print(f"loading or compiling kernels ({', '.join(wanted)}; a few minutes the "
                  f"first time) ...", flush=True)
        if progress is None:
            progress = verbose or _stderr_is_terminal()
        with _lean_numba():
            from wasp.kernelprogress import kernel_progress, kernel_reports

            with kernel_progress(enabled=progress), kernel_reports(report):
                for group in wanted:
                    if group not in _DONE:
                        RUNS[group]()
                        _DONE.add(group)
    if verbose:
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


@contextlib.contextmanager
def only_cached():
    """In this block, this thread loads kernels from the cache but compiles none: a miss
    raises NotCached (an engine then compiles in another process: `wasp.background`)."""
    _local.only_cached = True
    try:
        yield
    finally:
        _local.only_cached = False


def compile_parallel(kernels: str = "all", jobs: int | None = None, verbose: bool = True,
                     more: dict | None = None, progress: dict | None = None) -> int:
    """Compile the groups of `kernels` (None: none) in `jobs` processes at once (default: one
    a core), each `wasp warmup --only GROUP`, into this process's cache (NUMBA_CACHE_DIR, set up by
    `wasp.kernelcache`, whose claims keep two processes from compiling the same kernel).
    `more`: name -> command of other processes that compile into the cache (a tool's
    kernels), run after the groups. `progress`: name -> compiles it makes on an empty cache,
    about: the processes report each compile (`--report`) and one bar on stderr counts them
    all (`wasp.kernelprogress.ChildProgress`; nothing shows when nothing compiles). Returns
    0, or 1 when a process failed (its output is shown)."""
    from wasp.kernelprogress import ChildProgress

    report = progress is not None and not os.environ.get("WASP_NO_PROGRESS")
    wanted = [(g, child_command(g, report=report)) for g in (groups(kernels) if kernels else ())]
    wanted += list((more or {}).items())
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(wanted)))
    t0 = time.perf_counter()
    if verbose:
        print(f"compiling kernels ({', '.join(name for name, _ in wanted)}) in {jobs} "
              f"processes; a few minutes the first time ...", flush=True)
    bar = ChildProgress(progress or {}) if report else None
    running, failed = [], 0
    while wanted or running:
        while wanted and len(running) < jobs:
            name, command = wanted.pop(0)
            running.append(_Child(name, command, bar))
        ended = next((c for c in running if c.proc.poll() is not None), None)
        if ended is None:
            time.sleep(0.2)
            if bar is not None:
                bar.tick()
            continue
        running.remove(ended)
        output = ended.output()
        if bar is not None:
            bar.ended(ended.name)
        if ended.proc.returncode != 0:
            failed = 1
            if bar is not None:
                bar.close()
            print(f"wasp warmup: the {ended.name} kernels failed to compile:\n{output}",
                  file=sys.stderr, flush=True)
        elif verbose:
            print(f"  {ended.name}: ready in {time.perf_counter() - ended.start:.1f} s",
                  flush=True)
    if bar is not None:
        bar.close()
    if verbose and not failed:
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s", flush=True)
    return failed


class _Child:
    """A compiling process of `compile_parallel`: its report lines go to `bar`, the rest is
    kept (shown when it fails)."""

    def __init__(self, name, command, bar):
        self.name, self.bar, self.lines = name, bar, []
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=child_env(), text=True)
        self.reader = threading.Thread(target=self._read, name=f"wasp-warmup-{name}",
                                       daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            compiling = parse_report(line)
            if compiling is None:
                self.lines.append(line)
            elif self.bar is not None:
                self.bar.started(self.name, *compiling)
        self.proc.stdout.close()

    def output(self) -> str:
        self.reader.join()
        return "".join(self.lines)


def parse_report(line: str):
    """(compiles ended, kernel) of a `--report` line (`wasp-warmup compiling 3 search._search`),
    or None for any other line."""
    words = line.split()
    if len(words) == 4 and words[0] == REPORT and words[1] == "compiling" and \
            words[2].isdigit():
        return int(words[2]), words[3]
    return None


def child_command(group: str, report: bool = False) -> list:
    """The command of a process that loads or compiles one group into the cache, and ends
    when this process ends (`follow_parent`)."""
    return [sys.executable, "-m", "wasp.cli", "warmup", "--only", group,
            "--parent", str(os.getpid()), *(["--report"] if report else [])]


PARENT_POLL = 1.0  # seconds between a child's checks that its parent is alive
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def follow_parent(pid: int) -> None:
    """End this process when process `pid`, its parent, ends (killed, or quit without
    waiting): a compile for an engine that is gone serves no one and would hold a core.

    On Linux the kernel sends SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG); on
    every system a thread checks every `PARENT_POLL` seconds that the parent is still this
    process's parent (a parent that died before the prctl, or where prctl is missing).
    """
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL),
                                                    0, 0, 0)
    if os.getppid() != pid:
        os._exit(1)

    def watch():
        while os.getppid() == pid:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="wasp-parent-watch", daemon=True).start()


def child_env() -> dict:
    """This process's environment (its NUMBA_CACHE_DIR among it), with this `wasp` first on
    PYTHONPATH, so that a child runs the same code."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, WASP_NO_PROGRESS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _board_kernels():
    """The kernels of the board an engine plays on (FEN, moves in and out, the game's end),
    run on one position with promotions both ways: numba loads a kernel once per type
    signature, whatever path runs. Returns the position."""
    from wasp.board import Position

    pos = Position(WARMUP_FEN)
    text = pos.legal_moves()[0]
    pos.push_uci(text)
    pos.fen()
    pos.game_over()
    pos.pop()
    return pos


def _search_kernels(net: bool) -> None:
    """The search's kernels with a net (`net`) or the hand-written evaluation."""
    from wasp.driver import Limits, Searcher
    from wasp.position import copy_state

    pos = _board_kernels()
    searcher = Searcher(1)
    if net:
        searcher.set_weights(_tiny_net())
    searcher.search(pos, Limits(depth=2), on_info=lambda line: None)
    searcher._tt_reply(copy_state(pos.S), pos.legal_move_codes()[0])


def _tool_kernels() -> None:
    """What only tools run: qsearch, SEE, perft, the position queries, `wasp eval`'s net."""
    from wasp.driver import Searcher
    from wasp.nnue.accumulator import nn_array
    from wasp.nnue.evaluate import evaluate_position
    from wasp.perft import perft
    from wasp.searchparams import default_search_params
    from wasp.see import see

    pos = _board_kernels()
    first = pos.legal_move_codes()[0]
    Searcher(1).qsearch(pos)
    see(pos.T, pos.S, first, default_search_params(), 0)
    perft(pos, 1)
    pos.push(first)
    pos.is_check()
    pos.is_insufficient_material()
    pos.is_repetition()
    pos.pop()
    pos.gives_check(pos.legal_moves()[0])
    evaluate_position(nn_array(_tiny_net()), pos)


def _tiny_net():
    """A net of one neuron: the kernels take every net as the same types."""
    import numpy as np

    from wasp.nnue.netfile import Net

    return Net(np.ones((768, 1), np.int16), np.zeros(1, np.int16), np.ones(2, np.int16), 0)


RUNS = {"net": lambda: _search_kernels(net=True), "hand": lambda: _search_kernels(net=False),
        "tools": _tool_kernels}


def keep_lean() -> None:
    """For engine processes: numba's lean cache loads (see `_lean_numba`) stay on after the
    first load, so that a kernel first used later in the game also loads in milliseconds."""
    global _ENGINE_PROCESS
    _ENGINE_PROCESS = True


def write_bytecode() -> None:
    """Byte-compile the engine's Python files (`wasp warmup` does).

    Python writes them on first import anyway, unless PYTHONDONTWRITEBYTECODE is set:
    then every start would compile the sources again (0.1-0.2 s).
    """
    import compileall

    package = os.path.dirname(os.path.abspath(__file__))
    with contextlib.suppress(OSError):
        compileall.compile_dir(package, maxlevels=0, quiet=2)


@contextlib.contextmanager
def _hidden(names):
    """Make `import NAME` fail for these modules (unless already imported)."""
    hidden = [n for n in names if n not in sys.modules]
    for name in hidden:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


@contextlib.contextmanager
def _lean_numba():
    """Import numba and load cached kernels without what only compiling needs.

    - numba's import checks scipy's version (scipy is not otherwise needed), reads
      yaml only for a `.numba_config.yaml` in the working directory and colorama only
      for NUMBA_COLOR_SCHEME: they are hidden while numba is imported (yaml when there
      is no such file, colorama when no colours are asked for);
    - before each load from its cache numba refreshes its registries (the typing and
      lowering tables of all its features: 0.3 s the first time, and the import of
      scipy.linalg for a BLAS probe) and scans every installed package for numba
      extensions. A cached kernel is machine code that needs neither: a hit is loaded
      as it is (numba's runtime, 0.05 s to set up, only for a kernel whose code calls
      it: our `_nrt=False` kernels do not), and only a miss (a compile follows)
      refreshes and scans as numba does.

    Outside this block numba behaves as usual (in an engine process the lean loads
    stay on: see `keep_lean`).
    """
    if "numba" not in sys.modules:
        hide = ["scipy"]
        if not os.path.isfile(".numba_config.yaml"):
            hide.append("yaml")
        if os.environ.get("NUMBA_COLOR_SCHEME", "no_color") == "no_color":
            hide.append("colorama")  # colours only numba's compile errors, when asked
        with _hidden(hide):
            import numba  # noqa: F401
    try:
        from numba.core import caching, entrypoints
        from numba.core.runtime import rtsys

        original = caching.Cache.load_overload
        original_rebuild = caching.CompileResultCacheImpl.rebuild
        caching.Cache._load_overload  # noqa: B018 - the API used below, or no shortcut
        caching.Cache._guard_against_spurious_io_errors  # noqa: B018
        scan_pending = entrypoints._already_initialized is False
    except (ImportError, AttributeError):  # another numba: load the usual way
        yield
        return
    if getattr(original, "_wasp_lean", False):  # on already (an engine process)
        yield
        return
    scanned = []

    def load_overload(self, sig, target_context):
        with self._guard_against_spurious_io_errors():
            cres = self._load_overload(sig, target_context)
        if cres is None:  # a compile follows: prepare exactly as numba does
            if getattr(_local, "only_cached", False):
                from wasp.kernelcache import kernel_of

                raise NotCached(kernel_of(self))
            if scan_pending and not scanned:
                scanned.append(True)
                entrypoints._already_initialized = False
                entrypoints.init_all()
            return original(self, sig, target_context)
        return cres

    def rebuild(self, target_context, payload):
        if _uses_runtime(payload):
            rtsys.initialize(target_context)
        return original_rebuild(self, target_context, payload)

    load_overload._wasp_lean = True
    caching.Cache.load_overload = load_overload
    caching.CompileResultCacheImpl.rebuild = rebuild
    if scan_pending:
        entrypoints._already_initialized = True  # numba scans before every first call
    try:
        yield
    finally:
        if not _ENGINE_PROCESS:  # an engine keeps them (see keep_lean)
            caching.Cache.load_overload = original
            caching.CompileResultCacheImpl.rebuild = original_rebuild
            if scan_pending and not scanned:
                # The scan was skipped, not done: a later compile still runs it.
                entrypoints._already_initialized = False


def _uses_runtime(payload) -> bool:
    """Does a cached kernel (numba's cache payload) call numba's runtime (NRT)?

    Its machine code then names NRT symbols (NRT_MemInfo_..., NRT_incref, _nrt_...); in
    doubt (an unknown layout), yes.
    """
    try:
        _name, kind, (object_code, bitcode) = payload[0]
        if kind != "object":
            return True
        return any(s in blob for blob in (object_code, bitcode) for s in (b"NRT_", b"_nrt"))
    except (TypeError, ValueError):
        return True
