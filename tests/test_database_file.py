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
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from sieve import scenarios, store
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
