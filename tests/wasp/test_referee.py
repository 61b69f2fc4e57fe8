"""The clock referee of the timed tests (tests/wasp/helpers.py's Charge)."""

import os
import subprocess
import sys
import time

from tests.wasp.helpers import Charge, process_cpu_seconds, withheld_seconds


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


def test_waiting_is_charged_as_wall_time_on_an_idle_machine():
    with Charge(own=True) as charge:
        time.sleep(0.2)
    assert charge.seconds == max(charge.cpu, charge.wall - charge.withheld)
    assert charge.withheld >= 0 and withheld_seconds() >= 0
    assert process_cpu_seconds(os.getpid()) > 0
