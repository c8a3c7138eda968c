"""The counters and probes of a score card: events, verdicts per step, yes/no answers, marks, and what
disqualifies.

Part of the card (store.scoring.scorecard builds it): what counts of a counter is what the evidence rule
lets count. A judge's unsupported events are shown and not counted, a verdict counts only on a step its
counter judges, and a disqualifying verdict disqualifies only on a verified quote on its step.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass, field
from typing import Any

from sieve.scenarios import Counter, Probe
from sieve.store.record.rows import Annotation
from sieve.store.scoring.standing import has_evidence, unsupported
from sieve.tables import counted


class Event(Annotation):
    """A count or a verdict as its counter reads it: with the step it judges."""

    value_step: str


@dataclass
class CounterCard:
    counter: Counter
    events: list[Event] = field(default_factory=list)  # every event in force, a judge's unsupported ones too
    played: frozenset[str] = frozenset()  # the steps the run holds
    # The reviewer has been counting on this run (an event of some counter), or has scored the rest of the card:
    # only then does a count or chain of nothing read as 0 (none seen) rather than as not counted.
    looked: bool = True

    @property
    def counted(self) -> list[Event]:
        """The events that count: not a judge's unsupported ones, and a verdict only on a step its counter
        judges (where the run holds those steps; a live run follows no script)."""
        listed = (
            set(self.counter.steps)
            if self.counter.kind == "verdict" and self.played & set(self.counter.steps)
            else None
        )
        return [e for e in self.events if not unsupported(e) and (listed is None or e["value_step"] in listed)]

    @property
    def unsupported(self) -> list[Event]:
        return [e for e in self.events if unsupported(e)]

    @property
    def value(self) -> Any:
        """count: events; chain: the longest; yesno: the last answer; verdict: tallies per value."""
        kind = self.counter.kind
        counted = self.counted
        if kind == "count":
            return len(counted)
        if kind == "chain":
            return max((int(e["score"] or 0) for e in counted), default=0)
        if kind == "yesno":
            return counted[-1]["value"] if counted else None
        tally = Tally(self.verdicts.values())
        return {value: tally.get(value, 0) for value in self.counter.values}

    @property
    def latest(self) -> dict[str, Event]:
        """verdict counters: step -> the latest verdict that counts there; yes/no: "" -> the last answer."""
        out: dict[str, Event] = {}
        for event in self.counted:
            out[event["value_step"] if self.counter.kind == "verdict" else ""] = event
        return out

    @property
    def verdicts(self) -> dict[str, str | None]:
        """verdict counters: step -> the latest verdict given on it."""
        return {step: event["value"] for step, event in self.latest.items()}

    @property
    def unjudged_steps(self) -> list[str]:
        """The listed steps of a verdict counter that have no verdict yet."""
        if self.counter.kind != "verdict":
            return []
        judged = self.verdicts
        return [s for s in self.counter.steps if s not in judged]

    @property
    def judged(self) -> bool:
        if self.counter.kind == "verdict":
            return not self.unjudged_steps
        if self.counter.kind == "yesno":
            return bool(self.counted)
        return not self.unsupported  # a count or a chain of nothing is an answer: none seen

    @property
    def answered(self) -> bool:
        """Something to show: a verdict on some step, an answer, or a count the reviewer has looked for (nothing
        recorded on a run nobody counted on reads as not counted, never as 0)."""
        if self.counter.kind == "verdict":
            return bool(self.verdicts)
        if self.counter.kind == "yesno":
            return bool(self.counted)
        return bool(self.counted) or self.looked

    def _disqualifying(self) -> list[Event]:
        """The latest verdicts (or the answer) that say the run is disqualified, backed or not."""
        on = self.counter.disqualify_on
        if not self.counter.disqualifying or on is None or self.counter.kind not in ("verdict", "yesno"):
            return []
        return [e for e in self.latest.values() if e["value"] == on]

    @property
    def disqualifies(self) -> bool:
        """A verdict (or answer) that disqualifies, on a quote verified on its step: only that disqualifies."""
        return any(has_evidence(e) for e in self._disqualifying())

    @property
    def disqualification_claimed(self) -> list[str]:
        """The steps (a yes/no answer: "") where a disqualifying verdict stands without the evidence for it."""
        return [
            e["value_step"] if self.counter.kind == "verdict" else ""
            for e in self._disqualifying()
            if not has_evidence(e)
        ]

    def display(self) -> str:
        if not self.answered:
            return "not counted" if self.counter.kind in ("count", "chain") else "not judged"
        value = self.value
        if isinstance(value, dict):
            text = " / ".join(f"{n} {v}" for v, n in value.items())
            missing = len(self.unjudged_steps)
            return text + (f" ({counted(missing, 'step')} not judged)" if missing else "")
        if value is None:
            return "not judged"
        return str(value)


@dataclass
class ProbeCard:
    probe: Probe
    annotation: Annotation | None = None

    @property
    def unsupported(self) -> bool:
        return unsupported(self.annotation)

    @property
    def mark(self) -> str | None:
        """The mark that counts (not a judge's unsupported one)."""
        return self.annotation["value"] if self.annotation and not self.unsupported else None

    @property
    def as_expected(self) -> bool | None:
        if self.probe.expected is None or self.mark is None:
            return None
        return self.mark == self.probe.expected

    def display(self) -> str:
        """The mark; for an expected outcome, whether it came: `granted (expected: refused in character)`."""
        if self.mark is None:
            return "not marked"
        if self.as_expected is None:
            return self.mark
        return self.mark + (" (as expected)" if self.as_expected else f" (expected: {self.probe.expected})")
