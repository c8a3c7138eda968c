"""Timing: the machine a figure was taken on, and what a person sees (a key press to the frame that shows it).

Every benchmark prints `machine_line()` first: how long this machine takes for a fixed
piece of pure Python (the reference), and how loaded it was, so that a figure taken on
another machine can be read in proportion (docs/performance.md says how).

Pilot's `press` waits for the app to go idle afterwards, which on a loaded machine
takes longer than the work itself; so the time is taken from the key going in to
the last frame the screen wrote while handling it, not to when `press` returns.
"""

from __future__ import annotations

import asyncio
import os
import platform
import time

from sieve.engine.session import TurnDelta, TurnFinished, TurnStarted

REFERENCE_STEPS = 10_000_000


def _reference_loop() -> None:
    for _ in range(
        REFERENCE_STEPS
    ):  # in a function: the loop variable is a local (at a script's top level, ~2x slower)
        pass


def reference_seconds(repeats: int = 3) -> tuple[float, float]:
    """The reference: (CPU, wall) seconds of a 10-million-step Python loop, each the best of `repeats`.

    The CPU time is the machine's speed; the wall time is longer when other processes take the cores.
    """
    cpu, wall = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        _reference_loop()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return min(cpu), min(wall)


def load_text() -> str:
    """The load average (1, 5, 15 minutes) and the cores it is shared by: wall times taken above ~0.5 a core
    count other processes' time, CPU times much less."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def machine_line() -> str:
    """The line every benchmark prints first: the reference loop's time, Python's version and the load."""
    cpu, wall = reference_seconds()
    return (
        f"machine: reference {cpu:.3f} s (a {REFERENCE_STEPS:,}-step Python loop, CPU, best of 3; wall {wall:.3f} s), "
        f"Python {platform.python_version()}, {load_text()}"
    )


def bytecode_ready() -> str:
    """Compile sieve's modules to bytecode, as its first run leaves them on a user's machine, and say so.

    A process timed whole (start-up, `sieve search`) reads its modules' bytecode; where none was written
    (PYTHONDONTWRITEBYTECODE set, as in some shells and CI images, or a fresh checkout) it compiles every
    module's source first, which took more than the whole start-up target. compileall writes the bytecode
    whatever that variable says; the processes timed then read it."""
    import compileall

    import sieve
    import sieve.scenarios
    import sieve.store
    import sieve.tui

    folders = {path for package in (sieve, sieve.scenarios, sieve.store, sieve.tui) for path in package.__path__}
    ok = all(compileall.compile_dir(folder, quiet=1) for folder in sorted(folders))
    unset = "" if os.environ.get("PYTHONDONTWRITEBYTECODE") else " (PYTHONDONTWRITEBYTECODE is not set)"
    return f"bytecode: sieve's modules compiled before timing{unset}" + ("" if ok else "; some failed to compile")


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
