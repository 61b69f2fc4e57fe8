"""datasets/sample: the shipped labelled set matches its summary and stays small."""

import json

from tests.conftest import ROOT
from tuner.texel.positions import load

SAMPLE = ROOT / "datasets" / "sample"


def test_shipped_sample_matches_its_summary():
    s = json.loads((SAMPLE / "summary.json").read_text())
    train = load(SAMPLE / s["files"]["train"], use_cache=False)
    valid = load(SAMPLE / s["files"]["valid"], use_cache=False)
    assert (len(train), len(valid)) == (s["train"], s["valid"])
    assert s["games_bad"] == 0 and s["positions"] == s["train"] + s["valid"]
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) <= 5 * 1024 * 1024
