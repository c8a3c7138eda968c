"""The Review screen: select a span by keyboard and by mouse, score by keystroke, undo; screen and database agree."""

from __future__ import annotations

import gc
import re
import weakref

import pytest

from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.tui.memory import settle_memory
from sieve.tui.screens.pickers import Confirm, Picker, Prompt
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.transcript import TranscriptView
from tests.support.tui_helpers import (
    no_overlay,
    on_screen,
    overlay_is,
    play_app,
    screen_is,
    screen_text,
    settle,
    wait_until,
)


async def played(app, pilot, steps: int) -> None:
    for _ in range(steps):
        await pilot.press("n")
        await settle(app, pilot)


async def reviewed(app, pilot, steps: int) -> ReviewScreen:
    """Play `steps` scripted steps, then open Review on the run (v), as a reviewer would."""
    await played(app, pilot, steps)
    await pilot.press("v")
    await wait_until(pilot, screen_is(app, ReviewScreen))
    return app.screen


@pytest.mark.slow
async def test_score_two_items_record_two_events_and_undo_one(db, fake_server):
    app, session = play_app(db, fake_server, "review;tokens=30", reviewer="ada")
    async with app.run_test(size=(170, 50)) as pilot:
        review = await reviewed(app, pilot, 3)
        assert isinstance(review, ReviewScreen)
        replies = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "assistant"]

        # The first reply is shown; select its first 20 characters with the keyboard.
        assert review.turns[review.position]["id"] == replies[0]["id"]
        await pilot.press(*["shift+right"] * 20)
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"T1")
        await pilot.press("enter")  # the item
        await pilot.press("down", "down", "enter")  # its scale: 0, 1, 2 -> 2
        await pilot.press(*"counts the coin")
        await pilot.press("enter")  # the note
        # T1 is judged on m1, and this is the reply to the setup: said before it is saved, not after.
        await wait_until(pilot, overlay_is(app, Confirm))
        assert "T1 is judged on m1: this quote is off its step" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, session.run_id, "ada")) == 1)

        # The next reply: a span in the middle, scored on an item found by a word.
        await pilot.press("n", "n")
        assert review.turns[review.position]["id"] == replies[1]["id"]
        await pilot.press(*["right"] * 8)
        await pilot.press(*["shift+right"] * 15)
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"charm")  # T2: "... charm is not rewarded ..."
        await pilot.press("enter", "down", "enter", "enter")  # -> 1, no note
        await wait_until(pilot, overlay_is(app, Confirm))  # T2 is judged on m2: off its step too
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, session.run_id, "ada")) == 2)

        # Two L-axis events with their evidence: one counted, one verdict.
        await pilot.press("shift+end")
        await pilot.press("l")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"L3", "enter", "enter", "enter")
        # A quote long enough to be evidence: a disqualifying verdict disqualifies only on one.
        await pilot.press("home", *["shift+right"] * 20)
        await pilot.press("l")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"L1", "enter", "down", "enter", "enter")  # annulled
        await wait_until(pilot, overlay_is(app, Confirm))  # it disqualifies the run: asked first
        assert "L1 = annulled disqualifies the run." in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, on_screen(app, "DISQUALIFIED by L1"))
        shown = screen_text(app)
        assert "0 played out / 1 annulled" in shown

        await pilot.press("u")  # undo the last one: the verdict
        # L1 judged on no step again: not judged, never a tally of zeros (QA cli #18).
        await wait_until(pilot, lambda: "1 annulled" not in screen_text(app))
        shown = screen_text(app)
        assert "played out /" not in shown
        assert "DISQUALIFIED" not in shown
        assert "3+0 / 24+4" in shown  # T1 2 + T2 1
        # T1 is judged on m1 and T2 on m2, their quotes from the replies before: kept, marked off their step.
        assert "✗ off its step" in shown and "✎ count" in shown  # the note, on its annotation's row

    active = {a["item"]: a for a in notes.active(db, session.run_id, "ada")}
    assert set(active) == {"T1", "T2", "L3"}
    t1, t2, l3 = active["T1"], active["T2"], active["L3"]
    assert (t1["score"], t1["kind"], t1["note"]) == (2, "score", "counts the coin")
    assert (t1["quote_turn_id"], t1["quote_start"], t1["quote_end"]) == (replies[0]["id"], 0, 20)
    assert t1["quote"] == replies[0]["text"][:20] and t1["verification"] == "exact"
    assert (t2["score"], t2["quote_start"], t2["quote_end"]) == (1, 8, 23)
    assert t2["quote"] == replies[1]["text"][8:23] and t2["verification"] == "exact"
    # shift+end extended the selection from where it began to the end of the (wrapped) line.
    assert l3["kind"] == "count" and l3["quote_start"] == 8 and l3["quote_end"] > 23
    assert l3["quote"] == replies[1]["text"][8 : l3["quote_end"]] and l3["verification"] == "exact"
    removed = [a for a in db["annotations"].rows_where("removed IS NOT NULL")]
    assert [(a["item"], a["value"]) for a in removed] == [("L1", "annulled")]


