"""`wasp-tune data selfplay`: games by the match runner, then the labelled set built from them."""

import json
import sys

import testing
from tests.conftest import ROOT
from tuner.data.cli import main as data_main

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


def test_chess960_selfplay_plays_from_the_960_starts_and_builds_a_set(tmp_path):
    import chess
    import chess.pgn

    out = tmp_path / "sp960"
    book = ROOT / "datasets" / "dfrc-1000.epd"
    assert data_main(["data", "selfplay", "-o", str(out), "-variant", "fischerandom",
                      "-openings", str(book), "-games", "2", "-nodes", "200",
                      "-skip-plies", "2", "-valid", "0.5", "-threads", "1"]) == 0
    starts = book.read_text().splitlines()
    with open(out / "games.pgn") as f:
        games = [g for g in iter(lambda: chess.pgn.read_game(f), None)]
    assert len(games) == 2
    for g in games:
        assert g.headers["Variant"].lower() in ("chess960", "fischerandom")
        assert g.board().chess960 and g.headers["FEN"].split()[0] in {
            line.split()[0] for line in starts}
        board = g.board()
        for move in g.mainline_moves():  # python-chess as the referee of every move
            assert move in board.legal_moves
            board.push(move)
    s = json.loads((out / "summary.json").read_text())
    assert s["games_read"] == 2 and s["games_bad"] == 0 and s["positions"] > 0
