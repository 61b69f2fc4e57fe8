"""Perft against the published suites, and the `wasp perft` command."""

import subprocess
import sys

import pytest

from tests.conftest import DATA, ROOT
from wasp.board import Position
from wasp.perft import divide, perft
from wasp.perft_cli import check_suite, parse_perft_line

LIMIT = 1_000_000  # each depth whose count is at most this; deeper in benchmarks/perft.py


def _cases(name):
    cases = []
    with open(DATA / name, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip() and not line.startswith("#"):
                fen, expected = parse_perft_line(line)
                cases += [pytest.param(fen, d, n, id=f"{name}:{i}:D{d}")
                          for d, n in expected if n <= LIMIT]
    return cases


@pytest.mark.parametrize("fen,depth,count", _cases("perftsuite.epd"))
def test_perftsuite(fen, depth, count):
    assert perft(Position(fen), depth) == count


@pytest.mark.parametrize("fen,depth,count", _cases("perftsuite-senjo-extended.epd"))
def test_perftsuite_senjo_extended(fen, depth, count):
    assert perft(Position(fen), depth) == count


@pytest.mark.parametrize("fen,depth,count", _cases("chess960-perft.epd"))
def test_chess960_perft(fen, depth, count):
    position = Position(fen)
    assert position.chess960  # named files or kings and rooks off e1/a1/h1: read as 960
    assert perft(position, depth) == count


def test_suite_line_parsing_accepts_both_spellings():
    assert parse_perft_line("8/8/8/8/8/8/8/K1k5 w - - ;D1 3 ;D2 9")[1] == [(1, 3), (2, 9)]
    assert parse_perft_line("8/8/8/8/8/8/8/K1k5 w - -;D1 3; D2 9;")[1] == [(1, 3), (2, 9)]


def test_divide_sums_to_perft():
    p = Position("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    rows = divide(p, 3)
    assert len(rows) == 48
    assert sum(n for _, n in rows) == 97862


def test_check_suite_reports_failures(tmp_path, capsys):
    suite = tmp_path / "s.epd"
    suite.write_text("8/8/8/8/8/8/8/K6k w - - ;D1 3 ;D2 10\nnot a fen ;D1 1\n")
    passed, total = check_suite(suite)
    out, err = capsys.readouterr()
    assert (passed, total) == (1, 3)
    assert "expected 10, got 9" in out
    assert f"wasp perft: error: {suite}:2: not an EPD line" in err
    assert out.strip().endswith("passed 1/3")


def _wasp(*args, input=None):
    return subprocess.run([sys.executable, "-m", "wasp.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, input=input, timeout=300)


def test_cli_perft_prints_nodes_and_speed():
    r = _wasp("perft", "--depth", "4")
    assert r.returncode == 0
    assert "Nodes searched: 197281" in r.stdout
    assert "Nodes/second: " in r.stdout


def test_cli_perft_epd_exits_non_zero_on_failure(tmp_path):
    suite = tmp_path / "s.epd"
    suite.write_text("8/8/8/8/8/8/8/K6k w - - ;D1 3 ;D2 10\n")
    r = _wasp("perft", "--epd", str(suite))
    assert r.returncode == 1
    assert "passed 0/2" not in r.stdout and "passed 1/2" in r.stdout


def test_cli_perft_walk_descends_and_quits():
    r = _wasp("perft", "--depth", "4", "--walk", input="e2e4\nNf6\nbogus\nup\nq\n")
    assert r.returncode == 0
    assert "Nodes searched: 197281" in r.stdout  # root
    assert "Nodes searched: 13160" in r.stdout  # after e2e4 (depth 3)
    assert "Nodes searched: 654" in r.stdout  # after e2e4 Nf6 (depth 2)
    assert "error: 'bogus'" in r.stdout


def test_cli_perft_bad_fen_is_a_clear_error():
    r = _wasp("perft", "--fen", "xx", "--depth", "2")
    assert r.returncode == 2
    assert "invalid fen" in r.stderr
