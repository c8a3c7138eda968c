"""Upgrading a database of an older sieve: a copy of the file as it was first, or an upgraded copy to read.

A command that writes upgrades the file in place, after copying it with SQLite's
backup API to `NAME.before-vN.db` beside it (N: the schema version it is upgraded
to), and says so in one line. A command that only reads leaves the file as it is:
it reads a temporary copy, upgraded, which is gone when the command ends, so an
older sieve still using the file finds it as it left it.

The schema's version is written where SQLite keeps one for the application
(`user_version`), with sieve's `application_id`: a file of another application is
known before anything is written to it, and a later sieve can refuse a file
written by a newer one from the number alone. (SQLite cannot stop a program that
does not look at these numbers from writing a file; a sieve older than this one
refuses a newer file by the names of its migrations.)
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from sqlite_utils import Database

from sieve.store.record.migrations import known_names, migrations

# "SIEV": the number SQLite's header holds for sieve's files (PRAGMA application_id).
APPLICATION_ID = 0x53495645


def current_version() -> int:
    """The schema version this sieve writes: the number of its migrations."""
    return len(known_names())


def schema_version(db: Database) -> int:
    """The schema version of a database: how many of sieve's migrations it has had."""
    return len(migrations.applied(db))


def header(db: Database) -> tuple[int, int]:
    """(application_id, user_version) as the file's header holds them."""
    return db.execute("PRAGMA application_id").fetchone()[0], db.execute("PRAGMA user_version").fetchone()[0]


def stamp(db: Database) -> None:
    """Write sieve's application id and the schema's version into the header, where they differ."""
    version = schema_version(db)
    if header(db) != (APPLICATION_ID, version):
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {version}")


def backup_path(target: Path, version: int) -> Path:
    """NAME.before-vN.db beside the file; NAME.before-vN-2.db (and so on) when that is taken."""
    suffix = target.suffix or ".db"
    candidate = target.with_name(f"{target.stem}.before-v{version}{suffix}")
    n = 2
    while candidate.exists():
        candidate = target.with_name(f"{target.stem}.before-v{version}-{n}{suffix}")
        n += 1
    return candidate


def back_up(target: Path, version: int) -> Path:
    """A copy of the database as last committed, by SQLite's backup API, beside it; its path.

    Read through a connection of its own: the caller holds the write lock meanwhile (a
    connection writing cannot be the source of a backup), so what is copied is what the
    upgrade starts from. The copy stands alone: one file in a rollback journal.
    """
    path = backup_path(target, version)
    source = sqlite3.connect(str(target))
    copy = sqlite3.connect(str(path))
    try:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode = DELETE")
    except BaseException:
        copy.close()
        path.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    copy.close()
    return path


def temporary_copy(conn: sqlite3.Connection) -> tuple[sqlite3.Connection, Path]:
    """A connection to a copy of the database in the temporary folder, in a rollback journal, and its path."""
    fd, name = tempfile.mkstemp(prefix="sieve-upgraded-", suffix=".db")
    os.close(fd)
    copy = sqlite3.connect(name, check_same_thread=False)
    try:
        conn.backup(copy)
        copy.execute("PRAGMA journal_mode = DELETE")
    except BaseException:
        copy.close()
        os.unlink(name)
        raise
    return copy, Path(name)


def upgrading_line(target: Path, old: int, backup: Path) -> str:
    return (
        f"sieve: upgrading {target} from schema version {old} to {current_version()}; "
        f"the file as it was is kept as {backup}"
    )


def reading_copy_line(target: Path, old: int) -> str:
    return (
        f"sieve: {target} is at schema version {old}, older than this sieve's {current_version()}: reading an "
        "upgraded copy and leaving the file as it is (the next command that writes to it upgrades it, keeping a copy)"
    )
