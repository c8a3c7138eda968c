"""The parts of a picker that take keys: the filter, the entries, the values and the note (pickers.py puts them
together). Each hands the picker what is its: a letter typed anywhere goes to the filter, a value's key to the
values, a quote key (`.`, `>`, ctrl+shift+←/→) to the quote.

A key that moves the picker on (enter, a value's key) does so at once, not through a message handled
later: keys typed fast after it then go to the stage it opened, and one that reached a part after the
keys had left it is sent on to where they are (widgets/keys_in_flight.follow_focus).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from rich.text import Text
from textual import events
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from sieve.safe_text import visible
from sieve.tui.screens.picker_entries import Value, type_ahead, value_keys
from sieve.tui.widgets.keys_in_flight import follow_focus
from sieve.tui.widgets.text_input import TextInput

# Keys that move the transcript's selection (the quote) while a picker is open: the name of the move.
QUOTE_KEYS = {".": "sentence", ">": "next_sentence", "ctrl+shift+left": "word_left", "ctrl+shift+right": "word_right"}
QUOTE_HINT = ".  a sentence   >  the next one too   ctrl+shift+←→  words"

Reselect = Callable[[str], "str | None"]  # a move of the selection -> the quote it leaves (None: nothing selected)


def quote_move(event: events.Key) -> str | None:
    """The move of the quote a key asks for, if it is one."""
    return QUOTE_KEYS.get(event.key) or QUOTE_KEYS.get(event.character or "")


@runtime_checkable
class Owner(Protocol):
    """What the parts ask of the picker they stand in (pickers.Picker)."""

    def quote_key(self, event: events.Key) -> bool: ...
    def move_entry(self, delta: int) -> None: ...
    def refilter(self, char: str, keep: bool = False) -> None: ...
    def back_to_values(self) -> bool: ...
    def choose_highlighted(self, which: str) -> None: ...
    def pick_value(self, value_id: str | None) -> None: ...


def picker_of(widget: Widget) -> Owner | None:
    """The picker a part belongs to."""
    return next((a for a in widget.ancestors if isinstance(a, Owner)), None)


def _taken(event: events.Key) -> None:
    """The key is handled here: not passed on, and no binding looked up for it."""
    event.stop()
    event.prevent_default()


class FilterInput(TextInput):
    """The filter: ↑↓ move through the entries, the quote keys move the quote, enter chooses (on_enter, at once);
    the rest is typing."""

    def on_key(self, event: events.Key) -> None:
        if follow_focus(self, event):  # typed before the picker moved the keys elsewhere: sent on there
            return
        picker = picker_of(self)
        if event.key in ("up", "down") and picker is not None:
            event.stop()
            event.prevent_default()
            picker.move_entry(-1 if event.key == "up" else 1)
        elif picker is not None and picker.quote_key(event):
            event.stop()
            event.prevent_default()


class NoteInput(TextInput):
    """The note: ↑ goes back to the values (to choose another); while it is empty the quote keys still move the
    quote (a written judgment opens here); everything else is the note's."""

    def on_key(self, event: events.Key) -> None:
        picker = picker_of(self)
        if picker is None or follow_focus(self, event):
            return
        if (event.key == "up" and picker.back_to_values()) or (not self.value and picker.quote_key(event)):
            event.stop()
            event.prevent_default()


class EntryList(OptionList):
    """The entries: what is typed while they have the focus (a click) goes to the filter; enter chooses at once."""

    def on_key(self, event: events.Key) -> None:
        char = event.character
        picker = picker_of(self)
        if picker is None or follow_focus(self, event) or event.key in ("escape", "space"):
            return
        if event.key == "enter":
            _taken(event)
            picker.choose_highlighted("entries")
            return
        if picker.quote_key(event) or (char and char.isprintable() and not char.isspace()):
            event.stop()
            event.prevent_default()
            if quote_move(event) is None:
                picker.refilter(char or "", keep=True)


class ValueList(OptionList):
    """The values of the chosen entry, each with the key that picks it; a letter goes to the filter."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.values: tuple[Value, ...] = ()
        self.keys: set[str] = set()
        self.typed = ""

    def show_values(self, values: tuple[Value, ...], highlight: str | None = None) -> None:
        self.values = values
        self.keys = value_keys(values)
        self.typed = ""
        self.clear_options()
        # The key in bold before each value; where every value begins with its own key (a score 0, 1, 2),
        # that beginning is the key, and no column repeats it.
        column = any(v.key_hint and not v.label.startswith(v.key_hint) for v in values)
        width = max((len(v.key_hint) for v in values), default=0) if column else 0
        options = []
        for v in values:
            line = Text()
            label = visible(v.label)
            if column:
                line.append(v.key_hint.rjust(width) + "  ", style="bold")  # a gap ends a run (widgets/scorecard.put)
            elif v.key_hint:
                line.append(label[: len(v.key_hint)], style="bold")
                label = label[len(v.key_hint) :]
            line.append(label)
            if v.disqualifies:
                line.append("   ⚠ disqualifies the run", style="bold red")
            options.append(Option(line, id=v.id))
        self.add_options(options)
        ids = [v.id for v in values]
        self.highlighted = ids.index(highlight) if highlight in ids else (0 if values else None)

    def on_key(self, event: events.Key) -> None:
        char = event.character
        picker = picker_of(self)
        if picker is None or follow_focus(self, event) or event.key in ("escape", "space"):
            return
        if event.key == "enter":  # the value highlighted, at once: the keys after it go to the note
            _taken(event)
            self.typed = ""
            picker.choose_highlighted("values")
            return
        if picker.quote_key(event):
            event.stop()
            event.prevent_default()
            return
        if not char or not char.isprintable() or char.isspace():
            return
        event.stop()
        event.prevent_default()
        if char not in self.keys:  # not a value's key: it begins a filter
            picker.refilter(char)
            return
        typed, index, final = type_ahead(self.values, self.typed, char.casefold())
        self.typed = typed
        if index is None:
            self.app.bell()
            return
        self.highlighted = index
        if final:  # as if chosen with Enter, and at once
            self.typed = ""
            picker.pick_value(self.values[index].id)
