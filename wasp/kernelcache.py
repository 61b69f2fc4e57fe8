"""The numba kernel cache: `setup(packages)`, called once where a process starts, points numba at
a directory keyed to the kernel files of `packages`, which the process's children inherit.

Numba notices edits to a kernel's own file but not to the callees and constants it takes from
other files, so a stale kernel (which can crash the process) is avoided by keying the directory
to every file a kernel can depend on (`kernel_files`): an edit to any of them means a fresh
compile. Each keyed directory holds the list of the files it was keyed to and their digests
(`FILES`); a process uses any kept directory whose list covers its own kernel files, so a tool
(keyed to `wasp` and `tuner`) and the engine it starts (keyed to `wasp`) compile once, in one
directory.

Processes that share a cache compile each kernel once: `setup` makes numba claim a kernel's
signature (a lock file beside the kernel's cache index) before it compiles it on a cache miss;
another process that misses the same one meanwhile waits for the claim, then loads what the
first one saved (`install_claims`). Claims are per signature, so that the search with a net and
with the hand-written evaluation compile side by side.
"""

import contextlib
import hashlib
import importlib.abc
import importlib.util
import os
import pathlib
import re
import shutil
import sys
import time

KEEP = 3  # keyed directories kept under the base, the one in use included
FILES = "kernel-files.sha1"  # in each keyed directory: `<sha1>  <package/path.py>` a line
_NAME = re.compile(r"numba-[0-9a-f]{16}")
_packages: tuple = ()  # those of this process's `setup`

# A kernel file: numba imported at module level, or a numba decorator.
_KERNEL = re.compile(
    r"^(?:from|import)[ \t]+numba\b|^[ \t]*@\s*(?:numba\.)?(?:njit|jit|generated_jit|vectorize|"
    r"guvectorize|cfunc|stencil|intrinsic|overload\w*|register_jitable)\b", re.M)
# A module-level (non-indented) import; `from x import (a, b)` may span lines.
_IMPORT = re.compile(r"^(?:import[ \t]+([^\n#;]+)|from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+"
                     r"(\([^)]*\)|[^\n#;]+))", re.M)


def setup(packages=("wasp",)) -> str:
    """Point numba (and this process's children) at the keyed cache of `packages`' kernels.

    The directory: the one NUMBA_CACHE_DIR names when it is a keyed directory whose file list
    covers these kernel files (a parent set it up); else, under the base (NUMBA_CACHE_DIR if
    set, else WASP_CACHE_DIR, else ~/.cache/wasp-py), the kept keyed directory that covers
    them (the one covering the most files, then the most recently used), or a new one. Under
    a base that NUMBA_CACHE_DIR does not name, all but the `KEEP` most recently used keyed
    directories are removed. Sets NUMBA_CACHE_DIR (children inherit it) and numba's config
    when numba is imported; returns the directory.
    """
    global _packages
    files = file_digests(packages)
    inherited = os.environ.get("NUMBA_CACHE_DIR")
    path = None
    if inherited and _NAME.fullmatch(os.path.basename(os.path.normpath(inherited))):
        inherited = os.path.normpath(inherited)
        if covers(inherited, files):
            path = inherited
        base = os.path.dirname(inherited)
    else:
        base = inherited or os.environ.get("WASP_CACHE_DIR") or os.path.join(
            os.path.expanduser("~"), ".cache", "wasp-py")
    if path is None:
        path = _covering(base, files) or _create(base, files)
        if inherited:  # a base of the user's or the parent's: nothing in it is removed
            _mark_used(path)
        else:
            prune(path)
    os.environ["NUMBA_CACHE_DIR"] = path
    if "numba" in sys.modules:  # numba read its configuration already: tell it too
        from numba.core import config

        config.CACHE_DIR = path
    _packages = tuple(packages)
    install_claims()
    return path


def packages() -> tuple:
    """The packages this process's cache was set up for (`setup`), or () before it is."""
    return _packages


def locate(packages) -> dict:
    """Package name -> its directory, for the names in `packages` (found as `import` would
    find them; a mapping of names to directories is returned as it is)."""
    if isinstance(packages, dict):
        return {name: pathlib.Path(folder) for name, folder in packages.items()}
    roots = {}
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"kernel cache: no package {name!r}")
        roots[name] = pathlib.Path(list(spec.submodule_search_locations)[0])
    return roots


