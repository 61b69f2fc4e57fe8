"""The distribution as users install it: `pip wheel .`, then the wheel in a fresh virtual
environment beside a distribution named `datasets` (Hugging Face's, on PyPI).

The wheel installs four top-level packages (`wasp`, `tuner`, `testing`, `dashboard`) and ships
the files of the top-level `datasets/` folder inside `tuner` (`tuner/datasets/`), so it shares no
file or directory with Hugging Face's `datasets`. In the suite the neighbour is a stand-in
distribution named `datasets` built here (a regular package, as Hugging Face's is), in a
virtual environment that borrows the system's numpy, numba and the rest; `scripts/check-install`
runs the same tests with everything from PyPI and Hugging Face's own `datasets`
(WASP_CHECK_PYPI=1; a few minutes, so not in the suite).
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT
from tests.test_imports import PACKAGES

DIST = "wasp-chess"
SOURCES = ("pyproject.toml", "README.md", *PACKAGES, "datasets")  # what the build reads
PYPI = os.environ.get("WASP_CHECK_PYPI") == "1"
BIN = "Scripts" if os.name == "nt" else "bin"


def _run(cmd, timeout=900, **kwargs):
    """Run `cmd`; its stdout, or a failure that shows both streams' tails."""
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                         timeout=timeout, **kwargs)
    assert out.returncode == 0, (f"{' '.join(map(str, cmd))}: exit {out.returncode}\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out.stdout


def _pip(python, *args):
    return _run([python, "-m", "pip", "--disable-pip-version-check", "-q", *args])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """`pip wheel .` over a copy of the sources (a checkout's build/ folder can hold files of an
    older layout, which setuptools would pack)."""
    tmp = tmp_path_factory.mktemp("wheel")
    (tmp / "src").mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tmp / "src" / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, tmp / "src" / name)
    _pip(sys.executable, "wheel", "--no-deps", "-w", tmp / "dist", tmp / "src")
    (path,) = (tmp / "dist").glob("*.whl")
    return path


def _names(wheel):
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def _record(wheel):
    """The paths the wheel's RECORD lists: what pip installs and uninstalls."""
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")]
        return [line.split(",")[0] for line in z.read(name).decode().splitlines() if line]


def test_the_wheel_installs_the_four_packages_and_no_datasets_directory(wheel):
    tops = {name.split("/")[0] for name in _names(wheel)}
    assert {t for t in tops if not t.endswith(".dist-info")} == set(PACKAGES)
    assert not [path for path in _record(wheel) if path.split("/")[0] == "datasets"]


def test_the_wheel_ships_the_datasets_folder_inside_tuner(wheel):
    data = ROOT / "datasets"
    shipped = {f"tuner/datasets/{p.relative_to(data).as_posix()}"
               for p in data.rglob("*") if p.is_file()}
    assert "tuner/datasets/sample/valid.epd" in shipped
    assert not shipped - _names(wheel)
    assert not shipped - set(_record(wheel))


