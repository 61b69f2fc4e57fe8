"""The self-play matches of the tuning loop play the hand-written evaluation they tune, not
the engine's default net."""

import os

from tuner.loop.selfplay import wasp_engine


def test_our_engine_gets_the_hand_written_evaluation_or_the_given_parameters(tmp_path):
    assert "option.EvalFile=<empty>" in wasp_engine("wasp")
    params = tmp_path / "params.txt"
    tokens = wasp_engine("wasp-tuned", os.path.relpath(params))
    assert f"option.EvalFile={params}" in tokens
    assert sum(t.startswith("option.EvalFile=") for t in tokens) == 1
