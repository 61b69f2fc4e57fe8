"""`wasp-tune data` and `wasp-tune loop`: labelled sets from games, self-play, the tuning loop."""

import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    print(f"wasp-tune {argv[0] if argv else ''}: not implemented yet", file=sys.stderr)
    return 2
