"""What the header over Review's transcript offers to score next is what `i`, `s` and `l` open on: after an
`escape`, again and again, whichever picker the item belongs to (QA: `i` skipped the item the header named); and an id typed straight away as the TUI page says.

Each test presses the keys a person would press and checks what the picker shows and what the database holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sieve.store.record import annotations as notes
from sieve.tui.screens.pickers import Picker, ValueList
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import no_overlay, overlay_is, screen_is, wait_until


def header(review: ReviewScreen) -> str:
    return str(review.header.render())


async def _opened(app, pilot, *keys: str) -> str:
    """Press the keys; the picker opens with an entry chosen and its values (or its note) ready: that entry."""
    await pilot.press(*keys)
    await wait_until(pilot, overlay_is(app, Picker))
    picker = app.screen.query_one(Picker)
    await wait_until(pilot, lambda: picker.chosen is not None)
    await wait_until(pilot, lambda: picker.query_one(ValueList).has_focus or picker.query_one("#note").has_focus)
    assert picker.chosen is not None
    return picker.chosen.id


async def _escape(app, pilot) -> None:
    await pilot.press("escape")
    await wait_until(pilot, no_overlay(app))


@pytest.mark.slow
async def test_i_s_and_l_open_the_item_the_header_names_after_every_escape(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        saved = []
        # The first items of the card, m1 to m4: T1, L1 at m1, T2, L1 at m2, ... each offered, escaped, reopened.
        while len(saved) < 8:
            first = await _opened(app, pilot, "i")
            offered = review.offered
            assert offered is not None and first == offered.id
            await _escape(app, pilot)
            named = f"next to score: {offered.label} ("
            assert named in header(review), header(review)
            wording = "(i, s or l opens on it)" in header(review)
            # i again: the same item, not the one after it; and again.
            for _ in range(2):
                assert await _opened(app, pilot, "i") == offered.id
                assert review.offered == offered
                await _escape(app, pilot)
                assert named in header(review)
            # s and l: the item named, whichever of them is its picker's key.
            for key in ("s", "l"):
                assert await _opened(app, pilot, key) == offered.id, f"{key} at {offered.label}"
                await _escape(app, pilot)
                assert named in header(review)
            # Then scored, from the picker i opens: the item named is the item saved.
            await _opened(app, pilot, "i")
            await pilot.press("full_stop", "1", "enter")
            await wait_until(pilot, lambda n=len(saved): len(notes.active(db, run_id, "ada")) == n + 1)
            item = notes.active(db, run_id, "ada")[-1]
            saved.append((item["item"], item["step_id"]))
            assert (item["item"], item["step_id"]) == (offered.id, offered.step)
            assert "next to score" not in header(review)  # scored: nothing is offered until i finds the next
            assert wording  # the header says which keys open it: all three do
        assert saved == [("T1", "m1"), ("L1", "m1"), ("T2", "m2"), ("L1", "m2")] + [
            ("T3", "m3"),
            ("L1", "m3"),
            ("T4", "m4"),
            ("L1", "m4"),
        ]


@pytest.mark.slow
async def test_going_to_another_step_drops_the_offer_and_i_starts_from_there(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        assert await _opened(app, pilot, "i") == "T1"
        await _escape(app, pilot)
        await pilot.press("g", "6", "enter")  # the reviewer leaves T1 for later: to m6
        await wait_until(pilot, lambda: review.current_step() == "m6")
        assert review.offered is None and "next to score" not in header(review)
        assert await _opened(app, pilot, "i") == "T6"  # the first thing left at m6, named in the header
        assert review.current_step() == "m6" and "next to score: T6 at m6" in header(review)
        await _escape(app, pilot)
        # Nothing selected, s opens on what is offered; so does l, on the picker of everything.
        assert await _opened(app, pilot, "l") == "T6"
        await _escape(app, pilot)
        assert notes.active(db, run_id, "ada") == []


@pytest.mark.slow
async def test_an_id_typed_straight_away_scores_as_the_tui_page_says(db):
    """The key sequence docs/tui.md gives for an id typed straight away, pressed as it is written there."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "tui.md").read_text(encoding="utf-8")
    found = re.search(r"((?:`[^`]+`, )+`[^`]+`) scores (T\d+) = (\d)", " ".join(page.split()))
    assert found, "docs/tui.md gives the keys of an id typed straight away"
    keys = re.findall(r"`([^`]+)`", found.group(1))
    item, value = found.group(2), int(found.group(3))
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        step = item.replace("T", "")
        await pilot.press("g", *step, "enter")
        await wait_until(pilot, lambda: review.current_step() == f"m{step}")
        await pilot.press("full_stop", *keys)  # a span selected, then the keys as the page writes them
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1)
        (saved,) = notes.active(db, run_id, "ada")
        assert (saved["item"], saved["score"], saved["verification"]) == (item, value, "exact")
        # Digits typed into the filter stay there: T12 is T12, never T1 = 2.
        await pilot.press("g", "1", "2", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m12")
        assert await _opened(app, pilot, "full_stop", "T", "1", "2", "enter") == "T12"
        assert len(notes.active(db, run_id, "ada")) == 1
