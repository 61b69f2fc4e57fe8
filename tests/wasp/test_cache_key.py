"""The numba cache key: derived from the kernel files and what they import; old caches go."""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import wasp
from tests.conftest import ROOT

PACKAGES = ("wasp", "tuner")  # the packages whose kernels share the cache


def _not_source(folder, names):
    return [n for n in names if n == "__pycache__" or (os.path.isfile(os.path.join(folder, n))
                                                      and not n.endswith(".py")
                                                      and n != wasp.KERNELS_MARKER)]


@pytest.fixture
def tree(tmp_path):
    """A copy of the packages' Python sources (and the tools' kernel markers)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=_not_source)
    return tmp_path


def _append_comment(tree, name):
    with open(tree / name, "a", encoding="utf-8") as f:
        f.write("\n# an edit\n")


@pytest.mark.parametrize("name", ["wasp/uci.py", "wasp/cli.py", "tuner/cli.py"])
def test_an_edit_to_a_front_end_file_keeps_the_key(tree, name):
    before = wasp._source_key(tree)
    _append_comment(tree, name)
    assert wasp._source_key(tree) == before


@pytest.mark.parametrize("name", ["wasp/search.py", "wasp/types.py", "tuner/sets/builder.py"])
def test_an_edit_to_a_kernel_file_or_what_it_imports_changes_the_key(tree, name):
    before = wasp._source_key(tree)
    _append_comment(tree, name)
    assert wasp._source_key(tree) != before


def test_the_packages_are_wasp_and_those_beside_it_with_the_marker(tree):
    assert wasp._packages() == ["wasp", "tuner"]  # not testing, dashboard, tests: no kernels
    (tree / "other").mkdir()
    (tree / "other" / "kern.py").write_text("from numba import njit\n")
    before = wasp._source_key(tree)
    assert wasp._packages(tree) == ["wasp", "tuner"]  # unmarked: not ours
    (tree / "other" / wasp.KERNELS_MARKER).write_text("marked\n")
    assert wasp._packages(tree) == ["wasp", "other", "tuner"]
    assert "other/kern.py" in wasp._kernel_files(tree) and wasp._source_key(tree) != before


def test_a_module_imported_only_inside_a_function_does_not_count(tree):
    (tree / "wasp" / "kern.py").write_text(
        "from numba import njit\n\nfrom wasp.types import KEYS\n\n\n"
        "def f():\n    from wasp import uci\n\n\n@njit\ndef g():\n    return KEYS\n")
    files = wasp._kernel_files(tree)
    assert "wasp/kern.py" in files and "wasp/types.py" in files
    assert "wasp/uci.py" not in files


def test_relative_and_multi_line_imports_are_followed(tree):
    (tree / "tuner" / "helper.py").write_text("X = 1\n")
    (tree / "tuner" / "kern.py").write_text(
        "import numba\n\nfrom . import helper\nfrom wasp.types import (\n    KEYS,  # n\n"
        "    MAILBOX,\n)\n")
    files = wasp._kernel_files(tree)
    assert {"tuner/kern.py", "tuner/helper.py", "wasp/types.py"} <= set(files)


def test_every_file_with_a_kernel_is_in_the_key_and_the_protocols_are_not():
    files = set(wasp._kernel_files())
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if re.search(r"^\s*@(numba\.)?njit\b", path.read_text(), re.M):
                assert path.relative_to(ROOT).as_posix() in files
    assert "tuner/sets/builder.py" in files and "wasp/types.py" in files
    assert not files & {"wasp/uci.py", "wasp/xboard.py", "wasp/cli.py", "tuner/cli.py",
                        "wasp/__init__.py"}


def test_the_key_takes_a_few_milliseconds():
    from tests.wasp.helpers import Charge

    with Charge(own=True) as charge:  # a busy or stalled host does not count against it
        wasp._source_key()
    assert charge.seconds < 0.1, (charge.wall, charge.cpu)


def _fake_caches(base, n):
    """n keyed folders, numba-...0 the most recently used."""
    now = time.time()
    paths = []
    for i in range(n):
        path = base / f"numba-{i:016x}"
        path.mkdir(parents=True)
        (path / "index.nbi").write_text("x")
        os.utime(path, (now - 100 * (i + 1), now - 100 * (i + 1)))
        paths.append(path)
    return paths


def _import_wasp(env):
    code = "import wasp, os; print(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return out.stdout.strip()


def test_import_keeps_the_current_cache_and_the_two_last_used_and_removes_the_rest(tmp_path):
    base = tmp_path / "cache"
    old = _fake_caches(base, 5)
    other = base / "numba-notakey"  # not a keyed name: left alone
    other.mkdir()
    (base / "numba-0123456789abcdef.txt").write_text("a file")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    current = _import_wasp({**env, "WASP_CACHE_DIR": str(base)})
    assert current == str(base / f"numba-{wasp._source_key()}")
    left = sorted(p.name for p in base.iterdir())
    assert left == sorted([old[0].name, old[1].name, os.path.basename(current), other.name,
                           "numba-0123456789abcdef.txt"])


def test_nothing_is_removed_when_numba_cache_dir_is_set(tmp_path):
    base = tmp_path / "cache"
    old = _fake_caches(base, 5)
    env = {**os.environ, "WASP_CACHE_DIR": str(base), "NUMBA_CACHE_DIR": str(tmp_path / "pinned")}
    assert _import_wasp(env) == str(tmp_path / "pinned" / f"numba-{wasp._source_key()}")
    assert sorted(base.iterdir()) == old


def test_a_set_numba_cache_dir_is_keyed_too_and_its_children_share_the_folder(tmp_path):
    """NUMBA_CACHE_DIR is the base: the keyed folder goes inside it, so a pull that edits a
    kernel's callee never meets the stale cache; an engine started with the keyed folder
    (the parent exported it) keeps it, and one from other sources gets a sibling."""
    key = f"numba-{wasp._source_key()}"
    keyed = _import_wasp({**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "mine")})
    assert keyed == str(tmp_path / "mine" / key)
    assert _import_wasp({**os.environ, "NUMBA_CACHE_DIR": keyed}) == keyed
    other = tmp_path / "mine" / "numba-0123456789abcdef"  # another checkout's key
    assert _import_wasp({**os.environ, "NUMBA_CACHE_DIR": str(other)}) == keyed


def test_pruning_marks_the_current_cache_used(tmp_path):
    old = _fake_caches(tmp_path, 4)
    removed = wasp._prune_caches(str(old[3]))  # the oldest becomes the newest
    assert removed == [str(old[2])]
    assert os.path.getmtime(old[3]) > os.path.getmtime(old[0])
    assert wasp._prune_caches(str(old[1])) == []
