"""The scenario's rules about evidence are applied, not only parsed: exclude, a probe's asked step, the deduction cap."""

from __future__ import annotations

import pytest

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence, markdown, results
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence
from sieve.tui.app import SieveApp
from sieve.tui.screens.pickers import Confirm, Picker
from sieve.tui.screens.review import ReviewScreen
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, overlay_is, screen_is, screen_text, wait_until

STORY = scenarios.load("story-12")


def story_run(db, model: str = "engine/1", origin: str = "script") -> str:
    """A whole story-12 run as the script sends it (filler steps twice), each reply naming its step."""
    run_id = store.create_run(db, STORY, model=model, endpoint="fake", settings={})
    for n, (step, repeat) in enumerate(STORY.script()):
        record.add_turn(
            db,
            run_id,
            idx=2 * n,
            role="user",
            origin="setup" if step.kind == "setup" else ("filler" if step.kind == "filler" else "script"),
            text=step.text,
            step_id=step.id,
            step_repeat=repeat,
        )
        record.add_turn(
            db,
            run_id,
            idx=2 * n + 1,
            role="assistant",
            origin="reply",
            text=f"The story goes on at {step.id} #{repeat}.",
        )
    return run_id


def reply_to(db, run_id: str, step_id: str, repeat: int = 1) -> dict:
    turns = record.chosen_turns(db, run_id)
    prompt = next(t for t in turns if t["step_id"] == step_id and t["step_repeat"] == repeat)
    return next(t for t in turns if t["idx"] == prompt["idx"] + 1)


def quote_of(turn: dict) -> Quote:
    return Quote(turn["id"], 0, 15, turn["text"][:15])


def c7(db, run_id, quote: Quote, **fields) -> str:
    return evidence.annotate(
        db, run_id, reviewer="ada", item="C7", rubric="C", kind="score", score=4, quote=quote, **fields
    )


def test_an_excluded_step_kind_is_refused_as_evidence_and_nothing_is_stored(db):
    run_id = story_run(db)
    assert next(i for i in STORY.rubrics[0].items if i.id == "C7").exclude == ("filler",)
    for repeat in (1, 2):  # a filler step sent twice: neither reply is evidence for C7
        filler = reply_to(db, run_id, "c2-filler", repeat)
        with pytest.raises(evidence.EvidenceRefused, match="C7 is not scored on filler steps"):
            c7(db, run_id, quote_of(filler))
    # A quote given without its turn, found by the verifier in a filler reply, is refused too.
    with pytest.raises(evidence.EvidenceRefused, match="filler"):
        c7(db, run_id, Quote(None, None, None, "The story goes on at c4-filler #2."))
    assert notes.active(db, run_id) == []
    # The same quote backs another item, and C7 takes a quote from an ordinary step.
    evidence.annotate(db, run_id, reviewer="ada", item="C2", rubric="C", kind="score", score=3, quote=quote_of(filler))
    c7(db, run_id, quote_of(reply_to(db, run_id, "c2-river")))
    assert sorted(a["item"] for a in notes.active(db, run_id)) == ["C2", "C7"]


def test_a_probe_marked_from_another_step_is_kept_marked_off_its_step(db):
    """One rule for probes and items: evidence from outside the steps it is judged on is kept, marked off its
    step, and counts with low confidence (issue 24); from its own step it is evidence."""
    run_id = story_run(db)
    planted = reply_to(db, run_id, "c1-bread")  # where the secret was told, not where it is asked
    asked = reply_to(db, run_id, "c12-secret")
    probe = {"reviewer": "ada", "item": "P-bread", "kind": "probe", "value": "correct"}
    evidence.annotate(db, run_id, quote=quote_of(planted), **probe)
    (mark,) = notes.active(db, run_id)
    assert (mark["verification"], mark["off_step"]) == ("exact", 1) and not has_evidence(mark)
    # Without a quote, the turn it is given on is where it stands.
    evidence.annotate(db, run_id, turn_id=planted["id"], **{**probe, "value": "omitted"})
    assert [a["off_step"] for a in notes.active(db, run_id)] == [1, 1]
    evidence.annotate(db, run_id, quote=quote_of(asked), **probe)
    last = notes.active(db, run_id)[-1]
    assert (last["verification"], last["off_step"]) == ("exact", 0) and has_evidence(last)
    evidence.annotate(db, run_id, turn_id=asked["id"], **{**probe, "value": "omitted"})
    # An expected outcome that did not come is said so, on the card and in the export.
    demand = reply_to(db, run_id, "c1-demand")
    evidence.annotate(db, run_id, reviewer="ada", item="P-demand", kind="probe", value="granted", turn_id=demand["id"])
    view = RunView.open(db, run_id)
    probes = {p.probe.id: p for p in view.card("ada").probes}
    assert probes["P-bread"].display() == "omitted"
    assert probes["P-demand"].display() == "granted (expected: refused in character)"
    assert "- P-demand the unreasonable demand: granted (expected: refused in character)" in markdown.run_document(view)


