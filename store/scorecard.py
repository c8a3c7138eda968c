"""The score card of one run by one reviewer: item scores, rubric totals, L counts, disqualifications.

A pure function of the scenario and the annotations in force, so the TUI, the
CLI and the exports all add up the same way.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass, field
from typing import Any

from scenarios import Counter, Item, Rubric, Scenario, format_value


@dataclass
class ItemCard:
    item: Item
    rubric: Rubric
    annotation: dict[str, Any] | None = None

    @property
    def scored(self) -> bool:
        return self.annotation is not None

    @property
    def low(self) -> float:
        return self.annotation["score"] if self.annotation else 0.0

    @property
    def high(self) -> float:
        a = self.annotation
        return (a["score_high"] if a["score_high"] is not None else a["score"]) if a else 0.0

    @property
    def disqualifies(self) -> bool:
        return self.item.disqualifying and self.scored and self.low == self.item.scale.minimum


@dataclass
class RubricCard:
    rubric: Rubric
    items: list[ItemCard]
    bonuses: list[ItemCard]
    deductions: float = 0.0

    @property
    def low(self) -> float:
        return sum(i.low for i in self.items) - self.deductions

    @property
    def high(self) -> float:
        return sum(i.high for i in self.items) - self.deductions

    @property
    def bonus_low(self) -> float:
        return sum(i.low for i in self.bonuses)

    @property
    def bonus_high(self) -> float:
        return sum(i.high for i in self.bonuses)

    @property
    def unscored(self) -> list[str]:
        return [i.item.id for i in self.items + self.bonuses if not i.scored]

    @property
    def complete(self) -> bool:
        return not any(not i.scored for i in self.items)


@dataclass
class CounterCard:
    counter: Counter
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def value(self) -> Any:
        """count: events; chain: the longest; yesno: the last answer; verdict: tallies per value."""
        kind = self.counter.kind
        if kind == "count":
            return len(self.events)
        if kind == "chain":
            return max((int(e["score"] or 0) for e in self.events), default=0)
        if kind == "yesno":
            return self.events[-1]["value"] if self.events else None
        latest: dict[str, str] = {}
        for event in self.events:  # the latest verdict per step counts
            latest[event["value_step"]] = event["value"]
        tally = Tally(latest.values())
        return {value: tally.get(value, 0) for value in self.counter.values}

    @property
    def judged_steps(self) -> int:
        return len({e["value_step"] for e in self.events}) if self.counter.kind == "verdict" else 0

    @property
    def disqualifies(self) -> bool:
        on = self.counter.disqualify_on
        if not self.counter.disqualifying or on is None:
            return False
        value = self.value
        return value.get(on, 0) > 0 if isinstance(value, dict) else value == on

    def display(self) -> str:
        value = self.value
        if isinstance(value, dict):
            text = " / ".join(f"{n} {v}" for v, n in value.items())
            missing = len(self.counter.steps) - self.judged_steps
            return text + (f" ({missing} steps not judged)" if missing else "")
        if value is None:
            return "-"
        return str(value)


@dataclass
class Card:
    rubrics: list[RubricCard]
    counters: list[CounterCard]
    probes: dict[str, str | None]
    notes: list[dict[str, Any]]

    def item(self, item_id: str) -> ItemCard:
        for rubric in self.rubrics:
            for card in rubric.items + rubric.bonuses:
                if card.item.id == item_id:
                    return card
        raise KeyError(item_id)

    @property
    def disqualified_by(self) -> list[str]:
        items = [i.item.id for r in self.rubrics for i in r.items + r.bonuses if i.disqualifies]
        return items + [c.counter.id for c in self.counters if c.disqualifies]


def build_card(scenario: Scenario, annotations: list[dict[str, Any]], turn_steps: dict[str, str] | None = None) -> Card:
    """Add up the annotations in force. The latest score of an item counts.

    `turn_steps` maps turn ids to step ids, for verdicts recorded on a turn.
    """
    by_item: dict[str, dict[str, Any]] = {}
    deductions: dict[str, float] = {}
    events: dict[str, list[dict[str, Any]]] = {}
    probes: dict[str, str | None] = {p.id: None for p in scenario.probes}
    notes = []
    for a in sorted(annotations, key=lambda a: a["id"]):
        kind = a["kind"]
        if kind == "score":
            by_item[a["item"]] = a
        elif kind == "deduction":
            deductions[a["rubric"] or ""] = deductions.get(a["rubric"] or "", 0.0) + (a["score"] or 0.0)
        elif kind in ("count", "verdict"):
            # A verdict belongs to the step whose reply it judges; without a map, to the turn.
            step = (turn_steps or {}).get(a["turn_id"] or "") or a["turn_id"] or ""
            events.setdefault(a["item"], []).append({**a, "value_step": step})
        elif kind == "probe":
            probes[a["item"]] = a["value"]
        elif kind in ("note", "flag"):
            notes.append(a)
    rubrics = [
        RubricCard(
            rubric=r,
            items=[ItemCard(i, r, by_item.get(i.id)) for i in r.items],
            bonuses=[ItemCard(i, r, by_item.get(i.id)) for i in r.bonuses],
            deductions=deductions.get(r.id, 0.0),
        )
        for r in scenario.rubrics
    ]
    counters = [CounterCard(c, events.get(c.id, [])) for c in scenario.counters]
    return Card(rubrics, counters, probes, notes)


def total_text(card: RubricCard) -> str:
    """A rubric's total as the seeds print it: 21+3 / 24+4, a range 7.5–8 when half points are undecided."""
    f = format_value
    total = f(card.low) if card.low == card.high else f"{f(card.low)}–{f(card.high)}"
    if card.rubric.bonuses:
        bonus = f(card.bonus_low) if card.bonus_low == card.bonus_high else f"{f(card.bonus_low)}–{f(card.bonus_high)}"
        return f"{total}+{bonus} / {f(card.rubric.item_maximum)}+{f(card.rubric.bonus_item_maximum)}"
    return f"{total} / {f(card.rubric.item_maximum)}"
