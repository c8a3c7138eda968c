"""A judge's card as a person's draft: what it proposes per item, adopting (quotes verified again), agreement.

The runs are the embedded model's keykeeper replies (tests/data/transcripts.json) in a real
SQLite file; the judge's card is stored as `sieve judge` stores one (tests/support/judge_drafts.py).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.scoring import draft, results
from sieve.store.scoring.runview import RunView
from tests.support.judge_drafts import INVENTED, JUDGE, store_judge_draft
from tests.test_suggestions import REPLIES, make_run


@pytest.fixture
def drafted(db):
    run_id = make_run(db, REPLIES)
    gave = store_judge_draft(db, run_id, leave_out=("T7",), absent=("T3",))
    return db, run_id, gave


def test_the_draft_follows_the_script_and_the_walk_ends_on_the_first_item_the_judge_left(drafted):
    db, run_id, gave = drafted
    view = RunView.open(db, run_id)
    assert draft.judge_of(view, "ada") == JUDGE
    every = draft.proposals(view, "ada", JUDGE)
    assert [p.task.label for p in every[:4]] == ["T1 at m1", "L1 at m1", "T2 at m2", "L1 at m2"]
    walked = draft.walk(view, "ada", JUDGE)
    assert walked[-1].task.id == "T7" and walked[-1].annotation is None
    assert all(p.annotation is not None for p in walked[:-1])
    t1 = walked[0]
    assert t1.annotation["score"] == gave["T1"] and t1.annotation["verification"] == "exact"


def test_adopting_makes_the_judges_score_and_quote_the_persons_own_verified_again(drafted):
    db, run_id, gave = drafted
    view = RunView.open(db, run_id)
    t1 = draft.proposals(view, "ada", JUDGE)[0]
    annotation_id = draft.adopt(db, view, "ada", t1)
    (mine,) = notes.active(db, run_id, "ada")
    assert mine["id"] == annotation_id and mine["source"] == "adopted from judge:m"
    assert mine["score"] == gave["T1"] and mine["quote"] == t1.annotation["quote"]
    assert mine["verification"] == "exact" and mine["step_id"] == "m1"
    card = view.card("ada")
    assert card.item("T1").scored and card.progress.items_scored == 1  # adopted items count toward progress
    # The judge's own card is untouched.
    assert view.card(JUDGE).item("T1").annotation["reviewer"] == JUDGE
    # Another value, the judge's quote kept; it replaces the adoption in one gesture.
    draft.adopt(db, view, "ada", t1, changed={"score": 2.0})
    (changed,) = notes.active(db, run_id, "ada")
    assert changed["score"] == 2.0 and changed["source"] == "adopted from judge:m (value changed)"
    notes.undo(db, run_id, "ada")
    assert [a["score"] for a in notes.active(db, run_id, "ada")] == [gave["T1"]]


def test_adopting_a_quote_the_run_does_not_hold_is_refused_and_stores_nothing(drafted):
    db, run_id, _ = drafted
    view = RunView.open(db, run_id)
    t3 = next(p for p in draft.proposals(view, "ada", JUDGE) if p.task.id == "T3")
    assert t3.annotation["quote"] == INVENTED and t3.annotation["verification"] == "absent"
    with pytest.raises(draft.AdoptRefused, match="not found"):
        draft.adopt(db, view, "ada", t3)
    left = next(p for p in draft.proposals(view, "ada", JUDGE) if p.task.id == "T7")
    with pytest.raises(draft.AdoptRefused, match="unscored"):
        draft.adopt(db, view, "ada", left)
    assert notes.active(db, run_id, "ada") == []


def test_a_verdict_and_a_typed_value_are_adopted_for_their_step(drafted):
    db, run_id, _ = drafted
    view = RunView.open(db, run_id)
    l1 = next(p for p in draft.proposals(view, "ada", JUDGE) if p.task.label == "L1 at m2")
    assert draft.value_for_key(view, l1.task, "2") == {"value": "annulled"}
    assert draft.value_keys(view, l1.task) == "1 played out  2 annulled"
    assert draft.value_for_key(view, draft.task_for(view, "T1"), "2") == {"score": 2.0}
    assert draft.value_for_key(view, draft.task_for(view, "T1"), "3") is None  # not on the scale
    draft.adopt(db, view, "ada", l1, changed={"value": "annulled"})
    assert view.card("ada").counters[0].verdicts == {"m2": "annulled"}


def test_agreement_says_how_many_scores_were_adopted_and_can_leave_them_out(tmp_path):
    from sieve import store

    path = tmp_path / "a.db"
    db = store.open_db(path)
    runs = [make_run(db, REPLIES, model=f"m{i}") for i in range(4)]
    for n, run_id in enumerate(runs):
        store_judge_draft(db, run_id)
        view = RunView.open(db, run_id)
        t1 = draft.proposals(view, "ada", JUDGE)[0]
        if n < 2:
            draft.adopt(db, view, "ada", t1)  # agrees with the judge by construction
        else:
            notes.add(
                db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=(t1.annotation["score"] + 1) % 3
            )
    (row,) = [r for r in results.agreement(db, "keykeeper") if r["item"] == "T1"]
    assert row["adopted"] == 2 and row["judge_runs"] == 4 and not row["adopted_left_out"]
    (left,) = [r for r in results.agreement(db, "keykeeper", exclude_adopted=True) if r["item"] == "T1"]
    assert left["judge_runs"] == 2 and left["adopted_left_out"]
    assert draft.adopted_by_reviewer(db, "keykeeper") == {"ada": (2, 4)}

    def cli(*args):
        return CliRunner().invoke(main, ["results", "--scenario", "keykeeper", "--agreement", *args, "--db", str(path)])

    shown = cli().output
    assert "adopted" in shown.splitlines()[0] and "ada: 2 of 4 scores" in shown
    assert "2 left out" in cli("--exclude-adopted").output
    data = json.loads(cli("--exclude-adopted", "--format", "json").output)
    assert next(r for r in data if r["item"] == "T1")["judge_runs"] == 2
