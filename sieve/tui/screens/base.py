"""What every screen of sieve shares: background work that fails visibly, and dialogs over the screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import getters
from textual.binding import Binding
from textual.screen import Screen

from sieve.tui.memory import settle_memory
from sieve.tui.widgets.overlay import Overlay, open_overlay, overlay_open
from sieve.tui.workers import ReportsWorkerErrors

if TYPE_CHECKING:
    from sieve.tui.app import SieveApp


class SieveScreen(ReportsWorkerErrors, Screen):
    """A screen whose workers' failures reach the user (see sieve.tui.workers).

    While a dialog is open over it (an Overlay), the screen's own keys are the dialog's.
    """

    if TYPE_CHECKING:  # what mypy knows of self.app: sieve's app, with its db, reviewer and the rest
        app = getters.app(SieveApp)

    _own_actions_found: ClassVar[frozenset[str] | None] = None  # each class's own (see _own_actions)

    def on_screen_resume(self) -> None:
        # (Textual calls this as well as a subclass's own.) Once the screen is drawn, what it
        # loaded (a run of 500 turns, a field of 300) is moved out of the collector's way:
        # otherwise each full collection walks it again and a key press now and then takes
        # 60 ms instead of 12.
        self.call_after_refresh(settle_memory)

    def on_unmount(self) -> None:
        # A screen that goes is collected once it is gone (its widgets refer to each other in
        # cycles, which only the collector frees), and what is left frozen again.
        self.app.set_timer(0.5, settle_memory)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if overlay_open(self) and action in self._own_actions():
            return False
        return True

    @classmethod
    def _own_actions(cls) -> frozenset[str]:
        """The actions of the screen's own keys, worked out once per class (asked for every key the footer shows)."""
        own = cls.__dict__.get("_own_actions_found")
        if own is None:
            own = frozenset((b.action if isinstance(b, Binding) else b[1]).split("(")[0] for b in cls.BINDINGS)
            cls._own_actions_found = own
        return own

    def open_dialog(self, overlay: Overlay, on_done: Callable[[Any], None], focus: Any = None) -> None:
        """A dialog over the screen; `focus` gets the keys back when it closes, then `on_done(result)` runs."""

        def closed(result: Any) -> None:
            if focus is not None:
                # At once, not deferred as focus() is: were the dialog's input still focused when it is
                # removed, Textual would hand the focus to the widget before it (Review's list of annotations).
                self.set_focus(focus)
            on_done(result)
            self.refresh_bindings()

        overlay.focus_after = focus
        open_overlay(self, overlay, closed)
        self.refresh_bindings()
