"""A ScrollView that draws lines of its own, spared the redraws Textual makes for nothing when a dialog closes.

- Textual applies the stylesheet to a widget again whenever it gains or loses the focus (for the
  transcript, its 25 component classes, and its scrollbar redrawn, as a scrollbar colour set
  again redraws it), and then draws every line of it again: every time a picker closes. That is
  done here only while some rule of the stylesheet styles the view by focus (the score card's
  highlight does); what focus shows in the transcript, the cursor, it draws itself.
- Textual's ScrollView redraws its scrollbars on every layout pass of the screen (it compares the
  size the layout gives its content with its own virtual size, which for a view of lines never
  match), and a dialog closing is a layout pass. Here a pass that finds the view's size and its
  scrollbars as the last pass left them leaves the scrollbars alone; any change since (new rows,
  a scrollbar shown) and the pass updates them as Textual's does, which also redraws a scrollbar
  whose own redraw was lost in a layout pass (the card's, when it gained its scrollbar).
"""

from __future__ import annotations

from textual import events
from textual.css.model import Selector, SelectorType
from textual.dom import DOMNode
from textual.geometry import Size
from textual.scroll_view import ScrollView

FOCUS = frozenset({"focus", "blur", "focus-within"})  # the pseudo-classes a change of focus changes


class LinesView(ScrollView):
    _focus_styled: tuple[int, bool] | None = None  # (the stylesheet's rules, whether they style this by focus)
    _bars_at_layout: tuple | None = None  # the scrollbars as the last layout pass that updated them left them

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        bars = self._scrollbars()
        if size == self._size and container_size == self.container_size and bars == self._bars_at_layout:
            return False  # what ScrollView's says of a size that did not change
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        self._bars_at_layout = self._scrollbars()
        return changed

    def _scrollbars(self) -> tuple:
        """Which scrollbars are shown, and the window each shows on the lines (the state _scroll_update makes)."""
        shown = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        bars = [self.horizontal_scrollbar] if shown[0] else []
        bars += [self.vertical_scrollbar] if shown[1] else []
        return (shown, self.virtual_size, *((bar.window_virtual_size, bar.window_size) for bar in bars))

    def watch_has_focus(self, has_focus: bool) -> None:
        if self.styled_by_focus():
            super().watch_has_focus(has_focus)

    # Textual calls the `_on_focus` of every class of the widget in turn, Widget's last, unless one prevents it.
    def _on_focus(self, event: events.Focus) -> None:
        if not self.styled_by_focus():
            event.prevent_default()  # Widget's draws every line again
            self.has_focus = True
            if self.parent is not None:
                self.parent.post_message(events.DescendantFocus(self))

    def _on_blur(self, event: events.Blur) -> None:
        if not self.styled_by_focus():
            event.prevent_default()
            self.has_focus = False
            if self.parent is not None:
                self.parent.post_message(events.DescendantBlur(self))

    def styled_by_focus(self) -> bool:
        """Whether a rule of the stylesheet may style this view, or its component classes, by focus."""
        rules = self.app.stylesheet.rules
        if self._focus_styled is None or self._focus_styled[0] != id(rules):
            self._focus_styled = (id(rules), any(_by_focus(s.selectors, self) for r in rules for s in r.selector_set))
        return self._focus_styled[1]


def _by_focus(selectors: list[Selector], node: DOMNode) -> bool:
    """A rule's selectors ask for focus somewhere, and one of them may be the node (its pseudo-classes aside): it
    styles the node, or its component classes, by focus (erring towards yes)."""
    return any(s.pseudo_classes & FOCUS for s in selectors) and any(_may_be(s, node) for s in selectors)


def _may_be(selector: Selector, node: DOMNode) -> bool:
    if selector.type == SelectorType.TYPE:
        return selector.name in {cls.__name__ for cls in type(node).__mro__}
    if selector.type == SelectorType.CLASS:
        return node.has_class(selector.name)
    if selector.type == SelectorType.ID:
        return node.id == selector.name
    return True  # `*` and `&`: anything
