"""Review's list of the annotations in force, newest first: item │ value │ step │ verdict │ quote ✎ note."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from sieve.safe_text import one_line, visible
from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import value_text
from sieve.tui.screens.review.evidence import Annotation
from sieve.tui.widgets.rows import Row, RowsView
from sieve.tui.widgets.scorecard import QUOTE_CHARS, VERDICT_CLASSES, put, short, styles_of, verification_mark


class AnnotationList(RowsView):
    """One row per annotation, keyed by its id; `enter` on one says which (RowsView.Chosen)."""

    COMPONENT_CLASSES = RowsView.COMPONENT_CLASSES | VERDICT_CLASSES

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[list[Annotation], Scenario, dict[str, str], Callable[[str], str]] | None = None

    def on_mount(self) -> None:
        self.border_title = "annotations (tab here: e edit, x delete)"

    def show(
        self, active: list[Annotation], scenario: Scenario, steps: dict[str, str], mask: Callable[[str], str]
    ) -> None:
        """These annotations (`steps`: turn id -> step, for those given without one), their quotes cut to fit."""
        self._shown = (active, scenario, steps, mask)
        self.set_rows(self._rows(*self._shown))

    def relist(self) -> None:
        """The same annotations again, their quotes cut to the list's width now."""
        if self._shown is not None:
            self.show(*self._shown)

    def _rows(
        self, active: list[Annotation], scenario: Scenario, steps: dict[str, str], mask: Callable[[str], str]
    ) -> list[Row]:
        cells = []
        for a in reversed(active):
            try:
                scale = scenario.item(a["item"])[1].scale
            except KeyError:
                scale = None
            step = a["step_id"] or steps.get(a["quote_turn_id"] or a["turn_id"] or "") or ""
            cells.append((a, a["item"], value_text(a, scale), step))
        widths = [min(cap, max([len(c[i]) for c in cells], default=1)) for i, cap in ((1, 8), (2, 12), (3, 10))]
        styles = styles_of(self)
        list_width = self.scrollable_content_region.width
        rows = []
        marks = max((len(verification_mark(a)[0]) for a, *_ in cells), default=0)
        for a, item, value, step in cells:
            line = Text()
            put(line, visible(item)[: widths[0]].ljust(widths[0]), "bold", 1)
            for text, width in ((value, widths[1]), (step, widths[2])):
                put(line, "│", "dim", 1)
                put(line, visible(text)[:width].ljust(width), "", 1)
            put(line, "│", "dim", 1)
            mark, style = verification_mark(a)
            put(line, mark, styles(style))
            if a.get("confidence") == "low":
                line.append(" ")
                put(line, "low", styles("low"))
            line.append(" " * (1 + max(0, marks - len(mark))))
            room = (list_width - line.cell_len) if list_width else QUOTE_CHARS  # no width before the first layout
            if a["quote"]:
                put(line, visible(short(mask(a["quote"]), max(12, room))), "italic", 2 if a["note"] else 0)
            if a["note"]:
                put(line, "✎ " + one_line(mask(a["note"])), "dim")
            rows.append(Row(line, a["id"]))
        return rows
