"""Review draws again only what a key changed (issue 28), and what it draws is what drawing everything anew shows.

A save redraws the card's rows that changed, the list's new row (the others move down as they were
drawn), and the transcript's lines under the new highlight; a moved selection, the lines it left and entered. Each test presses the keys a person
would press, counts the lines drawn, then checks the screen as drawn against the same screen with
every line drawn from scratch: a line left stale would differ.
"""

from __future__ import annotations

import re

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.cache import LRUCache

from sieve.store.record import annotations as notes
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.rows import Row, RowsView
from sieve.tui.widgets.transcript import TranscriptView
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import no_overlay, screen_is, wait_until


def _picture(app) -> str:
    return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())


async def assert_drawn_as_from_scratch(app, pilot) -> None:
    """The screen as its widgets drew it line by line equals the screen with every line drawn anew."""
    await pilot.pause()
    shown = _picture(app)
    for widget in app.screen.walk_children(with_self=True):
        cache = getattr(widget, "_cache", None)
        if isinstance(cache, LRUCache):  # the lines the transcript and the rows keep
            cache.clear()
        widget.refresh()
    await pilot.pause()
    assert shown == _picture(app)


class Drawn:
    """Counts the lines a widget draws (not those it hands out of its cache)."""

    def __init__(self, widget, method: str) -> None:
        self.count = 0
        original = getattr(widget, method)

        def counted(*args):
            self.count += 1
            return original(*args)

        setattr(widget, method, counted)


@pytest.mark.slow
async def test_a_save_draws_the_rows_and_lines_it_changed_and_the_screen_is_as_if_drawn_anew(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("w")  # the whole transcript: a screenful of lines that a save must leave alone
        await wait_until(pilot, lambda: review.whole)
        # The first score adds a line to the card and moves the rows below it. Each quote from the reply its item
        # is judged on (one from elsewhere is asked about first: another dialog, another test).
        await pilot.press("g", "1", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m1", what="step m1")
        await pilot.press("shift+end", *"T1", "enter", "1", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1, what="T1 saved")
        await pilot.press("g", "2", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m2", what="step m2")
        await pilot.press("shift+end", *"T2", "enter", "1")
        await wait_until(pilot, lambda: review.annotating.picker is not None and review.annotating.picker.value)
        await pilot.pause()
        card_rows = Drawn(review.card_view, "_render_row")
        listed = Drawn(review.annotation_list, "_render_row")
        lines = Drawn(review.transcript, "_line_segments")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 2, what="T2 saved")
        await wait_until(pilot, no_overlay(app))
        await pilot.pause()
        in_view = review.transcript.scrollable_content_region.height
        # The quote's line (its highlight, its mark in the margin, the selection gone); the item's row, the totals
        # and what is left to score: not the screenful, not the card.
        assert 1 <= lines.count <= 3, lines.count
        assert 1 <= card_rows.count <= len(review.card_view.rows) // 3, (card_rows.count, len(review.card_view.rows))
        assert in_view > 30
        assert listed.count == 1  # the new annotation, on top; T1's row moved down as it was drawn
        assert "T 2+0 / 24+4" in review.card_view.text
        await assert_drawn_as_from_scratch(app, pilot)

        # Undone: the highlight and the row go as they came.
        await pilot.press("u")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1, what="T2 undone")
        await assert_drawn_as_from_scratch(app, pilot)


@pytest.mark.slow
async def test_moving_the_selection_draws_the_lines_it_left_and_entered(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("w")
        await wait_until(pilot, lambda: review.whole)
        lines = Drawn(review.transcript, "_line_segments")
        # Each key: the line the moving edge left and the one it reached (and, where an edge stands at the end of a
        # line, the next); `down`, which ends a selection of four lines, those and the cursor's. Not the screenful.
        moves = [("shift+down", 3), ("shift+down", 3), ("shift+down", 3), ("shift+up", 3), ("ctrl+shift+right", 3)]
        for key, most in [*moves, ("down", 6), ("right", 2)]:
            lines.count = 0
            await pilot.press(key)
            await pilot.pause()
            assert 1 <= lines.count <= most, (key, lines.count)
            await assert_drawn_as_from_scratch(app, pilot)
        assert review.transcript.selection is None  # `down` ended the selection
        assert review.transcript.cursor is not None


class OneTranscript(App):
    CSS = "TranscriptView:blur { background: blue; } TranscriptView:focus { background: red; }"

    def compose(self) -> ComposeResult:
        yield TranscriptView(cursor=True)


@pytest.mark.slow
async def test_the_transcript_is_restyled_on_focus_only_where_a_rule_styles_it_by_focus(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        assert not review.transcript.styled_by_focus()
        assert review.card_view.styled_by_focus()  # RowsView:focus > .rows--highlight
        await pilot.press("tab")
        await wait_until(pilot, lambda: review.annotation_list.has_focus or review.card_view.has_focus)

    styled = OneTranscript()
    async with styled.run_test() as pilot:
        transcript = styled.query_one(TranscriptView)
        assert transcript.styled_by_focus()
        transcript.blur()
        await wait_until(pilot, lambda: transcript.styles.background.rgb == (0, 0, 255), what="the blur rule")
        transcript.focus()
        await wait_until(pilot, lambda: transcript.styles.background.rgb == (255, 0, 0), what="the focus rule")
        transcript.blur()
        await wait_until(pilot, lambda: transcript.styles.background.rgb == (0, 0, 255), what="the blur rule again")


class Rows(App):
    CSS = "RowsView { height: 8; overflow-y: auto; overflow-x: hidden; }"  # as the card's (scorecard.tcss)

    def compose(self) -> ComposeResult:
        yield RowsView()


def rows(n: int) -> list[Row]:
    return [Row(Text(f"row {i}"), str(i)) for i in range(n)]


@pytest.mark.slow
async def test_a_rows_scrollbar_shows_its_rows_through_every_layout_pass():
    """Layout passes that leave a view's size alone leave its scrollbar alone (lines_view.py): only while it shows
    the rows there are. (The case of a redraw lost in a pass, the card's scrollbar at 100x30, is the Review
    snapshot's: tests/tui/test_snapshots.py.)"""
    app = Rows()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(RowsView)
        for count, scrolls in ((3, False), (30, True), (31, True), (4, False), (12, True)):
            view.set_rows(rows(count))
            await pilot.pause()
            app.screen.refresh(layout=True)  # a pass that changes no size, as a dialog closing makes
            await pilot.pause()
            assert view.show_vertical_scrollbar == scrolls
            if scrolls:
                bar = view.vertical_scrollbar
                assert (bar.window_virtual_size, bar.window_size) == (count, 8)
            await assert_drawn_as_from_scratch(app, pilot)
