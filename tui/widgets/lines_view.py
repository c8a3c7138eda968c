"""A ScrollView that draws lines of its own, and is not restyled on a change of focus that cannot change its look.

Textual applies the stylesheet to a widget again whenever it gains or loses the focus: for the
transcript, its 25 component classes, and its scrollbar redrawn (a scrollbar colour set again
redraws it, unchanged), every time a picker closes. That is done here only while some rule of
the stylesheet styles the view by focus (the score card's highlight does); what focus shows in
the transcript (the cursor) it draws itself.
"""

from __future__ import annotations

from textual.css.model import Selector, SelectorType
from textual.dom import DOMNode
from textual.scroll_view import ScrollView

FOCUS = frozenset({"focus", "focus-within"})


class LinesView(ScrollView):
    _focus_styled: tuple[int, bool] | None = None  # (the stylesheet's rules, whether they style this by focus)

    def watch_has_focus(self, has_focus: bool) -> None:
        if self.styled_by_focus():
            super().watch_has_focus(has_focus)

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
