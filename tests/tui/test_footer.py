"""Every key a screen shows in its footer is on screen (QA tui #10): Review's keys at 160 columns ran past the
right edge (`w Whole tr▏`), so `f Card`, `esc Back`, and with a judge's draft `A Walk draft`, never showed.
The footer wraps them onto a second row."""

from __future__ import annotations

import pytest

from sieve.tui.screens.review import ReviewScreen
from tests.support.judge_drafts import store_judge_draft
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import screen_is, screen_text, wait_until


def footer_keys(app) -> list[str]:
    """What the footer should show: each action's first key that it shows, with its words."""
    seen: dict[str, str] = {}
    for _, binding, _, _ in app.screen.active_bindings.values():
        if binding.show and binding.action not in seen:
            seen[binding.action] = f"{app.get_key_display(binding)} {binding.description}"
    return list(seen.values())


@pytest.mark.parametrize("width", [160, 120])
@pytest.mark.slow
async def test_every_key_reviews_footer_shows_is_on_screen(db, width):
    run_id = scripted_run(db, "keykeeper")
    store_judge_draft(db, run_id)
    app = review_app(db, run_id)
    async with app.run_test(size=(width, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: app.screen.current_step() == "m3")
        await pilot.pause()
        keys = footer_keys(app)
        assert "f Card" in keys and "esc Back" in keys and "A Walk draft" in keys
        await wait_until(pilot, lambda: all(k in screen_text(app) for k in keys), what=f"all of {keys} on screen")
        assert "^p palette" in screen_text(app)
