"""The clock referee of the timed tests (tests/wasp/helpers.py's Charge)."""

import os
import subprocess
import sys
import time

import pytest

from tests.wasp.helpers import Charge, charged_seconds, process_cpu_seconds, withheld_seconds


@pytest.mark.parametrize("wall, cpu, withheld, stolen, charged", [
    (1.0, 0.0, 0.0, 0.0, 1.0),  # an idle machine: the wall time
    (1.0, 0.2, 0.5, 0.0, 0.5),  # the host withheld half the step: not charged
    (1.0, 0.9, 0.5, 0.0, 0.9),  # but the CPU the engine used always is
    (1.0, 0.3, 1.5, 0.0, 0.3),  # withheld beyond the wall time (all cores queued): its CPU
    (1.0, None, 0.7, 0.25, 0.75),  # CPU time unreadable: the wall time less the steal only
])
def test_a_step_is_charged_its_wall_time_less_what_was_withheld_but_at_least_its_cpu(
        wall, cpu, withheld, stolen, charged):
    assert charged_seconds(wall, cpu, withheld, stolen) == pytest.approx(charged)


def test_work_is_charged_whatever_the_load():
    # CPU spent is charged even when the host withheld the rest of the wall time
    with Charge(own=True) as charge:
        t = time.process_time()
        while time.process_time() - t < 0.15:
            pass
    assert charge.cpu >= 0.15 and charge.seconds >= 0.15
    # never charged much beyond the wall time: the process's CPU clock (all its threads,
    # read at a coarser grain than the wall clock) may run a few ms past it
    assert charge.seconds <= charge.wall + 0.01


def test_a_process_is_charged_at_least_its_cpu_time():
    p = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                          "while time.process_time() - t < 0.3: pass\ntime.sleep(30)"])
    try:
        with Charge([p.pid]) as charge:
            deadline = time.monotonic() + 60
            while (process_cpu_seconds(p.pid) or 0) < 0.3 and time.monotonic() < deadline:
                time.sleep(0.02)
            charge.stop()  # while it sleeps (its CPU time is readable until it is reaped)
    finally:
        p.kill()
        p.wait()
    assert charge.cpu >= 0.25 and charge.seconds >= charge.cpu, (charge.wall, charge.cpu)


def test_waiting_is_charged_at_most_its_wall_time_and_at_least_its_cpu():
    with Charge(own=True) as charge:
        time.sleep(0.2)
    assert charge.wall >= 0.2 and charge.cpu < 0.1  # sleeping uses next to no CPU
    assert charge.cpu <= charge.seconds <= charge.wall
    assert charge.withheld >= 0 and withheld_seconds() >= 0
    assert process_cpu_seconds(os.getpid()) > 0
