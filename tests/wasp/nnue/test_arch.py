"""One architecture description: its fields' validation, NET.json, bullet's tensor shapes, the
material-count output buckets, and files written as bullet's examples' `save_format` lists
write them (checked against a test-only writer that follows bullet's SavedFormat rules)."""

import json
import math

import numpy as np
import pytest

from wasp.nnue import arch as A
from wasp.nnue import netfile
from wasp.nnue.arch import Arch

EXAMPLE_LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
                  8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]  # examples 3 and 4


def example(step, hidden=32, k=8):
    """The architecture of bullet's progression example `step` (1 to 4), narrower."""
    if step == 1:
        return Arch(hidden=hidden)
    if step == 2:
        return Arch(hidden=hidden, output_buckets=k)
    if step == 3:
        return Arch(inputs="buckets-mirrored", layout=EXAMPLE_LAYOUT, hidden=hidden,
                    output_buckets=k)
    return Arch(inputs="buckets-mirrored", layout=EXAMPLE_LAYOUT, hidden=hidden,
                activation="crelu", output_buckets=k, layers=[16, 32])


# ---- a test-only writer: bullet's SavedFormat rules, written apart from wasp.nnue.arch


def _bullet_round(x):
    """Rust's f64::round: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _column_major(w):
    """bullet writes an (rows, cols) weight column by column."""
    rows, cols = w.shape
    return [w[r, c] for c in range(cols) for r in range(rows)]


def _row_major(w):
    rows, cols = w.shape
    return [w[r, c] for r in range(rows) for c in range(cols)]


def bullet_file(entries):
    """entries: (values in write order, "i16" | "i8" | "f32", scale) -> the file's bytes."""
    out = bytearray()
    for values, kind, scale in entries:
        for v in values:
            v = np.float32(v)
            if kind == "f32":
                out += np.array([v], "<f4").tobytes()
            else:
                q = _bullet_round(float(scale) * float(v))
                out += np.array([q], "<i2" if kind == "i16" else "i1").tobytes()
    return bytes(out) + bytes(-len(out) % 64)


def random_tensors(a: Arch, seed=1, factoriser=False, scale=0.4):
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-scale, scale, shape).astype(np.float32)
            for name, shape in a.shapes(factoriser).items()}


# ---- the description


def test_the_defaults_are_example_1_with_bullets_constants():
    a = Arch()
    assert (a.inputs, a.hidden, a.activation, a.output_buckets, a.layers) == \
           ("chess768", 128, "screlu", 1, ())
    assert (a.qa, a.qb, a.scale) == (255, 64, 400) and a.simple and a.input_buckets == 1


def test_example_3s_layout_has_ten_buckets_and_its_shorthand():
    a = example(3, hidden=512)
    assert a.input_buckets == 10 and a.features == 7680 and a.mirrored
    assert a.describe() == "(768x10hm -> 512)x2 -> 1x8, SCReLU"
    assert example(4, 1024).describe() == \
        "(768x10hm -> 1024)x2 -> pairwise -> 16x8 -> 32x8 -> 1x8, CReLU then SCReLU"


@pytest.mark.parametrize("field,value", [
    ("inputs", "halfkp"), ("layout", [0] * 31), ("layout", [0] * 31 + [-1]),
    ("layout", [0] * 31 + [32]), ("layout", "0,1"), ("hidden", 8), ("hidden", 4096),
    ("hidden", 128.5), ("hidden", True), ("activation", "relu"), ("output_buckets", 0),
    ("output_buckets", 33), ("layers", [16]), ("layers", [32, 32]), ("qa", 0),
    ("qb", 40000), ("scale", -400)])
def test_a_bad_field_is_one_value_error_naming_it(field, value):
    fields = example(3).to_json()
    fields[field] = value
    with pytest.raises(ValueError, match=rf"^arch: {field}\b"):
        Arch(**fields)


def test_chess768_takes_no_bucket_layout():
    with pytest.raises(ValueError, match="arch: layout .* chess768"):
        Arch(layout=EXAMPLE_LAYOUT)


def test_the_multi_layer_net_needs_crelu_and_an_even_width():
    with pytest.raises(ValueError, match="arch: activation must be crelu"):
        Arch(hidden=64, layers=[16, 32])
    with pytest.raises(ValueError, match="arch: hidden must be even"):
        Arch(hidden=65, activation="crelu", layers=[16, 32])


