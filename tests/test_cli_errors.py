"""Every subcommand of `wasp`, `wasp-tune` and `wasp-match` given a file it cannot use: a
missing file, a directory, a binary file, an empty file and a file of the wrong kind. Each must
end with one line on stderr naming the file, and the exit code of the table in
docs/exit-codes.md (1 for a file that cannot be used, 2 for a bad command line), never with a
traceback. Their help, with an example; and a reader that closes their output (`| head -1`)
ends them quietly."""

import os
import shlex
import subprocess
import sys

import pytest

from tests.conftest import DATA, ROOT

KINDS = ("missing", "directory", "binary", "empty", "wrong")
EXIT_CODES = {0, 1, 2, 130}  # docs/exit-codes.md

EPD = str(DATA / "tuner_quiet_200.epd")
PGN = str(DATA / "tuner_games_5.pgn")
FAKE = str(ROOT / "tests" / "testing" / "fake_engines" / "fake_uci.py")
TWO = ["-engine", f"cmd={sys.executable}", f"arg={FAKE}", "name=a",
       "-engine", f"cmd={sys.executable}", f"arg={FAKE}", "name=b", "-each", "nodes=100"]
SPSA_FAKE = str(ROOT / "tests" / "testing" / "fake_engines" / "spsa_uci.py")
ONE = ["-engine", f"cmd={sys.executable}", f"arg={SPSA_FAKE}", "-each", "nodes=1"]
SPSA_PARAMS = str(DATA / "spsa_knob.txt")
TRACE = str(DATA / "trace_small.trace")

WASP = [sys.executable, "-m", "wasp.cli"]
TUNE = [sys.executable, "-m", "tuner.cli"]
MATCH = [sys.executable, "-m", "testing.cli"]

# (name, command with {f} for the bad file, the file's extension, exit code)
SLOTS = [
    ("wasp epd", [*WASP, "epd", "{f}", "--depth", "1"], "epd", 1),
    ("wasp perft --epd", [*WASP, "perft", "--epd", "{f}"], "epd", 1),
    ("wasp book build", [*WASP, "book", "build", "{f}", "-o", "out.bin"], "pgn", 1),
    ("wasp book probe", [*WASP, "book", "probe", "{f}"], "bin", 1),
    ("wasp play --book", [*WASP, "play", "--book", "{f}"], "bin", 1),
    ("wasp-tune run", [*TUNE, "run", "{f}", "-dir", "run", "-quiet"], "epd", 1),
    ("wasp-tune run -valid-data", [*TUNE, "run", EPD, "-valid-data", "{f}", "-dir", "run",
                                   "-params", "tempo", "-max-passes", "1", "-quiet"], "epd", 1),
    ("wasp-tune run -init", [*TUNE, "run", EPD, "-init", "{f}", "-dir", "run"], "txt", 1),
    ("wasp-tune run --resume", [*TUNE, "run", "-dir", "{f}", "--resume"], "", 1),
    ("wasp-tune k", [*TUNE, "k", "{f}"], "epd", 1),
    ("wasp-tune k -params", [*TUNE, "k", EPD, "-params", "{f}"], "txt", 1),
    ("wasp-tune error", [*TUNE, "error", "{f}"], "epd", 1),
    ("wasp-tune error -params", [*TUNE, "error", EPD, "-params", "{f}"], "txt", 1),
    ("wasp-tune data", [*TUNE, "data", "{f}", "-o", "set"], "pgn", 1),
    ("wasp-tune data -params", [*TUNE, "data", PGN, "-o", "set", "-params", "{f}"], "txt", 1),
    ("wasp-tune loop -data", [*TUNE, "loop", "-dir", "loop", "-data", "{f}"], "pgn", 1),
    ("wasp-tune loop -openings", [*TUNE, "loop", "-dir", "loop", "-openings", "{f}"], "epd", 1),
    ("wasp-tune spsa PARAMS", [*TUNE, "spsa", "{f}", "-iterations", "2", *ONE], "txt", 1),
    ("wasp-tune spsa -openings", [*TUNE, "spsa", SPSA_PARAMS, "-iterations", "2", *ONE,
                                  "-openings", "file={f}", "-rundir", "run"], "epd", 1),
    ("wasp-tune spsa -resume", [*TUNE, "spsa", "-resume", "{f}"], "", 1),
    ("wasp-tune nnue train", [*TUNE, "nnue", "train", "{f}", "-o", "n.nnue", "-quiet"], "txt",
     1),
    ("wasp-tune nnue train .bf", [*TUNE, "nnue", "train", "{f}", "-o", "n.nnue", "-quiet"],
     "bf", 1),
    ("wasp-tune nnue train -resume", [*TUNE, "nnue", "train", "-resume", "{f}"], "", 1),
    ("wasp-tune trace", [*TUNE, "trace", "{f}", "-dir", "run", "-quiet"], "trace", 1),
    ("wasp-tune trace -valid-data", [*TUNE, "trace", TRACE, "-valid-data", "{f}", "-dir", "run",
                                     "-no-cache", "-quiet"], "trace", 1),
    ("wasp-tune trace -resume", [*TUNE, "trace", "-resume", "{f}"], "", 1),
    ("wasp-match -config", [*MATCH, "-config", "{f}"], "json", 1),
    ("wasp-match -openings", [*MATCH, *TWO, "-openings", "file={f}", "-rundir", "run"], "epd",
     1),
    ("wasp-match -resume", [*MATCH, "-resume", "{f}"], "", 1),
    # an engine is a program, not an input file: a bad cmd= is a bad command line
    ("wasp-match -engine cmd=", [*MATCH, "-engine", "cmd={f}", "-engine",
                                 f"cmd={sys.executable}", "-each", "nodes=1"], "", 2),
]


