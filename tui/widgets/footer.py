"""The footer: Textual's, rebuilt only when the keys it shows change.

Textual's Footer recomposes itself whenever the screen's bindings are updated (every
focus change, every picker opened and closed): a dozen widgets styled from scratch,
then the screen laid out again. When the shown keys are the same there is nothing to
rebuild; when only which of them are enabled changed, the keys already there are
dimmed or lit in place. While a dialog is open the footer is left as it is: the
dialog covers it and shows its own keys.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from sieve.tui.widgets.overlay import overlay_open


class SieveFooter(Footer):
    _shown: tuple | None = None

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
