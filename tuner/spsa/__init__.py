"""SPSA over a UCI engine's options through games (`wasp-tune spsa`), as OpenBench and fishtest
run it: the input format and the gain schedule as pure functions (`algorithm`), and the run that
plays each iteration's game pairs through the match runner (`run`)."""

from .algorithm import (
    A_RATIO,
    ALPHA,
    GAMMA,
    Param,
    Schedule,
    SpsaInputError,
    load_params,
    parse_params,
    perturb,
    simulate,
    update,
)
from .run import SpsaError, SpsaReader, SpsaRun, SpsaSettings, emit_params

__all__ = [
    "A_RATIO", "ALPHA", "GAMMA", "Param", "Schedule", "SpsaError", "SpsaInputError",
    "SpsaReader", "SpsaRun", "SpsaSettings", "emit_params", "load_params", "parse_params",
    "perturb", "simulate", "update",
]
