"""report.svg: E per tuning pass as SVG text a browser (and an XML parser) reads."""

import math
import xml.etree.ElementTree as ET

from tuner.loop.svgplot import e_per_pass_svg

SVG = "{http://www.w3.org/2000/svg}"
PASSES = [{"pass": 0, "e_train": 0.118, "e_valid": 0.119},
          {"pass": 1, "e_train": 0.111, "e_valid": 0.116},
          {"pass": 2, "e_train": 0.107, "e_valid": 0.114}]


def test_a_line_per_set_with_a_point_per_pass_and_the_note():
    root = ET.fromstring(e_per_pass_svg(PASSES, "E per pass <q>", "score 0.820 over 60 games"))
    lines = root.findall(f"{SVG}polyline")
    assert len(lines) == 2 and all(len(p.get("points").split()) == 3 for p in lines)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "E per pass <q>" in texts and "score 0.820 over 60 games" in texts
    assert "training E" in texts and "validation E" in texts
    # the lowest E is drawn lowest: pass 2's training point has the largest y
    train = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()]
    assert train[2][1] > train[1][1] > train[0][1]


def test_a_run_without_validation_set_draws_the_training_line_only():
    rows = [{**r, "e_valid": math.nan} for r in PASSES]
    root = ET.fromstring(e_per_pass_svg(rows, "t"))
    assert len(root.findall(f"{SVG}polyline")) == 1
    assert "nan" not in e_per_pass_svg(rows, "t")
