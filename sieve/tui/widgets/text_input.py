"""A one-line text input that is freed when it is removed from a screen that stays, and whose enter answers at once.

Textual's Input subscribes to its screen's text-selection signal with a callback
that holds the input, and never unsubscribes; the signal keeps its subscribers in
a weak dictionary whose values (the callbacks) keep the keys (the inputs) alive,
so every input mounted on a screen would live as long as the screen (CHANGELOG: round 2).

Textual's Input answers enter with a message, handled after the keys already on their way to it:
typed fast (`g`, `3`, `enter`, `n`), the `n` went into the input. Given `on_enter`, enter hands the
text on at once, and a key typed after it goes where the keys are then (widgets/keys_in_flight.py).
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.screen import Screen
from textual.widgets import Input

from sieve.tui.widgets.keys_in_flight import follow_focus


class TextInput(Input):
    """Textual's Input, unsubscribed from its screen's signal and its blink stopped when it is removed; `on_enter`
    takes the text when enter is pressed, at once (else Textual's Input.Submitted says it, later)."""

    def __init__(self, *args, on_enter: Callable[[str], None] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.on_enter = on_enter

    def on_key(self, event: events.Key) -> None:
        if follow_focus(self, event):  # sent here before the keys moved on: not this input's
            return
        if event.key == "enter" and self.on_enter is not None:
            event.stop()
            event.prevent_default()
            self.on_enter(self.value)

    # Textual calls each class's own `_on_mount` / `_on_unmount` along the MRO: these add to Input's and
    # Widget's, and must not call them again.
    def _on_mount(self, event: events.Mount) -> None:
        self._subscribed_to: Screen = self.screen

    def _on_unmount(self) -> None:
        self._subscribed_to.text_selection_started_signal.unsubscribe(self)
        # Its cursor's blink: a timer waiting to be resumed would be collected with the input, still
        # pending ("Task was destroyed but it is pending!").
        if self._blink_timer is not None:
            self._blink_timer.stop()
