"""What the pickers offer: an entry for each rubric item, deduction, written judgment, counter and probe,
with the values it can take and the keys that pick each value.

No widgets here: the entries, what a reviewer chose, and how typed keys find a value.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from sieve.safe_text import visible
from sieve.scenarios import Counter, Item, Probe, Rubric, Scenario, format_value
from sieve.scenarios.model import Deductions, Written


@dataclass(frozen=True)
class Choice:
    """What the reviewer chose: an item, deduction, judgment, counter or probe, its value, a note."""

    target: str  # what the annotation is about: item, rubric (a deduction), written judgment, counter, probe
    rubric: str | None
    kind: str  # score | count | verdict | probe | deduction | judgment
    score: float | None = None
    score_high: float | None = None
    value: str | None = None
    note: str | None = None
    started: float = field(default_factory=time.monotonic)  # when the picker opened (time per item)


@dataclass(frozen=True)
class Value:
    id: str  # how the picker reads it back: "2.0:", "0.5:1.0", "chain:3", "value:annulled", "deduct:0.5"
    label: str
    keys: str = ""  # what typing picks it: "2", "½", "1½", "3", "annulled"; empty: arrows only


@dataclass(frozen=True)
class Entry:
    id: str  # what the reviewer types to find it
    label: str
    detail: Text
    values: tuple[Value, ...]  # none: a written judgment, only its text
    kind: str
    rubric: str | None = None
    target: str = ""  # the annotation's item, when it is not the entry's id (a deduction names its rubric)

    @property
    def item(self) -> str:
        return self.target or self.id


def score_value_id(low: float, high: float | None = None) -> str:
    return f"{float(low)}:{'' if high is None else float(high)}"


def value_id_of(annotation: Mapping[str, Any]) -> str | None:
    """The picker's value id for what an annotation holds (to open the picker on it)."""
    kind, score, high = annotation["kind"], annotation.get("score"), annotation.get("score_high")
    if kind == "score" and score is not None:
        return score_value_id(score, high)
    if kind == "deduction" and score is not None:
        return f"deduct:{float(score)}"
    if kind == "count":
        return f"chain:{int(score)}" if score is not None else "count:"
    if kind in ("verdict", "probe"):
        return f"value:{annotation.get('value')}"
    return None


def _item_entry(rubric: Rubric, item: Item) -> Entry:
    detail = Text()
    # Gaps end a run rather than begin one (see widgets/scorecard.put): pictures of the screen keep them.
    detail.append(item.id + (f" {visible(item.title)}" if item.title else "") + "  ", style="bold")
    detail.append(visible(f"({rubric.id}: {rubric.title}{', bonus' if item.bonus else ''})") + "\n", style="dim")
    detail.append(visible(item.text) + "\n")
    for value, anchor in sorted(item.anchors.items(), reverse=True):
        detail.append("  ")
        detail.append(f"{format_value(value)} = ", style="bold")
        detail.append(visible(anchor) + "\n")
    for rule in item.rules:
        detail.append("  ")
        detail.append("rule: ", style="italic dim")
        detail.append(visible(rule) + "\n", style="dim")
    values = []
    for v in item.scale.values:
        anchored = item.anchors.get(v)
        label = item.scale.label(v)
        values.append(Value(score_value_id(v), label + (f"   {anchored}" if anchored else ""), label.casefold()))
    if item.scale.undecided:
        ordered = sorted(item.scale.values)
        for low, high in zip(ordered, ordered[1:]):
            label = f"{item.scale.label(low)}–{item.scale.label(high)}   undecided"
            values.append(Value(score_value_id(low, high), label))
    label = f"{item.id:<6}{item.title + ': ' if item.title else ''}{item.text}"
    return Entry(item.id, label, detail, tuple(values), "score", rubric.id)


def deduction_entry_id(rubric: Rubric) -> str:
    return f"{rubric.id}-deduct"


def _deduction_entry(rubric: Rubric, d: Deductions) -> Entry:
    detail = Text()
    detail.append(visible(f"Deduction from {rubric.id} {rubric.title}") + "  ", style="bold")
    detail.append(f"(steps of {format_value(d.step)}, at most {format_value(d.maximum)} in all)\n", style="dim")
    detail.append(visible(d.text) + "\n")
    for rule in rubric.rules:
        if "deduct" in rule.casefold() or "costs" in rule.casefold():
            detail.append("  ")
            detail.append("rule: ", style="italic dim")
            detail.append(visible(rule) + "\n", style="dim")
    values = []
    n = 1
    while n * d.step <= d.maximum + 1e-9:
        amount = n * d.step
        values.append(Value(f"deduct:{float(amount)}", f"−{format_value(amount)}", format_value(amount)))
        n += 1
    label = f"{deduction_entry_id(rubric):<9}deduction from {rubric.id}: {d.text}"
    return Entry(deduction_entry_id(rubric), label, detail, tuple(values), "deduction", rubric.id, rubric.id)


def _written_entry(rubric: Rubric, written: Written) -> Entry:
    detail = Text()
    detail.append(visible(f"{written.id}: a written judgment of {', '.join(written.items)}") + "  ", style="bold")
    detail.append(visible(f"({rubric.id}: {rubric.title})") + "\n", style="dim")
    detail.append(visible(written.text) + "\n")
    label = f"{written.id:<9}written judgment of {', '.join(written.items)}: {written.text}"
    return Entry(written.id, label, detail, (), "judgment", rubric.id)


