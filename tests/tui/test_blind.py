"""Blind review: no model, endpoint, provider or cost anywhere on the screen, until the run is scored and revealed."""

from __future__ import annotations

import pytest

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.scoring.blind import code
from sieve.tui.app import SieveApp
from sieve.tui.screens.pickers import Picker
from sieve.tui.screens.review import ReviewScreen
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, overlay_is, screen_is, screen_text, wait_until

SELF_NAMING = (
    "I am GPT-6 Astra, a model by OpenAI, served through OpenRouter. Havel sets the bowl down and counts the coins."
)
FORBIDDEN = ["gpt-6", "astra", "openai", "openrouter", "$0.", "chutes"]


def make_run(db) -> str:
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(
        db, keykeeper, model="openai/gpt-6-astra", endpoint="openrouter", settings={"temperature": 1.0}
    )
    record.add_turn(
        db, run_id, idx=0, role="user", origin="setup", text=keykeeper.steps[0].text, step_id="m0", step_repeat=1
    )
    reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", status="streaming")
    record.finish_turn(db, reply, "complete", SELF_NAMING, {"provider": "Chutes", "cost": 0.0123})
    record.set_run_status(db, run_id, "complete")
    return run_id


def assert_blind(text: str) -> None:
    lowered = text.lower()
    for word in FORBIDDEN:
        assert word not in lowered, word


@pytest.mark.slow
async def test_a_blind_review_hides_every_name_until_the_reveal(db):
    run_id = make_run(db)
    app = SieveApp(db, Endpoints(), "ada", blind=True)
    async with app.run_test(size=(170, 50), notifications=True) as pilot:
        home = screen_text(app)
        assert_blind(home)
        assert code(db, run_id, "ada") in home and "BLIND" in home
        await pilot.press("enter")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        assert app.screen.blind
        shown = screen_text(app)
        assert_blind(shown)
        assert (
            "Havel sets the bowl down" in shown and "I am ▒▒▒▒▒ ▒▒▒▒▒, a model by ▒▒▒▒▒▒" in shown
        )  # masked in the reply
        assert "Havel is in command" in shown  # an ordinary word that is also a model's name stays
        palette = " ".join(c.title + " " + c.help for c in app.get_system_commands(app.screen))
        assert_blind(palette + " " + app.title + " " + app.screen.title + " " + app.screen.sub_title)

        # Score a quote that names the model: the card shows it masked too.
        app.screen.select_span(0, 20)
        await pilot.press("s")
        await wait_until(pilot, overlay_is(app, Picker))
        assert_blind(screen_text(app))
        await pilot.press(*"T1", "enter", "enter", "enter")
        await wait_until(pilot, lambda: notes.active(db, run_id, "ada"))
        await wait_until(pilot, on_screen(app, "T1  0  ✓ exact"))
        assert_blind(screen_text(app))

        await pilot.press("R")  # not yet: eleven items are unscored
        await wait_until(pilot, on_screen(app, "Finish scoring first"))
        assert_blind(screen_text(app))
        for item in [f"T{n}" for n in range(2, 13)] + [f"TB{n}" for n in range(1, 5)] + [f"R{n}" for n in range(1, 7)]:
            score(db, run_id, item, 1, blind=True)
        await pilot.press("R")
        await wait_until(pilot, on_screen(app, "openai/gpt-6-astra"))
        revealed = screen_text(app)
        assert "openai/gpt-6-astra" in revealed and "GPT-6 Astra" in revealed
        assert "openrouter" in revealed and "Chutes" in revealed and "$0.0123" in revealed

    t1 = next(a for a in notes.active(db, run_id, "ada") if a["item"] == "T1")
    assert t1["blind"] == 1 and t1["quote"] == SELF_NAMING[:20]  # the record keeps the original words
