"""examples/nets/: each file is an "arch" object the trainer and the engine read."""

import pathlib

import pytest

from wasp.nnue.arch import read_arch_file

NETS = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples" / "nets").glob("*.json"))


def test_the_examples_are_there():
    assert {p.stem for p in NETS} >= {"example2", "example3", "example4"}


@pytest.mark.parametrize("path", NETS, ids=lambda p: p.stem)
def test_each_file_reads_as_an_architecture(path):
    arch = read_arch_file(path)
    assert arch.hidden >= 16 and arch.output_buckets == 8
    if path.stem in ("example3", "example4"):
        assert arch.mirrored and arch.input_buckets == 10 and arch.hidden == 1024
    if path.stem == "example4":
        assert arch.layers == (16, 32)
