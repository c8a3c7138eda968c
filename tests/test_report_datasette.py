"""The record in Datasette: `sieve report --datasette-metadata` writes canned queries, and Datasette itself
(`datasette DB -m FILE --get PATH`, the command the README shows) runs each: the field agrees with sieve's own
score cards, a run's quotes stand where the record says, the excerpts carry their captions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from tests.support.report_field import field
from tests.support.review_runs import scripted_run

pytest.importorskip("datasette", reason="Datasette is not installed (pip install -e '.[test]' brings it)")
pytestmark = pytest.mark.slow  # each query starts Datasette in a process of its own


def datasette(db_file, metadata, path: str) -> list[dict]:
    """What Datasette answers for `path`, as it serves it, without a server (its --get)."""
    done = subprocess.run(
        [sys.executable, "-m", "datasette", str(db_file), "-m", str(metadata), "--get", path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("datasette")
    db_file = tmp_path / "sieve.db"
    db = store.open_db(db_file)
    runs = field(db, {"acme/oracle-1": 2, "mistral/small-3": 1})
    # A train run with an undecided range and deductions past the rubric's limit (1.5).
    train = scripted_run(db, "train")
    view = RunView.open(db, train)
    reply = view.replies_to("turn7")[0]
    quote = Quote(reply["id"], 0, 30, reply["text"][:30])
    evidence.annotate(
        db, train, reviewer="ada", item="T7", rubric="key", kind="score", score=0.5, score_high=1.0, quote=quote
    )
    evidence.annotate(db, train, reviewer="ada", item="T8", rubric="key", kind="score", score=1.0, quote=quote)
    evidence.annotate(
        db, train, reviewer="ada", item="T8", rubric="key", kind="score", score=0.0, quote=quote
    )  # the latest
    for _ in range(2):
        evidence.annotate(db, train, reviewer="ada", item="key", rubric="key", kind="deduction", score=1.0, quote=quote)
    metadata = tmp_path / "sieve-datasette.json"
    done = CliRunner().invoke(main, ["report", "--datasette-metadata", str(metadata), "--db", str(db_file)])
    assert done.exit_code == 0, done.output
    assert f"datasette {db_file} -m {metadata}" in done.output
    return db, db_file, metadata, runs, train


def test_the_field_query_adds_up_as_sieves_score_cards(record):
    db, db_file, metadata, runs, train = record
    queries = json.loads(metadata.read_text())["databases"]["sieve"]["queries"]
    assert set(queries) == {"field", "quotes", "excerpts"}
    for scenario, run_ids in (("keykeeper", runs), ("train", [train])):
        rows = datasette(db_file, metadata, f"/sieve/field.json?scenario={scenario}&_shape=array")
        got = {(r["run"], r["evaluator"], r["rubric"]): r for r in rows}
        expected = {}
        for run_id in run_ids:
            view = RunView.open(db, run_id)
            for reviewer, card in view.cards().items():
                for rubric in card.rubrics:
                    expected[(run_id, reviewer, rubric.rubric.id)] = (
                        rubric.low,
                        rubric.high,
                        rubric.bonus_low,
                        rubric.bonus_high,
                        rubric.deductions,
                        sum(1 for i in rubric.items + rubric.bonuses if i.scored),
                    )
        assert set(got) == set(expected)
        for key, (low, high, bonus_low, bonus_high, deducted, scored) in expected.items():
            row = got[key]
            assert (row["total_low"], row["total_high"], row["bonus_low"], row["bonus_high"]) == (
                low,
                high,
                bonus_low,
                bonus_high,
            ), key
            assert (row["deducted"], row["items_scored"]) == (deducted, scored), key
    (train_row,) = datasette(db_file, metadata, "/sieve/field.json?scenario=train&_shape=array")
    assert (train_row["total_low"], train_row["total_high"], train_row["deducted"]) == (-1.0, -0.5, 1.5)
    keykeeper = datasette(db_file, metadata, "/sieve/field.json?scenario=keykeeper&_shape=array")
    assert {r["rubric"] for r in keykeeper} == {r.id for r in scenarios.load("keykeeper").rubrics}
    assert all(r["replies"] == 14 and r["tokens"] > 0 and r["cost"] > 0 for r in keykeeper)


def test_the_quotes_of_a_run_stand_where_the_record_says(record):
    db, db_file, metadata, runs, _ = record
    rows = datasette(db_file, metadata, f"/sieve/quotes.json?run={runs[0]}&_shape=array")
    quoted = [a for a in notes.active(db, runs[0]) if a["quote"]]
    assert {r["id"] for r in rows} == {a["id"] for a in quoted} and len(rows) > 40
    steps = RunView.open(db, runs[0]).steps
    by_id = {a["id"]: a for a in quoted}
    for row in rows:
        a = by_id[row["id"]]
        assert row["found_at"] == row["quote"] == a["quote"]  # every quote of the field is exact
        assert row["step"] == steps[a["quote_turn_id"]]
    assert [r["turn"] for r in rows] == sorted(r["turn"] for r in rows)


def test_the_excerpts_carry_their_captions(record):
    _, db_file, metadata, runs, _ = record
    rows = datasette(db_file, metadata, "/sieve/excerpts.json?scenario=keykeeper&_shape=array")
    assert [(r["run"], r["caption"], r["quote"]) for r in rows] == [
        (run_id, f"the rain of run {n}", "Rain drums on the roof") for n, run_id in enumerate(runs)
    ]
