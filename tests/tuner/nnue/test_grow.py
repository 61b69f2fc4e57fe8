"""-init's mappings: each net grown from an old one evaluates as the old one (the independent
numpy forward pass over both files), new neurons learn, and what cannot be mapped is refused."""

import chess
import numpy as np
import pytest

from tests.wasp.nnue.test_network import arch_json, numpy_forward_arch, random_fens, random_net
from tuner.nnue import data as D
from tuner.nnue.grow import GrowError, grow, start_from
from tuner.nnue.model import FACTORISER_CLIP, AdamW, Kernels
from tuner.nnue.train import Config
from wasp.nnue import arch as A
from wasp.nnue.inputs import FEATURES, MIRROR

TWO_BUCKETS = [0] * 4 + [1] * 28  # a king on its first rank, or not


def _old(path, arch: dict, seed=5, symmetric=False, simple_file=False):
    """An old net of `arch` at `path` (random weights; `symmetric`: its first layer the same
    for a board and its mirror image); `simple_file`: no NET.json, told by its size."""
    tensors = random_net(path, arch, seed)
    a = A.Arch.from_json(arch)
    if symmetric:
        l0w = tensors["l0w"] + np.tile(tensors.pop("l0f"), (1, a.input_buckets)) \
            if "l0f" in tensors else tensors["l0w"]
        tensors["l0w"] = (l0w + l0w[:, np.arange(l0w.shape[1]) ^ MIRROR]) / 2
        A.save(path, a, tensors)
    if simple_file:
        A.meta_path(path).unlink()
    return path


def _config(tmp_path, arch: dict, factoriser=False, **kw):
    return Config(data=[], output=str(tmp_path / "new.nnue"), hidden=arch["hidden"], arch=arch,
                  factoriser=factoriser, **kw)


def _kings_on_files_a_to_d(fen):
    board = chess.Board(fen)
    return all(chess.square_file(board.king(side)) < 4 for side in chess.COLORS)


MAPPINGS = {  # (old arch, new arch, factoriser)
    "1 simple, the same (no NET.json)": (arch_json(1, 32), arch_json(1, 32), False),
    "3 with a factoriser, the same": (arch_json(3, 32), arch_json(3, 32), True),
    "4 multi-layer, the same": (arch_json(4, 32), arch_json(4, 32), True),
    "1 output bucket into 8": (arch_json(1, 32), arch_json(2, 32, k=8), False),
    "2 output buckets into 8": (arch_json(2, 32, k=2), arch_json(2, 32, k=8), False),
    "hidden 32 into 48": (arch_json(1, 32), arch_json(1, 48), False),
    "hidden 32 into 48, CReLU, 8 buckets": (arch_json(2, 32, activation="crelu"),
                                            arch_json(2, 48, activation="crelu"), False),
    "4 multi-layer, hidden 32 into 64": (arch_json(4, 32), arch_json(4, 64), True),
    "2 king buckets into example 3's 10": (
        {**arch_json(3, 32), "layout": TWO_BUCKETS}, arch_json(3, 32), True),
    "chess768 into king buckets, a factoriser": (arch_json(2, 32), arch_json(3, 32), True),
    "chess768 into king buckets": (arch_json(2, 32), arch_json(3, 32), False),
    "1 simple into example 3, hidden 32 into 64": (arch_json(1, 32), arch_json(3, 64), True),
}


@pytest.mark.parametrize("name", MAPPINGS)
def test_a_grown_net_evaluates_as_the_old_net(tmp_path, name):
    old_arch, new_arch, factoriser = MAPPINGS[name]
    to_buckets = new_arch["inputs"] != old_arch["inputs"]
    old = _old(tmp_path / "old.nnue", old_arch, symmetric=to_buckets,
               simple_file=old_arch == arch_json(1, 32))
    start = start_from(old, _config(tmp_path, new_arch, factoriser))
    assert start.net.factoriser == factoriser and start.notes == []
    new = start.net.save(tmp_path / "new.nnue")
    before, after = old.read_bytes(), new.read_bytes()
    evals = set()
    for fen in random_fens(50, 8):
        expected = numpy_forward_arch(before, old_arch, fen)
        assert abs(numpy_forward_arch(after, new_arch, fen) - expected) <= 1, fen
        evals.add(expected)
    assert len(evals) > 20


