"""Timing what a person sees: from a key press to the frame that shows its effect.

Pilot's `press` waits for the app to go idle afterwards, which on a loaded machine
takes longer than the work itself; so the time is taken from the key going in to
the last frame the screen wrote while handling it, not to when `press` returns.
"""

from __future__ import annotations

import asyncio
import time

from sieve.engine.session import TurnDelta, TurnFinished, TurnStarted


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


async def reply_to_paint(screen, session, pilot) -> float:
    """Press `n` on Play: seconds from the model's turn starting (its request going out) to the end of
    the first frame drawn after the reply finished, the frame that shows all of it.

    Not to when Pilot's idle wait returns: that sleeps 20 ms at least, and longer while the
    screen does what follows the reply (the panels laid out again).
    """
    finished = asyncio.Event()
    original = screen.on_session_event
    listening = session.on_event
    started: list[float] = []
    painted: list[float] = []
    paint = screen._compositor_refresh

    def timed_paint() -> None:
        paint()
        if finished.is_set():
            painted.append(time.perf_counter())

    def watch(event) -> None:
        if type(event) is TurnDelta:  # the hot path: the benchmark's own check costs as little as it can
            original(event)
            return
        if isinstance(event, TurnStarted) and event.role == "assistant":
            started.append(time.perf_counter())  # the request goes out
        original(event)
        if isinstance(event, TurnFinished):
            finished.set()

    session.on_event = watch
    screen._compositor_refresh = timed_paint
    try:
        await pilot.press("n")
        await finished.wait()
        await pilot.pause()  # until the frames after the end are drawn
    finally:
        session.on_event = listening
        del screen._compositor_refresh
    return painted[0] - started[0]
