"""Handing the player's seat to a model: which brief, which model, where, for how many turns."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from sieve.engine.player import DEFAULT_TURNS
from sieve.safe_text import one_line, visible
from sieve.scenarios import Scenario
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.text_input import TextInput


@dataclass(frozen=True)
class SeatRequest:
    brief: str
    model: str | None
    endpoint: str | None
    turns: int


class PlayerDialog(Overlay):
    """Choose a brief (enter), then the model, endpoint and number of turns; enter on the last field starts."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="player_dialog.cancel")]

    def __init__(self, scenario: Scenario):
        super().__init__()
        self.scenario = scenario

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("A model in the player's seat: choose a brief (enter), then the model")
            yield OptionList(
                *[
                    Option(Text(one_line(f"{p.id:<12} {p.title}"), no_wrap=True, overflow="ellipsis"), id=p.id)
                    for p in self.scenario.players
                ],
                id="briefs",
            )
            yield Static("", id="brief")
            with Horizontal(classes="field"):
                yield Label("model", classes="label")
                yield TextInput(placeholder="empty: the embedded SmolLM2-135M", id="model", compact=True)
            with Horizontal(classes="field"):
                yield Label("endpoint", classes="label")
                yield TextInput(
                    placeholder="a URL or a config name; empty: the embedded model", id="endpoint", compact=True
                )
            with Horizontal(classes="field"):
                yield Label("turns", classes="label")
                yield TextInput(value=str(DEFAULT_TURNS), id="turns", compact=True)
            yield Label("", id="error")

    def on_mount(self) -> None:
        briefs = self.query_one("#briefs", OptionList)
        if briefs.option_count:
            briefs.highlighted = 0
            self._show(briefs.get_option_at_index(0).id)
        else:
            self.query_one("#error", Label).update("This scenario has no [[players]] briefs.")
        briefs.focus()

    def _show(self, brief_id: str | None) -> None:
        if brief_id:
            self.query_one("#brief", Static).update(Text(visible(self.scenario.player(brief_id).brief)))

    @on(OptionList.OptionHighlighted, "#briefs")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option.id)

    @on(OptionList.OptionSelected, "#briefs")
    def chosen(self) -> None:
        self.query_one("#model", Input).focus()

    @on(Input.Submitted, "#model")
    def model_given(self) -> None:
        self.query_one("#endpoint", Input).focus()

    @on(Input.Submitted, "#endpoint")
    def endpoint_given(self) -> None:
        self.query_one("#turns", Input).focus()

    @on(Input.Submitted, "#turns")
    def start(self) -> None:
        briefs = self.query_one("#briefs", OptionList)
        raw = self.query_one("#turns", Input).value.strip()
        if not raw.isdigit() or not 1 <= int(raw) <= 100:
            self.query_one("#error", Label).update("turns: a whole number from 1 to 100")
            return
        if briefs.highlighted is None:
            return
        endpoint = self.query_one("#endpoint", Input).value.strip() or None
        model = self.query_one("#model", Input).value.strip() or None
        if endpoint not in (None, "local") and model is None:
            self.query_one("#error", Label).update("name the player model at this endpoint")
            return
        brief = briefs.get_option_at_index(briefs.highlighted).id
        if brief is not None:  # every brief's option has its id
            self.done(SeatRequest(brief, model, endpoint, int(raw)))

    def action_cancel(self) -> None:
        self.done(None)
