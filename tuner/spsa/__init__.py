"""SPSA over a UCI engine's options through games (`wasp-tune spsa`), as OpenBench and fishtest
run it: the input format and the gain schedule as pure functions (`algorithm`), and the run that
plays each iteration's game pairs through the match runner (`run`)."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "algorithm": ("A_RATIO ALPHA GAMMA Param Schedule SpsaInputError load_params parse_params "
                 "perturb simulate update"),
    "run": "SpsaError SpsaReader SpsaRun SpsaSettings emit_params",
})
