"""Small dialogs over the screen: a yes/no question, and a one-line prompt."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, Static

from sieve.safe_text import visible
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.text_input import TextInput


class Confirm(Overlay, can_focus=True):
    """A question that needs a conscious answer: y confirms, n or escape declines."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, message: str):
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(visible(self.message)), id="question")
            yield Static(Text("y  yes      n  no", style="bold"), id="answers")

    def on_mount(self) -> None:
        self.focus()

    def action_answer(self, yes: bool) -> None:
        self.done(yes)


class Prompt(Overlay):
    """One line to type: a step's number, a chapter, words to search for. Enter answers, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, question: str, placeholder: str = "", value: str = ""):
        super().__init__()
        self.question = question
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.question)))
            # Enter answers at once: a key typed right after it (`g 3 enter n`) is Review's, not the prompt's.
            yield TextInput(
                value=self.value, placeholder=visible(self.placeholder), id="answer", on_enter=self.answered
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def answered(self, value: str) -> None:
        self.done(value.strip() or None)

    def action_cancel(self) -> None:
        self.done(None)
