"""The score card beside the Review transcript: every item, its score, quote and verification, the totals.

Colours that carry meaning (a verdict, a disqualification, a total) are component
classes styled from the theme's variables in styles/verdicts.tcss, never colour
names in Python, so a theme can change them.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.scenarios import format_value
from sieve.store.scoring.scorecard import Card

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


def render_card(card: Card, styles: Styles, mask=_same, counters_title: str = "L axis (counted)") -> Text:
    """The card as text; `mask` hides names in quotes (blind review)."""
    text = Text()
    # The verdict first, where it is always in view: totals, disqualification.
    for rubric in card.rubrics:
        text.append(f"{rubric.rubric.id} {rubric.total()}   ", style=styles("total"))
    text.append("\n")
    disqualified = card.disqualified_by
    if disqualified:
        text.append(f"DISQUALIFIED by {', '.join(disqualified)}\n", style=styles("disqualified"))
    text.append("\n")
    for rubric in card.rubrics:
        text.append(f"{rubric.rubric.id} {visible(rubric.rubric.title)}", style="bold")
        text.append(f"  {rubric.total()}\n", style=styles("total"))
        if rubric.deduction_annotations:
            text.append(f"  deducted outside the items: {format_value(rubric.deductions)}\n", style=styles("fuzzy"))
        for item in rubric.items + rubric.bonuses:
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
            text.append("\n")
        for written_id, judgment in rubric.written.items():
            text.append(f"  {written_id:<5}written ", style="bold")
            text.append(visible(short(judgment.get("note") or "")) + "\n", style="italic")
    if card.counters:
        text.append(visible(counters_title) + "\n", style="bold")
        for counter in card.counters:
            text.append(f"  {counter.counter.id:<5}", style="bold" if counter.events else "dim")
            text.append(f"{visible(counter.display())}", style="" if counter.events else "dim")
            text.append(f"  {visible(counter.counter.title)}", style="dim")
            if counter.disqualifies:
                text.append("  ⚠ disqualifying", style=styles("disqualified"))
            text.append("\n")
    if card.probes:
        text.append("Probes\n", style="bold")
        for probe in card.probes:
            shown = visible(probe.display()) if probe.mark else "–"
            text.append(f"  {probe.probe.id:<10}{shown}\n", style="" if probe.mark else "dim")
    unscored = card.unscored
    if unscored:
        text.append(f"\nnot yet scored: {' '.join(unscored)}", style="dim")
    else:
        text.append("\nevery item is scored", style=styles("complete"))
    return text


class ScoreCardView(VerticalScroll):
    COMPONENT_CLASSES = VERDICT_CLASSES

    def compose(self):
        yield Static("", id="card")

    def on_mount(self) -> None:
        self.border_title = "score card"

    def show(self, card: Card, mask=_same) -> None:
        self.query_one("#card", Static).update(render_card(card, styles_of(self), mask))
