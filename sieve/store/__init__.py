"""The record and the scoring that reads it. Never imports the engine, the app or Textual.

- `sieve.store.record`: the SQLite schema, runs, turns, annotations, pairs, bundles.
- `sieve.store.scoring`: score cards, quotes, agreement, blind masking, results, Markdown,
  and RunView, the one view of a run that every screen and command goes through.

The names below are loaded when first used, so a command that never opens the
database does not pay for loading what opens it.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy reads of the names below
    from sieve.store.record.db import DatabaseError as DatabaseError
    from sieve.store.record.db import ReadOnlyDatabase as ReadOnlyDatabase
    from sieve.store.record.db import is_read_only as is_read_only
    from sieve.store.record.db import open_db as open_db
    from sieve.store.record.runs import create_run as create_run
    from sieve.store.record.runs import find_run as find_run
    from sieve.store.record.runs import list_runs as list_runs
    from sieve.store.record.runs import snapshot_scenario as snapshot_scenario


def _load_sqlite_utils() -> None:
    """sqlite-utils imports numpy and pandas when it finds them, to convert their values on insert.

    sieve never inserts them, and numpy alone takes longer to load than all of a quick
    command. Both are hidden while sqlite-utils loads; importing them later works as usual.
    """
    if "sqlite_utils.db" in sys.modules:
        return
    hidden = [name for name in ("numpy", "pandas") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import fails: sqlite-utils carries on without them
    try:
        importlib.import_module("sqlite_utils.db")
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


_load_sqlite_utils()

_EXPORTS = {
    "DatabaseError": "sieve.store.record.db",
    "ReadOnlyDatabase": "sieve.store.record.db",
    "is_read_only": "sieve.store.record.db",
    "open_db": "sieve.store.record.db",
    "create_run": "sieve.store.record.runs",
    "find_run": "sieve.store.record.runs",
    "list_runs": "sieve.store.record.runs",
    "snapshot_scenario": "sieve.store.record.runs",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sieve.store' has no attribute {name!r}")
