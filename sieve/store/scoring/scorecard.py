"""The score card of one run by one reviewer: item scores, rubric totals, L counts, probes, what is left.

A pure function of the scenario and the annotations in force, so the TUI, the
CLI and the exports all add up the same way. How a score or a total is written
is decided here too, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sieve.scenarios import Item, Rubric, Scale, Scenario, format_value
from sieve.store.record.rows import Annotation
from sieve.store.scoring.counter_cards import CounterCard, Event, ProbeCard
from sieve.store.scoring.standing import has_evidence, unsupported
from sieve.tables import counted

# -- writing scores -------------------------------------------------------------


def number_text(value: float, decimals: bool = False) -> str:
    """A score as a reviewer writes it (½, 1½), or as data writes it (0.5, 1.5)."""
    if decimals:
        value = round(value, 2)
        return str(int(value)) if value == int(value) else str(value)
    return format_value(value)


def range_text(low: float, high: float, decimals: bool = False) -> str:
    """One value, or an undecided range such as 7½–8."""
    if low == high:
        return number_text(low, decimals)
    return f"{number_text(low, decimals)}–{number_text(high, decimals)}"


def total_text(
    low: float,
    high: float,
    bonus: tuple[float, float] | None = None,
    maximum: tuple[float, float | None] | None = None,
    decimals: bool = False,
) -> str:
    """A rubric's total as the seeds print it: `21+3 / 24+4`, or `7½–8 / 8` when half points are undecided."""
    text = range_text(low, high, decimals)
    if bonus is not None:
        text += "+" + range_text(*bonus, decimals)
    if maximum is not None:
        text += " / " + number_text(maximum[0], decimals)
        if maximum[1] is not None:
            text += "+" + number_text(maximum[1], decimals)
    return text


def value_text(annotation: Mapping[str, Any], scale: Scale | None = None, decimals: bool = False) -> str:
    """What an annotation says, whatever its kind: a score on its scale, +1, a chain, a verdict, a mark."""
    kind = annotation["kind"]
    score, high = annotation.get("score"), annotation.get("score_high")
    if kind == "score" and score is not None:
        if scale is not None and not decimals:
            return scale.label(score) + (f"–{scale.label(high)}" if high is not None else "")
        return range_text(score, high if high is not None else score, decimals)
    if kind == "count":
        return f"chain {int(score)}" if score is not None else "+1"
    if kind == "deduction":
        return "−" + number_text(score or 0.0, decimals)
    if kind == "judgment":
        return "written"
    return str(annotation.get("value") or "")


# -- the card -------------------------------------------------------------------


@dataclass
class ItemCard:
    item: Item
    rubric: Rubric
    annotation: Annotation | None = None  # the latest score: the one that counts
    given: list[Annotation] = field(default_factory=list)  # every score in force, oldest first

    @property
    def quoted(self) -> list[Annotation]:
        """Every score of the item in force that has a quote, oldest first: the quotes the item rests on
        (several where an item scored from the whole run was given again on another passage)."""
        return [a for a in self.given if a.get("quote")]

    @property
    def scored(self) -> bool:
        return self.annotation is not None

    @property
    def unsupported(self) -> bool:
        """A judge's score its quote does not back: shown, left out of the totals (see `unsupported`)."""
        return unsupported(self.annotation)

    @property
    def counted(self) -> bool:
        """Scored, and counted in the totals."""
        return self.scored and not self.unsupported

    @property
    def off_step(self) -> bool:
        return bool(self.annotation and self.annotation.get("off_step"))

    @property
    def low(self) -> float:
        return (self.annotation["score"] or 0.0) if self.annotation and self.counted else 0.0

    @property
    def high(self) -> float:
        a = self.annotation
        if a is None or not self.counted:
            return 0.0
        return a["score_high"] if a["score_high"] is not None else a["score"] or 0.0

    @property
    def _at_minimum(self) -> bool:
        return self.item.disqualifying and self.counted and self.low == self.item.scale.minimum

    @property
    def disqualifies(self) -> bool:
        """Scored at a disqualifying item's minimum, on a quote verified on its step (else only claimed)."""
        return self._at_minimum and has_evidence(self.annotation)

    @property
    def disqualification_claimed(self) -> bool:
        """Scored at a disqualifying item's minimum without the evidence to disqualify."""
        return self._at_minimum and not has_evidence(self.annotation)

    @property
    def low_confidence(self) -> bool:
        """Scored without evidence: marked so where the rubric requires a quote, where the quote stands off the
        item's steps, or where the reviewer said so."""
        if self.annotation is None:
            return False
        if self.annotation.get("confidence") == "low" or self.off_step:
            return True
        return self.rubric.quote_required and not has_evidence(self.annotation)

    def text(self, decimals: bool = False) -> str:
        return value_text(self.annotation, self.item.scale, decimals) if self.annotation else "–"


