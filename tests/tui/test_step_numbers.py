"""One numbering of steps (QA tui #8): Play, Review and the Results step view all say `step 3 of 13 · m3`,
the number `g 3` goes to (the setup message is step 0)."""

from __future__ import annotations

import pytest

from sieve.engine.endpoints import Endpoints
from sieve.tui.app import SieveApp
from sieve.tui.screens.results import ResultsScreen, StepAlignedScreen
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import on_screen, play_app, screen_is, settle, wait_until


@pytest.mark.slow
async def test_play_review_and_the_step_view_number_a_step_alike(db, fake_server):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, on_screen(app, "step 3 of 13 · m3"))

    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("keykeeper"))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        await pilot.press("a")
        await wait_until(pilot, screen_is(app, StepAlignedScreen))
        await wait_until(pilot, on_screen(app, "step 1 of 13 · m1"))
        await pilot.press("n", "n")
        await wait_until(pilot, on_screen(app, "step 3 of 13 · m3"))
        assert "of 14" not in app.screen.query_one("#step").render().plain

    app, _ = play_app(db, fake_server, "pilot;tokens=4")
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_until(pilot, on_screen(app, "step 0 of 13 · m0 [setup]"))  # the next step, as it will be sent
        await pilot.press("n")
        await settle(app, pilot)
        await wait_until(pilot, on_screen(app, "step 1 of 13 · m1 [player]"))