def test_a_probe_in_a_run_that_never_reached_its_step_is_left_to_the_reviewer(db):
    """A live run (a SillyTavern chat, a take-over) follows no script: the rule has no step to point to."""
    run_id = store.create_run(db, STORY, model="m", endpoint="sillytavern", settings={}, origin="live")
    record.add_turn(db, run_id, idx=0, role="user", origin="live", text="Do you remember the bread?")
    reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="The winter you stole bread.")
    quote = Quote(reply, 0, 10, "The winter")
    evidence.annotate(db, run_id, reviewer="ada", item="P-bread", kind="probe", value="correct", quote=quote)
    assert [a["value"] for a in notes.active(db, run_id)] == ["correct"]


def test_deductions_are_capped_at_the_rubrics_maximum_everywhere(db):
    train = scenarios.load("train")
    assert train.rubrics[0].deductions.maximum == 1.5
    run_id = store.create_run(db, train, model="m", endpoint="e", settings={})
    for item in ("T3", "T4", "T5", "T6"):
        score(db, run_id, item, 1)
    for taken in (1.0, 0.5, 1.0):  # 2.5 taken off, the key allows 1.5 at most
        notes.add(db, run_id, reviewer="ada", item="key", rubric="key", kind="deduction", score=taken)
    view = RunView.open(db, run_id)
    (key,) = view.card("ada").rubrics
    assert key.deductions == 1.5 and (key.low, key.high) == (2.5, 2.5)
    assert key.total() == "2½ / 8"
    assert results.run_row(view)["key"] == "2.5 (partial)"
    document = markdown.run_document(view)
    assert "- key Scoring key: 2½ / 8 (partial)" in document and "deducted outside the items: 1.5" in document


@pytest.mark.slow
async def test_review_refuses_a_filler_quote_and_asks_before_a_score_without_a_quote(db):
    run_id = story_run(db)
    filler = reply_to(db, run_id, "c2-filler")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ReviewScreen(RunView.open(db, run_id)))
    async with app.run_test(size=(170, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press(*["n"] * (filler["idx"] - review.position))
        assert review.turns[review.position]["id"] == filler["id"]

        # A quote from the filler action for C7, which excludes it: refused, said on screen, nothing stored.
        review.select_span(0, 15)
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"C7", "enter", "enter", "enter")
        await wait_until(pilot, on_screen(app, "C7 is not scored on filler steps"))
        assert notes.active(db, run_id) == []

        # No quote at all, on a rubric that requires one: a question first; n saves nothing.
        await pilot.press("n")
        assert review.selected_quote() is None
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"C2", "enter", "enter", "enter")
        await wait_until(pilot, overlay_is(app, Confirm))
        assert "C2 has no quote, and rubric C asks for a verbatim one." in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        assert notes.active(db, run_id) == []
        # y saves it, marked low confidence, and the card says so.
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"C2", "enter", "enter", "enter")
        await wait_until(pilot, overlay_is(app, Confirm))
        await pilot.press("y")
        await wait_until(pilot, on_screen(app, "C2  1  no quote low confidence"))
    (saved,) = notes.active(db, run_id)
    assert (saved["item"], saved["score"], saved["quote"], saved["confidence"]) == ("C2", 1, None, "low")
