"""The footer: Textual's, rebuilt only when the keys it shows change.

Textual's Footer recomposes itself whenever the screen's bindings are updated,
which happens on every focus change, every modal picker opened and closed. On
Review that rebuild (a dozen widgets styled from scratch) stood between a saved
score and the card on screen; when the shown keys are the same, there is
nothing to rebuild.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class SieveFooter(Footer):
    _shown: tuple | None = None

    def _signature(self, screen: Screen) -> tuple:
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_, binding, enabled, tooltip) in screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen) -> None:
        signature = self._signature(screen)
        if signature == self._shown and self._bindings_ready:
            return
        self._shown = signature
        super().bindings_changed(screen)
