"""Records that stay tidy (issue 26 §7): a Play screen left before its first send leaves no run; a run can be
archived (out of lists and results, kept, brought back) or deleted with what was said about it, once confirmed,
and neither for a run other reviewers scored unless forced."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.record.runs import owner_tag
from sieve.store.scoring import field
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.play import PlayScreen
from tests.support.field_helpers import played_run
from tests.support.scores import score
from tests.support.tui_helpers import play_app, screen_is, screen_text, settle, wait_until

TRAIN = scenarios.load("train")


def cli(*args, input: str | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


def listed(db, *args) -> list[str]:
    result = cli("runs", "--json", "--db", path_of(db), *args)
    assert result.exit_code == 0, result.output
    return [r["id"] for r in json.loads(result.output)]


# -- Play left before its first send ---------------------------------------------------------------


@pytest.mark.slow
async def test_play_left_before_its_first_send_leaves_no_run_and_one_sent_keeps_it(db, fake_server):
    app, session = play_app(db, fake_server, "a")
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, screen_is(app, PlayScreen))
        assert record.get_run(db, session.run_id)  # the run is there while Play is open
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        await wait_until(pilot, lambda: store.list_runs(db) == [])
        assert session.run_id[-8:] not in screen_text(app)
    # Quitting the app from Play, nothing sent: nothing left either.
    app, session = play_app(db, fake_server, "a")
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, screen_is(app, PlayScreen))
    assert store.list_runs(db) == []
    # One step sent: the run is kept, whatever the way out.
    app, session = play_app(db, fake_server, "a;tokens=5")
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, screen_is(app, PlayScreen))
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
    assert [r["id"] for r in store.list_runs(db)] == [session.run_id]


def test_a_run_whose_process_died_before_its_first_send_is_removed_when_the_database_opens(tmp_path):
    path = tmp_path / "died.db"
    db = store.open_db(path)
    empty = store.create_run(db, TRAIN, model="m", endpoint="e", settings={})
    sent = store.create_run(db, TRAIN, model="m", endpoint="e", settings={})
    record.add_turn(db, sent, idx=0, role="user", origin="setup", text=TRAIN.steps[0].text, step_id="m0")
    # As a process that is gone left them: running, owned by a pid that no longer exists.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = owner_tag().rsplit(":", 1)[0] + ":" + dead.stdout.strip()
    with db.atomic():
        db.execute("UPDATE runs SET owner = ? WHERE id IN (?, ?)", [gone, empty, sent])
    assert not os.path.exists(f"/proc/{dead.stdout.strip()}")
    again = store.open_db(path)
    assert [(r["id"], r["status"]) for r in store.list_runs(again)] == [(sent, "interrupted")]


# -- archive ------------------------------------------------------------------------------------


def test_an_archived_run_leaves_lists_results_the_field_and_search_and_comes_back(db):
    kept, hidden = played_run(db, model="vendor/kept"), played_run(db, model="vendor/hidden")
    score(db, hidden, "T3", 1, reviewer="ada")
    path = path_of(db)
    result = cli("runs", "--archive", hidden[-8:], "--reviewer", "ada", "--db", path)
    assert result.exit_code == 0 and f"run {hidden}: archived" in result.output, result.output
    assert listed(db) == [kept] and listed(db, "--archived") == [hidden]
    results = json.loads(cli("results", "--scenario", "train", "--format", "json", "--db", path).output)
    assert [r["model"] for r in results] == ["vendor/kept"]
    assert {h["run_id"] for h in json.loads(cli("search", "Viktor", "--json", "--db", path).output)} == {kept}
    assert [r["id"] for r in field.field_runs(db, "train")] == [kept]  # review --next passes it by
    # Kept whole: named by its id, it is all there.
    assert record.get_run(db, hidden)["model"] == "vendor/hidden"
    exported = json.loads(cli("export", hidden, "--db", path).output)
    assert [r["id"] for r in exported["runs"]] == [hidden] and exported["annotations"]
    everything = json.loads(cli("export", "--all", "--db", path).output)  # a copy of the database loses nothing
    assert sorted(r["id"] for r in everything["runs"]) == sorted([kept, hidden])
    # With every run archived, the list says where they went rather than that there are none.
    cli("runs", "--archive", kept, "--reviewer", "ada", "--db", path)
    empty = cli("runs", "--db", path)
    assert "No runs in view" in empty.output and "2 runs archived (sieve runs --archived" in empty.output, empty.output
    cli("runs", "--unarchive", kept, "--db", path)
    back = cli("runs", "--unarchive", hidden, "--db", path)
    assert back.exit_code == 0 and "back in lists and results" in back.output
    assert listed(db) == [kept, hidden] and listed(db, "--archived") == []


# -- delete -------------------------------------------------------------------------------------


def test_delete_asks_first_and_removes_the_run_with_its_annotations(db):
    kept, doomed = played_run(db), played_run(db)
    score(db, doomed, "T3", 1, reviewer="ada")
    score(db, kept, "T3", 1, reviewer="ada")
    path = path_of(db)
    indexed = db.execute("SELECT COUNT(*) FROM turns_fts WHERE turns_fts MATCH 'Viktor'").fetchone()[0]
    no = cli("runs", "--delete", doomed, "--reviewer", "ada", "--db", path, input="n\n")
    assert no.exit_code != 0 and f"Delete run {doomed} and 22 turns, 1 annotation?" in no.output, no.output
    assert listed(db) == [kept, doomed]
    yes = cli("runs", "--delete", doomed, "--reviewer", "ada", "--db", path, input="y\n")
    assert yes.exit_code == 0 and f"run {doomed}: deleted, with 22 turns, 1 annotation" in yes.output, yes.output
    assert listed(db) == [kept]
    for table in ("turns", "annotations", "annotation_history"):
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", [doomed]).fetchone()[0] == 0, table
    assert db.execute("SELECT COUNT(*) FROM annotations WHERE run_id = ?", [kept]).fetchone()[0] == 1
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    # The full-text index forgets its turns too: half the hits are gone.
    assert db.execute("SELECT COUNT(*) FROM turns_fts WHERE turns_fts MATCH 'Viktor'").fetchone()[0] == indexed // 2


def test_archive_and_delete_are_refused_for_runs_others_scored_unless_forced(db):
    theirs = played_run(db)
    score(db, theirs, "T3", 1, reviewer="bob")
    path = path_of(db)
    for action in ("--archive", "--delete"):
        refused = cli("runs", action, theirs, "--reviewer", "ada", "--db", path, "--yes")
        assert refused.exit_code == 2 and "was scored by bob too" in refused.output and "--force" in refused.output
        assert listed(db) == [theirs]
    assert cli("runs", "--archive", theirs, "--reviewer", "bob", "--db", path).exit_code == 0  # bob's own
    assert cli("runs", "--unarchive", theirs, "--reviewer", "ada", "--db", path).exit_code == 0
    forced = cli("runs", "--delete", theirs, "--reviewer", "ada", "--db", path, "--yes", "--force")
    assert forced.exit_code == 0 and listed(db) == []


def test_a_run_others_stand_on_is_not_deleted(db):
    parent, other = played_run(db), played_run(db)
    branch = record.branch_run(db, parent, 3)
    path = path_of(db)
    result = cli("runs", "--delete", parent, "--db", path, "--yes")
    assert result.exit_code == 2 and f"has branches taken from it ({branch})" in result.output
    pairing.create_queue(db, [(other, branch)], seed=1)
    result = cli("runs", "--delete", other, "--db", path, "--yes")
    assert result.exit_code == 2 and "head-to-head queue" in result.output and "archive it instead" in result.output
    assert sorted(listed(db)) == sorted([parent, other, branch])
