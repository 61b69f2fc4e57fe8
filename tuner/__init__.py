"""Wasp-Py's tuners, one room a tool, each with a short public face (`__all__`):

- `tuner.texel`: Texel tuning of the hand-written evaluation (`wasp-tune run`, `k`, `error`);
- `tuner.traces`: Texel tuning of any engine's evaluation from its traces (`wasp-tune trace`);
- `tuner.spsa`: SPSA over a UCI engine's options through games (`wasp-tune spsa`);
- `tuner.datagen`: self-play data with search scores (`wasp-tune datagen`);
- `tuner.nnue`: the CPU net trainer in bullet's layout (`wasp-tune nnue train`);
- `tuner.formats`: the data formats, a reader beside each writer (`wasp-tune data convert`);
- `tuner.sets`: labelled sets from games, Chess960/DFRC books (`wasp-tune data`);
- `tuner.loop`: self-play -> set -> tuning -> SPRT (`wasp-tune loop`).

`tuner.cli` is the `wasp-tune` command; `tuner.shipped` finds the data shipped with the
project. Importing `tuner` loads none of the rooms.
"""

__all__ = ["datagen", "formats", "loop", "nnue", "sets", "spsa", "texel", "traces"]