@pytest.mark.slow
async def test_redo_edit_and_delete_from_the_list(db, fake_server):
    app, session = play_app(db, fake_server, "edit;tokens=20", reviewer="bo")
    async with app.run_test(size=(170, 50)) as pilot:
        await reviewed(app, pilot, 2)
        await pilot.press(*["shift+right"] * 5, "s")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press(*"T3", "enter", "enter", "enter")  # T3 = 0
        await wait_until(pilot, lambda: len(notes.active(db, session.run_id, "bo")) == 1)
        await pilot.press("u")
        await wait_until(pilot, lambda: notes.active(db, session.run_id, "bo") == [])
        await pilot.press("U")  # redo
        await wait_until(pilot, lambda: len(notes.active(db, session.run_id, "bo")) == 1)
        (t3,) = notes.active(db, session.run_id, "bo")
        assert t3["score"] == 0
        await pilot.press("tab", "tab")  # past the card, to the list of annotations
        await wait_until(pilot, lambda: app.focused is app.screen.query_one("#annotations"))
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Picker))
        await pilot.press("down", "enter", "enter")  # T3 = 1, same quote
        await wait_until(pilot, lambda: notes.active(db, session.run_id, "bo")[0]["score"] == 1)
        (edited,) = notes.active(db, session.run_id, "bo")
        assert (edited["item"], edited["score"], edited["quote"], edited["supersedes"]) == (
            "T3",
            1,
            t3["quote"],
            t3["id"],
        )
        await pilot.press("x")
        await wait_until(pilot, lambda: notes.active(db, session.run_id, "bo") == [])
        await wait_until(pilot, lambda: re.search(r"T3 +– +not scored", screen_text(app)))
        assert "T 0+0 / 24+4" in screen_text(app)


@pytest.mark.slow
async def test_a_span_selected_with_the_mouse_becomes_the_quote(db, fake_server):
    app, session = play_app(db, fake_server, "mouse;tokens=30", reviewer="cy")
    async with app.run_test(size=(170, 50)) as pilot:
        await reviewed(app, pilot, 1)
        area = app.screen.query_one("#text", TranscriptView)
        await pilot.mouse_down(area, offset=(2, 1))
        await pilot.hover(area, offset=(12, 1))
        await pilot.mouse_up(area, offset=(12, 1))
        await wait_until(pilot, lambda: app.screen.selected_quote() is not None, what="the drag to select a span")
        quote = app.screen.selected_quote()
        reply = record.chosen_turns(db, session.run_id)[1]
        assert quote.text == reply["text"][quote.start : quote.end] and quote.end - quote.start == 10


@pytest.mark.slow
async def test_one_picker_serves_every_item_and_a_closed_prompt_is_freed_and_neither_moves_the_screen(db, fake_server):
    gc.unfreeze()
    app, _session = play_app(db, fake_server, "dialog;tokens=30", reviewer="ada")
    async with app.run_test(size=(170, 50)) as pilot:
        review = await reviewed(app, pilot, 1)
        regions = {widget: widget.region for widget in review.query("TranscriptView, ScoreCardView, Header")}
        pickers, counts = set(), []
        for _ in range(4):  # picker after picker, as a reviewer scores
            await pilot.press("s")
            await wait_until(pilot, overlay_is(app, Picker))
            await pilot.press(*"T1", "enter")  # the item: its scale (and the note) shown
            await settle(app, pilot)
            # Over the screen, not in its flow: the screen grows no scrollbar and nothing under it moves.
            assert review.virtual_size == review.size
            assert {widget: widget.region for widget in regions} == regions
            pickers.add(id(review.query(Picker).first()))
            await pilot.press("escape")  # one press closes it, whatever stage it is at
            await wait_until(pilot, no_overlay(app), what="the picker closed")
            counts.append(len(review.query("*")))
        # The one picker, kept hidden between items: opening and closing it mount and free nothing.
        assert len(pickers) == 1 and len(set(counts)) == 1

        # A dialog that is not kept (a prompt) goes when it closes, with what it drew: not its input
        # (Textual's own subscribe them to the screen for good), not the lines its widgets drew (a cache of
        # Textual's keyed by them). (Unfrozen first: the screen froze what it held when it was drawn, and
        # frozen garbage keeps what it refers to.)
        drawn = []
        for _ in range(3):
            await pilot.press("g")
            await wait_until(pilot, overlay_is(app, Prompt))
            await settle(app, pilot)
            prompt = review.query(Prompt).first()  # (query_one would keep it, in the screen's cache of answers)
            parts = [prompt, *prompt.query("*")]
            drawn += [weakref.ref(part) for part in parts] + [weakref.ref(part._styles_cache) for part in parts]
            del prompt, parts
            await pilot.press("escape")
            await wait_until(pilot, lambda: not review.query(Prompt), what="the prompt gone")
        await pilot.press(
            "g"
        )  # (the last one closed is in Textual's cache of the screen's shown widgets until the next)
        await wait_until(pilot, overlay_is(app, Prompt))
        await pilot.press("escape")

        def freed() -> bool:
            gc.unfreeze()
            gc.collect()
            return all(part() is None for part in drawn)

        await wait_until(pilot, freed, what="every part of the closed prompts freed")
    gc.unfreeze()


@pytest.mark.slow
async def test_a_shown_screen_freezes_what_it_loaded_and_a_screen_that_goes_thaws_it(db, fake_server):
    gc.unfreeze()
    app, _session = play_app(db, fake_server, "frozen;tokens=30", reviewer="ada")
    async with app.run_test(size=(170, 50)) as pilot:
        await played(app, pilot, 1)
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0)  # Play, once drawn
        await pilot.press("v")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = weakref.ref(app.screen)
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0)
        await pilot.press("escape")  # back to Play: Review goes
        await wait_until(pilot, screen_is(app, PlayScreen))
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0)  # what Play holds, frozen again
        # As the next screen shown does: what was frozen and is garbage now is freed. A closed Review
        # (and the run it held) is not kept for good.
        await wait_until(pilot, lambda: (settle_memory(), review() is None)[1])
    gc.unfreeze()
