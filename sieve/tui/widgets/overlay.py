"""Dialogs drawn over their screen rather than as screens of their own.

Closing a modal screen makes Textual redraw every line of the screen below it
from scratch. An overlay is a widget on the screen's top layer: removing it
recomposes the lines it covered from what the widgets below already drew. One
opened again and again (Review's picker, once an item) is kept instead: hidden
when done and shown again, so opening and saving mount and free nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.containers import Container
from textual.widget import Widget

from sieve.tui.memory import forget_removed_widgets


class Overlay(Container):
    """A dialog over the screen; `done(result)` removes it (hides it, when `keep`) and hands the result on."""

    keep = False  # hidden when done, and shown again by open_overlay (after `reopen`), rather than removed

    def __init__(self, *children, on_done: Callable[[Any], None] | None = None, **kwargs) -> None:
        super().__init__(*children, **kwargs)
        self.on_done = on_done
        self.focus_after: Widget | None = None  # who has the keys once it closes
        self._finished = False

    def done(self, result: Any) -> None:
        if self._finished:
            return
        self._finished = True
        callback = self.on_done
        if self.focus_after is not None and self.focus_after.is_attached:
            # Before the dialog goes: else Textual hands the focus to the widget beside it for a moment (Review's
            # list of annotations, which then jumped to its first annotation's quote).
            self.screen.set_focus(self.focus_after)
        # Out of the next frame at once: removal waits its turn in the message queue, and the
        # frame drawn meanwhile (the card just saved) was drawn under the dialog, then again.
        self.display = False
        # And into the next frame's layout: Textual would ask the screen for it in a message handled after the
        # next frame, which then drew the save under the dialog still in its place, and a second frame did it again.
        if self.is_attached:
            self.screen.refresh(layout=True)
        if not self.keep:
            self.remove()
            forget_removed_widgets()  # else Textual keeps what the dialog drew (sieve.tui.memory)
        if callback is not None:
            callback(result)

    def reopen(self) -> None:
        """A kept dialog about to be shown again: its content as it should be now (a subclass's)."""


def open_overlay(screen, overlay: Overlay, on_done: Callable[[Any], None] | None = None) -> None:
    """Show `overlay` over `screen`; `on_done(result)` runs when it closes."""

    def closed(result: Any) -> None:
        screen._overlays = getattr(screen, "_overlays", 1) - 1
        if on_done is not None:
            on_done(result)

    overlay.on_done = closed
    screen._overlays = getattr(screen, "_overlays", 0) + 1
    if overlay.keep and overlay.is_attached and overlay.parent is screen:
        overlay._finished = False
        overlay.reopen()
        overlay.display = True
    else:
        screen.mount(overlay)


def overlay_open(screen) -> bool:
    """Whether a dialog is over the screen (asked for every binding shown: no DOM query)."""
    return getattr(screen, "_overlays", 0) > 0
