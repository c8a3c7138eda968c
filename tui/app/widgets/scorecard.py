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
from sieve.store.scoring.scorecard import Card, RubricCard
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


def card_rows(
    card: Card, styles: Styles, mask=_same, counters_title: str = "Counters", only: str | None = None
) -> list[Row]:
    """The card as rows, one per line; an item's row has the item's id as its key. `mask` hides names (blind).

    `only` names the one rubric shown whole; the others, the counters and the probes
    are then one line each (the card collapsed beside a narrow transcript).
    """
    rows: list[Row] = []

    def line(key: str | None = None) -> Text:
        text = Text()
        rows.append(Row(text, key))
        return text

    # The verdict first, where it is always in view: totals, disqualification.
    head = line()
    for rubric in card.rubrics:
        partial = "" if rubric.complete else " (partial)"
        head.append(f"{rubric.rubric.id} {rubric.total()}{partial}   ", style=styles("total"))
    disqualified = card.disqualified_by
    if disqualified:
        line().append(f"DISQUALIFIED by {', '.join(disqualified)}", style=styles("disqualified"))
    progress = card.progress
    if progress.complete:
        line().append("complete: every item, step and probe is scored", style=styles("complete"))
    else:
        line().append(progress.text(), style="dim")
    line()
    for rubric in card.rubrics:
        if only is not None and rubric.rubric.id != only:
            text = line()
            text.append(f"{rubric.rubric.id} {visible(rubric.rubric.title)}", style="bold")
            scored = sum(1 for i in rubric.items + rubric.bonuses if i.scored)
            text.append(f"  {rubric.total()}", style=styles("total"))
            text.append(f"  {scored} of {len(rubric.items + rubric.bonuses)} scored", style="dim")
            continue
        _rubric_rows(rubric, line, styles, mask)
    if card.counters:
        judged = sum(1 for c in card.counters if c.judged)
        heading = line()
        heading.append(visible(counters_title), style="bold")
        if only is not None:
            heading.append(f"  {judged} of {len(card.counters)} judged", style="dim")
            flagged = [c.counter.id for c in card.counters if c.disqualifies]
            if flagged:
                heading.append(f"  ⚠ {' '.join(flagged)}", style=styles("disqualified"))
        else:
            for counter in card.counters:
                text = line(counter.counter.id)
                text.append(f"  {counter.counter.id:<5}", style="bold" if counter.events else "dim")
                text.append(f"{visible(counter.display())}", style="" if counter.events else "dim")
                text.append(f"  {visible(counter.counter.title)}", style="dim")
                if counter.disqualifies:
                    text.append("  ⚠ disqualifying", style=styles("disqualified"))
    if card.probes:
        heading = line()
        heading.append("Probes", style="bold")
        if only is not None:
            marked = sum(1 for p in card.probes if p.mark)
            heading.append(f"  {marked} of {len(card.probes)} marked", style="dim")
        else:
            for probe in card.probes:
                shown = visible(probe.display()) if probe.mark else "–"
                line(probe.probe.id).append(f"  {probe.probe.id:<10}{shown}", style="" if probe.mark else "dim")
    if only is not None and (len(card.rubrics) > 1 or card.counters or card.probes):
        line().append("f: the whole card", style="dim")
    unscored = card.unscored
    if unscored:
        line()
        line().append(f"not yet scored: {' '.join(unscored)}", style="dim")
    return rows


def _rubric_rows(rubric: RubricCard, line: Callable[..., Text], styles: Styles, mask) -> None:
    text = line()
    text.append(f"{rubric.rubric.id} {visible(rubric.rubric.title)}", style="bold")
    text.append(f"  {rubric.total()}", style=styles("total"))
    for item in rubric.items + rubric.bonuses:
        text = line(item.item.id)
        flag = " ⚠" if item.disqualifies else ""
        text.append(f"  {item.item.id:<5}", style="bold" if item.scored else "dim")
        text.append(f"{item.text():>4}{flag} ", style=styles("disqualified") if flag else "")
        _evidence(text, item.annotation, item.low_confidence, styles, mask)
    if rubric.rubric.deductions:
        limit = format_value(rubric.rubric.deductions.maximum)
        text = line()
        text.append("  deducted outside the items: ", style="bold" if rubric.deduction_annotations else "dim")
        text.append(f"−{format_value(rubric.deductions)} (at most {limit})", style=styles("fuzzy"))
        if rubric.deductions_capped:
            text.append("  capped", style=styles("low"))
        for a in rubric.deduction_annotations:
            text = line(a["id"])
            text.append(f"    −{format_value(a['score'] or 0):<4}", style="bold")
            _evidence(text, a, a.get("confidence") == "low", styles, mask)
    for written in rubric.rubric.written:
        judgment = rubric.written.get(written.id)
        text = line(written.id)
        text.append(f"  {written.id:<5} ", style="bold" if judgment else "dim")
        if judgment is None:
            text.append(f"written judgment of {' '.join(written.items)}: not written", style="dim")
            continue
        # The judgment's own words first (they are the score); then how its quote fared.
        text.append("written " + visible(short(mask(judgment.get("note") or ""))) + " ", style="italic")
        mark, style = verification_mark(judgment)
        text.append(mark, style=styles(style))
        if judgment.get("confidence") == "low":
            text.append(" low confidence", style=styles("low"))


def _evidence(text: Text, annotation: dict | None, low: bool, styles: Styles, mask) -> None:
    """The verdict on an annotation's quote, and the quote: `✓ exact “…”`, or `not scored`."""
    mark, style = verification_mark(annotation)
    if not mark:
        text.append("not scored", style="dim")
        return
    text.append(mark, style=styles(style))
    if low:
        text.append(" low confidence", style=styles("low"))
    text.append(" " + visible(short(mask(annotation.get("quote") or ""))), style="italic")


class ScoreCardView(RowsView):
    """The card, one row per line (an item's row is keyed by the item's id)."""

    COMPONENT_CLASSES = RowsView.COMPONENT_CLASSES | VERDICT_CLASSES

    def on_mount(self) -> None:
        self.border_title = "score card"

    def show(self, card: Card, mask=_same, counters_title: str = "Counters", only: str | None = None) -> None:
        self.set_rows(card_rows(card, styles_of(self), mask, counters_title, only))

    @property
    def text(self) -> str:
        return "\n".join(row.text.plain for row in self.rows)
