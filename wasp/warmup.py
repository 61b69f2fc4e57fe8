"""Load (or compile) every kernel the engine uses, so `readyok` is fast.

As an engine (`wasp`), `wasp.cli` calls `start_background()` as the process starts: numba
is imported and the protocols' kernels load while the GUI and the engine exchange
`uci`/`uciok`; the first command that needs a kernel waits in `warmup()` for that load.
"""

import contextlib
import os
import sys
import threading
import time

_DONE = set()  # the kernel sets loaded: "engine", "all"
_LOCK = threading.Lock()  # one load at a time; a second caller waits for the first
_BACKGROUND = None  # the thread of start_background()
_ENGINE_PROCESS = False  # set by start_background(): numba's lean cache loads stay on

WARMUP_FEN = "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1"  # promotions both ways


def warmup(verbose: bool = False, kernels: str = "all", progress=None) -> int:
    """Run each kernel once, so that it is compiled or loaded from the cache. Returns 0.

    kernels="engine": those the UCI and xboard engines call at once (search, TT, move
    generation, FEN, making moves); "all" also qsearch, SEE, perft and the position
    queries (`wasp warmup` fills the cache with these). Thread-safe: while another
    thread loads, this waits for it; if that load failed, this one tries again (and
    raises what goes wrong). While kernels compile (not while they load from the
    cache), a progress bar shows on stderr (`wasp.kernelprogress`) when `progress`,
    which defaults to `verbose` or stderr being a terminal.
    """
    if kernels not in ("engine", "all"):
        raise ValueError(f"kernels must be 'engine' or 'all', not {kernels!r}")
    if kernels in _DONE:
        return 0
    with _LOCK:
        if kernels in _DONE:
            return 0
        t0 = time.perf_counter()
        if verbose:
            print("loading or compiling kernels (a few minutes the first time) ...", flush=True)
        if progress is None:
            progress = verbose or _stderr_is_terminal()
        with _lean_numba():
            from wasp.kernelprogress import kernel_progress

            with kernel_progress(enabled=progress):
                _run_kernels(everything=kernels == "all")
        _DONE.update(("engine", "all") if kernels == "all" else ("engine",))
    if verbose:
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _run_kernels(everything: bool) -> None:
    from wasp.board import Position
    from wasp.driver import Limits, Searcher
    from wasp.position import copy_state

    # Numba loads a kernel once per type signature, whatever path runs: one position
    # (with promotions both ways, so every branch types) loads them all.
    searcher = Searcher(1)
    pos = Position(WARMUP_FEN)
    searcher.search(pos, Limits(depth=2), on_info=lambda line: None)
    first = pos.legal_move_codes()[0]
    searcher._tt_reply(copy_state(pos.S), first)
    pos.copy().push(first)
    if not everything:
        return
    from wasp.perft import perft
    from wasp.searchparams import default_search_params
    from wasp.see import see

    searcher.qsearch(pos)
    see(pos.T, pos.S, first, default_search_params(), 0)
    perft(pos, 1)
    pos.push(first)
    pos.is_check()
    pos.is_insufficient_material()
    pos.is_repetition()
    pos.pop()
    pos.gives_check(pos.legal_moves()[0])
    _run_net_kernels(pos)


def _run_net_kernels(pos) -> None:
    """`wasp eval --eval-file NET`'s kernels (the search's own take a net as they are)."""
    import numpy as np

    from wasp.nnue.accumulator import nn_array
    from wasp.nnue.evaluate import evaluate_position
    from wasp.nnue.netfile import Net

    tiny = Net(np.ones((768, 1), np.int16), np.zeros(1, np.int16), np.ones(2, np.int16), 0)
    evaluate_position(nn_array(tiny), pos)


def start_background() -> None:
    """Begin `warmup(kernels="engine")` in a daemon thread (once a process); returns at once.

    For engine processes: numba's lean cache loads (see `_lean_numba`) then stay on, so
    that a kernel first used later in the game also loads in milliseconds.
    """
    global _BACKGROUND, _ENGINE_PROCESS
    if _BACKGROUND is not None:
        return
    _ENGINE_PROCESS = True
    _BACKGROUND = threading.Thread(target=_background, name="wasp-warmup", daemon=True)
    _BACKGROUND.start()


def _background() -> None:
    try:
        warmup(kernels="engine")
    except BaseException:  # noqa: BLE001 - the next warmup() call retries and reports it
        pass


def loading() -> bool:
    """Is the background load still running?"""
    return _BACKGROUND is not None and _BACKGROUND.is_alive()


def exit_now_if_loading(code: int) -> None:
    """End the process at once if the background load still runs.

    A GUI may send `quit` before the kernels are loaded (or during a cold compile of
    minutes): the interpreter's normal shutdown would wait for the compile or tear numba
    down under it, so the process ends here, with its output flushed.
    """
    if not loading():
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


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
    stay on: see `start_background`).
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
        if not _ENGINE_PROCESS:  # an engine keeps them (see start_background)
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
