"""The self-play matches of the tuning loop play the hand-written evaluation they tune, not
the engine's default net, and are planned as MatchConfig objects, not a command line."""

import os
import sys

from tuner.loop.selfplay import match_config, wasp_engine
from wasp.engine import EMPTY


def test_our_engine_gets_the_hand_written_evaluation_or_the_given_parameters(tmp_path):
    assert wasp_engine("wasp").options["EvalFile"] == EMPTY
    params = tmp_path / "params.txt"
    engine = wasp_engine("wasp-tuned", os.path.relpath(params))
    assert engine.options == {"Hash": "16", "EvalFile": str(params)}
    assert engine.argv() == [sys.executable, "-m", "wasp.cli"] and engine.startup == 300


def test_the_match_config_gives_the_limits_unique_names_and_pairs(tmp_path):
    pgn = str(tmp_path / "g.pgn")
    config = match_config(pgn, [wasp_engine("wasp"), wasp_engine("wasp")], 5, 300, "", 2, "",
                          7, {"elo0": 0, "elo1": 5}, True, True)
    assert [(e.name, e.nodes, e.tc) for e in config.engines] == [("wasp", 300, None),
                                                                 ("wasp-2", 300, None)]
    assert (config.rounds, config.games, config.repeat, config.srand) == (3, 2, True, 7)
    assert config.sprt.elo1 == 5.0 and config.maxmoves == 200 and config.pgnout == pgn
    single = match_config(pgn, [wasp_engine("a"), wasp_engine("b")], 5, 0, "10+0.1", 1, "",
                          1, None, False, False)
    assert (single.rounds, single.games, str(single.engines[0].tc)) == (5, 1, "10+0.1")
    assert single.draw is None and single.sprt is None
    single.validate()  # a config the runner accepts
