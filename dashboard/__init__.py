"""The runs dashboard: `wasp gui --runs DIR` shows the match, SPSA and tuning runs under DIR.

It sits above the tools (`testing`, `tuner`) and the engine (`wasp`), and reads each run through
the reader its tool ships. `dashboard.cli` is the `wasp` command: it hands everything to
`wasp.cli` and serves `wasp gui` with the dashboard's server.
"""
