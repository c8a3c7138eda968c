"""The new-run dialog: scenario, endpoint, model, and every request setting as its own labelled field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from sieve import scenarios
from sieve.errors import SieveUsageError
from sieve.safe_text import visible
from sieve.scenarios.settings import SETTINGS
from sieve.tui.widgets.text_input import TextInput


@dataclass(frozen=True)
class NewRun:
    scenario: str
    endpoint: str | None
    model: str | None
    settings: dict[str, Any]


class NewRunDialog(ModalScreen[NewRun | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_run.cancel")]

    def __init__(self, scenario: str | None = None):
        super().__init__()
        self.initial = scenario

    def compose(self) -> ComposeResult:
        names = scenarios.builtin_names()
        with Vertical():
            yield Label("New run", classes="heading")
            with Horizontal(classes="field"):
                yield Label("scenario", classes="label")
                yield Select(
                    [(n, n) for n in names],
                    value=self.initial if self.initial in names else names[0],
                    allow_blank=False,
                    id="scenario",
                    compact=True,
                )
            with Horizontal(classes="field"):
                yield Label("endpoint", classes="label")
                yield TextInput(
                    placeholder="a URL or a config name; empty: the embedded model", id="endpoint", compact=True
                )
            with Horizontal(classes="field"):
                yield Label("model", classes="label")
                yield TextInput(placeholder="empty: SmolLM2-135M-Instruct", id="model", compact=True)
            for setting in SETTINGS:
                with Horizontal(classes="field"):
                    yield Label(setting.label, classes="label")
                    yield TextInput(
                        placeholder=f"{setting.placeholder}  (empty: the scenario's)", id=setting.name, compact=True
                    )
            yield Label("", id="error")
            with Horizontal(id="buttons"):
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#endpoint", Input).focus()

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value.strip()

    def _read(self) -> NewRun:
        settings = {s.name: s.parse(self._value(s.name)) for s in SETTINGS if self._value(s.name)}
        endpoint = self._value("endpoint") or None
        model = self._value("model") or None
        if endpoint not in (None, "local") and not model:
            raise SieveUsageError("name the model to play against at this endpoint")
        return NewRun(str(self.query_one("#scenario", Select).value), endpoint, model, settings)

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def start(self) -> None:
        try:
            self.dismiss(self._read())
        except SieveUsageError as exc:
            self.query_one("#error", Label).update(Text(visible(str(exc))))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
