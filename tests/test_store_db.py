"""The record: created and migrated from nothing, WAL, foreign keys, full-text search."""

from __future__ import annotations

import sqlite3

import pytest

from sieve import scenarios, store
from sieve.paths import default_db_path, resolve_db_path
from sieve.store.record.db import DatabaseError, open_db
from sieve.store.record.migrations import migrations
from sieve.store.record.runs import now

TABLES = {"scenarios", "runs", "turns", "annotations", "annotation_history", "judgments", "turns_fts", "meta", "pairs"}
TABLES |= {"suggestions", "suggestion_decisions"}
TABLES |= {"judgings", "catch_trials"}
TABLES |= {"merges"}


def test_a_new_database_is_created_and_migrated_from_nothing(tmp_path):
    path = tmp_path / "deep" / "er" / "sieve.db"
    db = open_db(path)
    assert path.is_file()
    assert TABLES <= set(db.table_names())
    assert [m.name for m in migrations.applied(db)] == [
        "m001_initial",
        "m002_meta",
        "m003_pair_queues",
        "m004_annotation_evidence",
        "m005_streaming_turns",
        "m006_turn_speaker",
        "m007_suggestions",
        "m008_model_played_turns",
        "m009_judgings",
        "m010_catch_trials",
        "m011_judging_owner",
        "m012_queue_sides",
        "m013_altered_quotes",
        "m014_short_quotes",
        "m024_excerpts",
        "m025_adaptive_queues",
        "m018_merges",
        "m020_search_words",
        "m021_archived_runs",
        "m015_placed_quotes",
    ]
    # WAL is a property of the file: a second, plain connection sees it.
    plain = sqlite3.connect(path)
    assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_opening_twice_is_harmless_and_keeps_what_is_there(tmp_path):
    path = tmp_path / "sieve.db"
    first = open_db(path)
    run_id = store.create_run(
        first, scenarios.load("keykeeper"), model="m", endpoint="http://127.0.0.1:1/v1", settings={"temperature": 1.0}
    )
    applied = first.execute("SELECT COUNT(*) FROM _sqlite_migrations").fetchone()[0]
    schema = first.execute("SELECT group_concat(sql, ';') FROM sqlite_master").fetchone()[0]
    second = open_db(path)
    assert second.execute("SELECT COUNT(*) FROM _sqlite_migrations").fetchone()[0] == applied
    assert second.execute("SELECT group_concat(sql, ';') FROM sqlite_master").fetchone()[0] == schema
    assert [r["id"] for r in store.list_runs(second)] == [run_id]


def test_a_run_snapshots_the_scenario_text_once_per_version(tmp_path):
    db = open_db(tmp_path / "sieve.db")
    keykeeper = scenarios.load("keykeeper")
    a = store.create_run(db, keykeeper, model="a", endpoint="e", settings={})
    store.create_run(db, keykeeper, model="b", endpoint="e", settings={})
    rows = list(db.query("SELECT name, version, toml, sha256 FROM scenarios"))
    assert len(rows) == 1
    assert rows[0]["toml"] == keykeeper.source and rows[0]["sha256"] == keykeeper.sha256
    run = db["runs"].get(a)
    assert run["scenario_sha256"] == keykeeper.sha256 and run["status"] == "running"


def test_foreign_keys_and_checks_are_enforced(tmp_path):
    db = open_db(tmp_path / "sieve.db")
    t = now()
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        db.execute(
            "INSERT INTO turns (id, run_id, idx, role, origin, created, updated) VALUES ('t1', 'no-such-run', 0, 'user', 'setup', ?, ?)",
            [t, t],
        )
    run_id = store.create_run(db, scenarios.load("train"), model="m", endpoint="e", settings={})
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        db.execute(
            "INSERT INTO turns (id, run_id, idx, role, origin, status, created, updated) VALUES ('t1', ?, 0, 'user', 'setup', 'lost', ?, ?)",
            [run_id, t, t],
        )


def test_full_text_search_follows_turn_text(tmp_path):
    db = open_db(tmp_path / "sieve.db")
    run_id = store.create_run(db, scenarios.load("keykeeper"), model="m", endpoint="e", settings={})
    t = now()
    with db.atomic():
        db["turns"].insert(
            {
                "id": "t1",
                "run_id": run_id,
                "idx": 1,
                "role": "assistant",
                "origin": "reply",
                "text": "Havel sets down the porridge.",
                "created": t,
                "updated": t,
            }
        )
    assert [
        r["id"]
        for r in db.query(
            "SELECT turns.id FROM turns JOIN turns_fts ON turns.rowid = turns_fts.rowid WHERE turns_fts MATCH 'porridge'"
        )
    ] == ["t1"]
    with db.atomic():
        db["turns"].update("t1", {"text": "Havel burns the letter."})
    assert list(db.query("SELECT rowid FROM turns_fts WHERE turns_fts MATCH 'porridge'")) == []
    assert len(list(db.query("SELECT rowid FROM turns_fts WHERE turns_fts MATCH 'letter'"))) == 1


def test_the_path_is_the_option_else_the_environment_else_the_user_data_dir(tmp_path, monkeypatch, isolated_user_dirs):
    assert resolve_db_path(tmp_path / "a.db") == tmp_path / "a.db"
    monkeypatch.setenv("SIEVE_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path(tmp_path / "a.db") == tmp_path / "a.db"
    monkeypatch.delenv("SIEVE_DB")
    assert resolve_db_path(None) == default_db_path()
    assert str(default_db_path()).startswith(str(isolated_user_dirs / "data"))


def test_a_file_that_is_not_a_database_is_named_in_the_error(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("this is not sqlite, it is a shopping list\n" * 100)
    with pytest.raises(DatabaseError) as caught:
        open_db(path)
    assert str(path) in str(caught.value) and "not a database" in str(caught.value)


def test_a_streaming_reply_enters_the_search_index_when_it_stops_streaming(tmp_path):
    from sieve.store.record import turns as record

    db = open_db(tmp_path / "sieve.db")
    run_id = store.create_run(db, scenarios.load("keykeeper"), model="m", endpoint="e", settings={})
    reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", status="streaming")
    record.save_partial(db, reply, "the ferryman waits")

    def found(word):
        return [r[0] for r in db.execute("SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?", [word]).fetchall()]

    assert found("ferryman") == []
    record.finish_turn(db, reply, "complete", "the ferryman waits at the ford", {})
    assert len(found("ford")) == 1 and len(found("ferryman")) == 1
    record.finish_turn(db, reply, "complete", "the gate is shut", {})
    assert found("ford") == [] and len(found("gate")) == 1
    db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('integrity-check')")
