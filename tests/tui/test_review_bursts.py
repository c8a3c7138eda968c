"""Keys typed faster than the screen changes (QA tui #6): a word typed in one burst into a picker at its value
stage goes whole into the filter, a value, a note and enter typed in one burst save that value with that note,
and keys typed right after the key that opens a picker go to the picker, never to Review behind it.

The keys are sent in one burst, none waiting for the one before it to be handled, as a fast typist or a
terminal's paste sends them (Pilot's `press` waits between keys, and would hide the bug).
"""

from __future__ import annotations

import pytest

from sieve.store.record import annotations as notes
from sieve.tui.screens.pickers import Picker, ValueList
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import burst, no_overlay, overlay_is, screen_is, wait_until


async def _at_l1_values(app, pilot) -> Picker:
    await pilot.press("l", *"L1", "enter")
    await wait_until(pilot, overlay_is(app, Picker))
    picker = app.screen.query_one(Picker)
    await wait_until(pilot, lambda: picker.chosen is not None and picker.chosen.id == "L1")
    await wait_until(pilot, lambda: picker.query_one(ValueList).has_focus)
    return picker


@pytest.mark.slow
async def test_a_word_typed_in_one_burst_at_a_verdicts_values_goes_whole_into_the_filter(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m3")
        for word in ("annulled", "nnnn", "uuuu", "nnnnote"):
            picker = await _at_l1_values(app, pilot)
            burst(app, *word)
            await wait_until(
                pilot, lambda w=word, p=picker: p.query_one("#filter").value == w, what=f"filter == {word!r}"
            )
            await pilot.pause()
            assert picker.query_one("#filter").value == word  # every letter, in order, and no more
            assert picker.chosen is None and notes.active(db, run_id) == []
            await pilot.press("escape")
            await wait_until(pilot, no_overlay(app))
            assert isinstance(app.screen, ReviewScreen) and review.current_step() == "m3"  # no key reached Review


@pytest.mark.slow
async def test_a_value_a_note_and_enter_typed_in_one_burst_save_that_value_with_that_note(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m3")
        await _at_l1_values(app, pilot)
        burst(app, "1", *"calm", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (verdict,) = notes.active(db, run_id)
        assert (verdict["item"], verdict["value"], verdict["note"]) == ("L1", "played out", "calm")
        await wait_until(pilot, no_overlay(app))
        assert review.current_step() == "m3"


@pytest.mark.slow
async def test_keys_typed_in_one_burst_after_i_go_to_the_picker_it_opens(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        burst(app, "i", "full_stop", "2", "enter")  # the picker on T1, the sentence under the cursor, 2, save
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (score,) = notes.active(db, run_id)
        assert (score["item"], score["score"], score["verification"]) == ("T1", 2, "exact")
        await wait_until(pilot, no_overlay(app))
        assert isinstance(app.screen, ReviewScreen) and review.current_step() == "m1"  # nothing reached Review


@pytest.mark.slow
async def test_a_key_typed_right_after_a_prompts_enter_is_reviews(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        burst(app, "g", "3", "enter", "i")  # to step 3, then the picker on what is left there
        await wait_until(pilot, overlay_is(app, Picker))
        picker = app.screen.query_one(Picker)
        await wait_until(pilot, lambda: picker.chosen is not None)
        assert review.current_step() == "m3" and picker.chosen.id == "T3"
