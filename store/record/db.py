"""Opening the record: one SQLite file, migrated, in WAL mode, with foreign keys."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import platformdirs
from sqlite_utils import Database

from sieve.errors import SieveError
from sieve.store.record.migrations import migrations
from sieve.store.record.turns import recover as recover_runs

BUSY_TIMEOUT_MS = 10_000
ENV_VAR = "SIEVE_DB"


def default_path() -> Path:
    """Where the database lives when neither --db nor SIEVE_DB says otherwise."""
    return platformdirs.user_data_path("sieve") / "sieve.db"


def resolve_path(option: str | os.PathLike | None = None) -> Path:
    """--db PATH, else $SIEVE_DB, else the user data directory."""
    if option:
        return Path(option)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    return default_path()


class DatabaseError(SieveError):
    """The database file cannot be opened or migrated; says which file and why."""


def open_db(path: str | os.PathLike | None = None, *, recover: bool = True) -> Database:
    """Open (creating and migrating if needed) the database at `path`.

    Opening a current database changes nothing in it, except that runs left
    running by a process that no longer exists are marked interrupted.
    """
    target = resolve_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False: the TUI writes from a worker while the UI reads.
        conn = sqlite3.connect(str(target), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        db = Database(conn)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        if db.journal_mode != "wal":
            db.enable_wal()
        # In WAL mode NORMAL loses nothing when the process is killed (only on a power
        # cut), and spares an fsync on every commit of a streaming reply.
        db.execute("PRAGMA synchronous = NORMAL")
        migrations.apply(db)
        if recover:
            # A reply left streaming by a process that is gone is marked interrupted.
            recover_runs(db)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise DatabaseError(f"{target}: cannot open the database: {exc}") from None
    return db
