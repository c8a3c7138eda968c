"""Keys typed faster than the screen changes: each goes where the screen shows it goes.

Textual hands a key to the widget focused when the key is read, and that widget handles it later.
Keys typed in a burst (a word typed fast, keys pasted by a terminal) are all handed out before the
first is handled: when the first opens a picker, or moves the picker on to its next stage (a letter
at the values sends the keys to the filter), the others land on a widget that no longer has the
keys, and were lost or misread (a picker's filter left with one letter of a word). The app notes
where each key was sent (`route`); a key that reaches a widget after the focus has left it
(`follow_focus`, for widgets that handle keys themselves), or comes back up to the app unhandled
from a widget that has lost the keys, or from one of the screen's own widgets while a dialog over
the screen is about to take the keys (`at_the_app`), is held and sent on, in the order typed, to the
widget that has the keys now. A key is never handled twice: the one held is stopped where it was.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget

from sieve.tui.widgets.overlay import Overlay, overlay_open

WAIT_FRAMES = 30  # how long held keys wait for a dialog to take the keys (frames) before they are dropped


def route(event: events.Key, target: Any) -> None:
    """Note where the app sends a key it has just read (the widget focused then, or the screen)."""
    event.routed_to = target  # type: ignore[attr-defined]


def _routed_to(event: events.Key) -> Any:
    return getattr(event, "routed_to", None)


def _in_dialog(widget: Any) -> bool:
    return any(isinstance(node, Overlay) and node.display for node in widget.ancestors_with_self)


def _keys_now(screen: Screen) -> Widget | None:
    """Who has the keys now: with a dialog open, its focused part (None until it has taken the focus)."""
    focused = screen.focused
    if overlay_open(screen):
        return focused if focused is not None and _in_dialog(focused) else None
    return focused


def follow_focus(widget: Widget, event: events.Key) -> bool:
    """A key sent to `widget` (a part of a dialog, say) that has lost the focus since: held and sent on to the
    widget that has the keys now. True: the key is not `widget`'s to handle."""
    if _routed_to(event) is not widget or widget.screen.focused is widget:  # (has_focus waits for an event)
        return False
    _hold(widget.screen, event)
    return True


def at_the_app(app: Any, event: events.Key) -> bool:
    """A key that has come back up to the app unhandled (where Textual looks up its binding, among the widgets
    focused *now*): if the keys have moved since it was sent out, it is sent again to whoever has them, so that
    their own handling (a letter into a filter, a digit picking a value) applies, not only their bindings; and
    a key typed after the one that opened a dialog, before the dialog took the keys, waits for the dialog.
    True: the key is sent on, not to be looked up here."""
    routed = _routed_to(event)
    screen = app.screen
    if routed is None:
        return False
    if overlay_open(screen) and not (isinstance(routed, Widget) and _in_dialog(routed)):
        _hold(screen, event)
        return True
    if routed is not (app.focused or screen):
        _hold(screen, event)
        return True
    return False


def _hold(screen: Screen, event: events.Key) -> None:
    event.stop()
    event.prevent_default()
    held: deque[events.Key] = screen.__dict__.setdefault("_held_keys", deque())
    held.append(events.Key(event.key, event.character))
    if len(held) == 1:
        _deliver(screen, WAIT_FRAMES)


def _deliver(screen: Screen, frames: int) -> None:
    """Send the held keys on, in order, once someone has the keys; wait a frame while nobody has."""
    held: deque[events.Key] = screen.__dict__.get("_held_keys", deque())
    if not held or not screen.is_attached:
        held.clear()
        return
    target = _keys_now(screen)
    if target is None:
        if frames > 0:
            screen.call_after_refresh(_deliver, screen, frames - 1)
        else:
            held.clear()  # no dialog took the keys: nothing shows where they would go
        return
    while held:
        key = held.popleft()
        route(key, target)
        target._forward_event(key)  # as the app hands a key on: marked forwarded, so it is not routed again
