"""Annotations with their quotes, undo and redo, and the score card they add up to."""

from __future__ import annotations

import pytest

from sieve import scenarios, store
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.scorecard import build_card


@pytest.fixture
def run(db):
    scenario = scenarios.load("keykeeper")
    run_id = store.create_run(db, scenario, model="m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text="Let's play.", step_id="m0", step_repeat=1)
    reply = record.add_turn(
        db, run_id, idx=1, role="assistant", origin="reply", text='Havel sets down the bowl. "Three days," he says.'
    )
    return scenario, run_id, reply


def test_a_quote_is_verified_where_it_stands(db, run):
    _, run_id, reply = run
    setup = record.chosen_turns(db, run_id)[0]["id"]
    exact = evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=2,
        quote=Quote(reply, 0, 25, "Havel sets down the bowl."),
    )
    player = evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T2",
        rubric="T",
        kind="score",
        score=1,
        quote=Quote(setup, 0, 10, "Let's play"),
    )
    wrong = evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T3",
        rubric="T",
        kind="score",
        score=0,
        quote=Quote(reply, 0, 10, "Havel burn"),
    )
    rows = {a["id"]: a for a in notes.active(db, run_id)}
    assert (rows[exact]["verification"], rows[exact]["quote_start"], rows[exact]["quote_end"]) == ("exact", 0, 25)
    assert rows[player]["verification"] == "player"
    assert rows[wrong]["verification"] == "absent"


def test_undo_and_redo_walk_the_reviewers_gestures(db, run):
    _, run_id, _ = run
    a = notes.add(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2)
    b = notes.add(db, run_id, reviewer="ada", item="T2", rubric="T", kind="score", score=1)
    other = notes.add(db, run_id, reviewer="bob", item="T1", rubric="T", kind="score", score=0)
    assert notes.undo(db, run_id, "ada") == [b]
    assert [x["id"] for x in notes.active(db, run_id, "ada")] == [a]
    assert notes.undo(db, run_id, "ada") == [a]
    assert notes.active(db, run_id, "ada") == [] and notes.undo(db, run_id, "ada") == []
    assert notes.redo(db, run_id, "ada") == [a]
    assert [x["id"] for x in notes.active(db, run_id, "ada")] == [a]
    c = notes.add(db, run_id, reviewer="ada", item="T3", rubric="T", kind="score", score=2)
    assert notes.redo(db, run_id, "ada") == []  # a new gesture ends what redo could bring back
    assert [x["id"] for x in notes.active(db, run_id, "ada")] == [a, c]
    assert [x["id"] for x in notes.active(db, run_id, "bob")] == [other]
    # Nothing is deleted: every row is still there, with its history.
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 4


def test_an_edit_is_one_gesture(db, run):
    _, run_id, _ = run
    first = notes.add(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=1)
    second = notes.add(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2, replaces=first)
    assert [x["id"] for x in notes.active(db, run_id)] == [second]
    assert sorted(notes.undo(db, run_id, "ada")) == sorted([first, second])
    assert [x["id"] for x in notes.active(db, run_id)] == [first]
    notes.remove(db, first, "ada")
    assert notes.active(db, run_id) == []
    notes.undo(db, run_id, "ada")
    assert [x["id"] for x in notes.active(db, run_id)] == [first]


def test_the_keykeeper_card_adds_up_totals_bonuses_counts_and_disqualifications(db, run):
    scenario, run_id, reply = run
    for item, score in [("T1", 2), ("T2", 1), ("T3", 2), ("TB1", 1), ("R1", 2)]:
        notes.add(db, run_id, reviewer="ada", item=item, rubric=item[0], kind="score", score=score)
    notes.add(db, run_id, reviewer="ada", item="T2", rubric="T", kind="score", score=2)  # rescored: the latest counts
    for _ in range(2):
        notes.add(db, run_id, reviewer="ada", item="L3", kind="count")
    notes.add(db, run_id, reviewer="ada", item="L5", kind="count", score=3)
    notes.add(db, run_id, reviewer="ada", item="L5", kind="count", score=2)
    notes.add(db, run_id, reviewer="ada", item="L1", kind="verdict", value="played out", turn_id=reply)
    notes.add(db, run_id, reviewer="ada", item="L2", kind="verdict", value="no")
    card = build_card(scenario, notes.active(db, run_id, "ada"), {reply: "m1"})
    t, r = card.rubrics
    assert (t.low, t.bonus_low) == (6, 1) and t.total() == "6+1 / 24+4"
    assert r.total() == "2 / 12"
    assert "T4" in t.unscored and "T1" not in t.unscored and "TB2" in t.unscored
    counters = {c.counter.id: c for c in card.counters}
    assert counters["L3"].value == 2 and counters["L5"].value == 3
    assert counters["L1"].value == {"played out": 1, "annulled": 0}
    assert counters["L1"].display() == "1 played out / 0 annulled (12 steps not judged)"
    # L2 "no" disqualifies, but no quote backs it: the card says so, and the run is not disqualified.
    assert card.disqualified_by == [] and card.disqualification_claimed == ["L2"]
    assert card.disqualification_text() == "disqualification claimed without evidence: L2"
    notes.add(db, run_id, reviewer="ada", item="L1", kind="verdict", value="annulled", turn_id=reply)
    card = build_card(scenario, notes.active(db, run_id, "ada"), {reply: "m1"})
    assert {c.counter.id: c for c in card.counters}["L1"].value == {"played out": 0, "annulled": 1}
    assert card.disqualified_by == [] and card.disqualification_claimed == ["L1 at m1", "L2"]
    # A verdict whose quote was verified on its step disqualifies.
    backed = notes.Verified(Quote(reply, 0, 25, "Havel sets down the bowl."), "exact", 1.0)
    notes.add(db, run_id, reviewer="ada", item="L1", kind="verdict", value="annulled", turn_id=reply, quote=backed)
    card = build_card(scenario, notes.active(db, run_id, "ada"), {reply: "m1"})
    assert card.disqualified_by == ["L1"] and card.disqualification_claimed == ["L2"]
    # Off its step it does not (evidence.annotate marks it so).
    notes.add(
        db,
        run_id,
        reviewer="ada",
        item="L1",
        kind="verdict",
        value="annulled",
        turn_id=reply,
        quote=backed,
        off_step=True,
    )
    card = build_card(scenario, notes.active(db, run_id, "ada"), {reply: "m1"})
    assert card.disqualified_by == [] and card.disqualification_claimed == ["L1 at m1", "L2"]


def test_undecided_half_points_and_deductions_show_as_a_range(db):
    train = scenarios.load("train")
    run_id = store.create_run(db, train, model="m", endpoint="e", settings={})
    notes.add(db, run_id, reviewer="ada", item="T3", rubric="key", kind="score", score=1)
    notes.add(db, run_id, reviewer="ada", item="T4", rubric="key", kind="score", score=0.5, score_high=1)
    notes.add(db, run_id, reviewer="ada", item="key", rubric="key", kind="deduction", score=0.5)
    (key,) = build_card(train, notes.active(db, run_id)).rubrics
    assert (key.low, key.high) == (1.0, 1.5) and key.total() == "1–1½ / 8"
