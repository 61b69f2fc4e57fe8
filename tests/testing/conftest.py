import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "tests", "data")
FAKE = os.path.join(HERE, "fake_engines", "fake_uci.py")
EPD = os.path.join(DATA, "uho_sample.epd")
PGN = os.path.join(DATA, "8moves_sample.pgn")


def find_engine(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/games")


def fake_engine(name: str, *extra: str) -> list[str]:
    """-engine tokens for a fake UCI engine run by this Python."""
    tokens = ["-engine", f"cmd={sys.executable}", f"name={name}", f"arg={FAKE}"]
    tokens += [f"arg={a}" for a in extra]
    return tokens


@pytest.fixture
def stockfish():
    path = find_engine("stockfish")
    if path is None:
        pytest.skip("stockfish not installed")
    return path


@pytest.fixture
def fairymax():
    path = find_engine("fairymax")
    if path is None:
        pytest.skip("fairymax not installed")
    return path