def _modules(roots: dict) -> dict:
    """Module name -> (source file, `package/path.py`) of every module of the packages."""
    modules = {}
    for package, folder in roots.items():
        for path in folder.rglob("*.py"):
            rel = f"{package}/{path.relative_to(folder).as_posix()}"
            name = rel[:-3].replace("/", ".")
            modules[name[:-9] if name.endswith(".__init__") else name] = (path, rel)
    return modules


def _imported_modules(modules: dict, name: str, text: str) -> set:
    """The modules of the packages that module `name` imports at module level."""
    is_package = modules[name][1].endswith("__init__.py")
    package = name.split(".") if is_package else name.split(".")[:-1]
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


def _kernel_modules(roots: dict) -> dict:
    """`package/path.py` -> source file, of the files whose edits can change a compiled kernel."""
    modules = _modules(roots)
    texts = {name: path.read_text(encoding="utf-8", errors="replace")
             for name, (path, _) in modules.items()}
    todo = [name for name, text in texts.items() if _KERNEL.search(text)]
    seen = set(todo)
    while todo:
        name = todo.pop()
        for module in _imported_modules(modules, name, texts[name]) - seen:
            seen.add(module)
            todo.append(module)
    return dict(sorted((modules[name][1], modules[name][0]) for name in seen))


def kernel_files(packages=("wasp",)) -> list:
    """The files of `packages` whose edits can change a compiled kernel, as `package/path.py`.

    Those that define numba code, and (transitively) every module of the packages they import
    at module level: a kernel reads the globals of its module, which come from those imports.
    Imports inside functions cannot feed a kernel's globals and do not count.
    """
    return list(_kernel_modules(locate(packages)))


def file_digests(packages=("wasp",)) -> dict:
    """`package/path.py` -> sha1 of its bytes, for the kernel files of `packages`."""
    return {rel: hashlib.sha1(path.read_bytes()).hexdigest()
            for rel, path in _kernel_modules(locate(packages)).items()}


def _listing(files: dict) -> str:
    return "".join(f"{digest}  {rel}\n" for rel, digest in sorted(files.items()))


def key(files: dict) -> str:
    """The keyed directory's name for the kernel files' digests (`file_digests`)."""
    from wasp import __version__

    return "numba-" + hashlib.sha1(f"{__version__}\n{_listing(files)}".encode()).hexdigest()[:16]


def _read_listing(path: str) -> dict:
    files = {}
    try:
        with open(os.path.join(path, FILES), encoding="utf-8") as f:
            for line in f:
                digest, _, rel = line.rstrip("\n").partition("  ")
                files[rel] = digest
    except (OSError, UnicodeDecodeError):
        return {}
    return files


def covers(path: str, files: dict) -> bool:
    """Whether the keyed directory `path` was keyed to these files with these digests (and
    maybe more)."""
    return _covered(_read_listing(path), files)


def _covered(listed: dict, files: dict) -> bool:
    return bool(listed) and all(listed.get(rel) == digest for rel, digest in files.items())


