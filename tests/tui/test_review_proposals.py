"""Review confirms what machines propose: detectors' suggestions (y, x, e, ] [) and a judge's draft (a, A).

The runs are the embedded model's keykeeper replies with the passages issue 13 quotes
(tests/test_suggestions.py), in a real SQLite file; the judge's card is stored as `sieve
judge` stores one (tests/support/judge_drafts.py). Every test presses keys and checks the screen
and the database.
"""

from __future__ import annotations

import pytest

from sieve.store.record import annotations as notes
from sieve.store.scoring import suggestions
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.pickers import Picker
from sieve.tui.screens.review import ReviewScreen
from tests.support.judge_drafts import JUDGE, store_judge_draft
from tests.support.review_runs import review_app
from tests.support.tui_helpers import no_overlay, on_screen, overlay_is, screen_is, screen_text, wait_until
from tests.test_suggestions import REPLIES, make_run, with_sword


def notified(app, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


def decisions(db, run_id: str) -> list[dict]:
    cursor = db.execute(
        "SELECT d.reviewer, d.decision, d.at, d.annotation_id, s.item, s.source_name, s.source_version "
        "FROM suggestion_decisions d JOIN suggestions s ON s.id = d.suggestion_id WHERE s.run_id = ? ORDER BY d.id",
        [run_id],
    )
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


@pytest.fixture
def suggested(db):
    run_id = make_run(db, with_sword(REPLIES))
    suggestions.store(db, RunView.open(db, run_id))
    return db, run_id


@pytest.mark.slow
async def test_confirming_a_suggestion_takes_one_key_and_changes_the_count(suggested):
    db, run_id = suggested
    view = RunView.open(db, run_id)
    pending = view.pending_suggestions("ada")
    first = min(pending, key=lambda s: (s["spans"][0]["turn"], s["spans"][0]["start"]))
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await wait_until(pilot, on_screen(app, f"{len(pending)} suggestions pending"))
        assert review.transcript.highlights[first["spans"][0]["turn_id"]][0].style == "suggestion"
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: review.suggestion is not None)
        span = first["spans"][0]
        assert review.suggestion["id"] == first["id"]
        assert review.transcript.selection == (span["turn_id"], span["start"], span["end"])
        assert f"suggestion 1 of {len(pending)}: {first['item']}" in screen_text(app)
        assert first["source_name"] in screen_text(app)
        before = RunView.open(db, run_id).card("ada").counters[7].value  # L8
        await pilot.press("y")  # one key
        await wait_until(pilot, on_screen(app, f"{len(pending) - 1} suggestions pending"))
        assert RunView.open(db, run_id).card("ada").counters[7].value == before + 1
        (accepted,) = notes.active(db, run_id, "ada")
        assert accepted["quote"] == span["text"] and accepted["verification"] == "exact"
        (decided,) = decisions(db, run_id)
        assert decided["reviewer"] == "ada" and decided["decision"] == "accepted" and decided["at"]
        assert decided["annotation_id"] == accepted["id"]
        assert (decided["source_name"], decided["source_version"]) == (first["source_name"], first["source_version"])
        # The next one is current: its span selected, ready for the next key.
        assert review.suggestion is not None and review.suggestion["id"] != first["id"]


@pytest.mark.slow
async def test_rejecting_a_suggestion_takes_one_key_and_leaves_the_count(suggested):
    db, run_id = suggested
    pending = RunView.open(db, run_id).pending_suggestions("ada")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: review.suggestion is not None and review.suggestion["item"] == "L5")
        chain = review.suggestion
        await pilot.press("x")  # one key
        await wait_until(pilot, on_screen(app, f"{len(pending) - 1} suggestions pending"))
        card = RunView.open(db, run_id).card("ada")
        assert card.counters[4].value == 0 and notes.active(db, run_id, "ada") == []
        (decided,) = decisions(db, run_id)
        assert decided["decision"] == "rejected" and decided["reviewer"] == "ada" and decided["item"] == "L5"
        assert decided["source_name"] == chain["source_name"] == "repetition"
        # `[` goes back to the one before the rejected one, which is still pending.
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: review.suggestion is not None and review.suggestion["item"] == "L8")


@pytest.mark.slow
async def test_e_accepts_and_opens_the_picker_and_x_off_a_suggestion_deletes_in_the_list(suggested):
    db, run_id = suggested
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: review.suggestion is not None and review.suggestion["item"] == "L5")
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Picker))
        (accepted,) = notes.active(db, run_id, "ada")
        assert accepted["item"] == "L5" and accepted["score"] == 5
        await pilot.press("escape")
        await wait_until(pilot, no_overlay(app))
        # The cursor moved off any suggestion: x deletes the annotation highlighted in the list, as before.
        await pilot.press("down", "tab", "tab", "x")
        await wait_until(pilot, lambda: notes.active(db, run_id, "ada") == [])


