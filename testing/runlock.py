"""A run directory's lock: held by the process playing or tuning in it.

It keeps two processes from writing one run (a second `-resume` of a run still going), and
lets readers such as the dashboard (`wasp gui --runs`) tell a running run from one that was
stopped, without writing anything. The lock is an advisory `flock` on ``running.lock``, so the
kernel drops it when its process dies, even by SIGKILL: a killed run never looks alive.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

try:
    import fcntl
except ImportError:  # not POSIX: no lock, and every run reads as not running
    fcntl = None

LOCK_NAME = "running.lock"


class RunBusy(RuntimeError):
    """Another live process holds the run directory."""


class RunLock:
    """``with RunLock(rundir):`` while a run writes to `rundir`."""

    def __init__(self, rundir: str):
        self.path = os.path.join(rundir, LOCK_NAME)
        self._file = None

    def acquire(self) -> RunLock:
        if fcntl is None or self._file is not None:
            return self
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        f = open(self.path, "a+", encoding="utf-8")
        for _ in range(10):  # a reader's probe holds the lock for microseconds
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                time.sleep(0.05)
        else:
            holder = _holder(self.path)
            f.close()
            who = f" (pid {holder['pid']} on {holder['host']})" if holder else ""
            raise RunBusy(f"{os.path.dirname(self.path) or '.'} is in use by another "
                          f"process{who}: wait for it or stop it first") from None
        f.seek(0)
        f.truncate()
        f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                            "since": time.time(), "argv": sys.argv}) + "\n")
        f.flush()
        self._file = f
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the flock
            self._file = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _holder(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read() or "null")
    except (OSError, ValueError):
        return None


def is_running(rundir: str) -> bool:
    """True while a live process holds the run's lock (read-only: opens the file to test)."""
    path = os.path.join(rundir, LOCK_NAME)
    if fcntl is None or not os.path.exists(path):
        return False
    try:
        f = open(path, encoding="utf-8")
    except OSError:
        return False
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False