def _bad_file(tmp_path, kind, ext):
    name = f"{kind}.{ext}" if ext else kind
    path = tmp_path / name
    if kind == "directory":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 40)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "wrong":  # text of another kind: the README
        path.write_text((ROOT / "README.md").read_text())
    return str(path)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("slot", SLOTS, ids=[s[0] for s in SLOTS])
def test_a_file_that_cannot_be_used_gives_one_line_and_the_documented_code(tmp_path, slot,
                                                                           kind):
    name, argv, ext, code = slot
    path = _bad_file(tmp_path, kind, ext)
    env = dict(os.environ, PYTHONPATH=str(ROOT), WASP_TUNE_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([a.replace("{f}", path) for a in argv], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    where = f"{name} with a {kind} file: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr + r.stdout, where
    assert r.returncode in EXIT_CODES, where
    assert r.returncode == code, where
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert errors, where
    assert os.path.basename(path) in errors[-1] or path in errors[-1], where


HELP = [
    ([*WASP, "--help"], True), ([*WASP, "uci", "--help"], False),
    ([*WASP, "perft", "--help"], True), ([*WASP, "bench", "--help"], True),
    ([*WASP, "epd", "--help"], True), ([*WASP, "eval", "--help"], False),
    ([*WASP, "book", "--help"], False), ([*WASP, "book", "build", "--help"], True),
    ([*WASP, "book", "probe", "--help"], True), ([*WASP, "play", "--help"], True),
    ([*WASP, "gui", "--help"], True), ([*WASP, "warmup", "--help"], True),
    ([*TUNE, "--help"], True), ([*TUNE, "run", "--help"], True),
    ([*TUNE, "k", "--help"], True), ([*TUNE, "error", "--help"], True),
    ([*TUNE, "data", "--help"], True), ([*TUNE, "datagen", "--help"], True),
    ([*TUNE, "loop", "--help"], True), ([*TUNE, "spsa", "--help"], True),
    ([*TUNE, "nnue", "--help"], False), ([*TUNE, "nnue", "train", "--help"], True),
    ([*TUNE, "trace", "--help"], True),
    ([*MATCH, "--help"], True),
]


@pytest.mark.parametrize("argv,has_defaults", HELP, ids=[" ".join(h[0][2:]) for h in HELP])
def test_help_of_every_subcommand_describes_it_with_an_example(argv, has_defaults):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "xample" in r.stdout, r.stdout
    if has_defaults:
        assert "default" in r.stdout, r.stdout


CLOSED = [*(h[0] for h in HELP), [*TUNE, "data", "convert", "--help"],
          [*MATCH, "reproduce", "--help"], [*WASP, "perft", "--depth", "2", "--divide"]]


@pytest.mark.parametrize("argv", CLOSED, ids=[" ".join(a[2:]) for a in CLOSED])
def test_a_closed_stdout_ends_the_tool_quietly(argv):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the tool writes a byte: every write fails
    try:
        r = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=write,
                           stderr=subprocess.PIPE, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    finally:
        os.close(write)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr


@pytest.mark.parametrize("tool", ["wasp", "wasp-tune", "wasp-match"])
def test_help_piped_into_head_prints_its_first_line_and_no_traceback(tmp_path, tool):
    from tests.test_docs import TOOLS

    shim = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m {TOOLS[tool]} "$@"\n'
    (tmp_path / tool).write_text(shim)
    (tmp_path / tool).chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(["bash", "-o", "pipefail", "-c", f"{tool} --help | head -1"], env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {tool}"), r.stdout + r.stderr
    assert r.stderr == "", r.stderr
