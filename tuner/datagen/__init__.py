"""Self-play data for nets and the Texel tuner (`wasp-tune datagen`): games of Wasp-Py
in-process or of any UCI engine, every position with its search score, in a resumable run
directory."""

from wasp.lazyimport import face

__all__, __getattr__, __dir__ = face(__name__, {
    "run": ("DatagenConfig DatagenRun SelfPlay describe_stats generate read_games read_records "
           "read_run read_state uci_engine"),
})
