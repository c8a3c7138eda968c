"""Where sieve keeps its files: the database (overridable from the environment) and the TUI's screenshots.

Kept apart from the store and the engine so that a command that only prints help
loads neither.
"""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "SIEVE_DB"


def default_db_path() -> Path:
    """Where the database lives when neither --db nor SIEVE_DB says otherwise."""
    import platformdirs

    return platformdirs.user_data_path("sieve") / "sieve.db"


def resolve_db_path(option: str | os.PathLike[str] | None = None) -> Path:
    """--db PATH, else $SIEVE_DB, else the user data directory."""
    if option:
        return Path(option)
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV])
    return default_db_path()


def default_screenshots_dir() -> Path:
    """Where the TUI's screenshots go unless `--screenshots DIR` says otherwise: beside the default database."""
    import platformdirs

    return platformdirs.user_data_path("sieve") / "screenshots"
