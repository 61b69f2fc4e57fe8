"""The tuner's kernels of a tuning loop, compiled into the shared cache by a process of their
own (`python -m tuner.loop.warm CONFIG`, started by `tuner.loop.run.compile_kernels` beside
`wasp warmup --only hand`): the loop's set, tuning and report code run on a few of the shipped
sample's games in a temporary directory, so that the loop's stages load every kernel and
signature they use from the cache.
"""

import json
import os
import sys
import tempfile
from dataclasses import replace

SAMPLE_GAMES_USED = 24  # games of the shipped sample the tuner's kernels run on


def tuner_kernels(config) -> None:
    """Run the loop's data, tune and report code on a few sample games (one tuning pass), in
    a temporary directory, with `config`'s settings (method, parameters, start)."""
    from . import run, selfplay

    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "games"))
        with open(run.SAMPLE_GAMES, encoding="utf-8") as f, \
                open(os.path.join(tmp, "games", "games.pgn"), "w", encoding="utf-8") as out:
            games = 0
            for line in f:
                games += line.startswith("[Event ")
                if games > SAMPLE_GAMES_USED:
                    break
                out.write(line)
        with open(os.path.join(tmp, "games", selfplay.DONE), "w", encoding="utf-8") as f:
            f.write("{}")
        # the binary search of -then-binary runs the kernels of the binary method; its globs
        # are checked by the loop itself (a bad one fails there, in one line)
        small = replace(config, extra_data=[], max_passes=1, then_binary=[], valid=0.25)
        loop = run.Loop(tmp, small, log=lambda *a: None, quiet_matches=True, warm=False)
        loop.run(until="tune")
        loop.errors(K=1.0)  # the report's E


def main(argv=None) -> int:
    """`python -m tuner.loop.warm CONFIG [--parent PID] [--report]`: CONFIG a LoopConfig's
    settings as JSON."""
    import numba  # noqa: F401 - before kernel_reports

    from wasp import kernelcache
    from wasp.kernelprogress import kernel_reports
    from wasp.warmup import REPORT, follow_parent

    from .run import LoopConfig

    argv = sys.argv[1:] if argv is None else list(argv)
    if "--parent" in argv:
        follow_parent(int(argv[argv.index("--parent") + 1]))
    kernelcache.setup(("wasp", "tuner"))
    report = (lambda line: print(f"{REPORT} {line}", flush=True)) if "--report" in argv \
        else None
    with kernel_reports(report):
        tuner_kernels(LoopConfig(**json.loads(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
