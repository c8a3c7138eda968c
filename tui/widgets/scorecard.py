"""The score card beside the Review transcript: every item, its score, quote and verification, the totals."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from scenarios import format_value
from store.scorecard import Card, ItemCard, total_text

from ..safe_text import visible

QUOTE_CHARS = 38


def verification_mark(annotation: dict | None) -> tuple[str, str]:
    """The mark shown beside a quote, and its style."""
    if annotation is None:
        return "", ""
    kind = annotation.get("verification")
    if not annotation.get("quote"):
        return "no quote", "dim"
    if kind == "exact":
        return "✓ exact", "green"
    if kind == "fuzzy":
        return f"≈ {round((annotation.get('similarity') or 0) * 100)}%", "yellow"
    if kind == "player":
        return "player's words", "magenta"
    return "✗ absent", "bold red"


def score_text(card: ItemCard) -> str:
    a = card.annotation
    if a is None:
        return "–"
    low = card.item.scale.label(a["score"])
    if a["score_high"] is not None:
        return f"{low}–{card.item.scale.label(a['score_high'])}"
    return low


def short(quote: str | None) -> str:
    if not quote:
        return ""
    quote = " ".join(quote.split())
    return "“" + (quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…") + "”"


def _same(text: str) -> str:
    return text


def render_card(card: Card, mask=_same) -> Text:
    """The card as text; `mask` hides names in quotes (blind review)."""
    text = Text()
    # The verdict first, where it is always in view: totals, disqualification.
    for rubric in card.rubrics:
        text.append(f"{rubric.rubric.id} {total_text(rubric)}   ", style="bold cyan")
    text.append("\n")
    disqualified = card.disqualified_by
    if disqualified:
        text.append(f"DISQUALIFIED by {', '.join(disqualified)}\n", style="bold red")
    text.append("\n")
    for rubric in card.rubrics:
        text.append(f"{rubric.rubric.id} {rubric.rubric.title}", style="bold")
        text.append(f"  {total_text(rubric)}\n", style="bold cyan")
        if rubric.deductions:
            text.append(f"  deducted outside the items: {format_value(rubric.deductions)}\n", style="yellow")
        for item in rubric.items + rubric.bonuses:
            flag = " ⚠" if item.disqualifies else ""
            text.append(f"  {item.item.id:<5}", style="bold" if item.scored else "dim")
            text.append(f"{score_text(item):>4}{flag} ", style="red" if flag else "")
            mark, style = verification_mark(item.annotation)
            if mark:
                text.append(mark, style=style)
                text.append(" " + visible(short(mask(item.annotation.get("quote") or ""))), style="italic")
            else:
                text.append("not scored", style="dim")
            text.append("\n")
    if card.counters:
        text.append("L axis (counted)\n", style="bold")
        for counter in card.counters:
            flag = "  ⚠ disqualifying" if counter.disqualifies else ""
            text.append(f"  {counter.counter.id:<5}", style="bold" if counter.events else "dim")
            text.append(f"{counter.display()}", style="" if counter.events else "dim")
            text.append(f"  {counter.counter.title}", style="dim")
            text.append(f"{flag}\n", style="bold red")
    if card.probes:
        text.append("Probes\n", style="bold")
        for probe, mark in card.probes.items():
            text.append(f"  {probe:<10}{mark or '–'}\n", style="" if mark else "dim")
    unscored = [i for r in card.rubrics for i in r.unscored]
    if unscored:
        text.append(f"\nnot yet scored: {' '.join(unscored)}", style="dim")
    else:
        text.append("\nevery item is scored", style="green")
    return text


class ScoreCardView(VerticalScroll):
    DEFAULT_CSS = """
    ScoreCardView { height: 1fr; border: round $accent; border-title-color: $accent; padding: 0 1; }
    ScoreCardView > Static { height: auto; }
    """

    def compose(self):
        yield Static("", id="card")

    def on_mount(self) -> None:
        self.border_title = "score card"

    def show(self, card: Card, mask=_same) -> None:
        self.query_one("#card", Static).update(render_card(card, mask))
