"""`wasp.exitcodes.run_tool`: a tool's main runs to its exit code; only a closed stdout ends it
quietly (tests/test_cli_errors.py runs every tool into a closed pipe)."""

import pytest

from wasp.exitcodes import run_tool


def test_the_tools_exit_code_is_returned():
    assert run_tool(lambda: 3) == 3


def test_a_broken_pipe_that_is_not_stdout_is_raised():
    def main():  # an engine's stdin, say: stdout is fine
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        run_tool(main)
