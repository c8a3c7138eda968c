"""The small texts of a reviewer's day (QA tui #9): each says what the key does, in words that fit."""

from __future__ import annotations

import pytest

from sieve.store.record import annotations as notes
from sieve.tui.screens.dialogs import Prompt
from sieve.tui.screens.pickers import Confirm, Picker
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.screens.review.proposals import source_label
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import no_overlay, on_screen, overlay_is, screen_is, screen_text, wait_until


@pytest.mark.slow
async def test_the_chapter_prompt_offers_a_titles_start_and_goes_there(db):
    run_id = scripted_run(db, "story-5")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("c")
        await wait_until(pilot, overlay_is(app, Prompt))
        assert "a number (1 to 5), an id (c1) or the start of a title" in screen_text(app)
        await pilot.press(*"zzz", "enter")
        said = "no chapter 'zzz': give its number (1 to 5), its id or the start of its title"
        await wait_until(pilot, lambda: any(n.message == said for n in app._notifications), what=said)


@pytest.mark.slow
async def test_l_in_a_scenario_without_counters_says_it_marks_a_probe(db):
    run_id = scripted_run(db, "story-5")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("l")
        await wait_until(pilot, overlay_is(app, Picker))
        await wait_until(pilot, on_screen(app, "Mark a probe"))
        assert "Record an event of" not in screen_text(app)


@pytest.mark.slow
async def test_the_search_prompts_question_is_shown_whole(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("slash")
        await wait_until(pilot, overlay_is(app, Prompt))
        shown = " ".join(screen_text(app).replace("│", " ").split())
        assert "minc finds minci, minc* a start)" in shown  # the end of the question: wrapped, not cut


@pytest.mark.slow
async def test_a_written_judgment_without_a_quote_is_saved_without_asking_for_one(db):
    run_id = scripted_run(db, "train")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        review = app.screen
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "7", "enter")
        await wait_until(pilot, lambda: review.current_step() == "turn7")
        assert review.selected_quote() is None
        await pilot.press("s", *"prose", "enter")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"Concrete verbs, short beats.", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1)
        await wait_until(pilot, no_overlay(app))
        assert not app.screen.query(Confirm)
        (judgment,) = notes.active(db, run_id, "ada")
        assert (judgment["item"], judgment["note"], judgment["confidence"]) == (
            "prose",
            "Concrete verbs, short beats.",
            None,
        )


def test_a_suggestions_source_is_named_once():
    assert source_label("judge:judge;reply=judge", "judge;reply=judge") == "judge:judge;reply=judge"
    assert source_label("rules", "3") == "rules v3"
    assert source_label("detectors", "2026-11") == "detectors v2026-11"
    assert source_label("lexicon", "cs-basic") == "lexicon (cs-basic)"
