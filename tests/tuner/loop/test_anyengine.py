"""tuner.loop.anyengine: the loop for any engine, end to end on the worked example engine
(examples/tiny_engine) from a weakened start, and its pieces."""

import json
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from tuner.loop.anyengine import engine_tokens, split_blocks, trace_command
from tuner.loop.cli import main

TINY = ROOT / "examples" / "tiny_engine"
SAMPLE_GAMES = ROOT / "datasets" / "sample" / "games.pgn"


def test_the_template_fills_in_the_values_file_or_each_terms_value(tmp_path):
    values = tmp_path / "v.txt"
    values.write_text("pawn 90 110\ntempo 12\n")
    tokens = engine_tokens("cmd=./e arg='a b' option.EvalFile={params} option.P={pawn.eg} "
                           "option.Pm={pawn} option.T={tempo}", values)
    assert tokens == ["cmd=./e", "arg=a b", f"option.EvalFile={values}", "option.P=110",
                      "option.Pm=90", "option.T=12"]
    with pytest.raises(ValueError, match="names no term"):
        engine_tokens("cmd=./e option.X={knight}", values)
    assert trace_command("w {positions} -o {trace}", "a.epd", "a.trace") == \
        ["w", "a.epd", "-o", "a.trace"]
    with pytest.raises(ValueError):
        trace_command("w {positions}", "a.epd", "a.trace")


def test_epd_lines_are_held_out_in_whole_blocks():
    held = split_blocks(1000, 0.25, seed=3, block=50)
    assert held.sum() == 250  # 5 of 20 blocks
    starts = np.flatnonzero(np.diff(np.r_[0, held.astype(int)]) == 1)
    assert all(s % 50 == 0 for s in starts)
    assert np.array_equal(held, split_blocks(1000, 0.25, seed=3, block=50))


@pytest.mark.parametrize("argv, words", [
    (["-trace-cmd", "t {positions} {trace}"], "both -trace-cmd and -tuned-engine"),
    (["-trace-cmd", "t {positions}", "-tuned-engine", "cmd=e {params}"], "{trace}"),
    (["-trace-cmd", "t {positions} {trace}", "-tuned-engine", "cmd=e {params}", "-start",
      "material*0.3"], "-start is a flag of the Wasp-Py loop"),
    (["-each", "depth=2"], "-each is a flag of the loop for any engine"),
])
def test_loop_flags_of_the_wrong_kind_are_one_line_and_exit_2(tmp_path, capsys, argv, words):
    assert main(["-dir", str(tmp_path / "l"), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_loop_tunes_the_example_engine_from_a_weakened_start_and_it_wins(tmp_path, capsys):
    """Tiny with every piece worth a pawn: its traces of the sample's games (split by game),
    Adam, then an SPRT of the tuned values against the start (depth 1, a generous margin)."""
    weak = tmp_path / "weak.txt"
    weak.write_text("".join(
        line if not line.split()[:1] or line.split()[0] not in
        ("knight", "bishop", "rook", "queen") else f"{line.split()[0]} 100 100\n"
        for line in (TINY / "start.txt").read_text().splitlines(keepends=True)))
    loop = tmp_path / "loop"
    py = sys.executable
    argv = ["-dir", str(loop), "-data", str(SAMPLE_GAMES), "-max-per-game", "6",
            "-valid", "0.25", "-seed", "2",
            "-trace-cmd", f"{py} {TINY / 'write_trace.py'} {{positions}} {{trace}} "
                          f"--params {weak}",
            "-tuned-engine", f"cmd={py} arg={TINY / 'engine.py'} arg=--params arg={{params}}",
            "-each", "depth=1", "-sprt", "elo0=0", "elo1=200", "-sprt-games", "16",
            "-lr", "5", "-epochs", "50", "-max-passes", "8", "-quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rep = json.loads((loop / "report.json").read_text())
    assert rep["E_valid_after"] < rep["E_valid_before"] and rep["E_train_after"] < \
        rep["E_train_before"]
    assert rep["sprt_score"] > 0.6 and rep["sprt_decision"] != "H0"
    assert rep["changed_weights"] > 0 and rep["moved_most"]
    assert {"queen", "rook"} & {line.split()[0] for line in rep["moved_most"][:3]}
    assert (loop / "start.txt").read_text().startswith("pawn 100 100\nknight 100 100")
    assert "summary:" in out and "the tuned engine is stronger" in out
    # run again: every stage is reused, the report is the same
    assert main(["-dir", str(loop), "-quiet"]) == 0
    assert "[sprt] done: reused" in capsys.readouterr().out
    assert json.loads((loop / "report.json").read_text()) == rep
