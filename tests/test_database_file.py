"""The database file: a newer sieve's, a changed one and a stranger's are refused untouched; a read-only one is read.

Read-only is made real, not pretended: the test runs as root, who may write any
file, so the reading process gives up the capability to override permissions
(setpriv), or the file is made immutable (chattr +i). Where neither is possible
the read-only tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.record.db import DatabaseError, is_read_only, open_db
from sieve.store.record.migrations import known_names
from sieve.store.scoring import evidence


def sieve(*args, prefix=(), env=None):
    return subprocess.run(
        [*prefix, sys.executable, "-m", "sieve", *map(str, args)], capture_output=True, text=True, timeout=120, env=env
    )


def files_of(path: Path) -> dict[str, bytes]:
    """The database and whatever SQLite keeps beside it, byte for byte."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name)}


def a_record(path: Path) -> str:
    """A database with one run, a reply and a verified score; closed, so the file stands alone."""
    db = open_db(path)
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="vendor/model", endpoint="fake", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text=keykeeper.steps[0].text, step_id="m0")
    reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="Havel sets the bowl down.")
    record.set_run_status(db, run_id, "complete")
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=2,
        quote=Quote(reply, 0, 19, "Havel sets the bowl"),
    )
    db.conn.close()
    return run_id


# -- 15. the schema's version ------------------------------------------------------------


def test_a_database_of_a_newer_sieve_is_refused_naming_both_versions_and_left_untouched(tmp_path):
    path = tmp_path / "newer.db"
    a_record(path)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('sieve', 'm099_from_the_future', 'x')"
    )
    conn.commit()
    conn.close()
    before = files_of(path)
    with pytest.raises(DatabaseError) as caught:
        open_db(path)
    known = known_names()
    message = str(caught.value)
    assert f"schema is at version {len(known) + 1} (m099_from_the_future)" in message
    assert f"this sieve knows version {len(known)} ({known[-1]})" in message
    result = sieve("runs", "--db", path)
    assert result.returncode == 1 and "written by a newer sieve" in result.stderr and "Traceback" not in result.stderr
    assert files_of(path) == before


def test_a_table_changed_outside_sieve_is_refused_not_misread(tmp_path):
    path = tmp_path / "changed.db"
    run_id = a_record(path)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE turns RENAME COLUMN text TO body")
    conn.commit()
    conn.close()
    result = sieve("verify", "--run", run_id, "--db", path)
    assert result.returncode == 1, result.stdout
    assert "the table turns is not as sieve made it (columns missing text; unknown body)" in result.stderr
    assert "absent" not in result.stdout  # not a quote misread as absent


@pytest.mark.slow
def test_a_foreign_sqlite_file_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "notes.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('my own data')")
    conn.commit()
    conn.close()
    before = files_of(path)
    for command in (["runs"], ["import", tmp_path / "none.json"], ["results", "--scenario", "keykeeper"]):
        result = sieve(*command, "--db", path)
        assert result.returncode == 1 and "not a sieve database (it holds the tables notes" in result.stderr
    assert files_of(path) == before
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["notes"]


