"""wasp.atomicfile: a file is replaced whole or not at all."""

import os

import numpy as np
import pytest

from wasp.atomicfile import replacing, write_text


def test_write_text_replaces_the_file_whole(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_an_error_inside_the_block_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), replacing(path) as tmp:
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_the_suffix_lets_numpy_write_the_temporary_it_was_given(tmp_path):
    path = tmp_path / "w.npz"
    with replacing(path, ".npz") as tmp:
        assert tmp.endswith(".npz")
        np.savez(tmp, w=np.arange(3))
    with np.load(path) as z:
        assert z["w"].tolist() == [0, 1, 2]
    assert os.listdir(tmp_path) == ["w.npz"]
