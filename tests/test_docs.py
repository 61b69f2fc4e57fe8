"""The manual (docs/, built by MkDocs) and the README: the site builds with `mkdocs build
--strict`; the shell (and Python) examples marked runnable (`<!-- test -->` on the line before
the fence) run in a temporary directory with the checkout's tools; every flag of `wasp`,
`wasp-tune` and `wasp-match` named in a shell example is one that its subcommand's `--help`
lists, so a renamed flag cannot leave the documents behind."""

import functools
import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
MARK = "<!-- test -->"
SHELL = ("sh", "bash")
LANGUAGES = (*SHELL, "python")
# Each tool as the checkout runs it: the module behind its console script.
TOOLS = {"wasp": "wasp.cli", "wasp-tune": "tuner.cli", "wasp-match": "testing.cli"}
# What a runnable example may read, by the paths the documents use.
SHARED = ("datasets", "docs", "examples", "tests")
WORD = re.compile(r"^[a-z][a-z0-9-]*$")  # a subcommand, as opposed to a file or a number
FLAG = re.compile(r"^--?[A-Za-z][\w-]*$")


def documents() -> list:
    return [README, *sorted(DOCS.rglob("*.md"))]


def shell_blocks(path, languages=SHELL) -> list:
    """(first line number, runnable, text) of each ```sh/```bash block of a markdown file (or
    of the fences of `languages`)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if m.group(1) in languages:
            before = [line for line in lines[:i] if line.strip()]
            runnable = bool(before) and before[-1].strip() == MARK
            text = "\n".join(lines[i + 1:end]) + "\n"
            blocks.append((i + 1, runnable, text if m.group(1) in SHELL else
                           f"python3 - <<'PYTHON'\n{text}PYTHON\n"))
        i = end + 1
    return blocks


def tool_commands(text: str) -> list:
    """The token lists of the commands in `text` that run one of our tools (continuation
    lines joined, comments dropped, pipelines and lists split)."""
    commands = []
    for line in text.replace("\\\n", " ").split("\n"):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:  # not shell: an unbalanced quote in prose
            continue
        command = []
        for token in [*tokens, ";"]:
            if token in ("|", "||", "&&", ";", "&"):
                if command and command[0] in TOOLS:
                    commands.append(command)
                command = []
            else:
                command.append(token)
    return commands


def subcommand(tokens: list) -> tuple:
    """The tool and its subcommand words: the leading words before any flag or file."""
    words = []
    for token in tokens[1:3]:
        if not WORD.match(token):
            break
        words.append(token)
    return (tokens[0], *words)


def tool_env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               WASP_NO_PROGRESS="1")
    env.pop("PYTHONSAFEPATH", None)
    return env


@functools.cache
def help_text(command: tuple) -> str:
    """`--help` of a tool's subcommand; fails the test when it does not exit 0."""
    tool, *words = command
    r = subprocess.run([sys.executable, "-m", TOOLS[tool], *words, "--help"], cwd=ROOT,
                       env=tool_env(), capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{' '.join(command)} --help exited {r.returncode}:\n{r.stderr}"
    return r.stdout + r.stderr


def example_commands() -> list:
    found = []
    for path in documents():
        for line, _, text in shell_blocks(path):
            for tokens in tool_commands(text):
                found.append((f"{path.relative_to(ROOT)}:{line}", tokens))
    return found


def runnable_blocks() -> list:
    return [pytest.param(text, id=f"{path.relative_to(ROOT)}:{line}")
            for path in documents() for line, runnable, text in shell_blocks(path, LANGUAGES)
            if runnable]


def test_the_site_builds_strictly(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                        str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "api" / "testing" / "index.html").is_file()
    assert "run_match" in (tmp_path / "site" / "api" / "testing" / "index.html").read_text()


def test_the_readme_is_a_short_front_door_whose_links_resolve():
    assert README.stat().st_size < 15_000
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links into the manual"
    for target in local:
        assert (ROOT / target).exists(), f"README links to {target}, which is not there"


def test_the_documents_have_runnable_examples_of_every_tool():
    runnable = "".join(p.values[0] for p in runnable_blocks())
    for tool in TOOLS:
        assert re.search(rf"(^|\| ){re.escape(tool)}( |$)", runnable, re.M), tool


def test_shell_blocks_are_found_with_their_marks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- test -->\n```sh\nwasp bench 2 \\\n    --hash 8  # c\n```\n"
                    "```sh\nprintf 'uci\\n' | wasp && wasp-tune k a.epd -limit 5\n```\n"
                    "```python\nwasp = 1\n```\n")
    (first, run1, text1), (second, run2, text2) = shell_blocks(page)
    assert (first, run1, run2) == (4, True, False)
    assert tool_commands(text1) == [["wasp", "bench", "2", "--hash", "8"]]
    assert tool_commands(text2) == [["wasp"], ["wasp-tune", "k", "a.epd", "-limit", "5"]]
    assert subcommand(["wasp-tune", "data", "convert", "a.txt"]) == ("wasp-tune", "data",
                                                                      "convert")
    assert subcommand(["wasp", "bench", "5"]) == ("wasp", "bench")


def test_every_flag_in_the_shell_examples_is_one_the_tool_lists():
    commands = example_commands()
    assert len(commands) > 50
    unknown = []
    for where, tokens in commands:
        text = help_text(subcommand(tokens))
        for token in tokens[1:]:
            if FLAG.match(token):
                name = token.lstrip("-")
                if not re.search(rf"(?<![\w-])--?{re.escape(name)}(?![\w-])", text):
                    unknown.append(f"{where}: {' '.join(subcommand(tokens))} {token}")
    assert not unknown, "flags the tools do not list:\n" + "\n".join(unknown)


@pytest.mark.parametrize("script", runnable_blocks())
def test_a_runnable_example_runs(tmp_path, script):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, module in TOOLS.items():
        path = bin_dir / tool
        path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m {module} "$@"\n')
        path.chmod(0o755)
    (bin_dir / "python3").symlink_to(sys.executable)
    work = tmp_path / "work"
    work.mkdir()
    for name in SHARED:
        (work / name).symlink_to(ROOT / name)
    # wasp/evalfiles/... by its path, without a `wasp` package in the working directory
    (work / "wasp").mkdir()
    (work / "wasp" / "evalfiles").symlink_to(ROOT / "wasp" / "evalfiles")
    env = tool_env()
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", WASP_TUNE_CACHE=str(tmp_path / "c"))
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    out = r.stdout[-3000:] + r.stderr[-3000:]
    assert r.returncode == 0, f"exit {r.returncode}:\n{script}\n{out}"
    assert "Traceback" not in r.stderr, out
