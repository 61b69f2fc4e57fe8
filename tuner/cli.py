"""`wasp-tune`: the tuner's one command. Each subcommand is the command line of one room of
`tuner` (`SUBCOMMANDS`: its help line and the module whose ``main(argv)`` parses the rest);
a new subcommand is one more entry."""

import importlib
import sys
from dataclasses import dataclass

from wasp.cliargs import ArgumentParser
from wasp.exitcodes import EXIT_USAGE, fail, run_tool

EXAMPLES = """examples:
  wasp-tune run positions.epd -dir runs/a -method binary -params 'pst_*' 'pawn_value'
  wasp-tune run -resume runs/a                # continue a killed run
  wasp-tune k positions.epd -params runs/a/params.txt
  wasp-tune data games.pgn -o sets/a         # quiet positions: sets/a/train.epd, valid.epd
  wasp-tune datagen -dir runs/dg -games 200000 -nodes 5000   # positions and scores for nets
  wasp-tune data convert runs/dg/data.txt data.bf -shuffle   # bullet text -> bulletformat
  wasp-tune loop --quick -dir loops/q         # play, build, tune, SPRT (resumable)
  wasp-tune spsa lmr.txt -iterations 500 -engine cmd=wasp -each nodes=5000 -rundir runs/s
  wasp-tune nnue train data/*.bf -o nets/a.nnue -epochs 20   # a net for the engine
  wasp-tune trace my-engine.trace -dir runs/t   # your engine's evaluation from its traces

Flags take one or two dashes (-dir or --dir); a run directory is -dir DIR (or -rundir DIR),
-resume DIR goes on with one, -o names an output. 'wasp-tune SUBCOMMAND --help' says more.

exit codes: 0 ok, 1 a data or parameter file that cannot be used, 2 a bad command line
"""


@dataclass
class Subcommand:
    """A subcommand: its help line, the module whose ``main(argv)`` runs it, and whether that
    ``argv`` starts with the subcommand's name (a module serving several subcommands)."""

    help: str
    module: str
    with_name: bool = False

    def main(self, name, argv):
        main = importlib.import_module(self.module).main
        return main([name, *argv] if self.with_name else argv)


SUBCOMMANDS = {
    "run": Subcommand("tune parameters in a run directory (or -resume one)", "tuner.texel.cli",
                      with_name=True),
    "k": Subcommand("fit K for a parameter file on a data set", "tuner.texel.cli",
                    with_name=True),
    "error": Subcommand("E of a parameter file on a data set", "tuner.texel.cli",
                        with_name=True),
    "data": Subcommand("labelled sets from PGN games (quiet positions, split by game)",
                       "tuner.sets.cli"),
    "loop": Subcommand("play games -> build a set -> tune -> SPRT tuned against default "
                       "(resumable)", "tuner.loop.cli"),
    "spsa": Subcommand("tune an engine's UCI options by SPSA through games (wasp-tune spsa "
                       "--help)", "tuner.spsa.cli"),
    "datagen": Subcommand("self-play data of Wasp-Py or any UCI engine: every position with "
                          "its search score (wasp-tune datagen --help)", "tuner.datagen.cli"),
    "nnue": Subcommand("train a (768 -> N)x2 -> 1 net on the CPU (wasp-tune nnue train "
                       "--help)", "tuner.nnue.cli"),
    "trace": Subcommand("Texel tuning of any engine's evaluation from its traces (wasp-tune "
                        "trace --help)", "tuner.traces.cli"),
}
CONVERT = Subcommand("", "tuner.formats.convert")  # `data convert`: between net data formats


def build_parser():
    """`wasp-tune`'s own parser: the subcommands listed, each parsed by its module."""
    ap = ArgumentParser(prog="wasp-tune",
                        description="Texel tuning of the Wasp-Py evaluation parameters.",
                        epilog=EXAMPLES)
    sub = ap.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    for name, c in SUBCOMMANDS.items():
        sub.add_parser(name, help=c.help, add_help=False)
    return ap


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["data", "convert"]:
        return CONVERT.main("convert", argv[2:])
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]].main(argv[0], argv[1:])
    ap = build_parser()
    if argv and not argv[0].startswith("-"):
        return fail("wasp-tune", f"unknown subcommand {argv[0]!r} (see wasp-tune --help)",
                    EXIT_USAGE)
    ap.parse_args(argv)
    ap.print_help()
    return 0


def entry() -> int:
    """The `wasp-tune` console script: the kernel cache of the engine's and the tuner's kernels
    set up (`wasp.kernelcache`; the engines it starts share it), then `main`."""
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    return run_tool(main)


if __name__ == "__main__":
    sys.exit(entry())
