"""The runs dashboard: `wasp gui --runs DIR` shows the match, SPSA and tuning runs under DIR.

It sits above the tools (`testing`, `tuner`) and the engine (`wasp`), and reads each run through
the reader its tool ships. `dashboard.cli` plugs `--runs` and the dashboard's server into
`wasp gui` (the `wasp` command is the engine's, `wasp.cli`).
"""
