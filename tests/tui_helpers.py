"""Helpers for Pilot tests: build the app on the test server, read what the screen shows."""

from __future__ import annotations

import html
import re

from sieve import scenarios
from sieve.tui.app import SieveApp
from sieve.tui.app.screens.play import PlayScreen
from sieve.tui.engine.endpoints import Endpoints
from sieve.tui.engine.gateway import Endpoint, Gateway
from sieve.tui.engine.session import RetryPolicy, Session, resolve_settings

FAST_RETRY = RetryPolicy(attempts=2, base=0.01, cap=0.05)


def play_app(db, server, model: str, scenario: str = "keykeeper", reviewer: str = "ada") -> tuple[SieveApp, Session]:
    """The app opened on the Play screen of a new run against the test server."""
    loaded = scenarios.load(scenario)
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    session = Session.start(db, loaded, gateway, resolve_settings(model, loaded), retry=FAST_RETRY)
    app = SieveApp(db, Endpoints(), reviewer, first=lambda: PlayScreen(session), retry=FAST_RETRY)
    return app, session


def screen_text(app) -> str:
    """Everything the terminal shows, as text (from the same SVG a screenshot saves)."""
    svg = app.export_screenshot()
    parts = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(parts)).replace("\xa0", " ")


async def settle(app, pilot) -> None:
    """Wait until no reply is streaming and the screen has caught up."""
    await app.workers.wait_for_complete()
    await pilot.pause(0.15)