@dataclass
class RubricCard:
    rubric: Rubric
    items: list[ItemCard]
    bonuses: list[ItemCard]
    deduction_annotations: list[Annotation] = field(default_factory=list)
    written: dict[str, Annotation] = field(default_factory=dict)

    @property
    def deductions(self) -> float:
        """Points taken off outside the items, never more than the rubric's maximum for them."""
        total = sum(a["score"] or 0.0 for a in self.deduction_annotations)
        limit = self.rubric.deductions.maximum if self.rubric.deductions else None
        return min(total, limit) if limit is not None else total

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
    def unwritten(self) -> list[str]:
        """The written judgments the rubric asks for that are not written yet."""
        return [w.id for w in self.rubric.written if w.id not in self.written]

    @property
    def deduction_limit(self) -> float | None:
        return self.rubric.deductions.maximum if self.rubric.deductions else None

    @property
    def deductions_capped(self) -> bool:
        """More was taken off than the rubric allows (the total counts its maximum)."""
        limit = self.deduction_limit
        return limit is not None and sum(a["score"] or 0.0 for a in self.deduction_annotations) > limit

    @property
    def complete(self) -> bool:
        """Every item and bonus scored and counted (what a total needs; a written judgment adds no points)."""
        return all(i.counted for i in self.items + self.bonuses)

    @property
    def left_out(self) -> list[str]:
        """The items a judge scored without support: not in the totals."""
        return [i.item.id for i in self.items + self.bonuses if i.unsupported]

    @property
    def low_confidence(self) -> list[str]:
        return [i.item.id for i in self.items + self.bonuses if i.low_confidence]

    def total(self, decimals: bool = False, with_maximum: bool = True) -> str:
        r = self.rubric
        return total_text(
            self.low,
            self.high,
            (self.bonus_low, self.bonus_high) if r.bonuses else None,
            (r.item_maximum, r.bonus_item_maximum if r.bonuses else None) if with_maximum else None,
            decimals,
        )

    def state(self) -> str:
        """What is missing from the total, as written after it: "", " (partial)", " (partial, 2 unsupported left out)"."""
        if self.complete:
            return ""
        left = len(self.left_out)
        return " (partial" + (f", {left} unsupported left out" if left else "") + ")"


@dataclass
class Progress:
    """What is scored and what is left, for one reviewer on one run."""

    items_scored: int
    items: int
    probes_marked: int
    probes: int
    steps_unjudged: int  # listed steps of verdict counters without a verdict
    unanswered: tuple[str, ...]  # yes/no counters without an answer
    low_confidence: int
    unwritten: tuple[str, ...] = ()  # written judgments the rubrics ask for, not written yet
    unsupported: int = 0  # a judge's answers its quotes do not back: left out, so not complete
    off_step: int = 0  # scores whose quote stands off the item's steps (of the low_confidence ones)

    @property
    def complete(self) -> bool:
        return (
            self.items_scored == self.items
            and self.probes_marked == self.probes
            and not self.steps_unjudged
            and not self.unanswered
            and not self.unwritten
            and not self.unsupported
        )

    def text(self) -> str:
        parts = [f"scored {self.items_scored}/{self.items}"]
        if self.probes_marked < self.probes:
            missing = self.probes - self.probes_marked
            parts.append(counted(missing, "probe"))
        if self.steps_unjudged:
            parts.append(f"{counted(self.steps_unjudged, 'step')} unjudged")
        if self.unanswered:
            parts.append(f"{' '.join(self.unanswered)} unanswered")
        if self.unwritten:
            parts.append(f"{' '.join(self.unwritten)} not written")
        if self.low_confidence:
            off = f" ({self.off_step} off its step)" if self.off_step else ""
            parts.append(f"{self.low_confidence} without evidence{off}")
        if self.unsupported:
            parts.append(f"{self.unsupported} unsupported, left out")
        return " · ".join(parts)


