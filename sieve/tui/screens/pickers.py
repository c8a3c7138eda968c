"""Pickers over the screen: a rubric item (a deduction, a written judgment) with its score, or a counter's
event (or a probe's mark), and the quote it will be saved with.

The picker shows the item it will save: opened on an item (`i`, `s` or `l` on the item offered, an
edit), that item is highlighted and its text, anchors and values shown. The keys cannot turn into
a value by accident:

- letters type into the filter (an id such as `T7`, or a word: `knife`), wherever the focus is;
  ↑↓ and Enter choose the entry;
- a value is chosen by the key shown beside it (its digit; `h` for ½, which Enter then takes),
  or by ↑↓ and Enter; a value that disqualifies the run is asked about before it is saved
  (review/annotating.py);
- then an optional note, Enter saves (↑ goes back to the values);
- `.` selects the sentence under the transcript's cursor as the quote, `>` extends it to the next
  sentence, ctrl+shift+←/→ by words: the quote shown is the one saved;
- Escape closes the picker, in one press, whatever stage it is at.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.tui.screens.dialogs import Confirm, Prompt
from sieve.tui.screens.picker_entries import (
    Choice,
    Entry,
    choice_of,
    count_entries,
    filter_hint,
    matches,
    score_entries,
)
from sieve.tui.screens.picker_parts import (
    QUOTE_HINT,
    EntryList,
    FilterInput,
    NoteInput,
    Reselect,
    ValueList,
    quote_move,
)
from sieve.tui.widgets.overlay import Overlay

__all__ = ["Choice", "Confirm", "Picker", "Prompt", "ValueList", "counter_picker", "every_picker", "rubric_picker"]


class Picker(Overlay):
    """Filter → entry → value → note; an overlay on its screen (see widgets/overlay.py).

    `preselect` opens it on an entry (and `value` on one of its values, `note` with a
    note written), as `i` and editing an annotation do; `typed` starts the filter with
    what the reviewer typed on the screen. `reselect` moves the transcript's selection
    (the quote keys) and says the quote it leaves.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    keep = True  # once made, hidden when done and shown again (Overlay.keep): opening it mounts nothing

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
        reselect: Reselect | None = None,
    ):
        super().__init__()
        self.setup(title, entries, quote, preselect, value=value, note=note, typed=typed, reselect=reselect)

    def setup(
        self,
        title: str,
        entries: list[Entry],
        quote: str | None,
        preselect: str | None = None,
        *,
        value: str | None = None,
        note: str | None = None,
        typed: str = "",
        reselect: Reselect | None = None,
    ) -> Picker:
        """What to offer the next time it opens (the constructor's arguments); returns the picker."""
        self.title_text = title
        self.entries = entries
        self.quote = quote
        self.preselect = preselect
        self.preselect_value = value
        self.preset_note = note
        self.typed = typed
        self.reselect = reselect
        self.chosen: Entry | None = None
        self.value: str | None = None
        self.listed_for: str | None = None  # the filter the entries listed were found for
        self.started = time.monotonic()  # the time an item takes: from here to the save
        return self

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("", id="heading")
            yield Static(self._quote_text(), id="quote")
            yield FilterInput(
                value=self.typed,
                placeholder=visible(filter_hint(self.entries)),
                id="filter",
                select_on_focus=False,
                on_enter=lambda _: self.submit_filter(),
            )
            yield EntryList(*self._options(self.typed), id="entries")
            yield Static("", id="detail")
            yield ValueList(id="values")
            yield NoteInput(
                placeholder="a note (optional); enter saves, ↑ another value", id="note", on_enter=self.submit_note
            )

    def _options(self, query: str) -> list[Option]:
        self.listed_for = query
        return [
            Option(Text(visible(e.label), overflow="ellipsis", no_wrap=True), id=e.id)
            for e in self.entries
            if matches(e, query)
        ]

    def _list_entries(self) -> None:
        """The entries the filter holds now (at once, when a key needs them before Input.Changed is handled)."""
        query = self.query_one("#filter", Input).value
        if query == self.listed_for:
            return
        entries = self.query_one("#entries", OptionList)
        entries.clear_options()
        entries.add_options(self._options(query))
        if self.chosen is None:
            self._highlight_first()

    def on_mount(self) -> None:
        self._start()

    def reopen(self) -> None:
        """Shown again (a kept overlay): everything as `setup` said, nothing left of the last time."""
        self.started = time.monotonic()
        search = self.query_one("#filter", Input)
        with search.prevent(Input.Changed):  # the entries are listed here, once
            search.value = self.typed
        search.placeholder = visible(filter_hint(self.entries))
        entries = self.query_one("#entries", OptionList)
        entries.clear_options()
        entries.add_options(self._options(self.typed))
        note = self.query_one("#note", Input)
        note.value = ""
        note.placeholder = "a note (optional); enter saves, ↑ another value"
        note.display = False
        self.query_one("#values", ValueList).display = False
        self.query_one("#quote", Static).update(self._quote_text())
        self._start()

    def _start(self) -> None:
        if self.preselect:
            self._choose(self.preselect)
        else:
            self._to_filter()
            self._highlight_first()

    # -- what the picker says ---------------------------------------------------------

    def _quote_text(self) -> Text:
        text = Text("quote: ", style="bold")
        text.append(visible(self.quote) if self.quote else "(nothing selected: no quote)", style="italic")
        if self.reselect is not None:
            text.append("\n" + QUOTE_HINT, style="dim")
        return text

    def _say(self) -> None:
        """The heading: what the picker will save, and what the keys do at this stage."""
        chosen = self.chosen
        if chosen is None:
            what = f"{self.title_text}: type to filter, ↑↓ and enter choose, escape cancels"
        elif self.query_one("#note", Input).display:
            value = next((v for v in chosen.values if v.id == self.value), None)
            said = f" = {value.label.split('   ')[0]}" if value else ""
            what = f"{chosen.id}{said}: enter saves it" + ("; ↑ another value" if chosen.values else "")
            what += "; escape cancels"
        else:
            what = f"{chosen.id}: its value by its key (bold), or ↑↓ and enter; a letter filters; escape cancels"
        self.query_one("#heading", Label).update(Text(visible(what), style="bold"))

    def _entry(self, entry_id: str) -> Entry:
        return next(e for e in self.entries if e.id == entry_id)

    def _show_detail(self, entry_id: str | None) -> None:
        if entry_id:
            self.query_one("#detail", Static).update(self._entry(entry_id).detail)

    # -- the quote ----------------------------------------------------------------------

    def quote_key(self, event: events.Key) -> bool:
        """A key that moves the quote (`.`, `>`, ctrl+shift+←→): moved, and shown. False: not such a key."""
        move = quote_move(event)
        if move is None or self.reselect is None:
            return False
        self.quote = self.reselect(move)
        self.query_one("#quote", Static).update(self._quote_text())
        return True

    # -- choosing an entry ----------------------------------------------------------------

    def _to_filter(self) -> None:
        search = self.query_one("#filter", Input)
        self.screen.set_focus(search)
        search.cursor_position = len(search.value)
        self._say()

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

    def move_entry(self, delta: int) -> None:
        """↑↓ in the filter: the entry highlighted above or below."""
        entries = self.query_one("#entries", OptionList)
        if entries.option_count:
            current = entries.highlighted if entries.highlighted is not None else -delta
            entries.highlighted = max(0, min(entries.option_count - 1, current + delta))

    def refilter(self, char: str, keep: bool = False) -> None:
        """A letter typed while the values (or the entries) had the keys: the chosen entry is dropped, and the
        filter begins with the letter (`keep`: goes on with it). Nothing chosen so far is saved."""
        self.chosen = None
        self.value = None
        self.query_one("#values", ValueList).display = False
        self.query_one("#note", Input).display = False
        search = self.query_one("#filter", Input)
        search.value = (search.value if keep else "") + char  # Input.Changed filters the entries
        self._to_filter()

    @on(Input.Changed, "#filter")
    def filter_changed(self) -> None:
        self._list_entries()  # what the filter holds now: a later key may have changed it again since

    def submit_filter(self) -> None:
        """Enter in the filter (at once, from the key: the keys typed after it go to the stage it opens)."""
        self._list_entries()
        entries = self.query_one("#entries", OptionList)
        if entries.highlighted is not None:
            self._choose(entries.get_option_at_index(entries.highlighted).id)
        else:
            self.app.bell()

    @on(OptionList.OptionHighlighted, "#entries")
    def entry_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Once an entry is chosen, the detail is the chosen one's, whatever the list highlights.
        if self.chosen is None:
            self._show_detail(event.option.id)

    @on(OptionList.OptionSelected, "#entries")
    def entry_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)  # a click (enter is taken at once: choose_highlighted)

    def choose_highlighted(self, which: str) -> None:
        """Enter on the entries or the values, at once."""
        options = self.query_one(f"#{which}", OptionList)
        if options.highlighted is None:
            self.app.bell()
            return
        chosen = options.get_option_at_index(options.highlighted).id
        if which == "entries":
            self._choose(chosen)
        else:
            self.pick_value(chosen)

    def _choose(self, entry_id: str | None) -> None:
        if entry_id is None:  # every entry's option has its id
            return
        self.chosen = self._entry(entry_id)
        self.value = None
        entries = self.query_one("#entries", OptionList)
        try:
            entries.highlighted = entries.get_option_index(entry_id)
        except OptionDoesNotExist:  # filtered out of the list: the heading and the detail still name it
            entries.highlighted = None
        self._show_detail(entry_id)
        values = self.query_one("#values", ValueList)
        self.query_one("#note", Input).display = False
        if not self.chosen.values:  # a written judgment: its text is all there is
            values.display = False
            self._ask_note("the written judgment; enter saves")
            return
        values.show_values(self.chosen.values, self.preselect_value)
        values.display = True
        self.screen.set_focus(values)
        self._say()

    # -- the value and the note ---------------------------------------------------------

    @on(OptionList.OptionSelected, "#values")
    def value_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.pick_value(event.option.id)  # a click (a key picks at once)

    def pick_value(self, value_id: str | None) -> None:
        """A value chosen: the note is asked for next, and has the keys at once."""
        if self.chosen is None or value_id is None:
            return
        self.value = value_id
        self._ask_note("a note (optional); enter saves, ↑ another value")

    def back_to_values(self) -> bool:
        """↑ in the note: the values again. False when there are none (a written judgment)."""
        if self.chosen is None or not self.chosen.values:
            return False
        self.query_one("#note", Input).display = False
        self.value = None
        self.screen.set_focus(self.query_one("#values", ValueList))
        self._say()
        return True

    def _ask_note(self, placeholder: str) -> None:
        note = self.query_one("#note", Input)
        note.placeholder = placeholder
        if self.preset_note and not note.value:
            note.value = self.preset_note
        note.display = True
        self.screen.set_focus(note)
        self._say()

    def submit_note(self, value: str) -> None:
        """Enter in the note: saved (at once, from the key)."""
        text = value.strip() or None
        if self.chosen is None:  # the note is asked for once an entry is chosen
            return
        if self.chosen.kind == "judgment" and text is None:
            self.app.bell()  # a written judgment is its text
            return
        self.done(choice_of(self.chosen, self.value or "", text, self.started))

    def action_cancel(self) -> None:
        self.done(None)


