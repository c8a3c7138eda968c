"""Merging copies of one database: two reviewers (and a judge run again) in two copies, merged back by bundles.

A merge keeps the history: what was removed or superseded in either copy stays removed, and the
same judging repeated in both copies counts once. Only a real disagreement (one reviewer, one
item of one run, two values in force) is a conflict, reported with both values, and the user
chooses which stands (`--on-conflict theirs|ours|fail`).
"""

from __future__ import annotations

import io
import json
import sqlite3

import pytest
from click.testing import CliRunner
from rich.console import Console

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.judge import client as client
from sieve.engine.judge import runs as judging
from sieve.engine.session import resolve_settings
from sieve.store.record import annotations as notes
from sieve.store.record import judgings
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import totals_line
from tests.support import fakejudge
from tests.support.scores import score
from tests.support.tui_helpers import FAST_RETRY

KEYKEEPER = scenarios.load("keykeeper")
JUDGE = "judge;reply=judge;quotes=exact"
JUDGE_NAME = judgings.judge_name(JUDGE)


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


async def play(db, server) -> str:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    spec = RunSpec(resolve_settings("vendor/model;tokens=60", KEYKEEPER, {"max_tokens": 200}), gateway)
    (row,) = await run_batch(db, KEYKEEPER, [spec], retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    return row["run"]


async def judge(db, server, run_id: str) -> None:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    judge_ = client.Judge(gateway, client.judge_settings(JUDGE, False, {}), JUDGE_NAME, 128_000)
    (row,) = await judging.judge_runs(db, [(judge_, run_id)], judging.Options(), console=Console(file=io.StringIO()))
    await gateway.aclose()
    assert row["status"] == "complete", row


def copy(source, target) -> None:
    """A copy of the database file as it stands (SQLite's backup: the WAL's pages too)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.close()


def words(db, run_id: str, count: int, skip: int = 0) -> str:
    """Words of the run's first reply: a quote the verifier finds."""
    reply = db.execute(
        "SELECT text FROM turns WHERE run_id = ? AND role = 'assistant' ORDER BY idx LIMIT 1", [run_id]
    ).fetchone()[0]
    return " ".join(reply.split()[skip : skip + count])


def shown(path, run_id: str) -> dict[str, tuple[str, int]]:
    """What a database shows of the run: each reviewer's card totals, and how many annotations are in force."""
    db = store.open_db(path)
    view = RunView.open(db, run_id)
    out = {r: (totals_line(card), len(view.annotations(r))) for r, card in view.cards().items()}
    db.conn.close()
    return out


def table_counts(path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    tables = ("annotations", "annotation_history", "judgings", "merges")
    found = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    found["removed"] = conn.execute("SELECT COUNT(*) FROM annotations WHERE removed IS NOT NULL").fetchone()[0]
    conn.close()
    return found


def export(path, bundle) -> None:
    result = cli("export", "--all", "--db", path, "-o", bundle)
    assert result.exit_code == 0, result.output


@pytest.fixture
async def original(tmp_path, fake_server):
    """One run, scored by ada and judged once; the file closed, so it can be copied."""
    path = tmp_path / "original.db"
    db = store.open_db(path)
    run_id = await play(db, fake_server)
    for item, value, skip in (("T1", 1, 0), ("T2", 1, 8), ("T3", 2, 16)):
        score(db, run_id, item, value, words(db, run_id, 7, skip))
    await judge(db, fake_server, run_id)
    db.conn.close()
    return path, run_id


@pytest.mark.slow
async def test_two_reviewers_and_a_judge_run_again_in_each_copy_merge_to_what_each_copy_showed(
    tmp_path, fake_server, original
):
    path, run_id = original
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    copy(path, a)
    copy(path, b)
    # Copy A: ada deletes T2 and scores T4; the judge is run again.
    db = store.open_db(a)
    (t2,) = [x for x in notes.active(db, run_id, "ada") if x["item"] == "T2"]
    notes.remove(db, t2["id"], "ada")
    score(db, run_id, "T4", 2, words(db, run_id, 7, 24))
    await judge(db, fake_server, run_id)
    db.conn.close()
    # Copy B: bob scores two items and deletes one of them again; the judge is run again.
    db = store.open_db(b)
    score(db, run_id, "T1", 0, words(db, run_id, 7, 0), reviewer="bob")
    gone = score(db, run_id, "T5", 2, words(db, run_id, 7, 8), reviewer="bob")
    notes.remove(db, gone, "bob")
    await judge(db, fake_server, run_id)
    db.conn.close()
    in_a, in_b = shown(a, run_id), shown(b, run_id)
    assert in_a[JUDGE_NAME] == in_b[JUDGE_NAME]  # the same judge on the same run: the same card
    export(a, tmp_path / "a.json")
    export(b, tmp_path / "b.json")

    for order in (("a.json", "b.json"), ("b.json", "a.json")):
        merged = tmp_path / f"merged-{order[0][0]}.db"
        copy(path, merged)
        for bundle in order:
            result = cli("import", tmp_path / bundle, "--db", merged)  # --on-conflict fail: there is none
            assert result.exit_code == 0, result.output
        after = shown(merged, run_id)
        assert after["ada"] == in_a["ada"]  # her deletion of T2 holds
        assert after["bob"] == in_b["bob"]
        assert after[JUDGE_NAME] == in_a[JUDGE_NAME]  # one card, not the three judgings' cards at once
        assert set(after) == {"ada", "bob", JUDGE_NAME}
        # Every judging is kept, and the history of every annotation: none is lost, none comes back.
        db = store.open_db(merged)
        assert len({r["judging"] for r in judgings.of_run(db, run_id)}) == 3
        assert db.execute("SELECT removed FROM annotations WHERE id = ?", [t2["id"]]).fetchone()[0] is not None
        assert db.execute("SELECT removed FROM annotations WHERE id = ?", [gone]).fetchone()[0] is not None
        # Each merge is on record: the second found the judge's card repeated, and set the repeat aside.
        first, second = [json.loads(r[0]) for r in db.execute("SELECT report FROM merges ORDER BY id")]
        assert first["set_aside"] == 0 and second["set_aside"] == in_a[JUDGE_NAME][1]
        assert first["conflicts"] == second["conflicts"] == []
        db.conn.close()


@pytest.mark.slow
async def test_one_reviewer_scoring_an_item_two_ways_in_two_copies_is_a_conflict_with_both_values(
    tmp_path, fake_server, original
):
    path, run_id = original
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for target, value in ((a, 2), (b, 0)):
        copy(path, target)
        db = store.open_db(target)
        (t1,) = [x for x in notes.active(db, run_id, "ada") if x["item"] == "T1"]
        score(db, run_id, "T1", value, words(db, run_id, 7, 0), replaces=t1["id"])
        db.conn.close()
    export(b, tmp_path / "b.json")
    in_a, in_b = shown(a, run_id), shown(b, run_id)
    assert in_a["ada"] != in_b["ada"]
    before = table_counts(a)

    refused = cli("import", tmp_path / "b.json", "--db", a)
    assert refused.exit_code == 2, refused.output
    assert "1 conflict" in refused.output and "nothing was imported" in refused.output
    assert f"ada scored T1 of run {run_id} 2 here, 0 in the bundle" in refused.output
    assert shown(a, run_id) == in_a
    assert table_counts(a) == before  # nothing was written: not a row, not a record of the merge

    ours = tmp_path / "ours.db"
    copy(a, ours)
    kept = cli("import", tmp_path / "b.json", "--db", ours, "--on-conflict", "ours", "--json")
    assert kept.exit_code == 0, kept.output
    report = json.loads(kept.output)
    (conflict,) = report["conflicts"]
    assert (conflict["reviewer"], conflict["item"], conflict["chosen"]) == ("ada", "T1", "ours")
    assert [x["score"] for x in conflict["ours"]] == [2] and [x["score"] for x in conflict["theirs"]] == [0]
    assert shown(ours, run_id)["ada"] == in_a["ada"]

    theirs = tmp_path / "theirs.db"
    copy(a, theirs)
    taken = cli("import", tmp_path / "b.json", "--db", theirs, "--on-conflict", "theirs")
    assert taken.exit_code == 0, taken.output
    assert "ada scored T1 of run" in taken.output and "theirs" in taken.output
    assert shown(theirs, run_id)["ada"] == in_b["ada"]
    # Both values stay in the record; one is in force.
    db = store.open_db(theirs)
    assert sorted(
        x["score"] for x in db.query("SELECT score FROM annotations WHERE item = 'T1' AND reviewer = 'ada'")
    ) == [0, 1, 2]
    assert [x["score"] for x in notes.active(db, run_id, "ada") if x["item"] == "T1"] == [0]


@pytest.mark.slow
async def test_two_independent_databases_merge_without_a_conflict_over_a_built_in_scenario(tmp_path, fake_server):
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    for path in (first, second):
        db = store.open_db(path)
        await play(db, fake_server)
        db.conn.close()
    conn = sqlite3.connect(first)  # the snapshot was stored a year earlier there
    conn.execute("UPDATE scenarios SET created = '2025-01-01T00:00:00+00:00'")
    conn.commit()
    conn.close()
    export(first, tmp_path / "first.json")
    result = cli("import", tmp_path / "first.json", "--db", second)
    assert result.exit_code == 0, result.output
    db = store.open_db(second)
    assert len(store.list_runs(db)) == 2
    assert db.execute("SELECT COUNT(*) FROM scenarios").fetchone()[0] == 1
