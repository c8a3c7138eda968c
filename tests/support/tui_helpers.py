"""Helpers for Pilot tests: build the app on the test server, read what the screen shows, wait for conditions."""

from __future__ import annotations

import html
import inspect
import re
import time
from collections.abc import Callable

import pytest
from rich.cells import cell_len

from sieve import scenarios
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import RetryPolicy, Session, resolve_settings
from sieve.tui.app import SieveApp
from sieve.tui.screens.play import PlayScreen

FAST_RETRY = RetryPolicy(attempts=2, base=0.01, cap=0.05)
POLL = 0.02  # seconds between two looks at the condition


def play_app(db, server, model: str, scenario: str = "keykeeper", reviewer: str = "ada") -> tuple[SieveApp, Session]:
    """The app opened on the Play screen of a new run against the test server."""
    loaded = scenarios.load(scenario)
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    session = Session.start(db, loaded, gateway, resolve_settings(model, loaded), retry=FAST_RETRY)
    app = SieveApp(db, Endpoints(), reviewer, first=lambda: PlayScreen(session), retry=FAST_RETRY)
    return app, session


CELL = 12.2  # the width of one terminal cell in Textual's SVG screenshots


def screen_text(app) -> str:
    """Everything the terminal shows, as text (from the same SVG a screenshot saves), gaps between columns kept."""
    svg = app.export_screenshot()
    out: list[str] = []
    column = 0
    for attributes, text in re.findall(r"<text([^>]*)>(.*?)</text>", svg, flags=re.S):
        text = html.unescape(text).replace("\xa0", " ")
        if text == "\n" or "terminal-" not in attributes or "-title" in attributes:
            out.append(text if text == "\n" else "")
            column = 0
            continue
        # Blank cells are drawn as rectangles only: the text resumes at its own x.
        x = re.search(r'\bx="([0-9.]+)"', attributes)
        at = round(float(x.group(1)) / CELL) - 1 if x else column
        out.append(" " * max(0, at - column) + text)
        column = max(column, at) + cell_len(text)
    return "".join(out)


class Condition:
    """A condition that says what it waits for."""

    def __init__(self, check: Callable[[], object], description: str):
        self.check = check
        self.description = description

    def __call__(self) -> object:
        return self.check()

    def __repr__(self) -> str:
        return self.description


def _described(condition: Callable[[], object]) -> str:
    if isinstance(condition, Condition):
        return repr(condition)
    try:
        return " ".join(inspect.getsource(condition).split())
    except (OSError, TypeError):
        return repr(condition)


async def wait_until(pilot, condition: Callable[[], object], timeout: float = 5.0, what: str | None = None) -> None:
    """Let the app run until `condition()` is true; fail the test, naming the condition, after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()  # the screen has handled what was sent to it
        if condition():
            return
        if time.monotonic() > deadline:
            shown = screen_text(pilot.app)
            pytest.fail(f"waited {timeout:g} s for {what or _described(condition)}\nthe screen shows:\n{shown}")
        await pilot.pause(POLL)


def on_screen(app, text: str) -> Condition:
    """A condition: `text` is on the screen."""
    return Condition(lambda: text in screen_text(app), f"{text!r} on the screen")


def screen_is(app, screen_type: type) -> Condition:
    """A condition: the app shows a screen of this type."""
    return Condition(lambda: isinstance(app.screen, screen_type), f"the {screen_type.__name__}")


def open_overlays(app, overlay_type: type | None = None) -> list:
    """The overlays shown over the screen (a kept one, hidden between uses, is not open: widgets/overlay.py)."""
    from sieve.tui.widgets.overlay import Overlay

    return [o for o in app.screen.query(overlay_type or Overlay) if o.display]


def overlay_is(app, overlay_type: type) -> Condition:
    """A condition: an overlay of this type (a picker, a question) is open over the screen."""
    return Condition(lambda: bool(open_overlays(app, overlay_type)), f"the {overlay_type.__name__} over the screen")


def no_overlay(app) -> Condition:
    """A condition: no picker or question is open over the screen; the screen has the keys again."""
    return Condition(lambda: not open_overlays(app), "no overlay over the screen")


async def settle(app, pilot) -> None:
    """Wait until no worker is running and the screen has handled everything they posted."""
    await app.workers.wait_for_complete()
    await wait_until(pilot, lambda: all(w.is_finished for w in app.workers), what="every worker to finish")


def burst(app, *keys: str) -> None:
    """Send keys in one burst, as a fast typist or a terminal's paste does: none waits for the one before it to be
    handled (Pilot's `press` waits for the app to go idle after each key)."""
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    for key in keys:
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        try:
            char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
        except KeyError:
            char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)
