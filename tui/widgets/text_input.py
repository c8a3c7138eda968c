"""A one-line text input that is freed when it is removed from a screen that stays.

Textual's Input subscribes to its screen's text-selection signal with a callback
that holds the input, and never unsubscribes; the signal keeps its subscribers in
a weak dictionary whose values (the callbacks) keep the keys (the inputs) alive,
so every input mounted on a screen would live as long as the screen (CHANGELOG: round 2).
"""

from __future__ import annotations

from textual import events
from textual.screen import Screen
from textual.widgets import Input


class TextInput(Input):
    """Textual's Input, unsubscribed from its screen's signal and its blink stopped when it is removed."""

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
