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


def installed_engine(name: str) -> str:
    """The path of an installed engine; the test is skipped when there is none."""
    path = find_engine(name)
    if path is None:
        pytest.skip(f"{name} not installed")
    return path


@pytest.fixture
def stockfish():
    return installed_engine("stockfish")


@pytest.fixture
def fairymax():
    return installed_engine("fairymax")
