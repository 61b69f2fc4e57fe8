"""The exit codes and error lines of the command-line tools (`wasp`, `wasp-tune`,
`wasp-match`): one line on stderr, `tool: error: message`, and the code of its kind.
`CliError` is the one error type the tools raise for a mistake the user can fix; `run_tool`
runs a console script's `main`."""

import os
import select
import sys

# Exit codes of `wasp`, `wasp-tune` and `wasp-match` (README: "Exit codes").
EXIT_OK = 0
EXIT_INPUT = 1  # a file that cannot be used (missing, a directory, binary, empty, bad record)
EXIT_USAGE = 2  # a bad command line: unknown flag or key, a bad value, a bad FEN argument


class CliError(Exception):
    """A mistake the user can fix (a file that cannot be used, a bad flag or value): the tool
    prints it as one line, `prog: error: message`, and exits with `code` (EXIT_INPUT for a
    file, EXIT_USAGE for a bad command line)."""

    def __init__(self, message, code=EXIT_INPUT):
        super().__init__(str(message))
        self.code = code


class UsageError(CliError, ValueError):
    """A bad command line or setting, named by its flag (exit status 2 unless `code`); a
    ValueError too, for the Python APIs that check settings (`testing.MatchConfig`)."""

    def __init__(self, message, code=EXIT_USAGE):
        super().__init__(message, code)


class InputError(UsageError):
    """A file that cannot be used: missing, a directory, not of its kind (exit status 1)."""

    def __init__(self, message, code=EXIT_INPUT):
        super().__init__(message, code)


def file_problem(path, text=True, empty_ok=False):
    """What makes `path` unusable as an input file, or None: missing, a directory,
    unreadable, empty, or (for a text file) binary. The answer names the file."""
    path = str(path)
    if not os.path.exists(path):
        return f"{path}: no such file"
    if os.path.isdir(path):
        return f"{path}: is a directory, not a file"
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError as e:
        return f"{path}: cannot read: {e.strerror}"
    if not head and not empty_ok:
        return f"{path}: the file is empty"
    if text and b"\0" in head:
        return f"{path}: a binary file, not text"
    return None


def check_files(paths, what="file"):
    """CliError (exit 1) naming the first of `paths` that cannot be used (`file_problem`; a
    .parquet file need not be text), before anything is read; empty entries are skipped."""
    for path in paths:
        if path:
            problem = file_problem(path, text=not str(path).lower().endswith(".parquet"))
            if problem:
                raise CliError(f"{what} {problem}")


def check_params_file(path):
    """The weights of the parameter file `path` (a `wasp-tune run` params.txt), read before
    the work starts; None for no file; CliError (exit 1) naming the file and line when bad."""
    if not path:
        return None
    check_files([path], "parameter file")
    from wasp import params

    try:
        return params.load(path)
    except ValueError as e:  # "FILE: line N: why" -> "FILE:N: why", as the data errors
        raise CliError(f"parameter file {str(e).replace(': line ', ':', 1)}") from None


def fail(prog, message, code=EXIT_INPUT):
    """Print `prog: error: message` on stderr; returns the exit code."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def run_tool(main) -> int:
    """Run a console script's `main()` and return its exit code; a reader that closed stdout
    (`wasp-match --help | head -1`) ends the tool quietly with EXIT_OK, as `head` expects.

    A BrokenPipeError from another pipe (an engine's stdin) is not a closed stdout and is
    raised as it is.
    """
    try:
        code = main()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        if not _stdout_closed():
            raise
    try:  # the interpreter flushes stdout at exit: let that write go nowhere, not to the pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_OK


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    poll = select.poll()
    poll.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poll.poll(0))
