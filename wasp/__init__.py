"""Wasp-Py: a Wasp 1.02-style chess engine written in numba.

Importing `wasp` stays light: numpy, numba and the kernels load on first use of
`wasp.Position` (or of a submodule).
"""

import hashlib
import os
import pathlib
import re
import shutil
import sys

__version__ = "0.1.0"

__all__ = ["Position", "IllegalMoveError", "STARTING_FEN", "__version__", "cache_dir"]

# A package beside `wasp/` that holds this file builds kernels on the engine's: they share its
# cache, so the cache key covers that package's files too (`_packages`).
KERNELS_MARKER = "wasp-kernels.txt"
_ROOT = pathlib.Path(__file__).resolve().parent.parent
_KEEP_CACHES = 3  # keyed cache directories kept under the base, the current one included
_CACHE_NAME = re.compile(r"numba-[0-9a-f]{16}")

# A kernel file: numba imported at module level, or a numba decorator.
_KERNEL = re.compile(
    r"^(?:from|import)[ \t]+numba\b|^[ \t]*@\s*(?:numba\.)?(?:njit|jit|generated_jit|vectorize|"
    r"guvectorize|cfunc|stencil|intrinsic|overload\w*|register_jitable)\b", re.M)
# A module-level (non-indented) import; `from x import (a, b)` may span lines.
_IMPORT = re.compile(r"^(?:import[ \t]+([^\n#;]+)|from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+"
                     r"(\([^)]*\)|[^\n#;]+))", re.M)


def _packages(root: pathlib.Path = _ROOT) -> list:
    """The top-level packages whose kernels share the cache: `wasp`, and the packages beside it
    that hold `KERNELS_MARKER` (the tools). Found on disk, not by import: the engine imports
    none of the tools, and every process, engine or tool, computes the same key."""
    found = []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name != "wasp" and entry.is_dir() and \
                        os.path.isfile(os.path.join(entry.path, KERNELS_MARKER)):
                    found.append(entry.name)
    except OSError:
        pass
    return ["wasp", *sorted(found)]


def _modules(root: pathlib.Path) -> dict:
    """Module name -> source file (relative posix path) of every module of the packages."""
    modules = {}
    for package in _packages(root):
        for path in (root / package).rglob("*.py"):
            rel = path.relative_to(root).as_posix()
            name = rel[:-3].replace("/", ".")
            modules[name[:-9] if name.endswith(".__init__") else name] = rel
    return modules


def _imported_modules(modules: dict, name: str, text: str) -> set:
    """The project modules that module `name` imports at module level."""
    package = name.split(".") if modules[name].endswith("__init__.py") else name.split(".")[:-1]
    found = set()
    for plain, source, names in _IMPORT.findall(text.replace("\\\n", " ")):
        if plain:  # import a.b as c, d
            found.update(part.split()[0] for part in plain.split(",") if part.strip())
            continue
        dots = len(source) - len(source.lstrip("."))
        if dots:  # relative: from . import x, from ..y import z
            up = package[:len(package) - dots + 1] if dots <= len(package) else []
            source = ".".join([*up, source[dots:]]).strip(".")
        # `from wasp import kpk` imports the submodule wasp.kpk, `from wasp.types import
        # KEYS` the module wasp.types (a parent package's __init__ is no edge)
        for item in re.sub(r"#[^\n]*", "", names).strip("()").split(","):
            if item.strip():
                sub = f"{source}.{item.split()[0]}"
                found.add(sub if sub in modules else source)
    return found & modules.keys()


def _kernel_files(root: pathlib.Path = _ROOT) -> list:
    """The files whose edits can change a compiled kernel, relative to `root`.

    Those that define numba code, and (transitively) every project module they import
    at module level: a kernel reads the globals of its module, which come from those
    imports. Imports inside functions cannot feed a kernel's globals and do not count.
    """
    modules = _modules(root)
    texts = {name: (root / rel).read_text(encoding="utf-8", errors="replace")
             for name, rel in modules.items()}
    todo = [name for name, text in texts.items() if _KERNEL.search(text)]
    seen = set(todo)
    while todo:
        name = todo.pop()
        for module in _imported_modules(modules, name, texts[name]) - seen:
            seen.add(module)
            todo.append(module)
    return sorted(modules[name] for name in seen)


def _source_key(root: pathlib.Path = _ROOT) -> str:
    """A digest of the kernel files (`_kernel_files`): the cache directory's name."""
    h = hashlib.sha1(__version__.encode())
    for name in _kernel_files(root):
        h.update(name.encode())
        h.update((root / name).read_bytes())
    return h.hexdigest()[:16]


def _cache_base() -> str:
    return os.environ.get("WASP_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "wasp-py")


def cache_dir() -> str:
    """numba's cache directory for this process.

    Numba notices edits to a kernel's own file but not to the callees and constants
    it takes from other files, so the cache lives in a directory keyed by the kernel
    files (`_kernel_files`): an edit to any of them means a fresh compile, never a
    stale kernel (a stale one can crash the process). Base: NUMBA_CACHE_DIR if set
    (the keyed folder goes inside it, or beside it when it is itself a keyed folder,
    as in an engine started by a process that keyed it), else WASP_CACHE_DIR, else
    ~/.cache/wasp-py.
    """
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    name = f"numba-{_source_key()}"
    if explicit:
        explicit = os.path.normpath(explicit)
        if _CACHE_NAME.fullmatch(os.path.basename(explicit)):
            return os.path.join(os.path.dirname(explicit), name)
        return os.path.join(explicit, name)
    return os.path.join(_cache_base(), name)


def _prune_caches(current: str, keep: int = _KEEP_CACHES) -> list:
    """Mark `current` used; remove all but the `keep` most recently used keyed caches.

    Only directories named numba-<16 hex> directly beside `current` are candidates.
    Errors are ignored: another process may be using or removing the same folder.
    Returns the directories removed.
    """
    base = os.path.dirname(current)
    try:
        os.makedirs(current, exist_ok=True)
        os.utime(current)
        entries = [e for e in os.scandir(base)
                   if _CACHE_NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    except OSError:
        return []
    others = [e.path for e in entries if e.name != os.path.basename(current)]
    removed = others[keep - 1:]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def _use_keyed_cache() -> None:
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    path = cache_dir()
    if not explicit:
        _prune_caches(path)
    os.environ["NUMBA_CACHE_DIR"] = path  # subprocesses (engines, workers) share it
    if "numba" in sys.modules:  # numba read its config already: tell it too
        from numba.core import config

        config.CACHE_DIR = path


_use_keyed_cache()


def __getattr__(name):
    if name in ("Position", "IllegalMoveError"):
        from wasp import board

        return getattr(board, name)
    if name == "STARTING_FEN":
        from wasp.fen import STARTING_FEN

        return STARTING_FEN
    raise AttributeError(f"module 'wasp' has no attribute {name!r}")
