"""`import wasp` stays light; the public face is reachable from the package."""

import subprocess
import sys


def test_import_wasp_does_not_load_numba_or_pandas():
    code = "import sys, wasp; print('numba' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]


def test_protocols_and_the_engine_layer_import_without_numba():
    """`uci` is answered before the kernels load: the protocol modules, the engine layer and
    the option tables must not pull numba in."""
    code = ("import sys, wasp.uci, wasp.xboard, wasp.engine, wasp.searchparams; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.split() == ["False"]


def test_position_is_reachable_from_the_package():
    import wasp

    p = wasp.Position(wasp.STARTING_FEN)
    assert len(p.legal_moves()) == 20
