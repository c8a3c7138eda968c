"""Bundles out and in: a byte-identical round trip, idempotent imports, reviewers merging, bad bundles refused whole."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import bundles
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.record.ids import new_id
from sieve.store.record.runs import now
from sieve.store.scoring import evidence
from tests.support.scores import score


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def populate(db) -> list[str]:
    """Two runs, a branch, alternatives, annotations with undo history, a judgment."""
    keykeeper = scenarios.load("keykeeper")
    runs = []
    for model in ("vendor/a", "vendor/b"):
        run_id = store.create_run(
            db, keykeeper, model=model, endpoint="fake", settings={"temperature": 1.0, "max_tokens": 24000}
        )
        record.add_turn(
            db, run_id, idx=0, role="user", origin="setup", text=keykeeper.steps[0].text, step_id="m0", step_repeat=1
        )
        first = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", status="streaming")
        record.finish_turn(db, first, "filtered", "", {"error": "empty reply", "cost": 0.0})
        second = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", alt=1, status="streaming")
        record.finish_turn(
            db,
            second,
            "complete",
            f"Havel nods to {model}. \u201cThree days.\u201d",
            {"provider": "P", "cost": 0.001, "prompt_tokens": 10, "completion_tokens": 5},
        )
        record.set_run_status(db, run_id, "complete")
        runs.append(run_id)
        evidence.annotate(
            db,
            run_id,
            reviewer="ada",
            item="T1",
            rubric="T",
            kind="score",
            score=2,
            quote=Quote(second, 0, 10, "Havel nods"),
        )
        gone = score(db, run_id, "T2", 0)
        notes.undo(db, run_id, "ada")
        assert gone
    branch = record.branch_run(db, runs[0], 1)
    record.set_run_status(db, branch, "complete")
    with db.atomic():
        db.execute(
            "INSERT INTO judgments (id, run_a, run_b, criterion, winner, reviewer, a_shown_first, blind, created) VALUES (?, ?, ?, 'C1', 'tie', 'ada', 1, 1, ?)",
            [new_id(), runs[0], runs[1], now()],
        )
    return runs + [branch]


def test_export_import_export_is_byte_identical(tmp_path):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    populate(store.open_db(first))
    bundle = tmp_path / "all.json"
    assert cli("export", "--all", "--db", first, "-o", bundle).exit_code == 0
    result = cli("import", bundle, "--db", second)
    assert result.exit_code == 0, result.output
    assert (
        "added 1 scenarios, 3 runs, 8 turns, 4 annotations, 4 annotation history, 0 pairs, 1 judgments, 0 suggestions, 0 suggestion decisions, 0 judgings, 0 catch trials"
        in result.output
    )
    again = tmp_path / "again.json"
    assert cli("export", "--all", "--db", second, "-o", again).exit_code == 0
    assert again.read_bytes() == bundle.read_bytes()
    data = json.loads(bundle.read_text())
    assert len(data["runs"]) == 3 and {a["reviewer"] for a in data["annotations"]} == {"ada"}
    assert all("owner" not in r for r in data["runs"]) and all("seq" not in h for h in data["annotation_history"])
    # What the second database holds is usable: undo walks the imported history.
    db = store.open_db(second)
    run_a = data["runs"][0]["id"]
    assert [a["item"] for a in notes.active(db, run_a, "ada")] == ["T1"]
    assert notes.redo(db, run_a, "ada")  # the undone T2 comes back


def test_importing_the_same_bundle_twice_adds_nothing(tmp_path):
    populate(store.open_db(tmp_path / "a.db"))
    bundle = tmp_path / "all.json"
    cli("export", "--all", "--db", tmp_path / "a.db", "-o", bundle)
    cli("import", bundle, "--db", tmp_path / "b.db")
    result = cli("import", bundle, "--db", tmp_path / "b.db", "--json")
    assert json.loads(result.output)["added"] == {t: 0 for t in bundles.TABLES}
    assert {"suggestions", "suggestion_decisions", "judgings"} | {"catch_trials"} <= set(bundles.TABLES)


def test_bundles_from_several_reviewers_merge(tmp_path):
    ada_db = store.open_db(tmp_path / "ada.db")
    run_ids = populate(ada_db)
    shared = tmp_path / "shared.json"
    cli("export", "--all", "--db", tmp_path / "ada.db", "-o", shared)
    cli("import", shared, "--db", tmp_path / "bob.db")
    bob_db = store.open_db(tmp_path / "bob.db")
    score(bob_db, run_ids[0], "T1", 1, reviewer="bob")
    bob_bundle = tmp_path / "bob.json"
    cli("export", run_ids[0], "--db", tmp_path / "bob.db", "-o", bob_bundle)
    for bundle in (shared, bob_bundle):
        assert cli("import", bundle, "--db", tmp_path / "merged.db").exit_code == 0
    merged = store.open_db(tmp_path / "merged.db")
    assert {a["reviewer"] for a in notes.active(merged, run_ids[0])} == {"ada", "bob"}
    assert len(store.list_runs(merged)) == 3


def counts(path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    return {
        t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("runs", "turns", "annotations", "scenarios")
    }


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda text, data: text[: len(text) // 2], "bad.json:"),
        (
            lambda text, data: json.dumps({**data, "turns": [{**data["turns"][0], "idx": "one"}]}),
            "turns[0].idx: 'idx' must be integer, found str",
        ),
        (
            lambda text, data: json.dumps({**data, "annotations": [{**data["annotations"][0], "quote": 42}]}),
            "annotations[0].quote: 'quote' must be text, found int",
        ),
        (
            lambda text, data: json.dumps(
                {**data, "annotations": [{**data["annotations"][0], "id": new_id(), "run_id": "NO-SUCH-RUN"}]}
            ),
            "annotations[0].run_id: names a run that is neither here nor stored",
        ),
        (lambda text, data: json.dumps({**data, "format": "other"}), "not a sieve bundle"),
        (lambda text, data: json.dumps({**data, "runs": {"id": 1}}), "runs: expected a list"),
        (
            lambda text, data: json.dumps({**data, "scenarios": [{**data["scenarios"][0], "toml": "changed"}]}),
            "scenarios[0]: the scenario text does not match its sha256",
        ),
    ],
)
def test_a_bad_bundle_is_refused_whole(tmp_path, damage, message):
    populate(store.open_db(tmp_path / "a.db"))
    good = tmp_path / "good.json"
    cli("export", "--all", "--db", tmp_path / "a.db", "-o", good)
    text = good.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(damage(text, json.loads(text)))
    target = tmp_path / "target.db"
    store.open_db(target)
    before = counts(target)
    result = cli("import", bad, "--db", target)
    assert result.exit_code == 2 and message in result.output, result.output
    assert counts(target) == before


def test_a_huge_bundle_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:
        handle.truncate(600 * 1024 * 1024)  # sparse: no disk used
    result = cli("import", huge, "--db", tmp_path / "t.db")
    assert result.exit_code == 2 and "a bundle is at most" in result.output
    os.remove(huge)
