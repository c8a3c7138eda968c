"""Excerpts in Review: `m` marks the selected passage with a caption; it scores nothing, `e` changes its caption,
`u` undoes it, and without a selection nothing is saved."""

from __future__ import annotations

import pytest

from sieve.store.record import annotations as notes
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.pickers import Prompt
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import no_overlay, on_screen, overlay_is, screen_is, wait_until


def notified(app, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


def excerpts(db, run_id):
    return [a for a in notes.active(db, run_id, "ada") if a["kind"] == "excerpt"]


@pytest.mark.slow
async def test_m_marks_the_selected_passage_as_an_excerpt_with_its_caption_and_scores_nothing(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        # Nothing selected: m says what to do and saves nothing.
        await pilot.press("m")
        await wait_until(pilot, lambda: notified(app, "Select the passage first"))
        assert excerpts(db, run_id) == []

        await pilot.press("shift+end", "m")
        await wait_until(pilot, overlay_is(app, Prompt))
        await pilot.press("escape")  # cancelled: nothing saved
        await wait_until(pilot, no_overlay(app))
        assert excerpts(db, run_id) == []

        await pilot.press("shift+end", "m")
        await wait_until(pilot, overlay_is(app, Prompt))
        await pilot.press(*"the opening line", "enter")
        await wait_until(pilot, lambda: len(excerpts(db, run_id)) == 1, what="the excerpt saved")
        (excerpt,) = excerpts(db, run_id)
        reply = review.turns[review.position]
        first_line = reply["text"].split("\n")[0]
        assert (excerpt["item"], excerpt["note"], excerpt["score"], excerpt["rubric"]) == (
            "excerpt",
            "the opening line",
            None,
            None,
        )
        assert (excerpt["quote"], excerpt["quote_turn_id"], excerpt["verification"]) == (
            first_line,
            reply["id"],
            "exact",
        )
        assert (excerpt["quote_start"], excerpt["quote_end"]) == (0, len(first_line))
        await wait_until(pilot, on_screen(app, "✎ the opening line"))  # the annotations list
        card = RunView.open(db, run_id).card("ada")
        assert card.progress.text().startswith("scored 0/22 ") and not card.notes  # an excerpt scores nothing

        # e on it (the cursor stands on its highlight) asks for the caption again; the passage stays.
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Prompt))
        assert app.screen.query_one(Prompt).value == "the opening line"
        await pilot.press(*["backspace"] * len("the opening line"), *"Havel answers plainly", "enter")
        await wait_until(pilot, lambda: [a["note"] for a in excerpts(db, run_id)] == ["Havel answers plainly"])
        (edited,) = excerpts(db, run_id)
        assert (edited["quote"], edited["supersedes"]) == (first_line, excerpt["id"])

        await pilot.press("u")  # undo the edit: the first caption is back
        await wait_until(pilot, lambda: [a["note"] for a in excerpts(db, run_id)] == ["the opening line"])
