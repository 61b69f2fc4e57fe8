"""An engine's kernels made ready behind its back, so that a GUI never waits for a compile.

`request(group)` (a `wasp.warmup` group: `net` for the default evaluation, `hand` for the
hand-written one) queues the group for a thread that loads its kernels from numba's cache (half
a second when warm). On a miss (a cold cache, a new version) nothing is compiled in the
engine's process: a child process (`wasp warmup --only GROUP --report`) compiles into the
shared cache, while the engine answers at once and plays with the fallback search
(`wasp.fallback`); then the thread loads what the child saved. Engines that start cold
together compile each kernel once (`wasp.kernelcache` claims). The child ends with its engine
(`quit`, the end of input, a signal: `stop_child` and `wasp.warmup.follow_parent`); the
kernels it saved so far stay in the cache.

`status(group)` says what is compiling and how far; the same news goes to stderr.
"""

import atexit
import contextlib
import os
import subprocess
import sys
import threading
import time

SAY_EVERY = 2.0  # seconds between progress lines on stderr
# Compiles a group's child makes on an empty cache, about (one a kernel and signature: the
# index files of an empty cache after `wasp bench` with either evaluation held 57 kernels, 60
# signatures): the denominator of "how far"; a count beyond it shows as the count itself.
EXPECTED_COMPILES = {"net": 55, "hand": 52}

_cv = threading.Condition()
_state = {}  # group -> "queued", "loading", "compiling", "ready" or "failed"
_queue = []  # groups waiting for the thread, in the order asked
_progress = {}  # group -> [compiles ended, kernel compiling now, since (monotonic)]
_guessed = set()  # groups asked for with `guess` only
_thread = None
_child = None  # the compiling child process, while one runs
_said = 0.0  # when the last progress line went to stderr


def request(group: str, guess: bool = False) -> None:
    """Make `group`'s kernels ready in the background (once a process); returns at once.

    With `guess` (the process starts, its evaluation not yet known) the group is loaded if it
    is cached, but not compiled: it waits "cold" until a request without `guess` asks for it.
    So an engine told to use the other evaluation compiles only that one."""
    global _thread
    from wasp import warmup

    warmup.groups(group)  # ValueError for a name that is no group
    with _cv:
        if group in _guessed and not guess:
            _guessed.discard(group)
            if _state.get(group) == "cold":
                del _state[group]
        if group in _state:
            return
        if guess:
            _guessed.add(group)
        _state[group] = "queued"
        _queue.append(group)
        if _thread is None:
            warmup.keep_lean()
            _thread = threading.Thread(target=_work, name="wasp-kernels", daemon=True)
            _thread.start()


def state(group: str) -> str | None:
    """"queued", "loading", "compiling", "ready", "failed", "cold" (not cached, asked for
    with `guess` only), or None when not requested."""
    return _state.get(group)


def ready(group: str) -> bool:
    return _state.get(group) == "ready"


def wait_loaded(group: str) -> bool:
    """Wait while `group` loads from the cache (a second or so; queued behind another
    group's load too), never while it compiles or waits behind a compile; True when its
    kernels are ready. So an engine searches with the fallback only while kernels compile:
    with a warm cache its games are those of the kernel search, move for move."""
    def loading():
        now = _state.get(group)
        return now == "loading" or now == "queued" and "compiling" not in _state.values()

    with _cv:
        _cv.wait_for(lambda: not loading())
        return _state.get(group) == "ready"


def wait_ready(group: str) -> bool:
    """Wait until `group` is ready, through its compile if need be (a search with no clock
    loses nothing by waiting, and its move is then the kernel search's); False when it
    failed."""
    with _cv:
        _cv.wait_for(lambda: _state.get(group) in ("ready", "failed", "cold", None))
        return _state.get(group) == "ready"


def busy() -> bool:
    """Is the thread loading, or a child compiling?"""
    return _thread is not None and _thread.is_alive()


