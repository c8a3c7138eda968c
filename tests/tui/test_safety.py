"""Model text with Rich markup, ANSI escapes and control characters is shown literally and harms nothing."""

from __future__ import annotations

import pytest

from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.tui.screens.pickers import Picker
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.transcript import TranscriptView
from tests.support.fakeserver import MARKUP_REPLY
from tests.support.tui_helpers import on_screen, overlay_is, play_app, screen_is, screen_text, settle, wait_until


@pytest.mark.slow
async def test_markup_and_escapes_pass_through_play_and_review_as_text(db, fake_server):
    app, session = play_app(db, fake_server, "[bold]evil[/bold];markup=1", reviewer="ada")
    async with app.run_test(size=(170, 50)) as pilot:
        await pilot.press("n")
        await settle(app, pilot)
        stored = record.chosen_turns(db, session.run_id)[1]["text"]
        assert stored == MARKUP_REPLY  # recorded exactly as it came
        shown = screen_text(app)
        assert "[bold red]not bold[/bold red]" in shown
        assert "[link=https://example.com]click[/link]" in shown
        assert "\\x1b[31mred\\x1b[0m" in shown and "\\x07" in shown and "\\x00" in shown
        assert "\x1b" not in shown and "\x07" not in shown
        assert "[bold]evil[/bold]" in shown  # the model's name in the title, literally

        await pilot.press("v")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        area = app.screen.query_one("#text", TranscriptView)
        assert "\x1b" not in area.text and "␛[31mred" in area.text
        assert len(area.text) == len(stored)  # one stand-in per control: offsets are the original's
        start = stored.index("\x1b[31m")
        app.screen.select_span(start, start + 8)
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        assert "quote: \\x1b[31mred" in screen_text(app)  # the picker shows the quote literally too
        await pilot.press(*"T1", "enter", "enter", "enter")
        await wait_until(pilot, on_screen(app, "\u201c\\x1b[31mred\u201d"))
        shown = screen_text(app)
        assert "\u201c\\x1b[31mred\u201d" in shown  # the quote in the list and on the card, literally
        assert "\x1b" not in shown
    (annotation,) = notes.active(db, session.run_id, "ada")
    assert annotation["quote"] == stored[start : start + 8] and annotation["quote"].startswith("\x1b[31m")
    assert annotation["verification"] == "short"  # found where it stands, but one word is no evidence
