"""sieve: a terminal workbench for roleplay benchmarks of language models.

One installed package, `sieve`, whose folders are its layers: `sieve.cli` (sieve/cli/), the
`sieve` command; `sieve.tui` (tui/), the Textual app; `sieve.engine` (sieve/engine/), talking to
models; `sieve.store` (store/), the record and the scoring that reads it; `sieve.scenarios`
(scenarios/), what is played and how it is scored. Which may import which is stated once, as the
import-linter contracts in pyproject.toml. The few modules here (errors, safe text, tables, file
reading, paths) are the foundation below all of them.
"""