def test_an_empty_file_and_a_current_database_open_as_always(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    assert "runs" in open_db(empty).table_names()
    path = tmp_path / "current.db"
    a_record(path)
    assert len(store.list_runs(open_db(path))) == 1


# -- 16. a read-only database ------------------------------------------------------------


def _setpriv() -> list[str] | None:
    """A command prefix under which root may no longer write files it has no write permission for."""
    exe = shutil.which("setpriv")
    if exe is None or os.geteuid() != 0:
        return [] if os.geteuid() != 0 else None
    prefix = [exe, "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def read_only(tmp_path):
    """A database (with a run) in a folder, both without write permission; the prefix that makes it so for root."""
    prefix = _setpriv()
    if prefix is None:
        pytest.skip("cannot make a file read-only for this user (no setpriv to drop root's override)")
    folder = tmp_path / "share"
    folder.mkdir()
    path = folder / "sieve.db"
    run_id = a_record(path)
    path.chmod(0o444)
    folder.chmod(0o555)
    yield path, run_id, prefix
    folder.chmod(0o755)
    path.chmod(0o644)


@pytest.mark.slow
def test_a_read_only_database_is_read_by_runs_results_and_export(read_only, tmp_path):
    path, run_id, prefix = read_only
    before = files_of(path)
    runs = sieve("runs", "--db", path, "--json", prefix=prefix)
    assert runs.returncode == 0, runs.stderr
    assert [r["id"] for r in json.loads(runs.stdout)] == [run_id]
    results = sieve("results", "--scenario", "keykeeper", "--db", path, prefix=prefix)
    assert results.returncode == 0 and "vendor/model" in results.stdout, results.stderr
    md = sieve("export", run_id, "--format", "md", "--db", path, prefix=prefix)
    assert md.returncode == 0 and "Havel sets the bowl down." in md.stdout and "exact" in md.stdout, md.stderr
    bundle = sieve("export", "--all", "--db", path, prefix=prefix)
    assert bundle.returncode == 0 and json.loads(bundle.stdout)["runs"][0]["id"] == run_id
    search = sieve("search", "bowl", "--db", path, prefix=prefix)
    assert search.returncode == 0 and "bowl" in search.stdout
    # What writes says so, and writes nothing.
    imported = sieve("import", tmp_path / "x.json", "--db", path, prefix=prefix)
    assert imported.returncode == 2 and "the database is read-only and this command writes to it" in imported.stderr
    assert files_of(path) == before


@pytest.fixture
def immutable(tmp_path):
    """A database root cannot write: the file is immutable (chattr +i)."""
    chattr = shutil.which("chattr")
    path = tmp_path / "locked.db"
    run_id = a_record(path)
    if os.geteuid() == 0:
        if chattr is None or subprocess.run([chattr, "+i", path], capture_output=True).returncode != 0:
            pytest.skip("cannot make a file read-only for root here (chattr +i is not supported)")
    else:
        path.chmod(0o444)
    yield path, run_id
    if os.geteuid() == 0:
        subprocess.run([chattr, "-i", path], capture_output=True)


@pytest.mark.slow
async def test_review_opens_a_read_only_database_read_only_and_says_so(immutable):
    from sieve.engine.endpoints import Endpoints
    from sieve.tui.app import SieveApp
    from sieve.tui.screens.review import ReviewScreen
    from tests.support.tui_helpers import on_screen, screen_text, wait_until

    path, run_id = immutable
    db = open_db(path)
    assert is_read_only(db)
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ReviewScreen(app.run_view(run_id)))
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await wait_until(pilot, on_screen(app, "The database is read-only"))
        shown = screen_text(app)
        assert "READ-ONLY: nothing can be scored here" in shown
        assert "The database is read-only" in shown
        assert "Havel sets the bowl down." in shown and "✓ exact" in shown  # the run and its scores, read
        assert "s Score" not in shown and "u Undo" not in shown  # the keys that write are gone
        app.screen.select_span(0, 5)
        await pilot.press("s", "u")
        await pilot.pause()  # let the keys take effect, if they did anything
        assert isinstance(app.screen, ReviewScreen) and not app.screen.query("Overlay")  # no picker, no failure
        assert not [n for n in app._notifications if n.severity == "error"]
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 1


# -- upgrades (issue 25, §7) and a foreign application id (§5) --------------------------------------

OLD = "m004_annotation_evidence"  # a database of the sieve that knew only m001–m003
GONE = f"{socket.gethostname()}:{2**22 + 1}"  # a process of this host that is not running (above Linux's pid_max)


def an_old_record(path: Path) -> str:
    """A database as the sieve of schema version 3 left it: one run, its turns, a score with its history, a pair,
    a judgment, and a run left running by a process that is gone. Written in that version's own columns."""
    from sqlite_utils import Database

    from sieve.store.record.migrations import migrations

    keykeeper = scenarios.load("keykeeper")
    db = Database(path)
    db.execute("PRAGMA journal_mode = wal")
    migrations.apply(db, stop_before=OLD)
    at = "2025-03-01T10:00:00+00:00"
    with db.atomic():
        db.execute(
            "INSERT INTO scenarios (sha256, name, version, title, toml, created) VALUES (?, ?, ?, ?, ?, ?)",
            [keykeeper.sha256, keykeeper.name, keykeeper.version, keykeeper.title, keykeeper.source, at],
        )
        for run_id, status, owner in (
            ("01JOLDRUN0000000000000000A", "complete", None),
            ("01JOLDRUN0000000000000000B", "running", GONE),
        ):
            db.execute(
                "INSERT INTO runs (id, scenario_sha256, scenario, model, endpoint, settings, status, started, ended, "
                "cost, prompt_tokens, completion_tokens, owner) VALUES (?, ?, 'keykeeper', 'vendor/old-model', "
                "'https://old.example/v1', '{\"temperature\": 0.7}', ?, ?, ?, 0.25, 1200, 340, ?)",
                [run_id, keykeeper.sha256, status, at, at if status == "complete" else None, owner],
            )
            db.execute(
                "INSERT INTO turns (id, run_id, idx, role, origin, step_id, step_repeat, text, created, updated) "
                "VALUES (?, ?, 0, 'user', 'setup', 'm0', 1, ?, ?, ?)",
                [run_id[:-2] + run_id[-1] + "S", run_id, keykeeper.steps[0].text, at, at],
            )
            db.execute(
                "INSERT INTO turns (id, run_id, idx, role, origin, text, status, finish_reason, provider, "
                "prompt_tokens, completion_tokens, cost, ttft, duration, created, updated) "
                "VALUES (?, ?, 1, 'assistant', 'reply', 'Havel sets the bowl down. \u201cThree days.\u201d', "
                "'complete', 'stop', 'OldProvider', 1200, 340, 0.25, 0.5, 3.25, ?, ?)",
                [run_id[:-2] + run_id[-1] + "R", run_id, at, at],
            )
        run_id = "01JOLDRUN0000000000000000A"
        db.execute(
            "INSERT INTO annotations (id, run_id, turn_id, reviewer, rubric, item, kind, score, score_high, quote, "
            "quote_turn_id, quote_start, quote_end, verification, similarity, note, blind, created) VALUES "
            "('01JOLDNOTE00000000000000A1', ?, ?, 'ada', 'T', 'T1', 'score', 1, 2, 'Havel sets the bowl', ?, 0, 19, "
            "'exact', 1.0, 'undecided', 1, ?)",
            [run_id, run_id[:-2] + "AR", run_id[:-2] + "AR", at],
        )
        db.execute(
            "INSERT INTO annotation_history (annotation_id, run_id, reviewer, action, grp, at) "
            "VALUES ('01JOLDNOTE00000000000000A1', ?, 'ada', 'add', '01JOLDGROUP000000000000001', ?)",
            [run_id, at],
        )
        db.execute(
            "INSERT INTO pairs (id, queue, position, run_a, run_b, created) "
            "VALUES ('01JOLDPAIR00000000000000P1', 'q1', 0, ?, '01JOLDRUN0000000000000000B', ?)",
            [run_id, at],
        )
        db.execute(
            "INSERT INTO judgments (id, run_a, run_b, criterion, winner, reviewer, a_shown_first, blind, note, "
            "created, pair_id) VALUES ('01JOLDJUDGMENT00000000000J', ?, '01JOLDRUN0000000000000000B', 'C1', 'A', "
            "'ada', 1, 1, 'clearer', ?, '01JOLDPAIR00000000000000P1')",
            [run_id, at],
        )
        db.execute("INSERT INTO meta (key, value) VALUES ('blind_salt', 'old-salt')")
    db.conn.close()
    return run_id


def everything(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table of a file, in every column it has, in the order of its rowid."""
    conn = sqlite3.connect(path)
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'turns_fts%' AND name != '_sqlite_migrations'"
        )
    ]
    out = {}
    for table in tables:
        columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
        out[table] = [columns, *conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()]
    conn.close()
    return out


def kept_in(old: dict[str, list], new: dict[str, list]) -> None:
    """Every value of the old file is in the new one, in the same column of the same row."""
    for table, (columns, *rows) in old.items():
        new_columns, *new_rows = new[table]
        if table == "meta":  # the upgrade adds what it checked, and keeps every key it found
            new_rows = [r for r in new_rows if r[0] in {row[0] for row in rows}]
        assert len(new_rows) == len(rows), table
        for row, new_row in zip(rows, new_rows):
            assert dict(zip(columns, row)) == {c: v for c, v in zip(new_columns, new_row) if c in columns}, table


def header_of(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    found = conn.execute("PRAGMA application_id").fetchone()[0], conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    return found


@pytest.mark.slow
def test_a_command_that_only_reads_leaves_an_old_database_as_it_is_and_reads_an_upgraded_copy(tmp_path):
    path = tmp_path / "old.db"
    run_id = an_old_record(path)
    before = files_of(path)
    runs = sieve("runs", "--db", path, "--json")
    assert runs.returncode == 0, runs.stderr
    shown = {r["id"]: r for r in json.loads(runs.stdout)}
    assert shown[run_id]["model"] == "vendor/old-model" and shown[run_id]["status"] == "complete"
    assert shown["01JOLDRUN0000000000000000B"]["status"] == "interrupted"  # its process is gone: read so
    (line,) = runs.stderr.strip().splitlines()
    assert f"{path} is at schema version 3, older than this sieve's {len(known_names())}" in line
    assert "reading an upgraded copy" in line
    md = sieve("export", run_id, "--format", "md", "--db", path)
    assert md.returncode == 0 and "Havel sets the bowl down." in md.stdout, md.stderr
    search = sieve("search", "bowl", "--db", path)
    assert search.returncode == 0 and "bowl" in search.stdout, search.stderr
    # The file, and whatever SQLite keeps beside it, is byte for byte as it was; no copy was left anywhere.
    assert files_of(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)
    assert not list(Path(tempfile.gettempdir()).glob("sieve-upgraded-*"))


@pytest.mark.slow
def test_a_command_that_writes_upgrades_an_old_database_after_a_copy_and_keeps_every_value(tmp_path):
    path = tmp_path / "old.db"
    run_id = an_old_record(path)
    old = everything(path)
    verified = sieve("verify", "--run", run_id, "--db", path)  # checks the stored quotes again: it writes
    assert verified.returncode == 0, verified.stderr
    backup = tmp_path / f"old.before-v{len(known_names())}.db"
    (line,) = verified.stderr.strip().splitlines()
    assert line == (
        f"sieve: upgrading {path} from schema version 3 to {len(known_names())}; the file as it was is kept as {backup}"
    )
    # The copy is the old database, whole, standing alone; the file holds every old value, upgraded.
    assert everything(backup) == old
    conn = sqlite3.connect(backup)
    assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == known_names()[:3]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    assert not Path(f"{backup}-wal").exists()
    upgraded = everything(path)
    # The run whose process is gone is now interrupted (as at any open); every other value is as it was.
    columns, *runs = upgraded["runs"]
    stale = dict(zip(columns, next(r for r in runs if r[0] == "01JOLDRUN0000000000000000B")))
    assert (stale["status"], stale["owner"], stale["ended"] is not None) == ("interrupted", None, True)
    old_columns, *old_runs = old["runs"]
    old["runs"] = [old_columns, *[r for r in old_runs if r[0] != stale["id"]]]
    upgraded["runs"] = [columns, *[r for r in runs if r[0] != stale["id"]]]
    kept_in(old, upgraded)
    db = open_db(path)
    assert [m.name for m in store.record.migrations.migrations.applied(db)] == known_names()
    assert header_of(path) == (0x53495645, len(known_names()))
    # Opening it again changes nothing and copies nothing.
    again = sieve("verify", "--run", run_id, "--db", path)
    assert again.returncode == 0 and again.stderr == ""
    assert sorted(p.name for p in tmp_path.glob("old.before-*")) == [backup.name]


def test_a_database_whose_header_says_a_newer_sieve_wrote_it_is_refused_untouched(tmp_path):
    path = tmp_path / "newer.db"
    a_record(path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(known_names()) + 1}")
    conn.close()
    before = files_of(path)
    with pytest.raises(DatabaseError) as caught:
        open_db(path)
    assert f"written by a newer sieve: its schema is at version {len(known_names()) + 1}" in str(caught.value)
    assert files_of(path) == before


def test_a_new_database_says_it_is_sieves_and_its_version_in_its_header(tmp_path):
    path = tmp_path / "new.db"
    open_db(path).conn.close()
    assert header_of(path) == (0x53495645, len(known_names()))


@pytest.mark.parametrize("command", [["runs"], ["import", "none.json"]])
def test_an_empty_file_of_another_application_is_refused_not_taken_over(tmp_path, command):
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {0x47504B47}")  # "GPKG": a GeoPackage, still empty
    conn.close()
    before = files_of(path)
    result = CliRunner().invoke(main, [*command, "--db", str(path)])
    assert result.exit_code == 1, result.output
    assert f"{path}: not a sieve database (its header names another application: application_id 0x47504b47)" in (
        result.output
    )
    assert files_of(path) == before


@pytest.mark.slow
def test_an_old_database_that_cannot_be_written_is_read_through_an_upgraded_copy(tmp_path):
    prefix = _setpriv()
    if prefix is None:
        pytest.skip("cannot make a file read-only for this user (no setpriv to drop root's override)")
    folder = tmp_path / "share"
    folder.mkdir()
    path = folder / "old.db"
    run_id = an_old_record(path)
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        before = files_of(path)
        runs = sieve("runs", "--db", path, "--json", prefix=prefix)
        assert runs.returncode == 0, runs.stderr
        assert run_id in [r["id"] for r in json.loads(runs.stdout)] and "reading an upgraded copy" in runs.stderr
        writes = sieve("verify", "--run", run_id, "--db", path, prefix=prefix)
        assert writes.returncode == 2 and "the database is read-only and this command writes to it" in writes.stderr
        assert files_of(path) == before
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)
