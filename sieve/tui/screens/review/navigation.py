"""Moving through a run in Review: turn by turn or the whole transcript, to a step or a chapter, to the next
thing left to score, and from one search hit to the next.

Where the reader is (the turn shown, one turn or all) is this helper's, and the span selected
there as a quote; the header over the transcript says where after every move.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.record.annotations import Quote
from sieve.store.record.rows import Turn
from sieve.store.scoring import navigation
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.tui.screens.pickers import Prompt
from sieve.tui.screens.review.host import Notifies
from sieve.tui.screens.review.search import Search
from sieve.tui.screens.review.step_header import StepHeader
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.transcript import TranscriptView, turn_title


class NavigationHost(Notifies, Protocol):
    """What moving through the run needs of its screen."""

    view: RunView
    scenario: Scenario
    card: Card | None
    offered: Task | None
    search: Search

    @property
    def reviewer(self) -> str: ...
    @property
    def turns(self) -> list[Turn]: ...
    @property
    def transcript(self) -> TranscriptView: ...
    @property
    def header(self) -> StepHeader: ...
    def mask(self, text: str) -> str: ...
    def ask(self, overlay: Overlay, on_done: Callable[[Any], None]) -> None: ...
    def step_changed(self) -> None: ...
    def show_under_cursor(self) -> None: ...
    def show_highlights(self) -> None: ...
    def refresh_bindings(self) -> None: ...


class Navigation:
    """The turn being read (`position` in the run's turns) and whether the whole transcript is shown."""

    def __init__(self, host: NavigationHost) -> None:
        self.host = host
        self.position = 0
        self.whole = False  # all turns in one view, or one at a time

    def current_step(self) -> str | None:
        turns = self.host.turns
        if not turns:
            return None
        return self.host.view.steps.get(turns[self.position]["id"])

    def _shown_turns(self, turns: list[Turn]) -> list[dict[str, Any]]:
        # Masking keeps every length, so offsets in what is shown are offsets in the original.
        return [dict(t, text=self.host.mask(t["text"]), error=None) for t in turns]

    def show_turn(self, position: int) -> None:
        host = self.host
        turns = host.turns
        if not turns:
            host.header.update("This run has no turns yet.")
            return
        before_step = self.current_step()
        self.position = max(0, min(len(turns) - 1, position))
        turn = turns[self.position]
        transcript = host.transcript
        if self.whole:
            if transcript.keys != [t["id"] for t in turns]:
                transcript.set_turns(self._shown_turns(turns))
            transcript.place_cursor(turn["id"], 0)
            top = transcript.text_layout.top(turn["id"])
            transcript.call_after_refresh(transcript.scroll_to, y=top, animate=False)
        else:
            (shown,) = self._shown_turns([turn])
            shown["title"] = f"{turn_title(turn)}   ({self.position + 1} of {len(turns)})"
            transcript.set_turns([shown])
            transcript.place_cursor(turn["id"], 0)
            transcript.scroll_home(animate=False)
        if self.current_step() != before_step:
            host.step_changed()
        self.show_header()
        host.show_under_cursor()  # in the same frame as the turn

    def show_header(self) -> None:
        """The header over the transcript, for the step being read."""
        host = self.host
        before = host.turns[self.position - 1] if not self.whole and self.position > 0 else None
        host.header.show(self.current_step(), host.card, host.search, host.offered, before, host.mask)

    def follow_cursor(self) -> None:
        """In the whole transcript, the turn under the cursor is the current one."""
        cursor = self.host.transcript.cursor
        if self.whole and cursor:
            position = next((i for i, t in enumerate(self.host.turns) if t["id"] == cursor[0]), self.position)
            if position != self.position:
                step = self.current_step()
                self.position = position
                if self.current_step() != step:
                    self.host.step_changed()
                self.show_header()

    def turn(self, delta: int) -> None:
        self.show_turn(self.position + delta)

    def toggle_whole(self) -> None:
        self.whole = not self.whole
        self.show_turn(self.position)

    def _go(self, position: int | None, what: str) -> bool:
        if position is None:
            self.host.notify(f"{what} was not played in this run.", severity="warning")
            return False
        self.show_turn(position)
        return True

    def goto_step(self) -> None:
        scenario = self.host.scenario
        numbers = navigation.step_numbers(scenario)
        hint = f"a number ({min(numbers.values())} to {max(numbers.values())}) or an id ({scenario.steps[-1].id})"
        self.host.ask(Prompt("Go to step", hint), self._goto_step)

    def _goto_step(self, answer: str | None) -> None:
        if answer is None:
            return
        try:
            step = navigation.resolve_step(self.host.scenario, answer)
        except SieveUsageError as exc:
            self.host.notify(str(exc), severity="warning")
            return
        self._go(navigation.position_of_step(self.host.view, step.id), f"Step {step.id}")

    def goto_chapter(self) -> None:
        chapters = self.host.scenario.chapters
        hint = f"a number (1 to {len(chapters)}), an id ({chapters[0].id}) or the start of a title"
        self.host.ask(Prompt("Go to chapter", hint), self._goto_chapter)

    def _goto_chapter(self, answer: str | None) -> None:
        if answer is None:
            return
        scenario = self.host.scenario
        try:
            chapter = navigation.resolve_chapter(scenario, answer)
        except SieveUsageError as exc:
            self.host.notify(str(exc), severity="warning")
            return
        steps = [s.id for s in scenario.steps if s.chapter == chapter.id]
        found = [p for p in (navigation.position_of_step(self.host.view, s) for s in steps) if p is not None]
        self._go(min(found) if found else None, f"Chapter {chapter.id} ({chapter.title})")

    def next_item(self) -> Task | None:
        """Go to the thing left to score that the header offers (else the next from here), on its step, and offer
        it: what the picker should open on."""
        host = self.host
        todo = navigation.tasks(host.scenario, host.card or host.view.card(host.reviewer))
        task = navigation.next_task(todo, self.current_step(), host.offered, host.scenario)
        if task is None:
            host.offered = None
            self.show_header()
            host.notify("Everything is scored on this run: r opens the next run that needs you.")
            return None
        if task.step is not None:
            position = navigation.position_of_step(host.view, task.step)
            if position is not None and self.current_step() != task.step:
                self.show_turn(position)
        host.offered = task
        self.show_header()
        return task

    # -- the selection -----------------------------------------------------------------

    def selected_quote(self) -> Quote | None:
        """The selected span, in its turn's original text."""
        selection = self.host.transcript.selection
        if selection is None:
            return None
        key, start, end = selection
        turn = next(t for t in self.host.turns if t["id"] == key)
        return Quote(key, start, end, turn["text"][start:end])

    def select_span(self, start: int, end: int) -> None:
        """Select characters [start, end) of the current turn (what shift+arrows or the mouse do)."""
        self.host.transcript.select_span(self.host.turns[self.position]["id"], start, end)

    # -- searching -------------------------------------------------------------------

    def search(self) -> None:
        prompt = Prompt(
            "Search the transcript (as sieve search: any order, klic finds klíč, minc finds minci, minc* a start)",
            "words",
            self.host.search.text or "",
        )
        self.host.ask(prompt, self._search)

    def _search(self, answer: str | None) -> None:
        if answer is None:
            return
        host = self.host
        hits = navigation.find(host.view, answer, host.mask)
        if not hits:
            host.notify(f"Not found: {answer}", severity="warning")
            return
        host.search.start(answer, hits, {t["id"]: i for i, t in enumerate(host.turns)}, self.position)
        host.show_highlights()
        host.refresh_bindings()
        self.hit(1)

    def hit(self, delta: int) -> None:
        """The next (or previous) hit: its turn shown and the hit selected, ready to be a quote."""
        hit = self.host.search.step(delta)
        if hit is None:
            return
        position = next(i for i, t in enumerate(self.host.turns) if t["id"] == hit.turn_id)
        if position != self.position or not self.whole:
            self.show_turn(position)
        self.host.transcript.select_span(hit.turn_id, hit.start, hit.end)
        self.show_header()

    def end_search(self) -> None:
        self.host.search.end()
        self.host.show_highlights()
        self.host.refresh_bindings()
        self.show_header()
