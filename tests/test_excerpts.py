"""Excerpts: a passage marked for publication with a caption. Made where every annotation is made, its quote
verified; it scores nothing; a bundle and the Markdown export carry it; an older database takes it after its
migration."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from sieve import store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import bundles
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from tests.support.report_field import keykeeper_run, score


def reply(db, run_id, step="m3"):
    view = RunView.open(db, run_id)
    return next(t for t in view.replies() if view.steps.get(t["id"]) == step)


def excerpt(db, run_id, words: str, caption: str = "the key stays", **fields) -> str:
    turn = reply(db, run_id)
    start = turn["text"].index(words)
    quote = Quote(turn["id"], start, start + len(words), words)
    return evidence.annotate(db, run_id, quote=quote, reviewer="ada", kind="excerpt", note=caption, **fields)


def test_an_excerpt_is_verified_and_scores_nothing(db):
    run_id = keykeeper_run(db, "acme/oracle-1", 0)
    score(db, run_id, "ada")
    before = RunView.open(db, run_id).card("ada")
    made = excerpt(db, run_id, "The key stays with me")
    (stored,) = [a for a in notes.active(db, run_id) if a["id"] == made]
    assert (stored["kind"], stored["item"], stored["verification"], stored["note"]) == (
        "excerpt",
        "excerpt",
        "exact",
        "the key stays",
    )
    after = RunView.open(db, run_id).card("ada")
    assert [r.total() for r in after.rubrics] == [r.total() for r in before.rubrics]
    assert after.progress.text() == before.progress.text() and after.notes == before.notes
    # A one-word passage is an excerpt still (it backs no score, so it is not "too short").
    short = excerpt(db, run_id, "Rain")
    assert next(a for a in notes.active(db, run_id) if a["id"] == short)["verification"] == "exact"
    # A quote the run does not hold is stored as absent, as any quote is, never as found.
    turn = reply(db, run_id)
    invented = Quote(turn["id"], None, None, "Havel throws open every door of the post at once")
    made = evidence.annotate(db, run_id, quote=invented, reviewer="ada", kind="excerpt", note="x")
    assert next(a for a in notes.active(db, run_id) if a["id"] == made)["verification"] == "absent"
    # Checked again later, the excerpt keeps its verdict (excerpts take quotes of any length there too).
    counts = evidence.reverify(db, run_id)
    assert counts.get("short", 0) == 0


def test_an_excerpt_needs_a_passage_and_takes_no_score(db):
    run_id = keykeeper_run(db, "acme/oracle-1", 0)
    with pytest.raises(evidence.EvidenceRefused, match="select the words"):
        evidence.annotate(db, run_id, reviewer="ada", kind="excerpt", item="excerpt", note="nothing selected")
    with pytest.raises(evidence.EvidenceRefused, match="scores nothing"):
        excerpt(db, run_id, "The key stays with me", item="T1")
    with pytest.raises(evidence.EvidenceRefused, match="scores nothing"):
        excerpt(db, run_id, "The key stays with me", score=2.0)
    assert notes.active(db, run_id) == []


def test_a_bundle_and_the_markdown_export_carry_excerpts(db, tmp_path):
    run_id = keykeeper_run(db, "acme/oracle-1", 0)
    made = excerpt(db, run_id, "The key stays with me", "Havel keeps the key")
    data = bundles.export_bundle(db, [run_id])
    assert [a["kind"] for a in data["annotations"]] == ["excerpt"]
    path = tmp_path / "run.json"
    path.write_text(bundles.dumps(data), encoding="utf-8")
    other = store.open_db(tmp_path / "other.db")
    bundles.import_bundle(other, str(path), json.loads(path.read_text()))
    (copied,) = notes.active(other, run_id)
    assert (copied["id"], copied["kind"], copied["quote"], copied["note"]) == (
        made,
        "excerpt",
        "The key stays with me",
        "Havel keeps the key",
    )
    db_path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    done = CliRunner().invoke(main, ["export", run_id, "--format", "md", "--db", db_path])
    assert done.exit_code == 0, done.output
    assert "| excerpt |" in done.output and "The key stays with me" in done.output
    assert "Havel keeps the key" in done.output


def test_a_database_made_before_excerpts_takes_them_after_its_migration(tmp_path):
    path = tmp_path / "old.db"
    db = store.open_db(path)
    run_id = keykeeper_run(db, "acme/oracle-1", 0)
    db.conn.close()
    # Back to the schema before m024: the kind check without 'excerpt', the migration not applied.
    raw = sqlite3.connect(path)
    sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'annotations'").fetchone()[0]
    raw.execute("PRAGMA writable_schema = ON")
    raw.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'annotations'", [sql.replace(", 'excerpt')", ")")])
    raw.execute("PRAGMA writable_schema = OFF")
    raw.execute("DELETE FROM _sqlite_migrations WHERE name = 'm024_excerpts'")
    raw.commit()
    raw.close()
    db = store.open_db(path)
    assert "'excerpt'" in db.execute("SELECT sql FROM sqlite_master WHERE name = 'annotations'").fetchone()[0]
    excerpt(db, run_id, "The key stays with me")
    assert [a["kind"] for a in notes.active(db, run_id)] == ["excerpt"]
