"""Opening the record: one SQLite file, migrated, in WAL mode, with foreign keys."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlite_utils import Database

from sieve.errors import SieveError
from sieve.paths import resolve_db_path
from sieve.store.record.judgings import recover as recover_judgings
from sieve.store.record.migrations import known_names, migrations
from sieve.store.record.turns import recover as recover_runs

BUSY_TIMEOUT_MS = 10_000


class DatabaseError(SieveError):
    """The database file cannot be opened or migrated; says which file and why."""


class ReadOnlyDatabase(DatabaseError):
    """A command that writes was asked of a database that can only be read."""

    exit_status = 2


# The schema this sieve writes, table by table: (column, type, not null, primary key).
Columns = list[tuple[str, str, int, int]]
_EXPECTED: dict[str, Columns] | None = None


def expected_schema() -> dict[str, Columns]:
    """Every table of a database migrated from nothing by this sieve, with its columns."""
    global _EXPECTED
    if _EXPECTED is None:
        db = Database(memory=True)
        migrations.apply(db)
        _EXPECTED = _schema(db)
        db.conn.close()
    return _EXPECTED


def _schema(db: Database) -> dict[str, Columns]:
    names = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'turns_fts%' AND name != ?",
            [migrations.migrations_table],
        ).fetchall()
    ]
    return {
        name: [(c[1], c[2].upper(), c[3], c[5]) for c in db.execute(f"PRAGMA table_info({name})").fetchall()]
        for name in names
    }


def is_read_only(db: Database) -> bool:
    """Whether this connection only reads (a file that cannot be written, opened as such)."""
    return bool(db.execute("PRAGMA query_only").fetchone()[0] == 1)


def _writable(target: Path) -> bool:
    """Whether sieve can write the file and the files SQLite keeps beside it (journal, WAL)."""
    if not target.exists():
        return os.access(target.parent, os.W_OK)
    if not os.access(target, os.W_OK):
        return False
    beside = [Path(f"{target}-wal"), Path(f"{target}-shm")]
    return os.access(target.parent, os.W_OK) or all(p.exists() and os.access(p, os.W_OK) for p in beside)


def _connect(target: Path, read_only: bool) -> sqlite3.Connection:
    # check_same_thread=False: the TUI writes from a worker while the UI reads.
    if not read_only:
        return sqlite3.connect(str(target), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    uri = "file:" + quote(str(target.resolve()))
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        # A WAL database in a folder we cannot write has no -shm to read through:
        # read it as it stands on disk (nobody can write it from here either).
        conn.close()
        conn = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
    return conn


def _refuse_strangers(db: Database, target: Path) -> None:
    """Before anything is written: the file must be empty, or a database of sieve's that this sieve knows."""
    tables = sorted(
        row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    )
    if not tables:
        return  # a new (or empty) file: sieve's from now on
    applied = [m.name for m in migrations.applied(db)]
    if not applied:
        shown = ", ".join(tables[:8]) + (", …" if len(tables) > 8 else "")
        raise DatabaseError(
            f"{target}: not a sieve database (it holds the tables {shown}, and no record of sieve's schema); "
            "nothing was written to it"
        )
    known = known_names()
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise DatabaseError(
            f"{target}: written by a newer sieve: its schema is at version {len(applied)} ({applied[-1]}), "
            f"this sieve knows version {len(known)} ({known[-1]}); nothing was written to it. Update sieve to open it."
        )


def _schema_print(db: Database) -> str:
    """A hash of the schema's SQL as SQLite keeps it, and of the migrations this sieve knows."""
    rows = db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name").fetchall()
    text = "\n".join(f"{kind} {name} {sql}" for kind, name, sql in rows) + "\n" + " ".join(known_names())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _stored_print(db: Database) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_checked'").fetchone()
    return row[0] if row else None


def _refuse_changed(db: Database, target: Path) -> None:
    """Every table as this sieve made it: a column renamed, dropped, added or retyped is refused, not misread."""
    found = _schema(db)
    for table, columns in expected_schema().items():
        if table not in found:
            raise DatabaseError(f"{target}: the table {table} is missing; the database was changed outside sieve")
        have = {c[0]: c for c in found[table]}
        want = {c[0]: c for c in columns}
        missing = [c for c in want if c not in have]
        extra = [c for c in have if c not in want]
        retyped = [c for c in want if c in have and have[c] != want[c]]
        if missing or extra or retyped:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(missing))
            if extra:
                parts.append("unknown " + ", ".join(extra))
            if retyped:
                parts.append("changed " + ", ".join(retyped))
            raise DatabaseError(
                f"{target}: the table {table} is not as sieve made it (columns {'; '.join(parts)}); "
                "it was changed outside sieve, and sieve will not guess what it means"
            )


def open_db(path: str | os.PathLike[str] | None = None, *, recover: bool = True) -> Database:
    """Open (creating and migrating if needed) the database at `path`.

    Opening a current database changes nothing in it, except that runs left
    running by a process that no longer exists are marked interrupted. A file
    that is not sieve's, or is of a newer sieve, or whose tables were changed,
    is refused before anything is written to it. A file that cannot be written
    is opened read-only (`is_read_only`), if its schema is current.
    """
    target = resolve_db_path(path)
    try:
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
        read_only = not _writable(target)
        conn = _connect(target, read_only)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise DatabaseError(f"{target}: cannot open the database: {exc}") from None
    try:
        db = Database(conn)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        _refuse_strangers(db, target)
        if read_only:
            pending = migrations.pending(db)
            if pending:
                raise ReadOnlyDatabase(
                    f"{target}: read-only, and its schema is older than this sieve's ({pending[0].name} and "
                    "later are missing); open a writable copy once to bring it up to date"
                )
            db.execute("PRAGMA query_only = ON")
        else:
            if db.journal_mode != "wal":
                db.enable_wal()
            # In WAL mode NORMAL loses nothing when the process is killed (only on a power
            # cut), and spares an fsync on every commit of a streaming reply.
            db.execute("PRAGMA synchronous = NORMAL")
            migrations.apply(db)
        checked = _schema_print(db)
        if _stored_print(db) != checked:
            # Comparing every table with a freshly migrated one costs more than the rest of a
            # quick command; once a schema has passed, its print (the SQL SQLite keeps for it)
            # is remembered, and a table changed since changes the print.
            _refuse_changed(db, target)
            if not read_only:
                with db.atomic():
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_checked', ?)", [checked])
        if recover and not read_only:
            # A reply left streaming by a process that is gone is marked interrupted, and
            # a judge's packet it left waiting is marked failed.
            recover_runs(db)
            recover_judgings(db)
    except (sqlite3.DatabaseError, OSError) as exc:
        conn.close()
        raise DatabaseError(f"{target}: cannot open the database: {exc}") from None
    except BaseException:
        conn.close()
        raise
    return db