def _keyed(base: str) -> list:
    """The keyed directories under `base`, most recently used first."""
    try:
        entries = [e for e in os.scandir(base)
                   if _NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    except OSError:
        return []
    return [e.path for e in entries]


def _covering(base: str, files: dict):
    """The kept directory under `base` that covers `files`: the one listing the most files
    (it serves the most kinds of process), then the most recently used; or None."""
    found = []
    for i, path in enumerate(_keyed(base)):
        listed = _read_listing(path)
        if _covered(listed, files):
            found.append((len(listed), -i, path))
    return max(found)[2] if found else None


def _create(base: str, files: dict) -> str:
    """The keyed directory of `files` under `base`, with its file list (errors are ignored:
    numba then caches nothing, or falls back to its own default)."""
    path = os.path.join(base, key(files))
    try:
        os.makedirs(path, exist_ok=True)
        if not covers(path, files):
            tmp = os.path.join(path, f"{FILES}.{os.getpid()}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(_listing(files))
            os.replace(tmp, os.path.join(path, FILES))
    except OSError:
        pass
    return path


def _mark_used(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        os.utime(path)
    except OSError:
        return False
    return True


def prune(current: str, keep: int = KEEP) -> list:
    """Mark `current` used; remove all but the `keep` most recently used keyed directories.

    Only directories named numba-<16 hex> directly beside `current` are candidates. Errors
    are ignored: another process may be using or removing the same folder. Returns the
    directories removed.
    """
    if not _mark_used(current):
        return []
    others = [p for p in _keyed(os.path.dirname(current))
              if os.path.basename(p) != os.path.basename(current)]
    removed = others[keep - 1:]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


# -- claims: a kernel compiled by one process at a time ----------------------------------------

CLAIM_WAIT = 900.0  # seconds a process waits for another's compile before it compiles too
CLAIM_SUFFIX = ".claim"  # the lock file beside a kernel's cache index (numba's .nbi)
_claims = {}  # lock path -> file descriptor, the claims this process holds
claim_listeners = []  # called as (event, kernel): "wait" when another process compiles the
# kernel this one needs, "done" when that wait ends


def install_claims() -> None:
    """Make numba claim each kernel before compiling it (on a cache miss), once a process.

    The claim is an exclusive `flock` of `<index>-<signature digest>.claim` in the kernel's
    cache directory, held until numba has saved the kernel. A process that misses a kernel
    another holds waits (at most `CLAIM_WAIT`), then loads it from the cache; a crashed
    holder's lock ends with its process. Within a process a claim is re-entrant (a recursive
    kernel). Numba is patched when it is imported (at once if it is already). Without `fcntl`
    (Windows) nothing changes.
    """
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return
    if "numba" in sys.modules:
        _patch_numba()
    elif not any(isinstance(f, _AfterNumba) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumba())


class _AfterNumba(importlib.abc.MetaPathFinder):
    """Patches numba (`_patch_numba`) right after `import numba` has run, so that `setup`
    imports nothing (a tool's --help stays fast)."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch_numba()

        spec.loader.exec_module = exec_module
        return spec


def _patch_numba() -> None:
    try:
        from numba.core import caching
        from numba.core.dispatcher import Dispatcher
    except ImportError:
        return
    load = caching.Cache.load_overload
    if getattr(load, "_wasp_claims", False):
        return
    compile_ = Dispatcher.compile

    def load_overload(self, sig, target_context):
        cres = load(self, sig, target_context)
        if cres is None and _claim(self, sig):
            try:  # the claim's last holder may have saved it meanwhile
                cres = self._load_overload(sig, target_context)
            except Exception:  # noqa: BLE001 - as numba: a bad entry means a compile
                cres = None
            if cres is not None:
                _release(_claim_path(self, sig))
        return cres

    def compile(self, sig):
        held = set(_claims)
        try:
            return compile_(self, sig)
        finally:  # compiled and saved (or failed): the claims taken for it end
            for path in set(_claims) - held:
                _release(path)

    load_overload._wasp_claims = True
    caching.Cache.load_overload = load_overload
    Dispatcher.compile = compile


def _claim_path(cache, sig) -> str:
    index = cache._cache_file._index_path
    digest = hashlib.sha1(str(sig).encode()).hexdigest()[:12]
    return f"{index[:-4] if index.endswith('.nbi') else index}-{digest}{CLAIM_SUFFIX}"


def kernel_of(cache) -> str:
    """`module.function` of a numba cache's kernel."""
    func = getattr(cache, "_py_func", None)
    if func is None:
        return repr(cache)
    return f"{func.__module__}.{getattr(func, '__qualname__', func.__name__)}"


def _claim(cache, sig) -> bool:
    """Take the claim of `cache`'s kernel for `sig`, waiting while another process holds it;
    True when this call took it (False: held here already, or no claim could be made)."""
    import fcntl

    try:
        path = _claim_path(cache, sig)
        if path in _claims:
            return False
        cache._impl.locator.ensure_cache_path()
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except (AttributeError, OSError):
        return False
    waited = False
    deadline = time.monotonic() + CLAIM_WAIT
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    waited = True
                    _tell("wait", kernel_of(cache))
                if time.monotonic() > deadline:  # a stuck holder: compile here too
                    os.close(fd)
                    return False
                time.sleep(0.05)
    except OSError:
        os.close(fd)
        return False
    finally:
        if waited:
            _tell("done", kernel_of(cache))
    _claims[path] = fd
    return True


def _release(path) -> None:
    fd = _claims.pop(path, None)
    if fd is not None:
        os.close(fd)  # closing the descriptor ends the lock


def _tell(event, kernel) -> None:
    for listener in list(claim_listeners):
        with contextlib.suppress(Exception):
            listener(event, kernel)
