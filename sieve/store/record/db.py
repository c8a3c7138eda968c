"""Opening the record: one SQLite file, migrated, in WAL mode, with foreign keys; writes that wait their turn.

Several processes write one file at once (two judges, a batch, a card import, the
TUI). Every write transaction takes SQLite's write lock when it begins (`BEGIN
IMMEDIATE`), so it waits its turn instead of failing halfway: a transaction that
read first and wrote later would get "database is locked" at once, with no wait,
whenever another process had committed in between. While the lock is held
elsewhere a writer retries with backoff, up to `patience()` seconds, then gives
up with DatabaseBusy, having written nothing. `Record` is that connection; every
write goes through it, in `atomic()` or as a single statement.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from sqlite_utils import Database

from sieve.errors import SieveError
from sieve.paths import resolve_db_path
from sieve.store.record import upgrade
from sieve.store.record.judgings import recover as recover_judgings
from sieve.store.record.migrations import known_names, migrations
from sieve.store.record.turns import recover as recover_runs

BUSY_TIMEOUT_MS = 10_000
# How long a write waits for another process's write lock before giving up, in all.
PATIENCE_ENV = "SIEVE_BUSY_SECONDS"
PATIENCE_SECONDS = 60.0
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")
T = TypeVar("T")


class DatabaseError(SieveError):
    """The database file cannot be opened or migrated; says which file and why."""


class ReadOnlyDatabase(DatabaseError):
    """A command that writes was asked of a database that can only be read."""

    exit_status = 2


class DatabaseBusy(DatabaseError):
    """Another process held the database's write lock for longer than sieve waits; nothing was written."""


def patience() -> float:
    """Seconds a write waits for the write lock, in all: $SIEVE_BUSY_SECONDS, else 60."""
    try:
        return max(0.0, float(os.environ.get(PATIENCE_ENV, PATIENCE_SECONDS)))
    except ValueError:
        return PATIENCE_SECONDS


