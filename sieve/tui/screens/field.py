"""`sieve review --next`: the runs this reviewer has not finished, one after another.

The screen sits under Review. When the reviewer comes back from a run they have
finished, the next one opens by itself; from one they have not, this screen says
so and waits: enter goes on with it, n skips to the next run. Which run is next
is store.scoring.field's answer, the same as Review's next-run key gets.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header, Static

from sieve.safe_text import one_line
from sieve.store.scoring import field
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.footer import SieveFooter


class FieldScreen(SieveScreen):
    BINDINGS = [
        Binding("enter", "go_on", "Go on", id="field.go_on", tooltip="Go on scoring the run you left"),
        Binding("n", "skip", "Next run", id="field.next", tooltip="Leave this run for later: the next one"),
        Binding("escape", "app.pop_screen", "Home", id="field.home", tooltip="Back to Home"),
    ]

    def __init__(self, scenario: str | None = None, catch: int = 0):
        super().__init__()
        self.scenario = scenario
        self.catch = catch
        self.current: RunView | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="field-status")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line("sieve · the runs left to score" + (f" · {self.scenario}" if self.scenario else ""))
        self.sub_title = one_line(f"reviewer {self.app.reviewer}" + (" · BLIND" if self.app.blind else ""))
        self.call_after_refresh(self.open_next)

    def on_screen_resume(self) -> None:
        if self.current is None:
            return
        if self.current.card(self.app.reviewer).complete:
            self.open_next(after=self.current.id)
        else:
            self.show(f"{self.current.name if self.app.blind else self.current.id[-8:]} is not finished")

    def open_next(self, after: str | None = None) -> None:
        """Open the next run to score in Review, or say that none is left."""
        found = field.next_run(
            self.app.db, self.app.reviewer, blind=self.app.blind, scenario=self.scenario, after=after, catch=self.catch
        )
        if (
            found is None
            and after is not None
            and self.current is not None
            and not self.current.card(self.app.reviewer).complete
        ):
            self.notify("No other run is left to score: this one is the last.")
            return
        if found is None:
            self.current = None
            scope = f" of {self.scenario}" if self.scenario else ""
            self.show(f"Nothing left to score: you have finished every complete run{scope}.")
            return
        self.current = found.view(self.app.db, self.app.reviewer, self.app.blind)
        self.app.push_screen(ReviewScreen(self.current))

    def show(self, headline: str) -> None:
        views = [RunView(self.app.db, run) for run in field.field_runs(self.app.db, self.scenario)]
        standing = field.standings(self.app.db, self.app.reviewer, views)
        finished = sum(1 for s in standing.values() if s.complete)
        text = Text(one_line(headline) + "\n\n", style="bold")
        text.append(f"You have finished {finished} of {len(views)} complete runs.\n\n")
        if self.current is not None:
            text.append(one_line(self.current.card(self.app.reviewer).progress.text()) + "\n\n")
            text.append("enter: go on with it   n: the next run   escape: Home")
        else:
            text.append("escape: Home")
        self.query_one("#field-status", Static).update(text)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("go_on", "skip") and self.current is None:
            return False
        return super().check_action(action, parameters)

    def action_go_on(self) -> None:
        if self.current is not None:
            self.current.refresh()
            self.app.push_screen(ReviewScreen(self.current))

    def action_skip(self) -> None:
        if self.current is not None:
            self.open_next(after=self.current.id)
