"""The score card beside the Review transcript: every item, its score, quote and verification, the totals.

Colours that carry meaning (a verdict, a disqualification, a total) are component
classes styled from the theme's variables in styles/verdicts.tcss, never colour
names in Python, so a theme can change them.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from sieve.safe_text import visible
from sieve.scenarios import format_value
from sieve.store.scoring.scorecard import Card
from sieve.tui.app.widgets.rows import Row, RowsView

QUOTE_CHARS = 38

# The component classes of anything that draws verdicts (see styles/verdicts.tcss).
VERDICT_CLASSES = {
    "verdict--exact",
    "verdict--fuzzy",
    "verdict--absent",
    "verdict--player",
    "verdict--none",
    "verdict--disqualified",
    "verdict--total",
    "verdict--complete",
    "verdict--low",
}

Styles = Callable[[str], Style]


def styles_of(widget: Widget) -> Styles:
    """The widget's verdict styles by short name ("exact", "absent", ...), from its component classes."""
    return lambda name: widget.get_component_rich_style(f"verdict--{name}", partial=True)


def verification_mark(annotation: dict | None) -> tuple[str, str]:
    """The mark shown beside a quote, and the name of its verdict style."""
    if annotation is None:
        return "", "none"
    kind = annotation.get("verification")
    if not annotation.get("quote"):
        return "no quote", "none"
    if kind == "exact":
        return "✓ exact", "exact"
    if kind == "fuzzy":
        return f"≈ {round((annotation.get('similarity') or 0) * 100)}%", "fuzzy"
    if kind == "player":
        return "player's words", "player"
    return "✗ absent", "absent"


def short(quote: str | None) -> str:
    if not quote:
        return ""
    quote = " ".join(quote.split())
    return "“" + (quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…") + "”"


def _same(text: str) -> str:
    return text


def card_rows(card: Card, styles: Styles, mask=_same, counters_title: str = "L axis (counted)") -> list[Row]:
    """The card as rows, one per line; an item's row has the item's id as its key. `mask` hides names (blind)."""
    rows: list[Row] = []

    def line(key: str | None = None) -> Text:
        text = Text()
        rows.append(Row(text, key))
        return text

    # The verdict first, where it is always in view: totals, disqualification.
    head = line()
    for rubric in card.rubrics:
        head.append(f"{rubric.rubric.id} {rubric.total()}   ", style=styles("total"))
    disqualified = card.disqualified_by
    if disqualified:
        line().append(f"DISQUALIFIED by {', '.join(disqualified)}", style=styles("disqualified"))
    line()
    for rubric in card.rubrics:
        text = line()
        text.append(f"{rubric.rubric.id} {visible(rubric.rubric.title)}", style="bold")
        text.append(f"  {rubric.total()}", style=styles("total"))
        if rubric.deduction_annotations:
            line().append(f"  deducted outside the items: {format_value(rubric.deductions)}", style=styles("fuzzy"))
        for item in rubric.items + rubric.bonuses:
            text = line(item.item.id)
            flag = " ⚠" if item.disqualifies else ""
            text.append(f"  {item.item.id:<5}", style="bold" if item.scored else "dim")
            text.append(f"{item.text():>4}{flag} ", style=styles("disqualified") if flag else "")
            mark, style = verification_mark(item.annotation)
            if mark:
                text.append(mark, style=styles(style))
                if item.low_confidence:
                    text.append(" low confidence", style=styles("low"))
                text.append(" " + visible(short(mask(item.annotation.get("quote") or ""))), style="italic")
            else:
                text.append("not scored", style="dim")
        for written_id, judgment in rubric.written.items():
            text = line(written_id)
            text.append(f"  {written_id:<5}written ", style="bold")
            text.append(visible(short(judgment.get("note") or "")), style="italic")
    if card.counters:
        line().append(visible(counters_title), style="bold")
        for counter in card.counters:
            text = line(counter.counter.id)
            text.append(f"  {counter.counter.id:<5}", style="bold" if counter.events else "dim")
            text.append(f"{visible(counter.display())}", style="" if counter.events else "dim")
            text.append(f"  {visible(counter.counter.title)}", style="dim")
            if counter.disqualifies:
                text.append("  ⚠ disqualifying", style=styles("disqualified"))
    if card.probes:
        line().append("Probes", style="bold")
        for probe in card.probes:
            line(probe.probe.id).append(
                f"  {probe.probe.id:<10}{visible(probe.mark or '–')}", style="" if probe.mark else "dim"
            )
    line()
    unscored = card.unscored
    if unscored:
        line().append(f"not yet scored: {' '.join(unscored)}", style="dim")
    else:
        line().append("every item is scored", style=styles("complete"))
    return rows


class ScoreCardView(RowsView):
    """The card, one row per line (an item's row is keyed by the item's id)."""

    COMPONENT_CLASSES = RowsView.COMPONENT_CLASSES | VERDICT_CLASSES

    def on_mount(self) -> None:
        self.border_title = "score card"

    def show(self, card: Card, mask=_same) -> None:
        self.set_rows(card_rows(card, styles_of(self), mask))

    @property
    def text(self) -> str:
        return "\n".join(row.text.plain for row in self.rows)
