"""Regenerate screenshots/*.svg from a real session with the embedded local model.

    python screenshots/make.py

Plays the first steps of the keykeeper test against SmolLM2-135M through llama.cpp,
takes the Play screen while a reply streams, scores a few items and L events on the
Review screen, and ends on Home. Needs the `local` extra; takes about a minute.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import scenarios  # noqa: E402
import store  # noqa: E402
from sieve.store.record import turns as record  # noqa: E402
from sieve.tui.app import SieveApp  # noqa: E402
from sieve.tui.app.screens.play import PlayScreen  # noqa: E402
from sieve.tui.app.screens.review import ReviewScreen  # noqa: E402
from sieve.tui.engine.endpoints import Endpoints, settings_for  # noqa: E402
from sieve.tui.engine.session import Session  # noqa: E402

SIZE = (150, 44)


async def wait_idle(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause(0.3)


async def score(app, pilot, turn_position: int, start: int, end: int, keys: list[str]) -> None:
    review = app.screen
    review.show_turn(turn_position)
    review.select_span(start, end)
    await pilot.pause(0.1)
    await pilot.press(*keys)
    await pilot.pause(0.2)


async def main() -> None:
    keykeeper = scenarios.load("keykeeper")
    with tempfile.TemporaryDirectory() as tmp:
        db = store.open_db(Path(tmp) / "screens.db")
        pool = Endpoints(announce=print)
        try:
            gateway = pool.gateway(None)
            settings = settings_for(keykeeper, None, True, {"max_tokens": 160, "seed": 11})
            session = Session.start(db, keykeeper, gateway, settings)
            app = SieveApp(db, pool, "ada", first=lambda: PlayScreen(session))
            async with app.run_test(size=SIZE) as pilot:
                for _ in range(3):
                    await pilot.press("n")
                    await wait_idle(app, pilot)
                await pilot.press("n")
                for _ in range(200):  # the Play screen while a reply streams
                    await pilot.pause(0.1)
                    views = app.screen.query("TurnView").results()
                    last = list(views)[-1]
                    if last.turn["role"] == "assistant" and len(last.text) > 150:
                        break
                app.save_screenshot("play.svg", str(HERE))
                await wait_idle(app, pilot)

                await pilot.press("v")
                await pilot.pause(0.5)
                replies = [i for i, t in enumerate(app.screen.turns) if t["role"] == "assistant"]
                texts = [app.screen.turns[i]["text"] for i in replies]

                def span(n: int, length: int) -> tuple[int, int]:
                    return 0, min(length, len(texts[n]))

                await score(
                    app,
                    pilot,
                    replies[1],
                    *span(1, 60),
                    ["s", *"T1", "enter", "down", "enter", *"answers, but forgets the coin", "enter"],
                )
                await score(app, pilot, replies[2], *span(2, 45), ["s", *"grate", "enter", "enter", "enter"])
                await score(app, pilot, replies[0], *span(0, 50), ["s", *"R4", "enter", "down", "enter", "enter"])
                await score(app, pilot, replies[2], *span(2, 30), ["l", *"L8", "enter", "enter", "enter"])
                await score(app, pilot, replies[1], *span(1, 25), ["l", *"L1", "enter", "enter", "enter"])
                app.screen.show_turn(replies[1])
                await pilot.pause(0.3)
                app.save_screenshot("review.svg", str(HERE))
                await pilot.press("escape")
                await pilot.pause(0.2)
                await pilot.press("escape")
                await pilot.pause(0.5)
                app.save_screenshot("home.svg", str(HERE))

            # The score card whole, on a tall narrow terminal.
            run = record.get_run(db, session.run_id)
            card_app = SieveApp(db, pool, "ada", first=lambda: ReviewScreen(db, keykeeper, run["id"], "ada"))
            async with card_app.run_test(size=(150, 62)) as pilot:
                await pilot.pause(0.5)
                card_app.save_screenshot("scorecard.svg", str(HERE))
        finally:
            await pool.aclose()
            pool.stop()
    for name in ("home", "play", "review", "scorecard"):
        print(HERE / f"{name}.svg")


if __name__ == "__main__":
    asyncio.run(main())