@pytest.mark.slow
async def test_a_adopts_the_judges_score_and_quote_and_refuses_a_quote_the_run_does_not_hold(db):
    run_id = make_run(db, REPLIES)
    gave = store_judge_draft(db, run_id, absent=("T3",))
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await wait_until(pilot, on_screen(app, f"draft of {JUDGE}"))
        assert "✗ absent" in screen_text(app)  # T3's quote, beside the card item
        await pilot.press("g", "1", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m1")
        await pilot.press("a")  # from the transcript: the one item step 1 scores
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1)
        (t1,) = notes.active(db, run_id, "ada")
        assert t1["item"] == "T1" and t1["score"] == gave["T1"] and t1["verification"] == "exact"
        assert t1["source"] == f"adopted from {JUDGE}"
        await wait_until(pilot, on_screen(app, "scored 1/22"))
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m3")
        await pilot.press("a")
        await wait_until(pilot, lambda: notified(app, "not found in the run"))
        assert len(notes.active(db, run_id, "ada")) == 1


@pytest.mark.slow
async def test_a_whole_keykeeper_card_finished_from_the_judges_draft_in_80_keys_or_fewer(db):
    """Issue 16: 12 items, 4 bonuses, 6 markers, L1 on 13 steps, L2, and L3-L8 from the suggestions."""
    run_id = make_run(db, with_sword(REPLIES))
    suggestions.store(db, RunView.open(db, run_id))  # the detectors' L5, L6, L8
    gave = store_judge_draft(db, run_id, absent=("T3",))  # and the judge's L3 and L7 events
    to_decide = len(RunView.open(db, run_id).pending_suggestions("ada"))
    assert to_decide >= 8
    keys: list[str] = []
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen

        async def press(*pressed: str) -> None:
            keys.extend(pressed)
            await pilot.press(*pressed)

        def saved() -> int:
            return len(notes.active(db, run_id, "ada"))

        await press("A")
        while review.walking:
            proposal = review.walk_proposal
            before = saved()
            if proposal.task.id == "T3":
                # The judge's quote is not in the run: refused, so the reviewer selects one, then enter.
                await press("y")
                await wait_until(pilot, lambda: notified(app, "not found in the run"))
                await press("shift+end", "enter")
            elif proposal.task.id == "T5":
                await press("0")  # the reviewer gives another value, the judge's quote kept
            else:
                await press("y")
            await wait_until(pilot, lambda b=before: saved() == b + 1, what=f"{proposal.task.label} adopted")
        assert notified(app, "The draft is walked")
        await press("right_square_bracket")
        for n in range(to_decide):
            await wait_until(pilot, lambda: review.suggestion is not None)
            await press("y")
            await wait_until(pilot, lambda n=n: len(review.pending) == to_decide - n - 1)
        card = RunView.open(db, run_id).card("ada")
        assert card.complete, card.progress.text()
        await wait_until(pilot, on_screen(app, "complete: every item, step and probe is scored"))

    given = notes.active(db, run_id, "ada")
    assert all(a["verification"] == "exact" for a in given if a["quote"] is not None)
    assert all(a["quote"] for a in given)
    adopted = [a for a in given if a["source"].startswith("adopted from")]
    assert len(adopted) == 22 + 13 + 1
    assert card.item("T5").annotation["score"] == 0 and card.item("T1").annotation["score"] == gave["T1"]
    assert card.counters[4].value == 5  # L5: the sword chain
    print(f"\nkeys to finish the keykeeper card from the judge's draft: {len(keys)} ({' '.join(keys)})")
    assert len(keys) <= 80


@pytest.mark.slow
async def test_the_walk_skips_with_n_and_ends_on_the_first_item_the_judge_left_unscored(db):
    run_id = make_run(db, REPLIES)
    store_judge_draft(db, run_id, leave_out=("T2",))
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("A")
        await wait_until(pilot, lambda: review.walk_proposal is not None)
        assert review.walk_proposal.task.label == "T1 at m1"
        assert f"draft of {JUDGE}: T1 at m1" in screen_text(app)
        quote = review.walk_proposal.annotation
        assert review.transcript.selection == (quote["quote_turn_id"], quote["quote_start"], quote["quote_end"])
        await pilot.press("2")  # another value, the judge's quote kept
        await wait_until(pilot, lambda: review.walk_proposal.task.label == "L1 at m1")
        await pilot.press("n")  # skipped: nothing stored, the turn stays
        await wait_until(pilot, lambda: not review.walking)
        assert notified(app, f"{JUDGE} left T2 at m2 unscored: the walk ends here")
        assert review.offered is not None and review.offered.id == "T2" and review.current_step() == "m2"
        (t1,) = notes.active(db, run_id, "ada")
        assert t1["item"] == "T1" and t1["score"] == 2 and t1["source"] == f"adopted from {JUDGE} (value changed)"
        # n is the next turn again; on the card, e adopts the highlighted item and opens the picker on it.
        await pilot.press("n")
        await wait_until(pilot, lambda: review.current_step() == "m3")
        card = review.query_one("#card")
        await pilot.press("tab")
        await wait_until(pilot, lambda: card.has_focus and card.highlighted_key == "T1")
        await pilot.press("down", "down")
        await wait_until(pilot, lambda: card.highlighted_key == "T3")
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Picker))
        assert [a["item"] for a in notes.active(db, run_id, "ada")] == ["T1", "T3"]
