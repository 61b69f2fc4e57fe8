"""The parameter table: layout, defaults, and the text file format."""

import numpy as np
import pytest

from wasp import params as P


def test_offsets_cover_the_vector_without_overlap():
    seen = np.zeros(P.N_WEIGHTS, dtype=int)
    for p in P.PARAMS:
        n = p.size * (2 if p.phased else 1)
        seen[P.OFFSETS[p.name]:P.OFFSETS[p.name] + n] += 1
    assert (seen == 1).all()


def test_module_constants_name_the_offsets():
    assert (P.PAWN_VALUE, P.PAWN_VALUE_EG, P.KNIGHT_VALUE) == (0, 1, 2)
    assert P.PST_KNIGHT_EG == P.OFFSETS["pst_knight"] + 64
    assert P.KS_TABLE == P.OFFSETS["ks_table"]


def test_every_row_declares_the_constants_named_after_its_parameter():
    # a row binding another parameter's name (or none) would send the kernel to wrong weights
    for p in P.PARAMS:
        assert getattr(P, p.name.upper()) == P.OFFSETS[p.name], p.name
        if p.phased:
            assert getattr(P, p.name.upper() + "_EG") == P.OFFSETS[p.name] + p.size, p.name


def test_wasp_material_values_ship_as_a_parameter_file():
    from tests.conftest import ROOT

    W = P.load(ROOT / "wasp" / "evalfiles" / "wasp-1.02.txt")
    expect = {"pawn_value": (85, 100), "knight_value": (335, 320), "bishop_value": (335, 325),
              "rook_value": (465, 535), "queen_value": (975, 1035), "bishop_pair": (35, 35)}
    for name, (mg, eg) in expect.items():
        assert W[P.weight_index(name)] == mg
        assert W[P.weight_index(name, phase="eg")] == eg
    assert W[P.HUNG_PIECE] == -12


def test_defaults_are_the_tuned_set():
    from tests.conftest import ROOT

    tuned = P.load(ROOT / "datasets" / "tuned" / "union-deep-ks.txt")
    assert np.array_equal(P.default_weights(), tuned)
    assert P.default_weights()[P.weight_index("pawn_value")] == 71


def test_shapes_and_linearity_are_recorded():
    assert P.BY_NAME["pst_king"].shape == (64,)
    assert P.BY_NAME["passed_rank"].shape == (8,)
    assert P.BY_NAME["tempo"].shape == ()
    assert not P.BY_NAME["ks_table"].linear and not P.BY_NAME["ks_table"].phased
    assert not P.BY_NAME["df_opposite_bishops"].linear
    assert P.BY_NAME["rook_open_file"].linear
    assert not P.LINEAR[P.KS_TABLE] and P.LINEAR[P.ROOK_OPEN_FILE]
    assert P.EG_INDEX[P.ROOK_OPEN_FILE] == P.ROOK_OPEN_FILE_EG
    assert P.PHASE_OF[P.ROOK_OPEN_FILE_EG] == 1 and P.PHASE_OF[P.KS_TABLE] == 2


def test_file_round_trips(tmp_path):
    rng = np.random.default_rng(3)
    W = P.default_weights() + rng.integers(-50, 50, P.N_WEIGHTS)
    path = tmp_path / "w.txt"
    P.save(W, path)
    assert (P.load(path) == W).all()
    assert "pawn_value.mg = " in path.read_text()


def test_partial_file_keeps_defaults_and_accepts_comments(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("# my tweak\nrook_open_file.mg = 30  # was 22\n\n"
                    "ks_safe_check = [1, 2, 3, 4]\n")
    W = P.load(path)
    D = P.default_weights()
    assert W[P.ROOK_OPEN_FILE] == 30
    assert list(W[P.KS_SAFE_CHECK:P.KS_SAFE_CHECK + 4]) == [1, 2, 3, 4]
    W[P.ROOK_OPEN_FILE] = D[P.ROOK_OPEN_FILE]
    W[P.KS_SAFE_CHECK:P.KS_SAFE_CHECK + 4] = D[P.KS_SAFE_CHECK:P.KS_SAFE_CHECK + 4]
    assert (W == D).all()


@pytest.mark.parametrize("text, words", [
    ("rook_open = 3\n", ["rook_open", "line 1"]),
    ("tempo.mg = 1\nbishop_pair.eg = abc\n", ["bishop_pair.eg", "line 2", "not a number"]),
    ("passed_rank.mg = [1, 2, 3]\n", ["passed_rank.mg", "expected 8 values"]),
    ("pawn_value.mg = [1, 2]\n", ["pawn_value.mg", "expected 1 values"]),
    ("pst_king.eg = 5\n", ["pst_king.eg", "list of 64"]),
    ("tempo.mg = 1\ntempo.mg = 2\n", ["tempo.mg", "twice"]),
    ("pawn_value = 90\n", ["pawn_value", "unknown"]),
    ("ks_table = [1, 2\n", ["ks_table", "]"]),
    ("just words\n", ["line 1"]),
])
def test_bad_files_are_rejected_naming_the_parameter(tmp_path, text, words):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        P.load(path)
    for w in words:
        assert w in str(e.value)
