"""The new-run dialog: scenario, endpoint, model and settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

import scenarios


@dataclass(frozen=True)
class NewRun:
    scenario: str
    endpoint: str | None
    model: str | None
    settings: dict[str, Any]


class NewRunDialog(ModalScreen[NewRun | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_run.cancel")]

    DEFAULT_CSS = """
    NewRunDialog { align: center middle; }
    NewRunDialog > Vertical { width: 80; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    NewRunDialog Label { margin-top: 1; }
    NewRunDialog Horizontal { height: auto; margin-top: 1; }
    NewRunDialog #error { color: $error; height: auto; }
    """

    def __init__(self, scenario: str | None = None):
        super().__init__()
        self.initial = scenario

    def compose(self) -> ComposeResult:
        names = scenarios.builtin_names()
        with Vertical():
            yield Label("New run", classes="heading")
            yield Label("scenario")
            yield Select([(n, n) for n in names], value=self.initial if self.initial in names else names[0], allow_blank=False, id="scenario")
            yield Label("endpoint: a URL or a name from the config; empty for the embedded local model")
            yield Input(placeholder="local", id="endpoint")
            yield Label("model (empty for the embedded model)")
            yield Input(placeholder="SmolLM2-135M-Instruct", id="model")
            yield Label("temperature · max tokens · reasoning effort · seed (empty: the scenario's defaults)")
            with Horizontal():
                yield Input(placeholder="1.0", id="temperature")
                yield Input(placeholder="ceiling", id="max_tokens")
                yield Input(placeholder="low", id="reasoning_effort")
                yield Input(placeholder="seed", id="seed")
            yield Label("", id="error")
            with Horizontal():
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#endpoint", Input).focus()

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value.strip()

    def _read(self) -> NewRun:
        settings: dict[str, Any] = {}
        for key, kind in (("temperature", float), ("max_tokens", int), ("seed", int)):
            raw = self._value(key)
            if raw:
                try:
                    settings[key] = kind(raw)
                except ValueError:
                    raise ValueError(f"{key.replace('_', ' ')}: '{raw}' is not a number") from None
        if self._value("reasoning_effort"):
            settings["reasoning_effort"] = self._value("reasoning_effort")
        endpoint = self._value("endpoint") or None
        model = self._value("model") or None
        if endpoint not in (None, "local") and not model:
            raise ValueError("name the model to play against at this endpoint")
        return NewRun(str(self.query_one("#scenario", Select).value), endpoint, model, settings)

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def start(self) -> None:
        try:
            self.dismiss(self._read())
        except ValueError as exc:
            self.query_one("#error", Label).update(str(exc))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
