"""The Textual application: Home, Play, Review, Results and Pairs over one database.

The app takes its collaborators (the database, the endpoint pool, the reviewer)
in its constructor, so tests hand it a temporary database and the test server.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from sqlite_utils import Database
from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.screen import Screen

from sieve import scenarios
from sieve.engine.endpoints import Endpoints, is_local, settings_for
from sieve.engine.session import RetryPolicy, Session
from sieve.paths import default_screenshots_dir
from sieve.safe_text import one_line, visible
from sieve.store.record.db import DatabaseError
from sieve.store.record.runs import owner_tag
from sieve.store.record.turns import release_runs
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.new_run import NewRun, NewRunDialog
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.keys_in_flight import at_the_app, route
from sieve.tui.workers import ReportsWorkerErrors

STYLES = Path(__file__).parent / "styles"

# Colours that carry meaning, as theme variables: a theme may change them, the
# screens only name them (`$verdict-exact`). Each has a value for dark themes and
# one for light ones (deeper: a contrast of 5 or more on textual-light's surface); a theme's own
# `variables` override both.
THEME_VARIABLES = {
    "verdict-exact": "#5fd75f",
    "verdict-fuzzy": "#d7af00",
    "verdict-absent": "#ff5f5f",
    "verdict-player": "#d787d7",
    "verdict-none": "#8a8a8a",
    "disqualified": "#ff5f5f",
    "total": "#5fafd7",
}
LIGHT_THEME_VARIABLES = {
    "verdict-exact": "#116329",
    "verdict-fuzzy": "#7a4d00",
    "verdict-absent": "#a40e26",
    "verdict-player": "#7a2fa0",
    "verdict-none": "#4a4a4a",
    "disqualified": "#a40e26",
    "total": "#084f8c",
}
# The backgrounds of highlighted spans in the transcript (styles/highlights.tcss), one per kind of
# annotation: the text on them is the theme's foreground, with a contrast of 4.5 or more.
HIGHLIGHT_VARIABLES = {
    "highlight-score": "#1f4e79",
    "highlight-counter": "#6b2d6b",
    "highlight-probe": "#1d5e57",
    "highlight-deduction": "#7a3b12",
    "highlight-judgment": "#3d5a1a",
    "highlight-note": "#4a4a4a",
    "highlight-suggestion": "#363636",
}
LIGHT_HIGHLIGHT_VARIABLES = {
    "highlight-score": "#a9cdf0",
    "highlight-counter": "#e6b8ea",
    "highlight-probe": "#9fded2",
    "highlight-deduction": "#f5c59a",
    "highlight-judgment": "#c5e09a",
    "highlight-note": "#b4b4b4",
    "highlight-suggestion": "#ececec",
}


class SieveApp(ReportsWorkerErrors, App):
    CSS_PATH = sorted(STYLES.glob("*.tcss"))
    TITLE = "sieve"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True)]

    def __init__(
        self,
        db: Database,
        endpoints: Endpoints,
        reviewer: str,
        first: Callable[[], Screen] | None = None,
        retry: RetryPolicy | None = None,
        blind: bool = False,
        blind_only: bool = False,
        screenshots: Path | None = None,
    ):
        super().__init__()
        self.screenshots = screenshots or default_screenshots_dir()  # where the palette's Screenshot saves
        # A blind-only reviewer (the config's [reviewer] blind = true) never leaves blind mode.
        self.blind_only = blind_only
        self.blind = blind or blind_only
        self.db = db
        self.endpoints = endpoints
        self.reviewer = reviewer
        self.first = first
        self.retry = retry or RetryPolicy()

    # -- sinks: every title and notification passes through here, whoever set it ----

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's text, every screen's: the title, a bar, the sub title; shown literally on one line.

        A bar with room around it, not Textual's dash: the dash's spaces started a span of their own,
        which SVG viewers drop, and the parts ran together ("sieve— reviewer ada"). Here no span
        starts with a space.
        """
        if not sub_title:
            return Content(one_line(title)).stylize("bold")
        return Content.assemble((one_line(title) + "   ", "bold"), ("│   ", "dim"), Content(one_line(sub_title)))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A notification whose text is data: never markup, control characters made visible."""
        super().notify(visible(message), title=one_line(title), severity=severity, timeout=timeout, markup=False)

    async def on_event(self, event: events.Event) -> None:
        # Where each key read is sent, so that one handled after the focus moved on is sent on (keys_in_flight).
        if isinstance(event, events.Key) and not event.is_forwarded:
            route(event, self.focused or self.screen)
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """Before Textual looks up the key's binding among the widgets focused now (App._on_key): a key sent out
        before the keys moved (a picker opened, or went on to its next stage) goes where they are
        (keys_in_flight); else the screen takes what it takes of keys that are no binding (Review: an item's id
        typed straight away), here, so in the order the keys were typed, after every key before it acted."""
        if at_the_app(self, event):
            event.prevent_default()
            return
        take = getattr(self.screen, "key_before_bindings", None)
        if take is not None and take(event):
            event.prevent_default()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """sieve's colours for the theme in use, asked again whenever the theme changes."""
        dark = self.current_theme.dark
        ours = THEME_VARIABLES if dark else LIGHT_THEME_VARIABLES
        highlights = HIGHLIGHT_VARIABLES if dark else LIGHT_HIGHLIGHT_VARIABLES
        return {**super().get_theme_variable_defaults(), **ours, **highlights}

    def on_mount(self) -> None:
        keys = self.endpoints.config.data.get("keys", {})
        if isinstance(keys, dict):
            self.set_keymap({str(k): str(v) for k, v in keys.items()})
        self.push_screen(HomeScreen())
        if self.first is not None:
            self.push_screen(self.first())

    async def on_unmount(self) -> None:
        await self.endpoints.aclose()
        self._let_go_of_runs()

    def _let_go_of_runs(self) -> None:
        """Quitting is no crash: the runs this process holds between turns are let go of, unfinished and idle
        for whoever goes on with them. One with a reply still streaming is kept, so the next open marks it
        interrupted, its partial text kept."""
        try:
            streaming = [
                run_id
                for (run_id,) in self.db.execute(
                    "SELECT DISTINCT run_id FROM turns WHERE status = 'streaming' AND run_id IN "
                    "(SELECT id FROM runs WHERE owner = ?)",
                    [owner_tag()],
                ).fetchall()
            ]
            release_runs(self.db, keep=streaming)
        except (sqlite3.Error, DatabaseError):
            pass  # a read-only or vanished file: the next open recovers what is left

    # -- screenshots: into a folder that exists, and a failure says why ----------------

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: into `path`, else the app's folder (made if missing; Textual's own
        default, ~/Downloads, may not exist)."""
        folder = Path(path) if path else self.screenshots
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.notify(f"Screenshot not saved: {folder} cannot be made ({exc.strerror or exc})", severity="error")
            return None
        return super().deliver_screenshot(filename, str(folder), time_format)

    @on(events.DeliveryComplete)
    def _screenshot_saved(self, event: events.DeliveryComplete) -> None:
        if event.name == "screenshot":
            event.prevent_default()  # Textual's own says it in markup, which sieve shows literally
            self.notify(f"Saved screenshot to {event.path}", title="Screenshot")

    @on(events.DeliveryFailed)
    def _screenshot_failed(self, event: events.DeliveryFailed) -> None:
        if event.name == "screenshot":
            event.prevent_default()  # Textual's own says only that it failed
            exc = event.exception
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            where = getattr(exc, "filename", None)
            self.notify(
                f"Screenshot not saved: {reason}" + (f" ({where})" if where else ""),
                title="Screenshot",
                severity="error",
            )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette offers every key of the screen, under the names the footer shows."""
        yield from super().get_system_commands(screen)
        seen = set()
        for binding in screen.BINDINGS:
            if not isinstance(binding, Binding) or binding.action in seen or binding.action.startswith("app."):
                continue
            seen.add(binding.action)
            key = binding.key.split(",")[0]
            yield SystemCommand(
                f"{binding.description} ({key})",
                binding.tooltip or binding.description,
                partial(screen.run_action, binding.action),
            )

    # -- navigation ----------------------------------------------------------------

    def run_view(self, run_id: str) -> RunView:
        """The run as the screens see it: blind when the app is in blind mode, under this reviewer's codes."""
        return RunView.open(self.db, run_id, blind=self.blind, viewer=self.reviewer)

    def go_home(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            self.pop_screen()

    def open_review(self, run_id: str) -> None:
        self.push_screen(ReviewScreen(self.run_view(run_id)))

    def open_new_run(self, scenario: str | None = None) -> None:
        self.push_screen(NewRunDialog(scenario), self._start_new_run)

    def _start_new_run(self, request: NewRun | None) -> None:
        if request is not None:
            self._prepare_new_run(request)

    @work(thread=True, group="prepare", exit_on_error=False, description="Starting the run")
    def _prepare_new_run(self, request: NewRun) -> None:
        # In a thread: starting the embedded model takes a few seconds.
        scenario = scenarios.load(request.scenario)
        local = is_local(request.endpoint)
        if local:
            self.call_from_thread(self.notify, "Starting the embedded model…")
        gateway = self.endpoints.gateway(request.endpoint)
        settings = settings_for(scenario, request.model, local, request.settings)
        self.call_from_thread(self._open_play, scenario, gateway, settings)

    def _open_play(self, scenario, gateway, settings) -> None:
        session = Session.start(self.db, scenario, gateway, settings, retry=self.retry)
        self.push_screen(PlayScreen(session))

    @work(thread=True, group="prepare", exit_on_error=False, description="Going on with the run")
    def continue_run(self, run_id: str) -> None:
        gateway = self.endpoints.for_record(self.run_view(run_id).run)
        session = Session.open(self.db, run_id, gateway, retry=self.retry)
        self.call_from_thread(self.push_screen, PlayScreen(session))
