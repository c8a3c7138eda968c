"""Pickers over the screen: a rubric item (a deduction, a written judgment) with its score, or a counter's
event (or a probe's mark); a yes/no question; a one-line prompt.

Type to filter (an id such as `T7`, or a word: `knife`), Enter to choose, then the
value from the item's own scale (type it: `2`, `1 0`, `h` for ½, or the first letters
of a verdict), then an optional note. Escape steps back.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.tui.screens.picker_entries import (
    Choice,
    Entry,
    Value,
    choice_of,
    count_entries,
    filter_hint,
    matches,
    score_entries,
    type_ahead,
)
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.text_input import TextInput

__all__ = ["Choice", "Confirm", "Picker", "Prompt", "counter_picker", "every_picker", "rubric_picker"]


class ValueList(OptionList):
    """The values of the chosen entry; typing picks one (see picker_entries.type_ahead)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.values: tuple[Value, ...] = ()
        self.typed = ""

    def show_values(self, values: tuple[Value, ...], highlight: str | None = None) -> None:
        self.values = values
        self.typed = ""
        self.clear_options()
        self.add_options([Option(Text(visible(v.label)), id=v.id) for v in values])
        ids = [v.id for v in values]
        self.highlighted = ids.index(highlight) if highlight in ids else (0 if values else None)

    def on_key(self, event: events.Key) -> None:
        char = event.character
        if not char or not char.isprintable() or char.isspace() or event.key in ("enter", "escape"):
            return
        typed, index, final = type_ahead(self.values, self.typed, char.casefold())
        event.stop()
        event.prevent_default()
        self.typed = typed
        if index is None:
            self.app.bell()
            return
        self.highlighted = index
        if final:  # as if chosen with Enter
            self.typed = ""
            self.action_select()


class Picker(Overlay):
    """Filter → entry → value → note; an overlay on its screen (see widgets/overlay.py).

    `preselect` opens it on an entry (and `value` on one of its values, `note` with a
    note written), as editing an annotation does; `typed` starts the filter with what
    the reviewer typed on the screen.
    """

    BINDINGS = [Binding("escape", "back", "Back", id="picker.back")]

    def __init__(
        self,
        title: str,
        entries: list[Entry],
        quote: str | None,
        preselect: str | None = None,
        *,
        value: str | None = None,
        note: str | None = None,
        typed: str = "",
    ):
        super().__init__()
        self.title_text = title
        self.entries = entries
        self.quote = quote
        self.preselect = preselect
        self.preselect_value = value
        self.preset_note = note
        self.typed = typed
        self.chosen: Entry | None = None
        self.value: str | None = None
        self.started = time.monotonic()  # the time an item takes: from here to the save

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.title_text)))
            quote = Text("quote: ", style="bold")
            quote.append(visible(self.quote) if self.quote else "(nothing selected: no quote)", style="italic")
            yield Static(quote, id="quote")
            yield TextInput(
                value=self.typed, placeholder=visible(filter_hint(self.entries)), id="filter", select_on_focus=False
            )
            yield OptionList(*self._options(self.typed), id="entries")
            yield Static("", id="detail")
            yield ValueList(id="values")
            yield TextInput(placeholder="a note (optional); Enter saves", id="note")

    def _options(self, query: str) -> list[Option]:
        return [
            Option(Text(visible(e.label), overflow="ellipsis", no_wrap=True), id=e.id)
            for e in self.entries
            if matches(e, query)
        ]

    def on_mount(self) -> None:
        if self.preselect:
            self._choose(self.preselect)
        else:
            search = self.query_one("#filter", Input)
            search.focus()
            search.cursor_position = len(search.value)
            self._highlight_first()

    def _entry(self, entry_id: str) -> Entry:
        return next(e for e in self.entries if e.id == entry_id)

    def _highlight_first(self) -> None:
        entries = self.query_one("#entries", OptionList)
        if entries.option_count:
            # An entry whose id is exactly what was typed comes first (T1 before T10).
            typed = self.query_one("#filter", Input).value.strip().casefold()
            ids = [(entries.get_option_at_index(i).id or "").casefold() for i in range(entries.option_count)]
            entries.highlighted = ids.index(typed) if typed in ids else 0
            self._show_detail(entries.get_option_at_index(entries.highlighted).id)
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

    def _choose(self, entry_id: str | None) -> None:
        if entry_id is None:  # every entry's option has its id
            return
        self.chosen = self._entry(entry_id)
        self._show_detail(entry_id)
        values = self.query_one("#values", ValueList)
        if not self.chosen.values:  # a written judgment: its text is all there is
            values.display = False
            self._ask_note("the written judgment; Enter saves")
            return
        values.show_values(self.chosen.values, self.preselect_value)
        values.display = True
        values.focus()

    @on(OptionList.OptionSelected, "#values")
    def value_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.value = event.option.id
        self._ask_note("a note (optional); Enter saves")

    def _ask_note(self, placeholder: str) -> None:
        note = self.query_one("#note", Input)
        note.placeholder = placeholder
        if self.preset_note and not note.value:
            note.value = self.preset_note
        note.display = True
        note.focus()

    @on(Input.Submitted, "#note")
    def note_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip() or None
        if self.chosen is None:  # the note is asked for once an entry is chosen
            return
        if self.chosen.kind == "judgment" and text is None:
            self.app.bell()  # a written judgment is its text
            return
        self.done(choice_of(self.chosen, self.value or "", text, self.started))

    def action_back(self) -> None:
        note, values = self.query_one("#note", Input), self.query_one("#values", ValueList)
        if note.display and self.chosen is not None and self.chosen.values:
            note.display = False
            values.focus()
        elif (note.display or values.display) and not self.preselect:
            note.display = values.display = False
            self.chosen = None
            self.value = None
            self.query_one("#filter", Input).focus()
        else:
            self.done(None)


def rubric_picker(scenario: Scenario, quote: str | None, preselect: str | None = None, **kwargs) -> Picker:
    entries = score_entries(scenario)
    return Picker("Score an item (Enter chooses, Escape goes back)", entries, quote, preselect, **kwargs)


def counter_picker(
    scenario: Scenario, quote: str | None, max_chain: int, preselect: str | None = None, **kwargs
) -> Picker:
    entries = count_entries(scenario, max_chain)
    title = f"Record an event of {scenario.counters_name}" + (" or mark a probe" if scenario.probes else "")
    return Picker(title, entries, quote, preselect, **kwargs)


def every_picker(scenario: Scenario, quote: str | None, max_chain: int, typed: str) -> Picker:
    """Everything that can be scored, the filter started with what was typed on the screen."""
    entries = score_entries(scenario) + count_entries(scenario, max_chain)
    return Picker("Score or count (Enter chooses, Escape goes back)", entries, quote, typed=typed)


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


class Prompt(Overlay):
    """One line to type: a step's number, a chapter, words to search for. Enter answers, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, question: str, placeholder: str = "", value: str = ""):
        super().__init__()
        self.question = question
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(visible(self.question)))
            yield TextInput(value=self.value, placeholder=visible(self.placeholder), id="answer")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def answered(self, event: Input.Submitted) -> None:
        event.stop()
        self.done(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.done(None)
