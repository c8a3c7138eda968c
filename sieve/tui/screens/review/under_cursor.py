"""The line under Review's transcript: the annotations under the mouse, else under the cursor, else a legend.

A widget that draws what it is given; which annotations stand at a place is the evidence's
question (evidence.Evidence.show_under_cursor).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from sieve.safe_text import one_line, visible
from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import value_text
from sieve.tui.screens.review.evidence import LEGEND, Annotation
from sieve.tui.widgets.scorecard import VERDICT_CLASSES, put, styles_of, verification_mark


class UnderCursor(Static):
    COMPONENT_CLASSES = VERDICT_CLASSES

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._shown: Text | None = None

    def show_legend(self, kinds: Iterable[str], style_of: Callable[[str], Style]) -> None:
        """Nothing here: the kinds of highlight in use (`style_of`: the transcript's style of a highlight)."""
        self._set(legend(kinds, style_of))

    def show_annotations(
        self,
        here: list[Annotation],
        scenario: Scenario,
        mask: Callable[[str], str],
        quote_number: Callable[[Annotation], tuple[int, int] | None],
        edits: bool,
    ) -> None:
        """The annotations at one place, the one drawn on top first; `edits`: say that `e` edits that one."""
        text = Text()
        if len(here) > 1:
            put(text, f"{len(here)} here:", "bold", 1)
        styles = styles_of(self)
        for i, annotation in enumerate(here):
            if i:
                text.append("  ")
                put(text, "│", "dim", 2)
            text.append_text(describe(annotation, scenario, mask, styles, quote_number(annotation)))
        if edits:
            text.append("   ")
            put(text, "e edits " + visible(here[0]["item"]), "dim")
        self._set(text)

    def _set(self, text: Text) -> None:
        # Drawn only when it changes: moving to a turn shows the line at once (Navigation.show_turn), and the
        # cursor's message arriving after that frame would otherwise cost a second frame for nothing.
        if text != self._shown:
            self._shown = text
            self.update(text, layout=False)


def describe(
    annotation: Annotation,
    scenario: Scenario,
    mask: Callable[[str], str],
    verdict_style: Callable[[str], Style],
    of: tuple[int, int] | None = None,
) -> Text:
    """One annotation on one line: `T1 2 · ada · ✓ exact · ✎ its note` (`of`: quote 2 of 3)."""
    try:
        scale = scenario.item(annotation["item"])[1].scale
    except KeyError:
        scale = None
    text = Text()
    value = value_text(annotation, scale)
    put(text, visible(annotation["item"]) + (" " + visible(value) if value else ""), "bold", 1)
    if of is not None and of[1] > 1:
        put(text, f"(quote {of[0]} of {of[1]})", "dim", 1)
    put(text, "· " + one_line(annotation["reviewer"]), "dim", 1)
    mark, style = verification_mark(annotation)
    if mark:
        put(text, "·", "", 1)
        put(text, mark, verdict_style(style), 1)
    if annotation.get("confidence") == "low":
        put(text, "low confidence", verdict_style("low"), 1)
    note = annotation.get("note")
    if note:
        put(text, "· ✎ " + one_line(mask(note)), "italic")
    text.rstrip()
    return text


def legend(kinds: Iterable[str], style_of: Callable[[str], Style]) -> Text:
    """The kinds of highlight in use, each drawn in its own style, and how a near or missing quote looks."""
    text = Text()
    shown = [k for k in LEGEND if k in set(kinds)]
    if not shown:
        return text
    put(text, "highlights:", "dim", 1)
    for kind in shown:
        put(text, f" {LEGEND[kind]} ", style_of(f"highlight--{kind}"))
        text.append(" ")
    text.append(" ")
    put(text, "near", style_of("highlight--fuzzy"))
    text.append(" ")
    put(text, "not found", style_of("highlight--absent"), 3)
    put(text, "in the margin: how many on a line", "dim")
    return text
