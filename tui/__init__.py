"""The program a person runs: the engine, the command line and the Textual app.

- `sieve.tui.engine`: talking to models (gateway, session runner, batch, the embedded
  model, endpoints, config, plans). No Textual.
- `sieve.tui.cli`: the `sieve` command (click). No Textual at import time.
- `sieve.tui.app`: the Textual app, its screens and widgets; the only part that imports Textual.
"""
