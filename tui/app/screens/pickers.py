"""Modal pickers: a rubric item with its score, or an L-axis event (or a probe's mark).

Type to filter (an id such as `T7`, or a word: `knife`), Enter to choose, then the
value from the item's own scale, then an optional note. Escape steps back.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from sieve.safe_text import visible
from sieve.scenarios import Counter, Item, Probe, Rubric, Scenario, format_value
from sieve.tui.app.widgets.overlay import Overlay


@dataclass(frozen=True)
class Choice:
    """What the reviewer chose: an item or counter, its value, a note."""

    target: str  # item, counter or probe id
    rubric: str | None
    kind: str  # score | count | verdict | probe
    score: float | None = None
    score_high: float | None = None
    value: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    label: str
    detail: Text
    values: list[tuple[str, str]]  # (option id, label)
    kind: str
    rubric: str | None = None


def _item_entry(rubric: Rubric, item: Item) -> Entry:
    detail = Text()
    detail.append(f"{item.id}", style="bold")
    if item.title:
        detail.append(f" {visible(item.title)}", style="bold")
    detail.append(visible(f"  ({rubric.id}: {rubric.title}{', bonus' if item.bonus else ''})") + "\n", style="dim")
    detail.append(visible(item.text) + "\n")
    for value, anchor in sorted(item.anchors.items(), reverse=True):
        detail.append(f"  {format_value(value)} = ", style="bold")
        detail.append(visible(anchor) + "\n")
    for rule in item.rules:
        detail.append("  rule: ", style="italic dim")
        detail.append(visible(rule) + "\n", style="dim")
    values = []
    for v in item.scale.values:
        anchor = item.anchors.get(v)
        values.append((f"{v}:", item.scale.label(v) + (f"   {anchor}" if anchor else "")))
    if item.scale.undecided:
        ordered = sorted(item.scale.values)
        for low, high in zip(ordered, ordered[1:]):
            values.append((f"{low}:{high}", f"{item.scale.label(low)}–{item.scale.label(high)}   undecided"))
    label = f"{item.id:<6}{item.title + ': ' if item.title else ''}{item.text}"
    return Entry(item.id, label, detail, values, "score", rubric.id)


def _counter_entry(counter: Counter, max_chain: int) -> Entry:
    detail = Text()
    detail.append(visible(f"{counter.id} {counter.title}"), style="bold")
    detail.append(f"  ({counter.kind})\n", style="dim")
    detail.append(visible(counter.text) + "\n")
    if counter.disqualifying:
        detail.append(
            visible(f"disqualifying on '{counter.disqualify_on}'\n" if counter.disqualify_on else "disqualifying\n"),
            style="red",
        )
    if counter.kind == "count":
        values = [("count:", "one more event, with the selected span as its evidence")]
    elif counter.kind == "chain":
        values = [(f"chain:{n}", f"a chain of {n}") for n in range(2, max_chain + 1)]
    else:
        values = [(f"value:{v}", v) for v in counter.values]
    kind = "count" if counter.kind in ("count", "chain") else "verdict"
    return Entry(counter.id, f"{counter.id:<6}{counter.title}", detail, values, kind)


def _probe_entry(probe: Probe) -> Entry:
    detail = Text()
    detail.append(visible(f"{probe.id} {probe.title}"), style="bold")
    detail.append(f"  ({probe.kind} probe)\n", style="dim")
    detail.append(visible(probe.text) + "\n")
    if probe.expected:
        detail.append(visible(f"expected: {probe.expected}") + "\n", style="italic")
    return Entry(probe.id, f"{probe.id:<9}{probe.title}", detail, [(f"value:{m}", m) for m in probe.marks], "probe")


class Picker(Overlay):
    """Filter → entry → value → note; an overlay on its screen (see widgets/overlay.py)."""

    BINDINGS = [Binding("escape", "back", "Back", id="picker.back")]

    def __init__(self, title: str, entries: list[Entry], quote: str | None, preselect: str | None = None):
        super().__init__()
        self.title_text = title
        self.entries = entries
        self.quote = quote
        self.preselect = preselect
        self.chosen: Entry | None = None
        self.value: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.title_text)))
            quote = Text("quote: ", style="bold")
            quote.append(visible(self.quote) if self.quote else "(nothing selected: no quote)", style="italic")
            yield Static(quote, id="quote")
            yield Input(placeholder="filter: an id (T7) or a word (knife)", id="filter")
            yield OptionList(*self._options(""), id="entries")
            yield Static("", id="detail")
            yield OptionList(id="values")
            yield Input(placeholder="a note (optional); Enter saves", id="note")

    def _options(self, query: str) -> list[Option]:
        words = query.lower().split()
        out = []
        for entry in self.entries:
            haystack = f"{entry.id} {entry.label} {entry.detail.plain}".lower()
            exact = query.strip().lower() == entry.id.lower()
            if exact or all(w in haystack for w in words):
                out.append(Option(Text(visible(entry.label), overflow="ellipsis", no_wrap=True), id=entry.id))
        return out

    def on_mount(self) -> None:
        if self.preselect:
            self._choose(self.preselect)
        else:
            self.query_one("#filter", Input).focus()
            self._highlight_first()

    def _entry(self, entry_id: str) -> Entry:
        return next(e for e in self.entries if e.id == entry_id)

    def _highlight_first(self) -> None:
        entries = self.query_one("#entries", OptionList)
        if entries.option_count:
            entries.highlighted = 0
            self._show_detail(entries.get_option_at_index(0).id)
        else:
            self.query_one("#detail", Static).update("nothing matches")

    def _show_detail(self, entry_id: str | None) -> None:
        if entry_id:
            self.query_one("#detail", Static).update(self._entry(entry_id).detail)

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        entries = self.query_one("#entries", OptionList)
        entries.clear_options()
        entries.add_options(self._options(event.value))
        self._highlight_first()

    @on(Input.Submitted, "#filter")
    def filter_submitted(self) -> None:
        entries = self.query_one("#entries", OptionList)
        if entries.highlighted is not None:
            self._choose(entries.get_option_at_index(entries.highlighted).id)

    @on(OptionList.OptionHighlighted, "#entries")
    def entry_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_detail(event.option.id)

    @on(OptionList.OptionSelected, "#entries")
    def entry_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, entry_id: str) -> None:
        self.chosen = self._entry(entry_id)
        self._show_detail(entry_id)
        values = self.query_one("#values", OptionList)
        values.clear_options()
        values.add_options([Option(Text(visible(label)), id=value_id) for value_id, label in self.chosen.values])
        values.display = True
        values.highlighted = 0
        values.focus()

    @on(OptionList.OptionSelected, "#values")
    def value_selected(self, event: OptionList.OptionSelected) -> None:
        self.value = event.option.id
        note = self.query_one("#note", Input)
        note.display = True
        note.focus()

    @on(Input.Submitted, "#note")
    def note_submitted(self, event: Input.Submitted) -> None:
        self.done(self._result(event.value.strip() or None))

    def _result(self, note: str | None) -> Choice:
        entry, value = self.chosen, self.value or ""
        head, _, rest = value.partition(":")
        if entry.kind == "score":
            high = float(rest) if rest else None
            return Choice(entry.id, entry.rubric, "score", score=float(head), score_high=high, note=note)
        if head == "chain":
            return Choice(entry.id, None, "count", score=float(rest), note=note)
        if head == "count":
            return Choice(entry.id, None, "count", note=note)
        return Choice(entry.id, None, entry.kind, value=rest, note=note)

    def action_back(self) -> None:
        note, values = self.query_one("#note", Input), self.query_one("#values", OptionList)
        if note.display:
            note.display = False
            values.focus()
        elif values.display and not self.preselect:
            values.display = False
            self.chosen = None
            self.query_one("#filter", Input).focus()
        else:
            self.done(None)


def rubric_picker(scenario: Scenario, quote: str | None, preselect: str | None = None) -> Picker:
    entries = [_item_entry(r, i) for r in scenario.rubrics for i in r.all_items()]
    return Picker("Score an item (Enter chooses, Escape goes back)", entries, quote, preselect)


def counter_picker(scenario: Scenario, quote: str | None, max_chain: int, preselect: str | None = None) -> Picker:
    entries = [_counter_entry(c, max_chain) for c in scenario.counters] + [_probe_entry(p) for p in scenario.probes]
    return Picker("Record an L-axis event or mark a probe", entries, quote, preselect)


class Confirm(Overlay, can_focus=True):
    """A question that needs a conscious answer: y (or enter on Yes) confirms, n or escape declines."""

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
