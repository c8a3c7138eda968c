"""The record and the scoring that reads it. Never imports the engine, the app or Textual.

- `sieve.store.record`: the SQLite schema, runs, turns, annotations, pairs, bundles.
- `sieve.store.scoring`: score cards, quotes, agreement, blind masking, results, Markdown,
  and RunView, the one view of a run that every screen and command goes through.
"""

from sieve.store.record.db import (
    ENV_VAR,
    DatabaseError,
    ReadOnlyDatabase,
    default_path,
    is_read_only,
    open_db,
    resolve_path,
)
from sieve.store.record.runs import create_run, find_run, list_runs, snapshot_scenario

__all__ = [
    "ENV_VAR",
    "DatabaseError",
    "ReadOnlyDatabase",
    "create_run",
    "default_path",
    "find_run",
    "is_read_only",
    "list_runs",
    "open_db",
    "resolve_path",
    "snapshot_scenario",
]
