"""`wasp-tune run -valid-data`: a validation set split by game, kept through --resume."""

import json

import numpy as np

from datasets.tuning import VALID_FILE, SplitRun
from tests.conftest import ROOT
from tuner.cli import main as tune_main
from tuner.positions import load

SAMPLE = ROOT / "datasets" / "sample"


def _head(src, dst, n):
    lines = src.read_text().splitlines(keepends=True)[:n]
    dst.write_text("".join(lines))
    return dst


def test_run_with_valid_data_uses_the_files_as_they_are(tmp_path):
    train = _head(SAMPLE / "train.epd", tmp_path / "train.epd", 300)
    valid = _head(SAMPLE / "valid.epd", tmp_path / "valid.epd", 60)
    run_dir = tmp_path / "run"
    assert tune_main(["run", str(train), "-valid-data", str(valid), "-dir", str(run_dir),
                      "-params", "pawn_value", "tempo", "-max-passes", "1", "-threads", "1",
                      "-quiet"]) == 0
    assert json.loads((run_dir / VALID_FILE).read_text())["valid_data"] == [str(valid)]
    run = SplitRun.open(run_dir)
    run.load_data()
    assert len(run._train) == 300 and len(run._valid) == 60
    assert np.array_equal(run._valid.rows, load(valid, use_cache=False).rows)
    # --resume picks the split run up again from the run directory
    assert tune_main(["run", "-dir", str(run_dir), "--resume", "-max-passes", "1",
                      "-quiet"]) == 0


def test_shipped_sample_matches_its_summary():
    s = json.loads((SAMPLE / "summary.json").read_text())
    train = load(SAMPLE / s["files"]["train"], use_cache=False)
    valid = load(SAMPLE / s["files"]["valid"], use_cache=False)
    assert (len(train), len(valid)) == (s["train"], s["valid"])
    assert s["games_bad"] == 0 and s["positions"] == s["train"] + s["valid"]
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) <= 5 * 1024 * 1024