def is_busy(exc: BaseException) -> bool:
    """Whether an error is SQLite saying another connection holds a lock (busy or locked), not a real fault."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


class Record(Database):
    """sieve's connection to its file: each write transaction begins with the write lock, waiting its turn.

    `path` is the database file (for an upgraded copy read in its stead, the file it is a copy of).
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, *, read_only: bool = False):
        # Autocommit at the driver: no transaction begins behind our back (Python's implicit
        # BEGIN before a write, held until someone commits); atomic() begins them, explicitly.
        conn.isolation_level = None
        self.path = path
        self.read_only = read_only
        super().__init__(conn)

    def _waiting(self, attempt: Callable[[], T], what: str) -> T:
        """`attempt()` until it is not refused for a lock held elsewhere: with backoff, up to patience()."""
        deadline = time.monotonic() + patience()
        pause = 0.02
        while True:
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() >= deadline:
                    if is_busy(exc):
                        raise DatabaseBusy(
                            f"{self.path}: the database stayed busy for {patience():g} s (another process held its "
                            f"write lock: {exc}); {what}"
                        ) from None
                    raise
            time.sleep(min(pause * random.uniform(0.5, 1.5), max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 1.0)

    @contextlib.contextmanager
    def atomic(self) -> Generator[Database, None, None]:
        """One transaction (a savepoint inside another): begun with the write lock, waited for; all or nothing."""
        if self.conn.in_transaction or self.read_only:
            with super().atomic():
                yield self
            return
        self._waiting(lambda: self.conn.execute("BEGIN IMMEDIATE"), "nothing was written")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        try:
            # In WAL mode a commit never waits; in a rollback journal it waits for readers to finish.
            self._waiting(lambda: self.conn.execute("COMMIT"), "nothing was written")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        """A statement; one that writes, outside a transaction, is a transaction of its own, waiting its turn."""
        if not self.conn.in_transaction and not self.read_only and sql.lstrip()[:7].upper().startswith(_WRITES):
            with self.atomic():
                return super().execute(sql, parameters)
        return super().execute(sql, parameters)


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
    application_id, user_version = upgrade.header(db)
    if application_id not in (0, upgrade.APPLICATION_ID):
        raise DatabaseError(
            f"{target}: not a sieve database (its header names another application: application_id "
            f"{application_id:#010x}); nothing was written to it"
        )
    tables = sorted(
        row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    )
    known = known_names()
    if not tables and user_version <= len(known):
        return  # a new (or empty) file: sieve's from now on
    applied = [m.name for m in migrations.applied(db)]
    if not applied and user_version <= len(known):
        shown = ", ".join(tables[:8]) + (", …" if len(tables) > 8 else "")
        raise DatabaseError(
            f"{target}: not a sieve database (it holds the tables {shown}, and no record of sieve's schema); "
            "nothing was written to it"
        )
    unknown = [name for name in applied if name not in known]
    if unknown or user_version > len(known):
        newest = f" ({applied[-1]})" if unknown else ""
        version = max(len(applied), user_version)
        raise DatabaseError(
            f"{target}: written by a newer sieve: its schema is at version {version}{newest}, "
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


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def open_db(
    path: str | os.PathLike[str] | None = None,
    *,
    recover: bool = True,
    upgrade_in_place: bool = True,
    announce: Callable[[str], None] | None = None,
) -> Record:
    """Open (creating and migrating if needed) the database at `path`.

    Opening a current database changes nothing in it, except that runs left
    running by a process that no longer exists are marked interrupted. A file
    that is not sieve's, or is of a newer sieve, or whose tables were changed,
    is refused before anything is written to it. A file that cannot be written
    is opened read-only (`is_read_only`).

    A database of an older sieve is upgraded in place after a copy of it is made
    beside it (`NAME.before-vN.db`), and `announce` (else stderr) is told in one
    line. With `upgrade_in_place` False (a command that only reads), or when the
    file cannot be written, it is left as it is and read through an upgraded
    temporary copy, read-only, and `announce` is told that instead.
    """
    target = resolve_db_path(path)
    say = announce or _say
    try:
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
        read_only = not _writable(target)
        conn = _connect(target, read_only)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise DatabaseError(f"{target}: cannot open the database: {exc}") from None
    db = Record(conn, target, read_only=read_only)
    try:
        _settle(db)
        _refuse_strangers(db, target)
        pending = migrations.pending(db)
        has_tables = bool(db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").fetchone())
        if pending and (read_only or (has_tables and not upgrade_in_place)):
            db = _upgraded_copy(db, target, say)
            read_only = True
        elif read_only:
            db.execute("PRAGMA query_only = ON")
        else:
            if db.journal_mode != "wal":
                db.enable_wal()
            # In WAL mode NORMAL loses nothing when the process is killed (only on a power
            # cut), and spares an fsync on every commit of a streaming reply.
            db.execute("PRAGMA synchronous = NORMAL")
            _migrate(db, target, say)
        _check_schema(db, target, read_only)
        if recover and not read_only:
            # A reply left streaming by a process that is gone is marked interrupted, and
            # a judge's packet it left waiting is marked failed.
            recover_runs(db)
            recover_judgings(db)
    except (sqlite3.DatabaseError, OSError) as exc:
        db.conn.close()
        raise DatabaseError(f"{target}: cannot open the database: {exc}") from None
    except BaseException:
        db.conn.close()
        raise
    return db


def _settle(db: Record) -> None:
    """The connection's settings: how long one try waits for a lock, and foreign keys enforced."""
    db.execute(f"PRAGMA busy_timeout = {min(BUSY_TIMEOUT_MS, int(patience() * 1000))}")
    db.execute("PRAGMA foreign_keys = ON")


def _migrate(db: Record, target: Path, say: Callable[[str], None]) -> None:
    """Apply what is pending, in one transaction holding the write lock, after a copy of an old file is made.

    Holding the lock from the look at what is pending to the last migration, two
    processes that open an old file at once upgrade it once (the second finds nothing
    left to do), and a migration that fails leaves the file as it was.
    """
    if not migrations.pending(db) and upgrade.header(db) == (upgrade.APPLICATION_ID, upgrade.schema_version(db)):
        return
    with db.atomic():
        pending = migrations.pending(db)
        old = upgrade.schema_version(db)
        if pending and old > 0:
            backup = upgrade.back_up(target, upgrade.current_version())
            say(upgrade.upgrading_line(target, old, backup))
        migrations.apply(db)
        upgrade.stamp(db)


def _upgraded_copy(db: Record, target: Path, say: Callable[[str], None]) -> Record:
    """The database as this sieve reads it, in a temporary copy: migrated, then read-only; the file left alone."""
    old = upgrade.schema_version(db)
    conn, path = upgrade.temporary_copy(db.conn)
    db.conn.close()
    copy = Record(conn, path)
    try:
        _settle(copy)
        migrations.apply(copy)
        upgrade.stamp(copy)
        # What a process that is gone left running reads as interrupted here too (in the copy only).
        recover_runs(copy)
        recover_judgings(copy)
        copy.execute("PRAGMA query_only = ON")
        copy.read_only = True
        copy.path = target  # what it is a copy of: the file a person named, and messages name
    finally:
        # The copy lives as long as the connection: its name is gone at once (a rollback journal
        # needs none to be read), so nothing is left behind, whatever ends the command.
        path.unlink(missing_ok=True)
    if old > 0:
        say(upgrade.reading_copy_line(target, old))
    return copy


def _check_schema(db: Record, target: Path, read_only: bool) -> None:
    checked = _schema_print(db)
    if _stored_print(db) != checked:
        # Comparing every table with a freshly migrated one costs more than the rest of a
        # quick command; once a schema has passed, its print (the SQL SQLite keeps for it)
        # is remembered, and a table changed since changes the print.
        _refuse_changed(db, target)
        if not read_only:
            with db.atomic():
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_checked', ?)", [checked])
