"""sieve: a terminal workbench for roleplay benchmarks of language models.

The installed package holds three parts, each in its own folder of the source tree:

- `sieve.scenarios` (scenarios/): what is played and how it is scored;
- `sieve.store` (store/): the record in SQLite, and apart from it the scoring that reads it;
- `sieve.tui` (tui/): the engine that talks to models, the command line and the Textual app.

The few modules here (errors, safe text, tables, file reading) sit below all three.
Dependency direction, never the other way: app -> cli/engine -> store -> scenarios -> these.
"""
