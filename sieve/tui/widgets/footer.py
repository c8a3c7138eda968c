"""The footer: Textual's, rebuilt only when the keys it shows change.

Textual's Footer recomposes itself whenever the screen's bindings are updated (every
focus change, every picker opened and closed): a dozen widgets styled from scratch,
then the screen laid out again. When the shown keys are the same there is nothing to
rebuild; when only which of them are enabled changed, the keys already there are
dimmed or lit in place. While a dialog is open the footer is left as it is: the
dialog covers it and shows its own keys.

The keys wrap onto a second (and third) row when one row of the terminal cannot hold them all
(Review has more keys than 160 columns hold): every key a screen shows in its footer is on
screen, as the docs promise, never cut off at the right edge.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from sieve.tui.widgets.overlay import overlay_open

MAX_ROWS = 3  # past this the last row is cut, as one row was


class SieveFooter(Footer):
    DEFAULT_CSS = """
    SieveFooter {
        layout: vertical;
        height: auto;
        max-height: 3;
        HorizontalGroup.footer-row { width: 1fr; height: 1; }
    }
    """
    _shown: tuple | None = None
    _width = 0  # the width the rows were wrapped for

    def compose(self) -> ComposeResult:
        """Textual's keys, put in rows that each fit the footer's width (the palette's key stays at the right)."""
        palette: list[Widget] = []
        keys: list[Widget] = []
        for widget in super().compose():
            (palette if widget.has_class("-command-palette") else keys).append(widget)
        self._width = self.size.width or self.app.size.width
        room = self._width - sum(_width_of(w) + 1 for w in palette)  # its key and the line left of it
        yield from palette
        for row in _rows(keys, room)[:MAX_ROWS]:
            yield HorizontalGroup(*row, classes="footer-row")

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and event.size.width != self._width:
            self.call_after_refresh(self.recompose)

    def _signature(self, screen: Screen) -> tuple:
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen) -> None:
        if self._bindings_ready and self._shown is not None and overlay_open(screen):
            return  # under the dialog until it closes, when the screen's keys are back as they were
        signature = self._signature(screen)
        if signature == self._shown and self._bindings_ready:
            return
        previous, self._shown = self._shown, signature
        if self._bindings_ready and previous is not None and _without_enabled(previous) == _without_enabled(signature):
            self._enable_in_place(signature)
            return
        super().bindings_changed(screen)

    def _enable_in_place(self, signature: tuple) -> None:
        enabled = {(key, action): on for key, action, _, on, _ in signature}
        for footer_key in self.query(FooterKey):
            on = enabled.get((footer_key.key, footer_key.action), True)  # the palette's key
            if footer_key._disabled == on:
                footer_key._disabled = not on  # what a click on it does
                footer_key.set_class(not on, "-disabled")


def _without_enabled(signature: tuple) -> tuple:
    return tuple((key, action, description, tooltip) for key, action, description, _, tooltip in signature)


def _width_of(widget: Widget) -> int:
    """The cells a footer key takes (FooterKey's own padding: a cell each side of the key, one after the words)."""
    if isinstance(widget, FooterKey):
        return cell_len(widget.key_display) + 2 + (cell_len(widget.description) + 1 if widget.description else 0)
    return 0 if widget.has_class("-command-palette") else 12  # a group of keys (none of sieve's): a guess


def _rows(keys: Iterable[Widget], room: int) -> list[list[Widget]]:
    rows: list[list[Widget]] = [[]]
    used = 0
    for key in keys:
        width = _width_of(key)
        if rows[-1] and used + width > room:
            rows.append([])
            used = 0
        rows[-1].append(key)
        used += width
    return rows