def rubric_picker(
    scenario: Scenario, quote: str | None, preselect: str | None = None, *, into: Picker | None = None, **kwargs
) -> Picker:
    """The rubric items, deductions and written judgments; `into`: the kept picker to set up rather than a new one."""
    return _picker(into, "Score an item", score_entries(scenario), quote, preselect, **kwargs)


def counter_picker(
    scenario: Scenario,
    quote: str | None,
    max_chain: int,
    preselect: str | None = None,
    *,
    into: Picker | None = None,
    **kwargs,
) -> Picker:
    entries = count_entries(scenario, max_chain)
    if not scenario.counters:  # a scenario with probes only (story-5): nothing to record an event of
        title = "Mark a probe"
    else:
        title = f"Record an event of {scenario.counters_name}" + (" or mark a probe" if scenario.probes else "")
    return _picker(into, title, entries, quote, preselect, **kwargs)


def every_picker(
    scenario: Scenario,
    quote: str | None,
    max_chain: int,
    typed: str,
    preselect: str | None = None,
    *,
    into: Picker | None = None,
    **kwargs,
) -> Picker:
    """Everything that can be scored, the filter started with what was typed on the screen (or open on `preselect`)."""
    entries = score_entries(scenario) + count_entries(scenario, max_chain)
    return _picker(into, "Score or count", entries, quote, preselect, typed=typed, **kwargs)


def _picker(into: Picker | None, *args, **kwargs) -> Picker:
    return into.setup(*args, **kwargs) if into is not None else Picker(*args, **kwargs)