def test_l1b_of_qa_times_qb_must_fit_in_i16():
    with pytest.raises(ValueError, match=r"arch: qa \* qb"):
        Arch(qa=255, qb=256)
    assert Arch(qa=255, qb=128, activation="crelu", layers=[16, 32]).qb == 128


def test_the_json_object_round_trips_and_names_a_missing_or_unknown_field():
    for step in (1, 2, 3, 4):
        a = example(step)
        assert Arch.from_json(json.loads(json.dumps(a.to_json()))) == a
    obj = example(3).to_json()
    assert list(obj) == ["inputs", "layout", "hidden", "activation", "output_buckets",
                         "layers", "qa", "qb", "scale"]
    del obj["qb"]
    with pytest.raises(ValueError, match="missing field 'qb'"):
        Arch.from_json(obj)
    with pytest.raises(ValueError, match="unknown field 'factoriser'"):
        Arch.from_json({**example(3).to_json(), "factoriser": True})
    assert Arch.from_json({**Arch().to_json(), "scale": 400.0}).scale == 400


# ---- tensors in bullet's graph convention


def test_the_tensor_shapes_are_bullets_graph_shapes():
    n = 512
    assert example(1, n).shapes() == {"l0w": (n, 768), "l0b": (n,), "l1w": (1, 2 * n),
                                      "l1b": (1,)}
    assert example(2, n).shapes()["l1w"] == (8, 2 * n)
    assert example(3, n).shapes(factoriser=True) == {
        "l0w": (n, 7680), "l0f": (n, 768), "l0b": (n,), "l1w": (8, 2 * n), "l1b": (8,)}
    assert example(4, n).shapes(factoriser=True) == {
        "l0w": (n, 7680), "l0f": (n, 768), "l0b": (n,), "l1w": (128, n), "l1b": (128,),
        "l2w": (256, 16), "l2b": (256,), "l3w": (8, 32), "l3b": (8,)}


def test_the_saved_formats_are_the_examples_lists():
    def fmt(a):
        return [(s.name, s.transpose, s.dtype, s.scale) for s in a.saved_format()]

    assert fmt(example(1)) == [("l0w", False, "i16", 255), ("l0b", False, "i16", 255),
                               ("l1w", False, "i16", 64), ("l1b", False, "i16", 255 * 64)]
    assert fmt(example(2)) == fmt(example(3)) == [
        ("l0w", False, "i16", 255), ("l0b", False, "i16", 255), ("l1w", True, "i16", 64),
        ("l1b", False, "i16", 255 * 64)]
    assert fmt(example(4)) == [
        ("l0w", False, "i16", 255), ("l0b", False, "i16", 255), ("l1w", True, "i8", 64),
        ("l1b", False, "f32", None), ("l2w", True, "f32", None), ("l2b", False, "f32", None),
        ("l3w", True, "f32", None), ("l3b", False, "f32", None)]


@pytest.mark.parametrize("step,size", [(1, 197440), (2, 2 * (768 * 128 + 128 + 8 * 256 + 8)),
                                       (3, 2 * (7680 * 128 + 128 + 8 * 256 + 8)),
                                       (4, 2 * (7680 * 128 + 128) + 128 * 128
                                        + 4 * (128 + 256 * 16 + 256 + 8 * 32 + 8))])
