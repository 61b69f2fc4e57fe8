"""Installed beside Hugging Face's `datasets`, both import: our data-set code is `tuner.sets`,
and the top-level `datasets/` folder holds data only (found on disk, never imported)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tuner.shipped import DATA_DIR

CHECK = """
import os, datasets, tuner.sets, tuner.sets.cli, tuner.loop.selfplay
print(datasets.ORIGIN)
print(os.path.isfile(tuner.loop.selfplay.DEFAULT_OPENINGS))
"""


def test_the_datasets_folder_holds_data_only():
    assert os.path.samefile(DATA_DIR, ROOT / "datasets")
    assert not list((ROOT / "datasets").rglob("*.py"))  # no module: nothing named datasets
    for name in ("openings-uho-5000.epd", "chess960.epd", "sample/train.epd",
                 "sample/games.pgn"):
        assert os.path.isfile(os.path.join(DATA_DIR, name)), name


@pytest.mark.parametrize("ours_first", [True, False])
def test_hugging_faces_datasets_and_ours_both_import(tmp_path, ours_first):
    fake = tmp_path / "site" / "datasets"  # a stand-in for Hugging Face's package
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('ORIGIN = "hugging face"\n')
    path = [str(ROOT), str(tmp_path / "site")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path if ours_first else path[::-1])}
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["hugging", "face", "True"]
