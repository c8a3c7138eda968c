"""The score card beside Review's transcript: the whole card, or (collapsed) only the rubric the step being read
scores. A narrow screen collapses it; `f` says otherwise until pressed again."""

from __future__ import annotations

from collections.abc import Callable

from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import Card
from sieve.tui.widgets.scorecard import ScoreCardView


class ReviewCard(ScoreCardView):
    def __init__(self, scenario: Scenario, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.scenario = scenario
        self.narrow = False  # the screen is narrow (ReviewScreen.NARROW)
        self.full: bool | None = None  # what `f` asked for last; None: as the width decides

    @property
    def collapsed(self) -> bool:
        return not self.full if self.full is not None else self.narrow

    def toggle(self) -> None:
        """`f`: the whole card when it shows one rubric, else one rubric."""
        self.full = self.collapsed

    def show_at(self, card: Card, step: Callable[[], str | None], mask: Callable[[str], str]) -> None:
        """The card, collapsed to the rubric of `step()` (the step being read) when it is collapsed."""
        only = self.rubric_of(step()) if self.collapsed else None
        self.show(card, mask, self.scenario.counters_title, only)

    def rubric_of(self, step: str | None) -> str | None:
        """The rubric whose items the step scores, else the first."""
        for rubric in self.scenario.rubrics:
            if any(step in item.steps for item in rubric.all_items()):
                return rubric.id
        return self.scenario.rubrics[0].id if self.scenario.rubrics else None
