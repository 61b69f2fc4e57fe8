"""testing.pgn: a move's comment, as the runner writes it, reads back to the same figures."""

import pytest

from testing.config import PgnOptions
from testing.game import MoveInfo
from testing.pgn import move_comment, read_move_comment

ALL = PgnOptions(nodes=True, seldepth=True, nps=True, hashfull=True, tbhits=True, pv=True,
                 timeleft=True, latency=True)


@pytest.mark.parametrize("info, said", [
    (MoveInfo("e2e4", 35, None, 12, 0.123), {"score": 35, "depth": 12, "seconds": 0.123}),
    (MoveInfo("e2e4", -250, None, 7, 1.5), {"score": -250, "depth": 7, "seconds": 1.5}),
    (MoveInfo("e2e4", 0, None, 1, 0.0), {"score": 0, "depth": 1, "seconds": 0.0}),
    (MoveInfo("e2e4", None, 5, 30, 0.01), {"mate": 5, "depth": 30, "seconds": 0.01}),
    (MoveInfo("e2e4", None, -3, 9, 2.0), {"mate": -3, "depth": 9, "seconds": 2.0}),
    (MoveInfo("e2e4", None, None, None, 0.25), {"seconds": 0.25}),
])
@pytest.mark.parametrize("opts", [None, ALL])
def test_a_comment_reads_back_as_written(info, said, opts):
    info.nodes, info.seldepth, info.pv, info.timeleft = 1000, 14, "e2e4 e7e5", 3.2
    assert read_move_comment(move_comment(info, opts)) == said
    assert read_move_comment(move_comment(info, opts) + ", White wins by adjudication") == said


def test_book_moves_and_other_text():
    assert read_move_comment("book") == {"book": True}
    assert read_move_comment(" book, Black resigns ") == {"book": True}
    assert read_move_comment("White resigns") == {}
    assert read_move_comment("") == {}
