"""Static exchange evaluation (wasp.see)."""

import pytest

from wasp.board import Position
from wasp.searchparams import default_search_params
from wasp.see import see


def _see(fen, uci):
    p = Position(fen)
    return int(see(p.T, p.S, p.parse_uci(uci), default_search_params(), 0))


@pytest.mark.parametrize("fen, move, value", [
    # Pawn takes an undefended knight.
    ("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", "e4d5", 325),
    # Rook takes a pawn defended by a pawn: loses the exchange rook for pawn.
    ("4k3/8/2p5/3p4/8/8/8/3RK3 w - - 0 1", "d1d5", 100 - 500),
    # Knight takes a pawn defended by a rook, but our rook behind makes RxN lose: +P.
    ("4k3/4r3/8/4p3/8/3N4/8/4RK2 w - - 0 1", "d3e5", 100),
    # Without our rook behind, the recapture costs the knight.
    ("4k3/4r3/8/4p3/8/3N4/8/5K2 w - - 0 1", "d3e5", 100 - 325),
    # Quiet move to an attacked square.
    ("4k3/8/8/3p4/8/2N5/8/4K3 w - - 0 1", "c3e4", -325),
    # Quiet safe move.
    ("4k3/8/8/8/8/2N5/8/4K3 w - - 0 1", "c3e4", 0),
    # The king may take an undefended queen, not a defended rook.
    ("4k3/8/8/8/8/8/3q4/3K4 w - - 0 1", "d1d2", 1000),
])
def test_see_values(fen, move, value):
    assert _see(fen, move) == value


def test_see_en_passant_and_promotion():
    assert _see("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6") == 100
    assert _see("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q") == 900