def test_the_wheel_holds_every_file_of_the_packages(wheel):
    """pyproject.toml names the packages one by one: a new subpackage must be added there."""
    tree = {p.relative_to(ROOT).as_posix() for package in PACKAGES
            for p in (ROOT / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    missing = sorted(tree - _names(wheel))
    assert not missing, "not in the wheel (pyproject.toml's packages?):\n" + "\n".join(missing)


def _stand_in_wheel(directory):
    """A wheel of a distribution named `datasets` holding a regular package `datasets`, laid
    out as Hugging Face's is (a stand-in: installing that one downloads for a minute)."""
    info = "datasets-0.0.0.dist-info"
    files = {
        "datasets/__init__.py": '"""A stand-in for Hugging Face\'s datasets."""\nSTAND_IN = True\n',
        "datasets/arrow_dataset.py": "class Dataset:\n    pass\n",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: datasets\nVersion: 0.0.0\n",
        f"{info}/WHEEL": ("Wheel-Version: 1.0\nGenerator: tests/test_package.py\n"
                          "Root-Is-Purelib: true\nTag: py3-none-any\n"),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    path = directory / "datasets-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


class Venv:
    """A virtual environment with our wheel and a `datasets` installed, and how to run in it
    (outside the checkout, without PYTHONPATH, with a numba cache of its own)."""

    def __init__(self, root, neighbour):
        self.root, self.neighbour = root, neighbour
        self.bin = root / "venv" / BIN
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")
        self.cwd = root / "work"
        self.cwd.mkdir()
        drop = ("PYTHONPATH", "NUMBA_CACHE_DIR", "WASP_CACHE_DIR", "VIRTUAL_ENV")
        self.env = {k: v for k, v in os.environ.items() if k not in drop}
        self.env["PATH"] = f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"
        self.env["NUMBA_CACHE_DIR"] = str(root / "numba")

    def run(self, *cmd):
        return _run(cmd, cwd=self.cwd, env=self.env)

    def command(self, name, *args):
        """One of our console scripts, as the venv installed it."""
        return self.run(self.bin / name, *args)

    def python_json(self, code, *args):
        return json.loads(self.run(self.python, "-c", code, *args))


@pytest.fixture(scope="module", params=[
    "stand-in",
    pytest.param("pypi", marks=pytest.mark.skipif(
        not PYPI, reason="downloads from PyPI for minutes: bash scripts/check-install"))])
def venv(request, wheel, tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    if request.param == "stand-in":  # offline: the system's dependencies, no download
        _run([sys.executable, "-m", "venv", "--system-site-packages", root / "venv"])
        env = Venv(root, "stand-in")
        _pip(env.python, "install", "--no-deps", "--ignore-installed", wheel,
             _stand_in_wheel(root))
    else:  # as a user does: everything from the package index
        _run([sys.executable, "-m", "venv", root / "venv"])
        env = Venv(root, "hugging face")
        _pip(env.python, "install", wheel)
        _pip(env.python, "install", "datasets")
    return env


SITE = """
import importlib.metadata as md, json, os, sys, sysconfig
import dashboard, datasets, testing, tuner, wasp
site = sysconfig.get_paths()["purelib"]
theirs = {os.path.normpath(f.locate()) for f in md.distribution("datasets").files}
folder = [os.path.normpath(os.path.join(d, f))
          for d, _, fs in os.walk(os.path.join(site, "datasets")) if "__pycache__" not in d
          for f in fs]
print(json.dumps({
    "site": site,
    "modules": {m.__name__: m.__file__ for m in (dashboard, datasets, testing, tuner, wasp)},
    "ours": [str(f) for f in md.distribution(sys.argv[1]).files],
    "not_theirs": sorted(set(folder) - theirs),
    "hugging_face": hasattr(datasets, "load_dataset"),
}))
"""


def test_our_packages_and_the_datasets_package_both_import(venv):
    got = venv.python_json(SITE, DIST)
    site = got["site"]
    for name, path in got["modules"].items():
        assert os.path.samefile(path, os.path.join(site, name, "__init__.py")), name
    assert not [f for f in got["ours"] if f.split("/")[0] == "datasets"]
    assert got["not_theirs"] == []  # site-packages/datasets holds the other distribution only
    assert got["hugging_face"] == (venv.neighbour == "hugging face")


def test_the_commands_run_from_the_venv(venv):
    assert "wasp-tune k" in venv.command("wasp-tune", "--help")
    assert "wasp-match" in venv.command("wasp-match", "--help")
    assert "wasp bench" in venv.command("wasp", "--help")


def test_the_tuner_finds_the_shipped_data_in_the_installed_package(venv):
    got = venv.python_json(
        "import json, sysconfig\n"
        "from tuner.loop import run, selfplay\n"
        "from tuner.shipped import DATA_DIR\n"
        "print(json.dumps([sysconfig.get_paths()['purelib'], DATA_DIR,"
        " selfplay.DEFAULT_OPENINGS, selfplay.CHESS960_OPENINGS, run.SAMPLE_GAMES]))")
    site, data, *files = got
    assert os.path.samefile(data, os.path.join(site, "tuner", "datasets"))
    for path in files:
        assert os.path.isfile(path) and os.path.commonpath([path, data]) == data, path


def _nodes(bench_output):
    return re.search(r"Nodes searched\s*:\s*(\d+)", bench_output).group(1)


COMPILES = pytest.mark.skipif(
    not PYPI,
    reason="compiles the kernels afresh in the venv (minutes): bash scripts/check-install")


@COMPILES
def test_wasp_bench_from_the_venv_searches_as_the_checkout_does(venv):
    """Compiles the kernels afresh in the venv (minutes)."""
    checkout = _run([sys.executable, "-m", "wasp.cli", "bench", "2"], cwd=ROOT)
    assert _nodes(venv.command("wasp", "bench", "2")) == _nodes(checkout)


@COMPILES
def test_wasp_tune_k_reads_the_installed_sample_as_the_checkout_does(venv):
    """`wasp-tune k` on the sample inside the installed package: the checkout's K and E."""
    site = venv.python_json("import json, sysconfig; "
                            "print(json.dumps(sysconfig.get_paths()['purelib']))")
    installed = os.path.join(site, "tuner", "datasets", "sample", "valid.epd")
    line = re.compile(r"K = \S+\s+E = \S+")
    got = line.search(venv.command("wasp-tune", "k", installed, "-limit", "100")).group()
    checkout = _run([sys.executable, "-m", "tuner.cli", "k",
                     ROOT / "datasets" / "sample" / "valid.epd", "-limit", "100"], cwd=ROOT)
    assert got == line.search(checkout).group()
