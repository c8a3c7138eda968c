"""What the pickers offer: an entry for each rubric item, deduction, written judgment, counter and probe,
with the values it can take and the keys that pick each value.

No widgets here: the entries, what a reviewer chose, and how typed keys find a value. A value is
picked by digits only (a score its own, `2`; a verdict or a probe's mark its number in the list,
`1` `2`), and `h` for ½ (`1h` is 1½): every key is shown beside its value, and no other letter
picks one, so text typed into a picker by mistake never becomes a value.
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
from sieve.store.scoring.labels import annotation_label

HALF_SIGN, HALF_KEY = "½", "h"  # ½ is typed as h


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
    disqualifies: bool = False  # the value disqualifies the run (the reviewer is asked first)

    def describe(self, scenario: Scenario | None = None) -> str:
        """What the choice says, as undo and a question name it: `T3 = 2`, `L1 = annulled`, `L3 +1`."""
        fields = {"item": self.target, "kind": self.kind, "score": self.score, "score_high": self.score_high}
        return annotation_label({**fields, "value": self.value}, scenario)


@dataclass(frozen=True)
class Value:
    id: str  # how the picker reads it back: "2.0:", "0.5:1.0", "chain:3", "value:annulled", "deduct:0.5"
    label: str
    keys: str = ""  # what typing picks it: "2", "½" (typed h), "1½" (1h), "3"; empty: arrows only
    disqualifies: bool = False  # choosing it disqualifies the run

    @property
    def key_hint(self) -> str:
        """The keys as they are typed (`1h` for 1½), shown beside the value."""
        return self.keys.replace(HALF_SIGN, HALF_KEY)


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
    minimum = item.scale.minimum
    for v in item.scale.values:
        anchored = item.anchors.get(v)
        label = item.scale.label(v)
        out = item.disqualifying and v == minimum  # the card's rule (scorecard.ItemCard.disqualifies)
        # Picked by its number, whatever its label says (a label may be a word: letters never pick).
        values.append(Value(score_value_id(v), label + (f"   {anchored}" if anchored else ""), format_value(v), out))
    if item.scale.undecided:
        ordered = sorted(item.scale.values)
        for low, high in zip(ordered, ordered[1:]):
            label = f"{item.scale.label(low)}–{item.scale.label(high)}   undecided"
            values.append(Value(score_value_id(low, high), label, "", item.disqualifying and low == minimum))
    label = _label(item.id, 6, f"{item.title + ': ' if item.title else ''}{item.text}")
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
    label = _label(deduction_entry_id(rubric), 9, f"deduction from {rubric.id}: {d.text}")
    return Entry(deduction_entry_id(rubric), label, detail, tuple(values), "deduction", rubric.id, rubric.id)


def _written_entry(rubric: Rubric, written: Written) -> Entry:
    detail = Text()
    detail.append(visible(f"{written.id}: a written judgment of {', '.join(written.items)}") + "  ", style="bold")
    detail.append(visible(f"({rubric.id}: {rubric.title})") + "\n", style="dim")
    detail.append(visible(written.text) + "\n")
    label = _label(written.id, 9, f"written judgment of {', '.join(written.items)}: {written.text}")
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
        values = (
            Value("count:", "one more event, with the selected span as its evidence", "1", counter.disqualifying),
        )
    elif counter.kind == "chain":
        values = tuple(
            Value(f"chain:{n}", f"a chain of {n}", str(n), counter.disqualifying) for n in range(2, max_chain + 1)
        )
    else:  # a verdict or a yes/no: picked by its number in the list
        on = counter.disqualify_on if counter.disqualifying else None
        values = tuple(Value(f"value:{v}", v, str(n), v == on) for n, v in enumerate(counter.values, 1))
    kind = "count" if counter.kind in ("count", "chain") else "verdict"
    return Entry(counter.id, _label(counter.id, 6, counter.title), detail, values, kind)


def _probe_entry(probe: Probe) -> Entry:
    detail = Text()
    detail.append(visible(f"{probe.id} {probe.title}"), style="bold")
    detail.append(f"  ({probe.kind} probe)\n", style="dim")
    detail.append(visible(probe.text) + "\n")
    if probe.asked:
        detail.append(visible(f"asked at: {' '.join(probe.asked)}") + "\n", style="dim")
    if probe.expected:
        detail.append(visible(f"expected: {probe.expected}") + "\n", style="italic")
    values = tuple(Value(f"value:{m}", m, str(n)) for n, m in enumerate(probe.marks, 1))
    return Entry(probe.id, _label(probe.id, 9, probe.title), detail, values, "probe")


def _label(entry_id: str, width: int, text: str) -> str:
    """An entry's line: its id in a column `width` wide, and at least one space before the text."""
    return f"{entry_id:<{width - 1}} {text}"


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
    out = any(v.disqualifies for v in entry.values if v.id == value_id)
    how: dict[str, Any] = {"note": note, "started": started, "disqualifies": out}
    if entry.kind == "judgment":
        return Choice(entry.item, entry.rubric, "judgment", **how)
    if entry.kind == "deduction":
        return Choice(entry.item, entry.rubric, "deduction", score=float(rest), **how)
    if entry.kind == "score":
        high = float(rest) if rest else None
        return Choice(entry.item, entry.rubric, "score", score=float(head), score_high=high, **how)
    if head == "chain":
        return Choice(entry.item, None, "count", score=float(rest), **how)
    if head == "count":
        return Choice(entry.item, None, "count", **how)
    return Choice(entry.item, None, entry.kind, value=rest, **how)


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


def value_keys(values: tuple[Value, ...]) -> set[str]:
    """The characters that pick a value of these (digits, and h where a value holds ½); other keys do not."""
    chars = {c for v in values for c in v.keys if c.isdigit()}
    return chars | ({HALF_KEY, HALF_SIGN} if any(HALF_SIGN in v.keys for v in values) else set())


def type_ahead(values: tuple[Value, ...], typed: str, char: str) -> tuple[str, int | None, bool]:
    """A key typed in the value list: (what is typed so far, the value it points to, whether that is final).

    Digits pick the value they begin; `h` stands for ½ (`1h` is 1½). When one value is
    left it is final: `2` on 0–2 at once, `1` on 1–10 waits for `0` (10) or Enter (1). A
    value reached by a letter (h) is never final: Enter takes it, so a word typed by
    mistake cannot choose one.
    """
    for attempt in (typed + char, char):
        for text in (attempt, attempt[:-1] + HALF_SIGN if attempt.endswith(HALF_KEY) else None):
            if not text:
                continue
            found = [i for i, v in enumerate(values) if v.keys and v.keys.startswith(text)]
            if found:
                exact = [i for i in found if values[i].keys == text]
                first = exact[0] if exact else found[0]
                return text, first, len(found) == 1 and not char.isalpha()
    return "", None, False
