"""An engine's process: started in a session of its own, driven over its pipes (stdout read
with ``select``/``os.read``, the hot path kept in bytes: a move costs one ``write`` and a few
``read`` calls), its I/O logged (``-log``) and recorded game by game (transcript and stderr),
and the errors a process gives: it crashed or did not answer in time.
"""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import tempfile
import threading
import time
from collections import deque

HEAD_BYTES = 4096  # output kept from an engine's start, to explain a failed start
TRANSCRIPT_CAP = 32 << 20  # bytes of protocol text kept per game and engine (a flood is cut)
STDERR_CAP = 1 << 20  # bytes of stderr kept per game and engine (the last ones)


def kill_process(proc: subprocess.Popen) -> None:
    """Kill an engine started in a process group of its own (the process alone when the group
    is gone) and reap it, waiting 5 s at most."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            try:
                proc.kill()
            except OSError:
                pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass


class EngineError(Exception):
    """The engine failed; ``kind`` is "crash", "stall" or "timeout"."""

    kind = "crash"


class EngineCrashed(EngineError):
    kind = "crash"


class EngineTimeout(EngineError):
    kind = "timeout"


class Logger:
    """Thread-safe engine I/O log for ``-log FILE``."""

    def __init__(self, path: str):
        self._f = open(path, "a", buffering=1, encoding="utf-8")
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def write(self, name: str, direction: str, text: str) -> None:
        stamp = time.monotonic() - self._t0
        with self._lock:
            for line in text.splitlines():
                self._f.write(f"{stamp:10.3f} {name} {direction} {line}\n")

    def close(self) -> None:
        self._f.close()


class Recording:
    """What one engine said and was told, and its stderr, since the last ``take``.

    The hot path appends ``(perf_counter, direction, bytes)`` per write and per chunk
    read; lines are split and stamped only when a game's record is taken.
    """

    def __init__(self):
        self.chunks: list[tuple[float, bytes, bytes]] = []
        self.size = 0
        self.cut = False
        self.stderr = None  # an unnamed temporary file the engine writes its stderr to
        self._err_pos = 0

    def add(self, t: float, direction: bytes, data: bytes) -> None:
        if self.size < TRANSCRIPT_CAP:
            self.chunks.append((t, direction, data))
            self.size += len(data)
        else:
            self.cut = True

    def take(self) -> tuple[bytes, bytes]:
        """(transcript, stderr) since the last take, as bytes; then start afresh.

        The transcript has one line per protocol line: ``SECONDS DIR TEXT`` with
        SECONDS from the first line (monotonic clock), DIR ``>`` (sent to the
        engine) or ``<`` (received from it).
        """
        out = []
        chunks, self.chunks, self.size = self.chunks, [], 0
        t0 = chunks[0][0] if chunks else 0.0
        partial = b""
        for t, d, data in chunks:
            stamp = b"%.6f %s " % (t - t0, d)
            if d == b"<":
                data = partial + data
                lines = data.split(b"\n")
                partial = lines.pop()
            elif data:
                lines = data.rstrip(b"\n").split(b"\n")
            else:
                continue
            out.extend(stamp + ln.rstrip(b"\r") for ln in lines)
        if partial:
            out.append(b"%.6f < " % (chunks[-1][0] - t0) + partial)
        if self.cut:
            out.append(b"# transcript cut at %d MB" % (TRANSCRIPT_CAP >> 20))
            self.cut = False
        text = b"\n".join(out) + b"\n" if out else b""
        return text, self._take_stderr()

    def _take_stderr(self) -> bytes:
        f = self.stderr
        if f is None:
            return b""
        try:
            end = os.fstat(f.fileno()).st_size
            start = self._err_pos
            cut = end - start > STDERR_CAP
            if cut:
                start = end - STDERR_CAP
            data = os.pread(f.fileno(), end - start, start) if end > start else b""
        except OSError:
            return b""
        self._err_pos = end
        if cut:
            data = b"[stderr cut: its last %d bytes follow]\n" % STDERR_CAP + data
        return data

    def close_stderr(self) -> None:
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None


class EngineProcess:
    """An engine subprocess with a line reader on its stdout; `cfg` is its EngineConfig (the
    command, arguments, directory, environment and name)."""

    def __init__(self, cfg, logger: Logger | None, rec: Recording | None = None):
        self.cfg = cfg
        self.logger = logger
        self.rec = rec
        err = subprocess.DEVNULL
        if rec is not None:
            rec.close_stderr()
            rec.stderr = tempfile.TemporaryFile(prefix="wasp-stderr-")
            rec._err_pos = 0
            err = rec.stderr
        env = dict(os.environ)
        env.update(cfg.env)
        cmd = cfg.cmd
        if cfg.dir and not os.path.isabs(cmd) and os.sep in cmd:
            cmd = os.path.join(cfg.dir, cmd)
        try:
            self.proc = subprocess.Popen(
                [cmd, *cfg.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=cfg.dir or None,
                env=env,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as e:
            raise EngineCrashed(f"cannot start {shlex.join(cfg.argv())}: {e}") from e
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._buf = b""
        self._lines: deque[bytes] = deque()
        self.last_read = 0.0  # perf_counter() when the last chunk arrived
        self.head = b""  # the first HEAD_BYTES of output: start failures look at it

    def send(self, text: str) -> None:
        data = text.encode()
        if self.rec is not None:
            self.rec.add(time.perf_counter(), b">", data)
        if self.logger:
            self.logger.write(self.cfg.name, ">", text)
        try:
            os.write(self._in, data)
        except (BrokenPipeError, OSError) as e:
            raise EngineCrashed(f"{self.cfg.name}: cannot write to engine: {e}") from e

    def _read(self, deadline: float | None) -> bytes | None:
        """The next bytes the engine wrote (recorded), or None when the wait woke with none;
        EngineTimeout past ``deadline`` (a perf_counter() value), EngineCrashed at its end."""
        if deadline is None:
            timeout = -1
        else:
            timeout = int((deadline - time.perf_counter()) * 1000.0 + 0.999)
            if timeout <= 0:
                raise EngineTimeout(f"{self.cfg.name}: no answer in time")
        if not self._poll.poll(timeout):
            return None
        chunk = os.read(self._out, 65536)
        self.last_read = time.perf_counter()
        if not chunk:
            raise EngineCrashed(f"{self.cfg.name}: engine closed its output (crashed?)")
        if self.rec is not None:
            self.rec.add(self.last_read, b"<", chunk)
        return chunk

    def readline(self, deadline: float | None) -> bytes:
        """Next line (bytes, no newline); ``deadline`` is a perf_counter() value."""
        lines = self._lines
        while not lines:
            chunk = self._read(deadline)
            if chunk is None:
                continue
            if len(self.head) < HEAD_BYTES:
                self.head += chunk[: HEAD_BYTES - len(self.head)]
            buf = self._buf + chunk
            parts = buf.split(b"\n")
            self._buf = parts.pop()
            for p in parts:
                if p.endswith(b"\r"):
                    p = p[:-1]
                lines.append(p)
            if self.logger:
                self.logger.write(self.cfg.name, "<", b"\n".join(parts).decode(errors="replace"))
        return lines.popleft()

    def read_until(self, prefix: bytes, deadline: float | None, keep: bytes):
        """Skip output up to the first line starting with ``prefix``.

        The hot path of a search: chunks are scanned with bytes methods, not
        split into lines. Returns ``(line, last)`` where ``last`` is the last
        skipped line containing ``keep`` (or None).
        """
        last = None
        lines = self._lines
        while lines:  # lines already split by readline()
            line = lines.popleft()
            if line.startswith(prefix):
                return line, last
            if keep in line:
                last = line
        data = self._buf
        self._buf = b""
        marker = b"\n" + prefix
        while True:
            # Complete lines are data[:end]; data[end:] is a partial line.
            end = data.rfind(b"\n") + 1
            if end:
                if data.startswith(prefix):
                    pos = 0
                else:
                    pos = data.find(marker, 0, end)
                    pos = pos + 1 if pos >= 0 else -1
                if pos >= 0 and data.find(b"\n", pos) >= 0:
                    stop = data.find(b"\n", pos)
                    line = data[pos:stop].rstrip(b"\r")
                    k = data.rfind(keep, 0, pos)
                    if k >= 0:
                        last = data[data.rfind(b"\n", 0, k) + 1 : data.find(b"\n", k)]
                    rest = data[stop + 1 :]
                    if rest:
                        parts = rest.split(b"\n")
                        self._buf = parts.pop()
                        lines.extend(p.rstrip(b"\r") for p in parts)
                    return line, last
                k = data.rfind(keep, 0, end)
                if k >= 0:
                    last = data[data.rfind(b"\n", 0, k) + 1 : data.find(b"\n", k)].rstrip(b"\r")
                data = data[end:]
            try:
                chunk = self._read(deadline)
            except EngineError:
                self._buf = data  # what was read stays for the next call
                raise
            if chunk is None:
                continue
            if self.logger:
                self.logger.write(self.cfg.name, "<", chunk.decode(errors="replace"))
            data += chunk

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, quit_cmd: str | None, wait: float = 1.0) -> None:
        if self.proc.poll() is None and quit_cmd:
            try:
                self.send(quit_cmd)
                self.proc.wait(wait)
            except (EngineError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        kill_process(self.proc)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