def status(group: str) -> str | None:
    """What the engine says while `group` is not ready (None once it is)."""
    now = _state.get(group)
    if now == "ready" or now is None:
        return None
    if now == "failed":
        return "the kernels failed to load: the fallback search plays (see stderr)"
    if now != "compiling":
        return f"kernels {now}: the fallback search plays meanwhile"
    done, kernel, since = _progress.get(group, (0, None, time.monotonic()))
    expected = EXPECTED_COMPILES.get(group, 0)
    far = f"{done} of about {expected}" if done < expected else f"{done}"
    what = f", now {kernel}" if kernel else ""
    return (f"kernels compiling ({group} search: {far} compiled{what}, "
            f"{time.monotonic() - since:.0f} s so far): the fallback search plays meanwhile")


def _set(group: str, value: str) -> None:
    with _cv:
        _state[group] = value
        _cv.notify_all()


def _say(text: str) -> None:
    with contextlib.suppress(Exception):
        print(f"wasp: {text}", file=sys.stderr, flush=True)


def _work() -> None:
    global _thread
    while True:
        with _cv:
            if not _queue:
                _thread = None
                return
            group = _queue.pop(0)
        _make_ready(group)


def _make_ready(group: str) -> None:
    from wasp import warmup

    _set(group, "loading")
    try:
        with warmup.only_cached():
            warmup.warmup(kernels=group, progress=False)
    except Exception:  # noqa: BLE001 - a kernel not cached (NotCached, or numba's wrap of it)
        with _cv:
            if group in _guessed:  # compiled only when the engine asks for it
                _state[group] = "cold"
                _cv.notify_all()
                return
        _set(group, "compiling")
        t0 = time.monotonic()
        _say(f"compiling the {group} search's kernels in the background (a minute or two "
             f"the first time); the fallback search plays meanwhile")
        ok = _compile_in_child(group)
        _set(group, "loading")
        try:
            warmup.warmup(kernels=group, progress=False)  # what the child saved (or a compile)
        except Exception as exc:  # noqa: BLE001 - reported; the fallback search plays on
            _set(group, "failed")
            _say(f"the {group} kernels failed to load: {type(exc).__name__}: {exc}")
            return
        _say(f"the {group} search's kernels are ready after {time.monotonic() - t0:.0f} s"
             f"{'' if ok else ' (compiled here: the child failed)'}: full speed from the "
             f"next search")
    _set(group, "ready")


def _compile_in_child(group: str) -> bool:
    """Run `wasp warmup --only GROUP --report`, following its reports; True when it
    succeeded."""
    global _child, _said
    from wasp import warmup

    _progress[group] = [0, None, time.monotonic()]
    tail = []
    try:
        proc = subprocess.Popen(warmup.child_command(group, report=True),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=warmup.child_env(), text=True)
    except OSError as exc:
        _say(f"cannot start the compile: {exc}")
        return False
    _child = proc
    atexit.unregister(stop_child)  # once, however many children
    atexit.register(stop_child)
    for line in proc.stdout:
        compiling = warmup.parse_report(line)
        if compiling is not None:
            _progress[group][:2] = list(compiling)
            if time.monotonic() - _said >= SAY_EVERY:
                _said = time.monotonic()
                _say(status(group))
        else:
            tail = [*tail[-19:], line.rstrip()]
    proc.wait()
    _child = None
    if proc.returncode != 0:
        _say(f"the compile of the {group} kernels failed (exit {proc.returncode}):")
        for line in tail:
            _say("  " + line)
    return proc.returncode == 0


def stop_child() -> None:
    """End the compiling child, if one runs (the engine quits: its compile serves no one)."""
    proc = _child
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def exit_now_if_busy(code: int) -> None:
    """End the process at once if the kernels still load (or a child compiles), the child
    with it.

    A GUI may send `quit` before the kernels are loaded: the interpreter's normal shutdown
    would wait for the load or tear numba down under it, so the process ends here, with its
    output flushed.
    """
    if not busy():
        return
    stop_child()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
