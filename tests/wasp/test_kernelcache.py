"""The numba kernel cache (`wasp.kernelcache`): keyed to the kernel files and what they import,
set up by an explicit call (never by `import wasp`), shared with children, old caches pruned."""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from wasp import kernelcache as kc

PACKAGES = ("wasp", "tuner")  # the packages whose kernels the tools' cache covers


def _sources(folder, names):
    return [n for n in names if n == "__pycache__" or (os.path.isfile(os.path.join(folder, n))
                                                      and not n.endswith(".py"))]


@pytest.fixture
def tree(tmp_path):
    """A copy of the packages' Python sources; `roots(tree)` names them for the functions."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=_sources)
    return tmp_path


def roots(tree, packages=PACKAGES):
    return {p: tree / p for p in packages}


def key(tree, packages=PACKAGES):
    return kc.key(kc.file_digests(roots(tree, packages)))


def _append_comment(tree, name):
    with open(tree / name, "a", encoding="utf-8") as f:
        f.write("\n# an edit\n")


@pytest.mark.parametrize("name", ["wasp/uci.py", "wasp/cli.py", "tuner/cli.py"])
def test_an_edit_to_a_front_end_file_keeps_the_key(tree, name):
    before = key(tree)
    _append_comment(tree, name)
    assert key(tree) == before


@pytest.mark.parametrize("name", ["wasp/search.py", "wasp/types.py", "tuner/sets/builder.py"])
def test_an_edit_to_a_kernel_file_or_what_it_imports_changes_the_key(tree, name):
    before = key(tree)
    _append_comment(tree, name)
    assert key(tree) != before


def test_the_key_covers_the_named_packages_and_no_folder_beside_them(tree):
    before = key(tree)
    (tree / "other").mkdir()
    (tree / "other" / "kern.py").write_text("from numba import njit\n")
    assert key(tree) == before  # a package beside them that is not named does not count
    named = roots(tree, (*PACKAGES, "other"))
    assert "other/kern.py" in kc.kernel_files(named) and kc.key(kc.file_digests(named)) != key(tree)
    assert not [f for f in kc.kernel_files(roots(tree, ("wasp",))) if not f.startswith("wasp/")]


def test_packages_are_found_as_import_finds_them(tmp_path, monkeypatch):
    assert kc.locate(PACKAGES) == {"wasp": ROOT / "wasp", "tuner": ROOT / "tuner"}
    (tmp_path / "elsewhere" / "mykernels").mkdir(parents=True)
    (tmp_path / "elsewhere" / "mykernels" / "__init__.py").write_text("import numba\n")
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    assert "mykernels/__init__.py" in kc.kernel_files(("wasp", "mykernels"))
    with pytest.raises(ValueError, match="no package 'no_such_package'"):
        kc.kernel_files(("wasp", "no_such_package"))


def test_a_module_imported_only_inside_a_function_does_not_count(tree):
    (tree / "wasp" / "kern.py").write_text(
        "from numba import njit\n\nfrom wasp.types import KEYS\n\n\n"
        "def f():\n    from wasp import uci\n\n\n@njit\ndef g():\n    return KEYS\n")
    files = kc.kernel_files(roots(tree))
    assert "wasp/kern.py" in files and "wasp/types.py" in files
    assert "wasp/uci.py" not in files


def test_relative_and_multi_line_imports_are_followed(tree):
    (tree / "tuner" / "helper.py").write_text("X = 1\n")
    (tree / "tuner" / "kern.py").write_text(
        "import numba\n\nfrom . import helper\nfrom wasp.types import (\n    KEYS,  # n\n"
        "    MAILBOX,\n)\n")
    files = kc.kernel_files(roots(tree))
    assert {"tuner/kern.py", "tuner/helper.py", "wasp/types.py"} <= set(files)


def test_every_file_with_a_kernel_is_in_the_key_and_the_protocols_are_not():
    files = set(kc.kernel_files(PACKAGES))
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if re.search(r"^\s*@(numba\.)?njit\b", path.read_text(), re.M):
                assert path.relative_to(ROOT).as_posix() in files
    assert "tuner/sets/builder.py" in files and "wasp/types.py" in files
    assert not files & {"wasp/uci.py", "wasp/xboard.py", "wasp/cli.py", "tuner/cli.py",
                        "wasp/__init__.py", "wasp/kernelcache.py"}


def test_the_key_takes_a_few_milliseconds():
    from tests.wasp.helpers import Charge

    with Charge(own=True) as charge:  # a busy or stalled host does not count against it
        kc.key(kc.file_digests(PACKAGES))
    assert charge.seconds < 0.1, (charge.wall, charge.cpu)


# -- in processes of their own ------------------------------------------------------------


def _fake_caches(base, n, files=None):
    """n keyed folders, numba-...0 the most recently used; with `files`, listing them."""
    now = time.time()
    paths = []
    for i in range(n):
        path = base / f"numba-{i:016x}"
        path.mkdir(parents=True)
        (path / "index.nbi").write_text("x")
        if files is not None:
            (path / kc.FILES).write_text(kc._listing(files))
        os.utime(path, (now - 100 * (i + 1), now - 100 * (i + 1)))
        paths.append(path)
    return paths


def _env(tmp_path, **extra):
    """A clean environment: an empty HOME, no NUMBA_CACHE_DIR or WASP_CACHE_DIR unless given."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "WASP_CACHE_DIR")}
    (tmp_path / "home").mkdir(exist_ok=True)
    return {**env, "HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT), **extra}


def _python(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return out.stdout.strip()


def _setup(env, packages=("wasp",)):
    return _python(f"from wasp import kernelcache; print(kernelcache.setup({packages!r}))", env)


def _snapshot(folder):
    return sorted((str(p), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_import_wasp_writes_and_deletes_nothing_and_leaves_numba_cache_dir_unset(tmp_path):
    base = tmp_path / "cache"
    base.mkdir()
    env = _env(tmp_path, WASP_CACHE_DIR=str(base))
    assert _python("import wasp, os; print(os.environ.get('NUMBA_CACHE_DIR'))", env) == "None"
    assert list(base.iterdir()) == [] and list((tmp_path / "home").iterdir()) == []
    _fake_caches(base, 5)  # more old caches than are kept: an import removes none of them
    before = _snapshot(tmp_path)
    _python("import wasp", env)
    assert _snapshot(tmp_path) == before


def test_setup_makes_the_keyed_directory_with_its_file_list_and_exports_it(tmp_path):
    base = tmp_path / "cache"
    code = ("import os; from wasp import kernelcache; d = kernelcache.setup(); "
            "print(d == os.environ['NUMBA_CACHE_DIR'])")
    assert _python(code, _env(tmp_path, WASP_CACHE_DIR=str(base))) == "True"
    files = kc.file_digests(("wasp",))
    (path,) = base.iterdir()
    assert path.name == kc.key(files) and kc.covers(str(path), files)
    lines = (path / kc.FILES).read_text().splitlines()
    assert lines == [f"{files[rel]}  {rel}" for rel in sorted(files)]
    assert f"{files['wasp/search.py']}  wasp/search.py" in lines


def test_setup_without_a_base_goes_under_home(tmp_path):
    path = _setup(_env(tmp_path))
    assert path == str(tmp_path / "home" / ".cache" / "wasp-py" / kc.key(kc.file_digests()))


def test_setup_tells_numba_when_numba_is_imported_already(tmp_path):
    code = ("import numba; from numba.core import config; from wasp import kernelcache; "
            "d = kernelcache.setup(); print(config.CACHE_DIR == d)")
    assert _python(code, _env(tmp_path, WASP_CACHE_DIR=str(tmp_path / "c"))) == "True"


def test_a_child_uses_its_parents_directory_when_it_covers_the_childs_kernels(tmp_path):
    """A tool (keyed to wasp and tuner) and the engine it starts (keyed to wasp) share one
    directory: one compile."""
    env = _env(tmp_path, WASP_CACHE_DIR=str(tmp_path / "cache"))
    parent = _setup(env, PACKAGES)
    assert os.path.basename(parent) == kc.key(kc.file_digests(PACKAGES))
    child = {**env, "NUMBA_CACHE_DIR": parent}
    assert _setup(child) == parent
    assert _setup(child, PACKAGES) == parent
    assert sorted(os.listdir(tmp_path / "cache")) == [os.path.basename(parent)]


def test_a_child_with_other_kernel_sources_gets_a_directory_of_its_own(tmp_path):
    """A parent's directory keyed to other sources (another checkout, an edit since) is not
    used: the child's own keyed directory goes beside it, and nothing is removed."""
    base = tmp_path / "cache"
    files = kc.file_digests(("wasp",))
    stale = dict(files, **{"wasp/search.py": "0" * 40})
    (other,) = _fake_caches(base, 1, stale)
    path = _setup(_env(tmp_path, NUMBA_CACHE_DIR=str(other)))
    assert path == str(base / kc.key(files))
    assert other.is_dir()


def test_a_kept_directory_that_covers_more_kernels_is_preferred(tmp_path):
    """A standalone engine uses the directory a tool made, whose file list covers its own."""
    base = tmp_path / "cache"
    env = _env(tmp_path, WASP_CACHE_DIR=str(base))
    tools = _setup(env, PACKAGES)
    engine_only = base / kc.key(kc.file_digests(("wasp",)))
    engine_only.mkdir()
    (engine_only / kc.FILES).write_text(kc._listing(kc.file_digests(("wasp",))))  # newer
    assert _setup(env) == tools


def test_setup_keeps_the_current_cache_and_the_two_last_used_and_removes_the_rest(tmp_path):
    base = tmp_path / "cache"
    old = _fake_caches(base, 5)
    other = base / "numba-notakey"  # not a keyed name: left alone
    other.mkdir()
    (base / "numba-0123456789abcdef.txt").write_text("a file")
    current = _setup(_env(tmp_path, WASP_CACHE_DIR=str(base)))
    assert current == str(base / kc.key(kc.file_digests()))
    left = sorted(p.name for p in base.iterdir())
    assert left == sorted([old[0].name, old[1].name, os.path.basename(current), other.name,
                           "numba-0123456789abcdef.txt"])


def test_nothing_is_removed_when_numba_cache_dir_is_set(tmp_path):
    """NUMBA_CACHE_DIR is a base of the user's: the keyed folder goes inside it, so a pull that
    edits a kernel's callee never meets the stale cache there."""
    base = tmp_path / "cache"
    old = _fake_caches(base, 5)
    env = _env(tmp_path, WASP_CACHE_DIR=str(base), NUMBA_CACHE_DIR=str(tmp_path / "pinned"))
    assert _setup(env) == str(tmp_path / "pinned" / kc.key(kc.file_digests()))
    assert sorted(base.iterdir()) == old


def test_pruning_marks_the_current_cache_used(tmp_path):
    old = _fake_caches(tmp_path, 4)
    removed = kc.prune(str(old[3]))  # the oldest becomes the newest
    assert removed == [str(old[2])]
    assert os.path.getmtime(old[3]) > os.path.getmtime(old[0])
    assert kc.prune(str(old[1])) == []


# -- who calls it ----------------------------------------------------------------------------


@pytest.mark.parametrize("module, packages", [("wasp.cli", ("wasp",)),
                                              ("tuner.cli", ("wasp", "tuner")),
                                              ("dashboard.cli", ("wasp",))])
def test_each_console_script_sets_up_the_cache_before_its_main(monkeypatch, module, packages):
    import importlib

    calls = []
    monkeypatch.setattr(kc, "setup", lambda p: calls.append(("setup", tuple(p))))
    cli = importlib.import_module(module)
    monkeypatch.setattr(cli, "main", lambda: calls.append(("main",)) or 0)
    assert cli.entry() == 0
    assert calls == [("setup", packages), ("main",)]


CLAIMED_KERNEL = """
from numba import njit


@njit(cache=True)
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s
"""

CLAIMANT = """
import os, sys, time
from pathlib import Path
from wasp import kernelcache
kernelcache.install_claims()
from numba.core import event
here = Path(sys.argv[1])

class Hold(event.Listener):  # the first process: holds its claim until the test says go
    def on_start(self, ev):
        (here / "a-compiling").touch()
        while not (here / "go").exists():
            time.sleep(0.01)
    def on_end(self, ev):
        pass

def told(what, kernel):  # the second process: says it waits for the first one's claim
    print(what, kernel.rsplit(".", 1)[-1], flush=True)
    if what == "wait":
        (here / "b-waiting").touch()

if sys.argv[2] == "a":
    event.register("numba:compile", Hold())
kernelcache.claim_listeners.append(told)
import kernel
print(kernel.total(10), dict(kernel.total.stats.cache_hits), dict(kernel.total.stats.cache_misses))
"""


def _wait_for(path, proc):
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)


def test_a_second_process_waits_for_the_first_ones_compile_and_loads_it(tmp_path):
    (tmp_path / "kernel.py").write_text(CLAIMED_KERNEL)
    (tmp_path / "claimant.py").write_text(CLAIMANT)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))

    def start(name):
        return subprocess.Popen([sys.executable, "claimant.py", str(tmp_path), name],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    a = start("a")
    _wait_for(tmp_path / "a-compiling", a)  # a holds the claim, compiling
    b = start("b")
    _wait_for(tmp_path / "b-waiting", b)  # b missed the cache and waits for a's claim
    (tmp_path / "go").touch()
    out_a, err_a = a.communicate(timeout=300)
    out_b, err_b = b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, err_a + err_b
    assert out_a.splitlines() == ["45 {} {(int64,): 1}"]  # a compiled
    assert out_b.splitlines() == ["wait total", "done total", "45 {(int64,): 1} {}"]  # b loaded
