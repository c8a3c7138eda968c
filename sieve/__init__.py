"""sieve: a terminal workbench for roleplay benchmarks of language models.

One installed package, `sieve`, whose folders are its layers (pyproject.toml states them as an
import-linter contract, the only statement of them):

- `sieve.cli` (sieve/cli/): the `sieve` command;
- `sieve.tui` (tui/): the Textual app, the only part that imports Textual;
- `sieve.engine` (sieve/engine/): talking to models: gateway, session runner, batch, judge;
- `sieve.store` (store/): the record in SQLite, and apart from it the scoring that reads it;
- `sieve.scenarios` (scenarios/): what is played and how it is scored.

The few modules here (errors, safe text, tables, file reading, paths) sit below all of them.
"""