def test_chess768_into_king_buckets_keeps_kings_on_files_a_to_d_and_says_so(tmp_path):
    """A king on files e-h mirrors a bucketed perspective's board: a net not symmetric left
    to right is the old one for kings on files a-d only, and a note says so."""
    old = _old(tmp_path / "old.nnue", arch_json(1, 32))
    start = start_from(old, _config(tmp_path, arch_json(3, 32), True))
    assert len(start.notes) == 1 and "files a-d only" in start.notes[0]
    new = start.net.save(tmp_path / "new.nnue")
    fens = [f for f in random_fens(300, 9) if _kings_on_files_a_to_d(f)]
    assert len(fens) > 20
    for fen in fens:
        assert numpy_forward_arch(new.read_bytes(), arch_json(3, 32), fen) == \
            numpy_forward_arch(old.read_bytes(), arch_json(1, 32), fen), fen


def test_the_factoriser_takes_the_shared_part_within_the_clip_and_the_sum_stays(tmp_path):
    old = _old(tmp_path / "old.nnue", arch_json(1, 32), symmetric=True)
    tensors = A.dequantise(A.load(old))
    tensors["l0w"][:, :8] = 1.5  # a rank of inputs beyond l0f's clip: l0w takes the rest
    start = grow(A.Arch(hidden=32), tensors, A.Arch.from_json(arch_json(3, 32)), True,
                 opt=AdamW(l0_clip=FACTORISER_CLIP))
    l0w, l0f = start[0].params["l0w"].reshape(-1, FEATURES, 32), start[0].params["l0f"]
    assert np.abs(l0f).max() <= FACTORISER_CLIP and np.abs(l0w).max() <= FACTORISER_CLIP
    assert np.array_equal(l0f[8:], tensors["l0w"][:, 8:].T.astype(np.float32))
    assert not l0w[:, 8:].any()  # within the clip the buckets' own weights are zero
    assert np.allclose(l0f[:8], FACTORISER_CLIP) and np.allclose(l0w[:, :8], 1.5 - 0.99)
    assert np.allclose(l0w + l0f, tensors["l0w"].T, atol=1e-6)
    assert start[1] == []


def test_new_neurons_have_zero_output_weights_and_random_inputs_and_learn(tmp_path):
    old = _old(tmp_path / "old.nnue", arch_json(1, 32))
    net = start_from(old, _config(tmp_path, arch_json(1, 48))).net
    l0w, l1w = net.params["l0w"], net.params["l1w"]
    assert not l1w[:, 32:48].any() and not l1w[:, 80:].any()
    assert np.abs(l0w[:, 32:]).min(axis=0).max() > 0 and l0w[:, 32:].std() > 0
    boards = D.random_records(256, seed=2)
    kernels = Kernels(net.copy(np.float64))
    kernels.run(boards, np.arange(len(boards)), 0.0, True)
    g = kernels.gradients()["l1w"]
    assert np.abs(g[:, 32:48]).sum() > 0 and np.abs(g[:, 80:]).sum() > 0


REFUSED = {  # (old arch, new arch, the words of the one line)
    "fewer neurons": (arch_json(1, 32), arch_json(1, 16), "hidden 32 cannot shrink to 16"),
    "example 4 from a simple net": (arch_json(1, 32), arch_json(4, 32),
                                    "example 4's layers cannot be grown from a net without"),
    "example 4 into a net without layers": (arch_json(4, 32), arch_json(3, 32),
                                            "example 4's layers cannot be dropped"),
    "another activation": (arch_json(1, 32), arch_json(1, 32, activation="crelu"),
                           "activation screlu cannot become crelu"),
    "king buckets into chess768": (arch_json(3, 32), arch_json(2, 32),
                                   "king buckets cannot be merged into chess768"),
    "fewer output buckets": (arch_json(2, 32, k=8), arch_json(2, 32, k=2),
                             "output bucket 0 of the new net spans the old net's output "
                             "buckets 0 and 1"),
    "a coarser bucket layout": (arch_json(3, 32), {**arch_json(3, 32), "layout": TWO_BUCKETS},
                                "king bucket 0 of the new net spans the old net's king "
                                "buckets 0 and 1"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_cannot_be_mapped_is_refused_naming_it(tmp_path, name):
    old_arch, new_arch, words = REFUSED[name]
    old = _old(tmp_path / "old.nnue", old_arch)
    with pytest.raises(GrowError, match=words) as e:
        start_from(old, _config(tmp_path, new_arch))
    assert A.Arch.from_json(old_arch).describe() in str(e.value)
    assert "\n" not in str(e.value)
