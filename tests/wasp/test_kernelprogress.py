"""The progress bar while numba compiles kernels (wasp.kernelprogress)."""

import io
import sys
import types

import pytest

numba = pytest.importorskip("numba")

from wasp.kernelprogress import (  # noqa: E402
    ChildProgress,
    kernel_counts,
    kernel_name,
    kernel_progress,
)

PROBE = '''
from numba import njit

@njit
def inner(x):
    s = 0
    for i in range(x):
        s += i * i
    return s

@njit
def outer(x):
    return inner(x) + 1
'''


@pytest.fixture
def probe():
    """A project module (by its name) with two fresh, uncompiled kernels."""
    module = types.ModuleType("wasp._progress_probe")
    sys.modules[module.__name__] = module
    exec(compile(PROBE, "<probe>", "exec"), module.__dict__)
    yield module
    del sys.modules[module.__name__]


def test_a_compile_shows_each_kernel_counted_and_closes_with_the_total(probe):
    out = io.StringIO()
    before = kernel_counts()
    with kernel_progress(file=out) as progress:
        assert probe.outer(10) == 286
    text = out.getvalue()
    assert progress.compiled == 2  # outer, and inner compiled inside it
    assert "compiling kernels" in text and "2 compilations in" in text, text
    ready, defined = kernel_counts()
    assert ready == before[0] + 2 and defined == before[1]
    assert kernel_name(probe.inner) == "_progress_probe.inner"


def test_loaded_or_compiled_kernels_show_nothing(probe):
    probe.outer(3)  # compiled before the bar
    out = io.StringIO()
    with kernel_progress(file=out) as progress:
        assert probe.outer(4) == 15
    assert out.getvalue() == "" and progress.compiled == 0 and progress.ticker is None


def test_a_terminal_sees_the_kernel_names_tick_by_tick(probe, monkeypatch):
    import time

    import wasp.kernelprogress as kp

    monkeypatch.setattr(kp, "TICK", 0.05)
    out = io.StringIO()
    out.isatty = lambda: True  # a terminal: a line each tick, the kernel's name in it
    with kernel_progress(file=out):
        probe.outer(5)
        time.sleep(0.3)  # ticks after the compile, before the bar closes
    lines = out.getvalue().split("\r")
    assert sum("_progress_probe." in line for line in lines) >= 3, lines


def test_disabled_is_a_no_op(probe):
    with kernel_progress(file=io.StringIO(), enabled=False) as progress:
        probe.outer(2)
    assert progress is None


def test_the_bar_closes_when_compiles_pause_and_opens_again(probe, monkeypatch):
    import time

    import wasp.kernelprogress as kp

    monkeypatch.setattr(kp, "TICK", 0.05)
    monkeypatch.setattr(kp, "IDLE", 0.1)
    out = io.StringIO()
    with kernel_progress(file=out) as progress:
        probe.inner(3)
        time.sleep(0.5)  # no compile: the bar gives way to other output
        assert progress.bar is None and out.getvalue().count("1 compilations in") == 1
        probe.outer(3)  # a new bar for the next compile
    assert out.getvalue().count("compilations in") == 2, out.getvalue()


def test_child_bar_counts_every_childs_compiles_against_their_expected_sum():
    out = io.StringIO()
    bar = ChildProgress({"hand": 3, "tuner": 2}, file=out)
    assert bar.bar is None and out.getvalue() == ""  # nothing compiled: nothing shown
    bar.started("hand", 0, "search._search")
    assert (bar.bar.n, bar.bar.total) == (0, 5)
    bar.started("tuner", 0, "objective._error_kernel")
    bar.started("hand", 2, "evaluate.evaluate")
    bar.started("tuner", 1, "objective._qsearch")
    assert (bar.bar.n, bar.bar.total) == (3, 5)
    bar.started("tuner", 2, "objective._leaf")  # a third compile: the tuner's count grows
    assert (bar.bar.n, bar.bar.total) == (4, 6)
    bar.ended("hand")
    bar.ended("tuner")
    assert (bar.bar.n, bar.bar.total) == (6, 6)
    bar.close()
    assert bar.bar is None
    text = out.getvalue()
    assert "compiling kernels: 6/6 kernels" in text and "6 compilations in" in text


def test_child_bar_shows_nothing_when_no_child_compiles():
    out = io.StringIO()
    bar = ChildProgress({"hand": 3}, file=out)
    bar.tick()
    bar.ended("hand")
    bar.close()
    assert out.getvalue() == ""
