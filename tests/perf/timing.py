"""Timing what a person sees: from a key press to the frame that shows its effect.

Pilot's `press` waits for the app to go idle afterwards, which on a loaded machine
takes longer than the work itself; so the time is taken from the key going in to
the last frame the screen wrote while handling it, not to when `press` returns.
"""

from __future__ import annotations

import time


async def key_to_paint(app, pilot, key: str) -> float:
    screen = app.screen
    painted: list[float] = []
    original = screen._compositor_refresh

    def paint() -> None:
        original()
        painted.append(time.perf_counter())

    screen._compositor_refresh = paint
    try:
        start = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
    finally:
        del screen._compositor_refresh  # back to the class's own method
    after = [t for t in painted if t > start]
    return (after[-1] if after else time.perf_counter()) - start
