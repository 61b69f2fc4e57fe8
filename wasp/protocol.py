"""What both GUI protocols (`wasp.uci`, `wasp.xboard`) share: the output (whole lines, under
one lock, flushed at once, never an error when the GUI has gone, logged when a log is open) and
the loop over the input lines. A protocol class adds `handle`, `finish` and `engine`."""

import sys
import threading
import time


class GuiOutput:
    """Lines to the GUI (`out`, default stdout); `log`, when set to an open file, gets each line
    sent (``>>``) and each line `log_in` is given (``<<``), with the time."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lock = threading.Lock()
        self.log = None

    def send(self, text: str) -> None:
        with self.lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the GUI has gone: nothing to tell
            if self.log is not None:
                for line in text.split("\n"):
                    self._log(">> " + line)

    def log_in(self, line: str) -> None:
        """Log a command as read (when a log is open)."""
        if self.log is not None:
            with self.lock:
                self._log("<< " + line)

    def _log(self, text: str) -> None:
        try:
            self.log.write(f"{time.strftime('%H:%M:%S')} {text}\n")
            self.log.flush()
        except (OSError, ValueError):
            pass

    def serve(self, lines=None) -> int:
        """Handle the lines (default stdin) until `handle` says stop or they end (then
        `finish`); Ctrl-C abandons the search. Returns the exit code, 0."""
        try:
            for line in lines if lines is not None else sys.stdin:
                if not self.handle(line):
                    break
            else:
                self.finish()
        except KeyboardInterrupt:
            self.engine.abandon()
        return 0