def test_file_sizes_are_the_tensors_padded_to_64_bytes(step, size):
    a = example(step, hidden=128)
    assert a.file_size() == -(-size // 64) * 64 and a.file_size() % 64 == 0
    if step == 1:
        assert a.file_size() == netfile.file_size(128)


# ---- material-count output buckets


def test_output_buckets_are_bullets_material_count():
    for k in range(1, 33):
        divisor = math.ceil(32 / k)
        for pieces in range(2, 33):
            assert A.output_bucket(pieces, k) == (pieces - 2) // divisor < k
    assert [A.output_bucket(p, 8) for p in (2, 5, 6, 9, 10, 31, 32)] == [0, 0, 1, 1, 2, 7, 7]
    assert A.output_bucket(40, 8) == 7  # more than 32 pieces (no game reaches it): the last


# ---- NET.json


def test_net_json_is_the_nets_name_plus_json(tmp_path):
    assert A.meta_path(tmp_path / "a.nnue") == tmp_path / "a.nnue.json"


def test_write_meta_keeps_what_the_trainer_wrote_and_adds_the_arch(tmp_path):
    net = tmp_path / "n.nnue"
    A.meta_path(net).write_text(json.dumps({"hidden": 32, "losses": [1, 2]}))
    A.write_meta(net, example(3), {"note": "x"})
    meta = json.loads(A.meta_path(net).read_text())
    assert meta["losses"] == [1, 2] and meta["note"] == "x"
    assert meta["arch"] == example(3).to_json()
    assert A.arch_of(net) == example(3)


def test_no_net_json_or_no_arch_in_it_is_no_arch(tmp_path):
    net = tmp_path / "n.nnue"
    assert A.arch_of(net) is None
    A.meta_path(net).write_text('{"hidden": 128}')
    assert A.arch_of(net) is None


def test_a_bad_net_json_names_its_file(tmp_path):
    net = tmp_path / "n.nnue"
    A.meta_path(net).write_text("{not json")
    with pytest.raises(ValueError, match="n.nnue.json: not JSON"):
        A.arch_of(net)
    A.meta_path(net).write_text(json.dumps({"arch": {**Arch().to_json(), "hidden": 3}}))
    with pytest.raises(ValueError, match="n.nnue.json: arch: hidden"):
        A.arch_of(net)


def test_an_arch_file_holds_the_same_object(tmp_path):
    path = tmp_path / "arch.json"
    path.write_text(json.dumps({"arch": example(4).to_json()}))
    assert A.read_arch_file(path) == example(4)
    path.write_text(json.dumps(example(4).to_json()))
    with pytest.raises(ValueError, match='no "arch" object'):
        A.read_arch_file(path)


# ---- the file, as each example's save_format writes it


def _entries(a: Arch, t):
    """bullet's save_format lists of the four examples, over float tensors `t`."""
    l0w = t["l0w"].copy()
    if "l0f" in t:  # .transform: the factoriser repeated over the buckets, added in f32
        l0w = (l0w.astype(np.float32) + np.concatenate([t["l0f"]] * a.input_buckets, axis=1)
               .astype(np.float32)).astype(np.float32)
    qa, qb = a.qa, a.qb
    if not a.layers:
        l1w = t["l1w"]
        l1w_values = _row_major(l1w) if a.output_buckets > 1 else _column_major(l1w)
        return [(_column_major(l0w), "i16", qa), (list(t["l0b"]), "i16", qa),
                (l1w_values, "i16", qb), (list(t["l1b"]), "i16", qa * qb)]
    return [(_column_major(l0w), "i16", qa), (list(t["l0b"]), "i16", qa),
            (_row_major(t["l1w"]), "i8", qb), (list(t["l1b"]), "f32", None),
            (_row_major(t["l2w"]), "f32", None), (list(t["l2b"]), "f32", None),
            (_row_major(t["l3w"]), "f32", None), (list(t["l3b"]), "f32", None)]


@pytest.mark.parametrize("step,factoriser", [(1, False), (2, False), (3, False), (3, True),
                                             (4, True)])
def test_save_writes_the_bytes_of_the_examples_save_format(tmp_path, step, factoriser):
    a = example(step, hidden=16, k=4)
    t = random_tensors(a, seed=step, factoriser=factoriser)
    path = A.save(tmp_path / "n.nnue", a, t)
    assert path.read_bytes() == bullet_file(_entries(a, t))
    assert path.stat().st_size == a.file_size()


def test_save_rounds_halves_away_from_zero_as_bullet_does(tmp_path):
    a = example(4, hidden=16, k=1)
    t = {name: np.zeros(shape, np.float32) for name, shape in a.shapes().items()}
    t["l0b"][:4] = [1.5, -1.5, 0.5, 2.5]  # x 255: 382.5, -382.5, 127.5, 637.5
    t["l1w"][0, :3] = [1 / 128, -1 / 128, 3 / 128]  # x 64: 0.5, -0.5, 1.5
    got = A.load(A.save(tmp_path / "n.nnue", a, t), a).tensors
    assert list(got["l0b"][:4]) == [383, -383, 128, 638]
    assert list(got["l1w"][0, :3]) == [1, -1, 2]


def test_save_refuses_a_value_its_type_cannot_hold_naming_the_tensor(tmp_path):
    a = example(4, hidden=16, k=1)
    t = random_tensors(a)
    t["l1w"][0, 0] = 2.0  # 128 is no i8
    with pytest.raises(ValueError, match="l1w: 2.0 \\* 64 does not fit in i8"):
        A.save(tmp_path / "n.nnue", a, t)
    assert not (tmp_path / "n.nnue").exists()


def test_save_names_a_missing_unknown_or_misshapen_tensor(tmp_path):
    a = example(2, hidden=16)
    t = random_tensors(a)
    with pytest.raises(ValueError, match="l2w: no such tensor"):
        A.save(tmp_path / "n", a, {**t, "l2w": np.zeros((1, 1))})
    with pytest.raises(ValueError, match="l1b: missing"):
        A.save(tmp_path / "n", a, {k: v for k, v in t.items() if k != "l1b"})
    with pytest.raises(ValueError, match=r"l1w: shape \(16, 8\), expected \(8, 32\)"):
        A.save(tmp_path / "n", a, {**t, "l1w": np.zeros((16, 8))})


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_load_gives_the_saved_values_in_the_files_shapes(tmp_path, step):
    a = example(step, hidden=16, k=4)
    t = random_tensors(a, seed=10 + step, factoriser=step >= 3)
    path = A.save(tmp_path / "n.nnue", a, t)
    A.write_meta(path, a)
    net = A.load(path)
    assert net.arch == a and net.hidden == 16
    l0w = t["l0w"] + np.tile(t.get("l0f", np.zeros((16, 768), np.float32)), (1, a.input_buckets))
    assert net.tensors["l0w"].shape == (a.features, 16) and net.tensors["l0w"].dtype == np.int16
    assert np.array_equal(net.tensors["l0w"], np.round(l0w.T.astype(np.float64) * 255))
    if a.layers:
        assert net.tensors["l1w"].dtype == np.int8 and net.tensors["l1w"].shape == (64, 16)
        assert np.array_equal(net.tensors["l2w"], t["l2w"]) and net.tensors["l2w"].dtype == \
            np.float32
        assert np.array_equal(net.tensors["l3b"], t["l3b"])
    else:
        assert net.tensors["l1w"].shape == (a.output_buckets, 32)
        assert np.array_equal(net.tensors["l1w"], np.round(t["l1w"].astype(np.float64) * 64))
    A.write_tensors(tmp_path / "again.nnue", a, net.tensors)
    assert (tmp_path / "again.nnue").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_dequantise_gives_the_floats_in_graph_shapes_that_save_writes_back_the_same(tmp_path,
                                                                                    step):
    a = example(step, hidden=16, k=4)
    t = random_tensors(a, seed=20 + step)
    path = A.save(tmp_path / "n.nnue", a, t)
    floats = A.dequantise(A.load(path, a))
    assert {k: v.shape for k, v in floats.items()} == a.shapes()
    for name, saved in zip(a.shapes(), a.saved_format(), strict=True):
        step_size = 0.5 / saved.scale if saved.scale else 0.0
        assert np.abs(floats[name] - t[name]).max() <= step_size + 1e-7, name
    assert A.save(tmp_path / "again.nnue", a, floats).read_bytes() == path.read_bytes()


def test_a_net_without_net_json_is_example_1_told_by_its_size(tmp_path):
    a = example(1, hidden=48)
    path = A.save(tmp_path / "n.nnue", a, random_tensors(a))
    net = A.load(path)
    assert net.arch == a
    assert np.array_equal(net.tensors["l1w"].ravel(), netfile.read(path).l1w)


def test_a_file_the_arch_does_not_fit_is_one_error_naming_it(tmp_path):
    a = example(3, hidden=16)
    path = A.save(tmp_path / "n.nnue", a, random_tensors(a))
    A.write_meta(path, example(2, hidden=16))
    with pytest.raises(ValueError, match=r"n.nnue: \d+ bytes, but \(768 -> 16\)x2 -> 1x8"):
        A.load(path)


def test_the_simple_writer_is_the_old_layout_byte_for_byte(tmp_path):
    rng = np.random.default_rng(3)
    net = netfile.Net(rng.integers(-300, 300, (768, 5)).astype(np.int16),
                      rng.integers(-300, 300, 5).astype(np.int16),
                      rng.integers(-100, 100, 10).astype(np.int16), -1234)
    netfile.write(net, tmp_path / "n.nnue")
    old = np.concatenate([net.l0w.ravel(), net.l0b, net.l1w, [net.l1b]]).astype("<i2").tobytes()
    assert (tmp_path / "n.nnue").read_bytes() == old + bytes(-len(old) % 64)
    back = netfile.read(tmp_path / "n.nnue")
    assert np.array_equal(back.l0w, net.l0w) and back.l1b == -1234
