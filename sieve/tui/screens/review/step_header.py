"""The header over Review's transcript: the step being read, what it tests, what is scored from it, and whether
that is done; a search in progress, the next thing offered to score and, one turn at a time, the message before."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.text import Text
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.store.scoring import navigation
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.scorecard import Card
from sieve.tui.screens.review.search import Search
from sieve.tui.widgets.scorecard import VERDICT_CLASSES, put, styles_of, verification_mark
from sieve.tui.widgets.transcript import turn_title

PROMPT_CHARS = 360  # how much of the message before the current turn the header shows


class StepHeader(Static):
    COMPONENT_CLASSES = VERDICT_CLASSES

    def __init__(self, scenario: Scenario, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.scenario = scenario
        self._step_ids = {s.id for s in scenario.steps}
        self._shown: Text | None = None

    def show(
        self,
        step: str | None,
        card: Card | None,
        search: Search,
        offered: Task | None,
        before: Mapping[str, Any] | None,
        mask: Callable[[str], str],
    ) -> None:
        """The header for `step` (None: before the script); `before`, the turn before the one shown, if any."""
        text = Text()
        scenario = self.scenario
        if step is None:
            text.append("before the script", style="bold")
        elif step in self._step_ids:
            scripted = scenario.step(step)
            head = navigation.step_label(scenario, step)  # one run of text: see widgets/scorecard.put
            if scripted.kind != "player":
                head += f" ({scripted.kind})"
            chapter = navigation.chapter_of(scenario, step)
            if chapter:
                head += visible(f" · chapter {chapter[0]}: {chapter[1].title}")
            text.append(head, style="bold")
        else:
            text.append("a message of its own, off the script", style="bold")
        if search.on:
            text.append("   ")
            text.append(visible(search.status()), style="reverse")
        if step in self._step_ids and scenario.step(step).note:
            text.append("\nnote: ", style="bold italic")
            text.append(visible(" ".join(scenario.step(step).note.split())), style="italic")
        here = card.at_step(scenario, step) if card is not None else []
        if here:
            text.append("\nscored here: ", style="bold")
            styles = styles_of(self)
            for task in here:
                put(text, task.id, "bold" if task.done else "", 1)
                if not task.done:
                    put(text, "–", styles("none"), 3)
                    continue
                # ✓ means an exact quote, here as on the card; anything else says what the quote is.
                mark, style = verification_mark(task.annotation)
                if task.value:
                    put(text, visible(task.value), "", 1)
                put(text, "✓" if style == "exact" else mark, styles(style), 3)
        if offered is not None:
            text.append(visible(f"\nnext to score: {offered.label} (i, s or l opens on it)"), style="dim")
        if before is not None:
            text.append("\n" + turn_title(before) + ": ", style="bold dim")
            said = " ".join(mask(before["text"]).split())
            text.append(visible(said if len(said) <= PROMPT_CHARS else "…" + said[-PROMPT_CHARS:]), style="dim")
        # A fixed height (review.tcss): new text needs no layout, only a redraw of these lines; the same text
        # (a save that changes nothing here) not even that.
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)