@dataclass(frozen=True)
class StepTask:
    """One thing scored from a step (an item, a verdict, a probe, a written judgment) and whether it is done."""

    id: str
    done: bool
    value: str = ""
    # What did it (its quote's verdict is shown beside it); not part of what the task is.
    annotation: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)


@dataclass
class Card:
    rubrics: list[RubricCard]
    counters: list[CounterCard]
    probes: list[ProbeCard]
    notes: list[Annotation]
    # What a person should look at before trusting the card: the run's replies that speak to their judge
    # (RunView.warnings; a card built from annotations alone has none).
    warnings: list[str] = field(default_factory=list)

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

    @property
    def disqualification_claimed(self) -> list[str]:
        """Items and counters whose disqualifying value stands without the evidence to disqualify: the card says
        "disqualification claimed without evidence" (an L1 verdict at a step: `L1 at m4`)."""
        out = [i.item.id for r in self.rubrics for i in r.items + r.bonuses if i.disqualification_claimed]
        for c in self.counters:
            out += [f"{c.counter.id} at {step}" if step else c.counter.id for step in c.disqualification_claimed]
        return out

    def disqualification_text(self) -> str:
        """What the card says of disqualification: `disqualified by L1`, and what is claimed without evidence."""
        parts = []
        if self.disqualified_by:
            parts.append(f"disqualified by {', '.join(self.disqualified_by)}")
        claimed = self.disqualification_claimed
        if claimed:
            parts.append(f"disqualification claimed without evidence: {', '.join(claimed)}")
        return "; ".join(parts)

    @property
    def unsupported(self) -> list[str]:
        """What a judge answered without support (left out of its totals and counts), by id: `T3`, `L1 at m4`."""
        out = [i for r in self.rubrics for i in r.left_out]
        for c in self.counters:
            for e in c.unsupported:
                label = f"{c.counter.id} at {e['value_step']}" if c.counter.kind == "verdict" else c.counter.id
                if label not in out:
                    out.append(label)
        out += [p.probe.id for p in self.probes if p.unsupported]
        return out

    @property
    def unscored(self) -> list[str]:
        """Items, counters with unjudged steps or no answer, unmarked probes, unwritten judgments, by id."""
        out = [i for r in self.rubrics for i in r.unscored]
        out += [c.counter.id for c in self.counters if not c.judged]
        out += [p.probe.id for p in self.probes if p.mark is None]
        out += [w for r in self.rubrics for w in r.unwritten]
        return out

    def at_step(self, scenario: Scenario, step_id: str | None) -> list[StepTask]:
        """What is scored from this step, and whether it is done: items, verdicts, probes, written judgments."""
        if step_id is None:
            return []
        out = []
        for rubric in self.rubrics:
            for card in rubric.items + rubric.bonuses:
                if step_id in card.item.steps:
                    text = card.text() if card.scored else ""
                    out.append(StepTask(card.item.id, card.scored, text, card.annotation))
            for written in rubric.rubric.written:
                steps = {s for i in written.items for s in scenario.item(i)[1].steps}
                if step_id in steps:
                    given = rubric.written.get(written.id)
                    out.append(StepTask(written.id, given is not None, "written", given))
        for counter in self.counters:
            if step_id in counter.counter.steps:
                verdict = counter.verdicts.get(step_id)
                event = next((e for e in reversed(counter.events) if e["value_step"] == step_id), None)
                out.append(StepTask(counter.counter.id, verdict is not None, verdict or "", event))
        for probe in self.probes:
            if step_id in probe.probe.asked:
                out.append(StepTask(probe.probe.id, probe.mark is not None, probe.mark or "", probe.annotation))
        return out

    @property
    def progress(self) -> Progress:
        items = [i for r in self.rubrics for i in r.items + r.bonuses]
        return Progress(
            items_scored=sum(1 for i in items if i.counted),
            items=len(items),
            probes_marked=sum(1 for p in self.probes if p.mark is not None),
            probes=len(self.probes),
            steps_unjudged=sum(len(c.unjudged_steps) for c in self.counters),
            unanswered=tuple(c.counter.id for c in self.counters if c.counter.kind == "yesno" and not c.counted),
            low_confidence=sum(1 for i in items if i.low_confidence and not i.unsupported),
            unwritten=tuple(w for r in self.rubrics for w in r.unwritten),
            unsupported=len(self.unsupported),
            off_step=sum(1 for i in items if i.off_step and not i.unsupported),
        )

    @property
    def complete(self) -> bool:
        """Everything scored: items and bonuses, every listed verdict step, every probe."""
        return self.progress.complete

    @property
    def rubrics_scored(self) -> bool:
        """Every rubric item and bonus has a score (what a blind reveal and a head-to-head wait for)."""
        return all(r.complete for r in self.rubrics)


