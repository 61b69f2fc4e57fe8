"""examples/tiny_engine: Tiny's trace passes the check, tunes, and Tiny plays UCI."""

import subprocess
import sys

import chess
import pytest

from tests.conftest import DATA, ROOT
from tuner.cli import main
from tuner.traces.tracefile import check_trace, read_terms, read_trace

TINY = ROOT / "examples" / "tiny_engine"
sys.path.insert(0, str(TINY))

import engine as tiny  # noqa: E402
import write_trace  # noqa: E402


def test_tiny_trace_reproduces_its_evaluation_and_tunes(tmp_path):
    path = tmp_path / "tiny.trace"
    assert write_trace.write(DATA / "tuner_quiet_200.epd", path, progress=False) == 200
    tr = read_trace(path)
    assert [n for n, _ in tiny.TERMS] == tr.names
    assert check_trace(tr).bad == 0  # the model is Tiny's evaluation up to its rounding
    run = tmp_path / "run"
    assert main(["trace", str(path), "-dir", str(run), "-max-passes", "2", "-epochs", "20",
                 "-quiet"]) == 0
    params = tiny.load_params(run / "params.txt")  # Tiny reads the tuner's params.txt
    assert len(params) == len(tiny.TERMS)
    assert set(read_terms(run / "params.txt")) == {n for n, _ in tiny.TERMS}


def test_a_dropped_term_is_refused(tmp_path):
    """Tiny's trace without its mobility terms: EVAL still counts them."""
    path = tmp_path / "tiny.trace"
    mob = {i for i, (n, _) in enumerate(tiny.TERMS) if n.endswith("_mobility")}
    start = tmp_path / "start.txt"  # give mobility a value, so leaving it out shows
    start.write_text(open(tiny.START_PARAMS).read().replace(
        "knight_mobility 0 0", "knight_mobility 4 4"))
    write_trace.write(DATA / "tuner_quiet_200.epd", path, start, progress=False)
    lines = path.read_text().splitlines()
    head = lines.index("positions") + 1
    cut = [lines[j].split(" | ")[0] + " | " + " ".join(
        p for p in lines[j].split(" | ")[1].split() if int(p.split(":")[0]) not in mob)
        for j in range(head, len(lines))]
    path.write_text("\n".join(lines[:head] + cut) + "\n")
    assert not check_trace(read_trace(path)).ok


@pytest.mark.parametrize("params", [None, "start.txt"])
def test_tiny_speaks_uci(params):
    cmd = [sys.executable, str(TINY / "engine.py")]
    if params:
        cmd += ["--params", str(TINY / params)]
    out = subprocess.run(cmd, input="uci\nisready\nposition startpos moves e2e4\ngo depth 2\n"
                         "quit\n", capture_output=True, text=True, timeout=120).stdout
    assert "uciok" in out and "readyok" in out
    move = out.split("bestmove ")[1].split()[0]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(move) in board.legal_moves


def test_tiny_refuses_a_bad_params_file(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("pawn 100 100\n")
    r = subprocess.run([sys.executable, str(TINY / "engine.py"), "--params", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("tiny: error:") and "no value for" in r.stderr
