"""The Textual application: Home, Play and Review screens over one database.

The app takes its collaborators (the database, the endpoint pool, the reviewer)
in its constructor, so tests hand it a temporary database and the test server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from sqlite_utils import Database
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

import scenarios
from store import turns as record

from .config import ConfigError
from .endpoints import Endpoints, is_local, settings_for
from .local_model import LocalModelError
from .screens.home import HomeScreen
from .screens.new_run import NewRun, NewRunDialog
from .screens.play import PlayScreen
from .screens.review import ReviewScreen
from .session import RetryPolicy, Session


class SieveApp(App):
    CSS_PATH = "sieve.tcss"
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
    ):
        super().__init__()
        self.blind = blind
        self.db = db
        self.endpoints = endpoints
        self.reviewer = reviewer
        self.first = first
        self.retry = retry or RetryPolicy()

    def on_mount(self) -> None:
        keys = self.endpoints.config.data.get("keys", {})
        if isinstance(keys, dict):
            self.set_keymap({str(k): str(v) for k, v in keys.items()})
        self.push_screen(HomeScreen())
        if self.first is not None:
            self.push_screen(self.first())

    async def on_unmount(self) -> None:
        await self.endpoints.aclose()

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

    def go_home(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            self.pop_screen()

    def open_review(self, run_id: str) -> None:
        run = record.get_run(self.db, run_id)
        scenario = scenarios.load_text(record.scenario_text(self.db, run["scenario_sha256"]), f"<snapshot>/{run['scenario']}.toml")
        self.push_screen(ReviewScreen(self.db, scenario, run_id, self.reviewer, blind=self.blind))

    def open_new_run(self, scenario: str | None = None) -> None:
        self.push_screen(NewRunDialog(scenario), self._start_new_run)

    def _start_new_run(self, request: NewRun | None) -> None:
        if request is None:
            return
        self.run_worker(partial(self._prepare_new_run, request), thread=True, group="prepare", exit_on_error=False)

    def _prepare_new_run(self, request: NewRun) -> None:
        # In a thread: starting the embedded model takes a few seconds.
        try:
            scenario = scenarios.load(request.scenario)
            local = is_local(request.endpoint)
            if local:
                self.call_from_thread(self.notify, "Starting the embedded model…")
            gateway = self.endpoints.gateway(request.endpoint)
        except (ConfigError, LocalModelError, scenarios.ScenarioError) as exc:
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=10)
            return
        settings = settings_for(scenario, request.model, local, request.settings)
        self.call_from_thread(self._open_play, scenario, gateway, settings)

    def _open_play(self, scenario, gateway, settings) -> None:
        session = Session.start(self.db, scenario, gateway, settings, retry=self.retry)
        self.push_screen(PlayScreen(session))

    def continue_run(self, run_id: str) -> None:
        self.run_worker(partial(self._prepare_continue, run_id), thread=True, group="prepare", exit_on_error=False)

    def _prepare_continue(self, run_id: str) -> None:
        run = record.get_run(self.db, run_id)
        try:
            gateway = self.endpoints.for_record(run)
        except (ConfigError, LocalModelError) as exc:
            self.call_from_thread(self.notify, str(exc), severity="error", timeout=10)
            return
        self.call_from_thread(lambda: self.push_screen(PlayScreen(Session.open(self.db, run_id, gateway, retry=self.retry))))