def build_card(scenario: Scenario, annotations: list[Annotation], turn_steps: dict[str, str] | None = None) -> Card:
    """Add up the annotations in force. The latest score of an item counts.

    `turn_steps` maps turn ids to step ids (RunView.steps), for verdicts recorded on a turn.
    """
    steps = turn_steps or {}
    by_item: dict[str, Annotation] = {}
    given: dict[str, list[Annotation]] = {}
    deductions: dict[str, list[Annotation]] = {}
    written: dict[str, dict[str, Annotation]] = {}
    events: dict[str, list[Event]] = {}
    probes: dict[str, Annotation] = {}
    notes: list[Annotation] = []
    for a in sorted(annotations, key=lambda a: a["id"]):
        kind = a["kind"]
        if kind == "score":
            by_item[a["item"]] = a
            given.setdefault(a["item"], []).append(a)
        elif kind == "deduction":
            deductions.setdefault(a["rubric"] or "", []).append(a)
        elif kind == "judgment":
            written.setdefault(a["rubric"] or "", {})[a["item"]] = a
        elif kind in ("count", "verdict"):
            # A verdict judges a step: the one it names, else the step of the turn it was given on.
            step = a.get("step_id") or steps.get(a["turn_id"] or "") or a["turn_id"] or ""
            events.setdefault(a["item"], []).append(Event(**a, value_step=step))
        elif kind == "probe":
            probes[a["item"]] = a
        elif kind in ("note", "flag"):
            notes.append(a)
    rubrics = [
        RubricCard(
            rubric=r,
            items=[ItemCard(i, r, by_item.get(i.id), given.get(i.id, [])) for i in r.items],
            bonuses=[ItemCard(i, r, by_item.get(i.id), given.get(i.id, [])) for i in r.bonuses],
            deduction_annotations=deductions.get(r.id, []),
            written=written.get(r.id, {}),
        )
        for r in scenario.rubrics
    ]
    played = frozenset(steps.values())
    looked = bool(events) or (all(r.complete for r in rubrics) and set(probes) >= {p.id for p in scenario.probes})
    counters = [CounterCard(c, events.get(c.id, []), played, looked) for c in scenario.counters]
    return Card(rubrics, counters, [ProbeCard(p, probes.get(p.id)) for p in scenario.probes], notes)


def totals_line(card: Card, decimals: bool = False) -> str:
    """Each rubric's total on one line, as Home and the pair summary show them: `T 12+1 / 24+4  R 6 / 12`, and
    what disqualifies the run, as the card says it (`T 4+0 / 24+4  R 0 / 12  DISQUALIFIED by L1`): a total
    shown without it would read as a run still in the field."""
    line = "  ".join(f"{r.rubric.id} {r.total(decimals)}{r.state()}" for r in card.rubrics)
    if card.disqualified_by:
        line += f"  DISQUALIFIED by {', '.join(card.disqualified_by)}"
    return line
