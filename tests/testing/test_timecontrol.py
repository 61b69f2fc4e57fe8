import math

import pytest

from testing.timecontrol import Clock, TimeControl


@pytest.mark.parametrize(
    "text,base,inc,moves",
    [
        ("1+0.01", 1.0, 0.01, 0),
        ("15+0.15", 15.0, 0.15, 0),
        ("0:15+0.15", 15.0, 0.15, 0),
        ("40/60", 60.0, 0.0, 40),
        ("40/1:30+1", 90.0, 1.0, 40),
        (".5", 0.5, 0.0, 0),
    ],
)
def test_parse(text, base, inc, moves):
    tc = TimeControl.parse(text)
    assert (tc.base, tc.inc, tc.moves) == (base, inc, moves)


def test_parse_inf_and_tags():
    assert TimeControl.parse("inf").infinite
    assert TimeControl.parse("15+0.15").pgn_tag() == "15+0.15"
    assert TimeControl.parse("40/60").pgn_tag() == "40/60"
    assert str(TimeControl.parse("0:15+0.15")) == "15+0.15"


@pytest.mark.parametrize("bad", ["", "abc", "1+", "+1", "0", "1+0.1+2", "-5"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        TimeControl.parse(bad)


def test_clock_increment_margin_and_periods():
    c = Clock(TimeControl.parse("1+0.1"))
    assert c.punch(0.5, 0.0)
    assert math.isclose(c.remaining, 0.6)
    assert c.punch(0.65, 0.1)  # over by 0.05, inside the margin
    assert math.isclose(c.remaining, 0.1)
    assert not c.punch(0.5, 0.1)  # over by 0.4: lost on time
    p = Clock(TimeControl.parse("2/10"))
    assert p.moves_to_go() == 2
    p.punch(1.0, 0)
    p.punch(1.0, 0)
    assert math.isclose(p.remaining, 18.0) and p.moves_to_go() == 2
