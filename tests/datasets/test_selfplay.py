"""`wasp-tune data selfplay`: games by the match runner, then the labelled set built from them."""

import json
import sys

import testing
from datasets.cli import main as data_main
from tests.conftest import ROOT

FAKE = ROOT / "tests" / "testing" / "fake_engines" / "fake_uci.py"


def test_selfplay_against_another_engine_gives_games_and_a_set(tmp_path):
    out = tmp_path / "sp"
    assert data_main(["data", "selfplay", "-o", str(out), "-games", "4", "-nodes", "200",
                      "-skip-plies", "2", "-valid", "0.25", "-threads", "1",
                      "-engine", f"cmd={sys.executable}", f"arg={FAKE}", "name=fake",
                      "arg=--style", "arg=greedy"]) == 0
    games = testing.results(out / "match")
    assert len(games) == 4 and set(games["engine1"]) == {"wasp"}
    assert set(games["engine2"]) == {"fake"}
    assert len(set(games["opening_index"])) == 4  # one opening a game, no colour-swapped pairs
    s = json.loads((out / "summary.json").read_text())
    assert s["games_read"] == 4 and s["games_bad"] == 0 and s["positions"] > 0
    assert (out / "train.epd").read_text().count("\n") == s["train"]