def _counter_entry(counter: Counter, max_chain: int) -> Entry:
    detail = Text()
    detail.append(visible(f"{counter.id} {counter.title}"), style="bold")
    detail.append(f"  ({counter.kind})\n", style="dim")
    detail.append(visible(counter.text) + "\n")
    if counter.steps:
        detail.append(visible(f"judged on each of: {' '.join(counter.steps)}") + "\n", style="dim")
    if counter.disqualifying:
        detail.append(
            visible(f"disqualifying on '{counter.disqualify_on}'\n" if counter.disqualify_on else "disqualifying\n"),
            style="red",
        )
    values: tuple[Value, ...]
    if counter.kind == "count":
        values = (Value("count:", "one more event, with the selected span as its evidence"),)
    elif counter.kind == "chain":
        values = tuple(Value(f"chain:{n}", f"a chain of {n}", str(n)) for n in range(2, max_chain + 1))
    else:
        values = tuple(Value(f"value:{v}", v, v.casefold()) for v in counter.values)
    kind = "count" if counter.kind in ("count", "chain") else "verdict"
    return Entry(counter.id, f"{counter.id:<6}{counter.title}", detail, values, kind)


def _probe_entry(probe: Probe) -> Entry:
    detail = Text()
    detail.append(visible(f"{probe.id} {probe.title}"), style="bold")
    detail.append(f"  ({probe.kind} probe)\n", style="dim")
    detail.append(visible(probe.text) + "\n")
    if probe.asked:
        detail.append(visible(f"asked at: {' '.join(probe.asked)}") + "\n", style="dim")
    if probe.expected:
        detail.append(visible(f"expected: {probe.expected}") + "\n", style="italic")
    values = tuple(Value(f"value:{m}", m, m.casefold()) for m in probe.marks)
    return Entry(probe.id, f"{probe.id:<9}{probe.title}", detail, values, "probe")


def score_entries(scenario: Scenario) -> list[Entry]:
    """Every rubric item and bonus, then each rubric's deduction and written judgments."""
    out = []
    for rubric in scenario.rubrics:
        out += [_item_entry(rubric, i) for i in rubric.all_items()]
        if rubric.deductions:
            out.append(_deduction_entry(rubric, rubric.deductions))
        out += [_written_entry(rubric, w) for w in rubric.written]
    return out


def count_entries(scenario: Scenario, max_chain: int) -> list[Entry]:
    """Every counter, then every probe."""
    return [_counter_entry(c, max_chain) for c in scenario.counters] + [_probe_entry(p) for p in scenario.probes]


def choice_of(entry: Entry, value_id: str, note: str | None, started: float) -> Choice:
    """What an entry and a value id mean as an annotation."""
    head, _, rest = value_id.partition(":")
    if entry.kind == "judgment":
        return Choice(entry.item, entry.rubric, "judgment", note=note, started=started)
    if entry.kind == "deduction":
        return Choice(entry.item, entry.rubric, "deduction", score=float(rest), note=note, started=started)
    if entry.kind == "score":
        high = float(rest) if rest else None
        return Choice(entry.item, entry.rubric, "score", score=float(head), score_high=high, note=note, started=started)
    if head == "chain":
        return Choice(entry.item, None, "count", score=float(rest), note=note, started=started)
    if head == "count":
        return Choice(entry.item, None, "count", note=note, started=started)
    return Choice(entry.item, None, entry.kind, value=rest, note=note, started=started)


def filter_hint(entries: list[Entry]) -> str:
    """The filter's placeholder, from the scenario's own items: `filter: an id (T7) or a word (physics)`."""
    items = [e for e in entries if e.kind == "score"] or entries
    if not items:
        return "filter: an id or a word"
    entry = items[len(items) // 2]
    words = re.findall(r"[^\W\d_]{4,}", entry.label[len(entry.id) :])
    word = max(words, key=len) if words else None
    return f"filter: an id ({entry.id})" + (f" or a word ({word.casefold()})" if word else "")


def matches(entry: Entry, query: str) -> bool:
    """An entry whose id is the query, or whose text holds every word of it."""
    words = query.casefold().split()
    if query.strip().casefold() == entry.id.casefold():
        return True
    haystack = f"{entry.id} {entry.label} {entry.detail.plain}".casefold()
    return all(w in haystack for w in words)


def type_ahead(values: tuple[Value, ...], typed: str, char: str) -> tuple[str, int | None, bool]:
    """A key typed in the value list: (what is typed so far, the value it points to, whether that is final).

    Digits and letters pick the value they begin; `h` stands for ½ (`1h` is 1½). When
    one value is left it is final: `2` on 0–2 at once, `1` on 1–10 waits for `0` (10)
    or Enter (1).
    """
    for attempt in (typed + char, char):
        for text in (attempt, attempt[:-1] + "½" if attempt.endswith("h") else None):
            if not text:
                continue
            found = [i for i, v in enumerate(values) if v.keys and v.keys.startswith(text)]
            if found:
                exact = [i for i in found if values[i].keys == text]
                first = exact[0] if exact else found[0]
                return text, first, len(found) == 1
    return "", None, False
