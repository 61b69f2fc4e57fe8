"""The command-line convention of `wasp` and `wasp-tune`: every flag takes one or two dashes
(``-dir`` or ``--dir``); a run directory is ``-dir DIR`` (alias ``-rundir``), ``-resume DIR``
goes on with one, ``-o`` names an output; a bad command line is one line on stderr,
``prog: error: message``, and exit code 2 (`wasp.exitcodes`).

>>> p = ArgumentParser(prog="tool")
>>> p.add_argument("-max-passes", type=int, default=10)   # also --max-passes
>>> add_run_dir(p); add_resume(p)
>>> run_dir(p.parse_args(["-resume", "runs/a"]))          # ('runs/a', True)
"""

import argparse
import copy
import os
import sys

from wasp.exitcodes import EXIT_USAGE, CliError

_UNKNOWN_IN = "_unknown_flags_in"  # the namespace attribute naming the (sub)parser of extras


def _other_spelling(name):
    """`--x` for `-x` and `-x` for `--x`; None for a positional name."""
    if name.startswith("--") and len(name) > 2:
        return name[1:]
    if name.startswith("-") and len(name) > 1:
        return "-" + name
    return None


def spellings(names, taken=()):
    """The flag names with each one's other spelling right after it (-dir -> -dir, --dir),
    leaving out a spelling already `taken` by another flag."""
    out = []
    for name in names:
        for n in (name, _other_spelling(name)):
            if n is not None and n not in out and (n in names or n not in taken):
                out.append(n)
    return out


def _shown(option_strings):
    """The spellings help shows: the first of each -x/--x pair."""
    out = []
    for s in option_strings:
        if _other_spelling(s) not in out:
            out.append(s)
    return out


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help with one spelling of each flag (the epilog says both work) and the description
    and examples as written."""

    def _format_action_invocation(self, action):
        if action.option_strings:
            action = copy.copy(action)
            action.option_strings = _shown(action.option_strings)
        return super()._format_action_invocation(action)


def _dest(names):
    """argparse's dest for the names as written (the first --name, else the first), so an
    added spelling (-o -> --o beside --output) does not rename the value."""
    name = next((n for n in names if n.startswith("--")), names[0])
    return name.lstrip("-").replace("-", "_")


def _add_both(container, add):
    """`add` (a container's add_argument) registering both spellings of every flag."""
    def add_argument(*names, **kwargs):
        if names and names[0].startswith("-"):
            kwargs.setdefault("dest", _dest(names))
            names = spellings(names, container._option_string_actions)
        return add(*names, **kwargs)
    return add_argument


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the tools' convention: `add_argument("-dir")` accepts ``-dir`` and
    ``--dir`` (in groups and subcommands too); errors are one line and exit code 2; an
    unknown flag is named (``unknown flag '--x'``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("exit_on_error", False)
        super().__init__(*args, **kwargs)

    def add_argument(self, *names, **kwargs):
        return _add_both(self, super().add_argument)(*names, **kwargs)

    def add_argument_group(self, *args, **kwargs):
        group = super().add_argument_group(*args, **kwargs)
        group.add_argument = _add_both(group, group.add_argument)
        return group

    def add_mutually_exclusive_group(self, **kwargs):
        group = super().add_mutually_exclusive_group(**kwargs)
        group.add_argument = _add_both(group, group.add_argument)
        return group

    def parse_known_args(self, args=None, namespace=None):
        try:
            namespace, extras = super().parse_known_args(args, namespace)
        except argparse.ArgumentError as e:
            name = (e.argument_name or "").split("/")[0]
            self.error(f"{name}: {e.message}" if name else e.message)
        if extras and not hasattr(namespace, _UNKNOWN_IN):
            setattr(namespace, _UNKNOWN_IN, self.prog)  # a subcommand's: named by its prog
        return namespace, extras

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        prog = getattr(namespace, _UNKNOWN_IN, self.prog)
        if hasattr(namespace, _UNKNOWN_IN):
            delattr(namespace, _UNKNOWN_IN)
        if extras:
            flags = [a for a in extras if a.startswith("-") and not is_number(a)]
            what = f"unknown flag {flags[0]!r}" if flags else f"unexpected argument {extras[0]!r}"
            _exit_with(prog, f"{what} (see {prog} --help)")
        return namespace

    def error(self, message):
        _exit_with(self.prog, message)


def is_number(text, kind=float) -> bool:
    """Whether `text` reads as a `kind` (float or int): a negative number is a value, not a
    flag."""
    try:
        kind(text)
        return True
    except ValueError:
        return False


def _exit_with(prog, message):
    print(f"{prog}: error: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def add_run_dir(parser, help="the run directory", aliases=()):
    """``-dir DIR`` (alias ``-rundir DIR``): the run directory, in ``args.dir``."""
    parser.add_argument("-dir", "-rundir", *aliases, dest="dir", metavar="DIR", default=None,
                        help=help)


def add_resume(parser, help="go on with the run in DIR (its settings are reused)"):
    """``-resume DIR`` (or ``-dir DIR -resume``), in ``args.resume``; see `run_dir`."""
    parser.add_argument("-resume", nargs="?", const=True, default=None, metavar="DIR",
                        help=help)


def add_output(parser, help, dest="out", required=True):
    """``-o PATH`` (also ``-out``, ``-output``): what the command writes."""
    parser.add_argument("-o", "-out", "-output", dest=dest, required=required, metavar="PATH",
                        help=help)


def run_dir(args):
    """(the run directory, whether to resume it) of ``-dir D``, ``-resume D`` or
    ``-dir D -resume``; CliError (exit 2) when no directory or two different ones are given."""
    resume, directory = args.resume, args.dir
    if isinstance(resume, str):
        if directory and os.path.normpath(directory) != os.path.normpath(resume):
            raise CliError(f"-resume {resume} and -dir {directory} name two directories",
                           EXIT_USAGE)
        return resume, True
    if not directory:
        raise CliError("-resume: which run? give -resume DIR" if resume else
                       "-dir DIR is required (or -resume DIR)", EXIT_USAGE)
    return directory, bool(resume)
