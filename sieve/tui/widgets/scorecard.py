"""The score card beside the Review transcript: every item, its score, quote and verification, the totals.

Colours that carry meaning (a verdict, a disqualification, a total) are component
classes styled from the theme's variables in styles/verdicts.tcss, never colour
names in Python, so a theme can change them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from sieve.safe_text import visible
from sieve.scenarios import format_value
from sieve.store.scoring.evidence import OFF_STEP
from sieve.store.scoring.scorecard import Card, RubricCard
from sieve.store.scoring.standing import unsupported
from sieve.tui.widgets.rows import Row, RowsView

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
    """The widget's verdict styles by short name ("exact", "absent", ...), from its component classes.

    Each asked of the stylesheet once per call of styles_of (a card asks for a few, many times over).
    """
    known: dict[str, Style] = {}

    def style(name: str) -> Style:
        found = known.get(name)
        if found is None:
            found = known[name] = widget.get_component_rich_style(f"verdict--{name}", partial=True)
        return found

    return style


def verification_mark(annotation: Mapping[str, Any] | None) -> tuple[str, str]:
    """The mark shown beside a quote, and the name of its verdict style."""
    if annotation is None:
        return "", "none"
    kind = annotation.get("verification")
    if not annotation.get("quote"):
        return "no quote", "none"
    if annotation.get("off_step") and kind in ("exact", "fuzzy"):
        return "✗ " + OFF_STEP, "player"  # found, but where the item is not judged: no evidence
    if kind == "ambiguous":
        return "✗ ambiguous", "absent"
    if kind == "exact":
        return "✓ exact", "exact"
    if kind == "fuzzy":
        return f"≈ {round((annotation.get('similarity') or 0) * 100)}%", "fuzzy"
    if kind == "player":
        return "player's words", "player"
    if kind == "altered":
        return "✗ altered", "absent"
    if kind == "short":
        return "✗ too short", "absent"
    return "✗ absent", "absent"


def cut_at_word(text: str, width: int) -> str:
    """`text` on one line in at most `width` cells: whole, or cut after a word with "…"."""
    text = " ".join(text.split())
    if cell_len(text) <= width:
        return text
    width = max(2, width)
    kept = text[: width - 1]
    while len(kept) > 1 and cell_len(kept) > width - 1:
        kept = kept[:-1]
    space = kept.rfind(" ")
    # At a word (where the next one begins, or at the last space), unless that throws most of the room away.
    if text[len(kept)] != " " and space >= (width - 1) // 3:
        kept = kept[:space]
    return kept.rstrip(" ,;:-–—") + "…"


def short(quote: str | None, width: int = QUOTE_CHARS) -> str:
    """A quote in curly quotes, cut at a word to fit `width` cells (the marks included)."""
    if not quote:
        return ""
    return "“" + cut_at_word(quote, max(3, width - 2)) + "”"


def _same(text: str) -> str:
    return text


@dataclass
class Columns:
    """The widths the card's rows share, so ids, values, verdicts and quotes stand in columns."""

    item: int  # an item's (or written judgment's) id
    value: int  # its score
    mark: int  # the verdict on its quote (✓ exact, ≈ 87%, ...)
    disqualifying: bool  # a column for ⚠ (some item can disqualify)
    width: int | None  # the card's width, for the quotes; None: QUOTE_CHARS

    def quote_room(self, used: int) -> int:
        return QUOTE_CHARS if self.width is None else max(12, self.width - used)


def _columns(card: Card, width: int | None) -> Columns:
    items = [i for r in card.rubrics for i in r.items + r.bonuses]
    ids = [i.item.id for i in items] + [w.id for r in card.rubrics for w in r.rubric.written]
    values = [i.text() for i in items]
    values += ["−" + format_value(a["score"] or 0) for r in card.rubrics for a in r.deduction_annotations]
    marks = [verification_mark(a)[0] for i in items for a in i.given or ([i.annotation] if i.annotation else [])]
    marks += [verification_mark(a)[0] for r in card.rubrics for a in r.deduction_annotations]
    marks += [verification_mark(a)[0] for r in card.rubrics for a in r.written.values()]
    return Columns(
        item=min(8, max(map(len, ids), default=2)),
        value=min(6, max(map(cell_len, values), default=1)),
        mark=min(14, max(map(cell_len, marks), default=7)),
        disqualifying=any(i.item.disqualifying for i in items),
        width=width,
    )


def put(text: Text, piece: str, style: str | Style = "", gap: int = 0) -> None:
    """Append a piece and then `gap` spaces in its style.

    A gap ends the piece before it rather than starts the next: a run of text drawn
    in one style never begins with a space, so a picture of the screen (SVG, which
    draws each run at its own place) keeps its columns in every renderer.
    """
    text.append(piece + " " * gap, style=style)


def indent(text: Text, cells: int, first: str | Style = "") -> None:
    """Spaces at the start of a row, in a style apart from the `first` piece's (so they are not one run)."""
    if cells:
        text.append(" " * cells, style="not dim" if first == "dim" else "dim")


def card_rows(
    card: Card,
    styles: Styles,
    mask=_same,
    counters_title: str = "Counters",
    only: str | None = None,
    width: int | None = None,
) -> list[Row]:
    """The card as rows, one per line; an item's row has the item's id as its key. `mask` hides names (blind).

    `only` names the one rubric shown whole; the others, the counters and the probes
    are then one line each (the card collapsed beside a narrow transcript). `width`
    is the card's width in cells: quotes are cut at a word to fit it.
    """
    rows: list[Row] = []

    def line(key: str | None = None) -> Text:
        text = Text()
        rows.append(Row(text, key))
        return text

    columns = _columns(card, width)
    # The verdict first, where it is always in view: totals, disqualification.
    head = line()
    for rubric in card.rubrics:
        put(head, f"{rubric.rubric.id} {rubric.total()}{rubric.state()}", styles("total"), 3)
    disqualified = card.disqualified_by
    if disqualified:
        line().append(f"DISQUALIFIED by {', '.join(disqualified)}", style=styles("disqualified"))
    claimed = card.disqualification_claimed
    if claimed:
        for part in _wrap_parts(["disqualification claimed without evidence:", *claimed], width, " "):
            line().append(part, style=styles("low"))
    for warning in card.warnings:  # a reply speaking to its judge: a person looks before trusting a judge's card
        for part in _wrap_parts(visible(mask(f"⚑ {warning}")).split(" "), width, " "):
            line().append(part, style=styles("low"))
    progress = card.progress
    if progress.complete:
        line().append("complete: every item, step and probe is scored", style=styles("complete"))
    else:
        # On as many lines as it needs, broken between its parts.
        for part in _wrap_parts(progress.text().split(" · "), width):
            line().append(part, style="dim")
    line()
    for rubric in card.rubrics:
        if only is not None and rubric.rubric.id != only:
            text = line()
            put(text, f"{rubric.rubric.id} {visible(rubric.rubric.title)}", "bold", 2)
            scored = sum(1 for i in rubric.items + rubric.bonuses if i.scored)
            put(text, rubric.total(), styles("total"), 2)
            put(text, f"{scored} of {len(rubric.items + rubric.bonuses)} scored", "dim")
            continue
        _rubric_rows(rubric, line, styles, mask, columns)
    if card.counters:
        _counter_rows(card, line, styles, counters_title, only, width)
    if card.probes:
        heading = line()
        if only is not None:
            marked = sum(1 for p in card.probes if p.mark)
            put(heading, "Probes", "bold", 2)
            put(heading, f"{marked} of {len(card.probes)} marked", "dim")
        else:
            heading.append("Probes", style="bold")
            wide = max(len(p.probe.id) for p in card.probes)
            for probe in card.probes:
                text = line(probe.probe.id)
                style = "bold" if probe.mark else "dim"
                indent(text, 2, style)
                put(text, probe.probe.id.ljust(wide), style, 2)
                put(text, visible(probe.display()) if probe.mark else "–", "" if probe.mark else "dim")
    if only is not None and (len(card.rubrics) > 1 or card.counters or card.probes):
        line().append("f: the whole card", style="dim")
    unscored = card.unscored
    if unscored:
        line()
        words = ["not yet scored:", *unscored]
        for part in _wrap_parts(words, width, " "):
            line().append(part, style="dim")
    return rows


def _wrap_parts(parts: list[str], width: int | None, between: str = " · ") -> list[str]:
    """The parts joined on as few lines of `width` as they fit, broken between parts."""
    lines: list[str] = []
    for part in parts:
        if lines and (width is None or cell_len(lines[-1]) + len(between) + cell_len(part) <= width):
            lines[-1] += between + part
        else:
            lines.append(part)
    return lines


def _counter_rows(
    card: Card, line: Callable[..., Text], styles: Styles, title: str, only: str | None, width: int | None
) -> None:
    """The counters in columns: id, ⚠ where one can disqualify, the value, what is counted.

    A verdict counter's tally (`3 played out / 1 annulled`) is too long for the value
    column: it stands on a line of its own under the counter's title.
    """
    heading = line()
    can_disqualify = any(c.counter.disqualifying for c in card.counters)
    if only is not None:
        judged = sum(1 for c in card.counters if c.judged and c.answered)
        put(heading, visible(title), "bold", 2)
        put(heading, f"{judged} of {len(card.counters)} judged", "dim", 2)
        flagged = [c.counter.id for c in card.counters if c.disqualifies]
        if flagged:
            put(heading, f"⚠ {' '.join(flagged)} disqualifies", styles("disqualified"))
        return
    put(heading, visible(title), "bold", 3 if can_disqualify else 0)
    if can_disqualify:
        put(heading, "⚠ can disqualify", "dim")
    wide = max(len(c.counter.id) for c in card.counters)
    short_values = [visible(c.display()) for c in card.counters if c.counter.kind != "verdict"]
    value_width = min(12, max(map(cell_len, short_values), default=1))
    if any(c.disqualifies and c.counter.kind == "verdict" for c in card.counters):
        value_width = max(value_width, len("disqualifies"))
    for counter in card.counters:
        text = line(counter.counter.id)
        seen = bool(counter.events)
        id_style = "bold" if seen else "dim"
        indent(text, 2, id_style)
        put(text, counter.counter.id.ljust(wide), id_style, 1)
        if can_disqualify:
            flag = "⚠" if counter.counter.disqualifying else " "
            put(text, flag, styles("disqualified") if counter.disqualifies else "dim", 1)
        value_style = styles("disqualified") if counter.disqualifies else ("" if seen else "dim")
        shown = visible(counter.display())
        tally = counter.counter.kind == "verdict"
        said = counter.disqualifies and not tally  # a verdict says it in its empty value column instead
        if tally and counter.disqualifies:
            put(text, "disqualifies".ljust(value_width), value_style, 2)
        elif tally:
            text.append(" " * (value_width + 2))
        else:
            put(text, shown.ljust(value_width), value_style, 2)
        about = visible(counter.counter.title)
        room = None if width is None else width - text.cell_len - (14 if said else 0)
        put(text, about if room is None else cut_at_word(about, room), "dim")
        if said:
            text.append("  ")
            put(text, "disqualifies", styles("disqualified"))
        if tally:
            more = line(counter.counter.id)
            indent(more, 3 + wide + (2 if can_disqualify else 0), value_style)
            put(more, shown, value_style)


def _rubric_rows(rubric: RubricCard, line: Callable[..., Text], styles: Styles, mask, columns: Columns) -> None:
    text = line()
    put(text, f"{rubric.rubric.id} {visible(rubric.rubric.title)}", "bold", 2)
    put(text, rubric.total(), styles("total"))
    flag_cells = 2 if columns.disqualifying else 0
    lead = 2 + columns.item + 1 + columns.value + flag_cells + 2  # where the verdict starts
    for item in rubric.items + rubric.bonuses:
        text = line(item.item.id)
        id_style = "bold" if item.scored else "dim"
        indent(text, 2, id_style)
        value = item.text()  # right-aligned: the id's run carries the padding
        put(text, item.item.id.ljust(columns.item), id_style, 1 + columns.value - cell_len(value))
        value_style = styles("disqualified") if item.disqualifies else ""
        put(text, value, value_style, 0 if columns.disqualifying else 2)
        if columns.disqualifying:
            text.append(" ")
            flag = "⚠" if item.item.disqualifying else " "
            put(text, flag, styles("disqualified") if item.disqualifies else "dim", 2)
        _evidence(text, item.annotation, item.low_confidence, styles, mask, columns, lead)
        # An item given again on other passages (one scored from the whole run) rests on each of them.
        for earlier in reversed(item.quoted[:-1] if item.annotation in item.quoted else item.quoted):
            more = line(earlier["id"])
            indent(more, lead - 2, "dim")
            put(more, "+", "dim", 1)
            _evidence(more, earlier, earlier.get("confidence") == "low", styles, mask, columns, lead)
    if rubric.rubric.deductions:
        limit = format_value(rubric.rubric.deductions.maximum)
        text = line()
        style = "bold" if rubric.deduction_annotations else "dim"
        indent(text, 2, style)
        put(text, "deducted outside the items:", style, 1)
        put(text, f"−{format_value(rubric.deductions)} (at most {limit})", styles("fuzzy"))
        if rubric.deductions_capped:
            text.append("  ")
            put(text, "capped", styles("low"))
        for a in rubric.deduction_annotations:
            text = line(a["id"])
            value = "−" + format_value(a["score"] or 0)
            indent(text, 2 + columns.item + 1 + columns.value - cell_len(value), "bold")
            put(text, value, "bold", 2 + flag_cells)
            _evidence(text, a, a.get("confidence") == "low", styles, mask, columns, lead)
    for written in rubric.rubric.written:
        judgment = rubric.written.get(written.id)
        text = line(written.id)
        id_style = "bold" if judgment else "dim"
        indent(text, 2, id_style)
        if judgment is None:
            put(text, written.id.ljust(columns.item), id_style, 1)
            put(text, f"written judgment of {' '.join(written.items)}: not written", "dim")
            continue
        put(text, written.id.ljust(columns.item), id_style, columns.value)
        put(text, "✎", "", 2 + flag_cells)
        # How its quote fared, then the judgment's own words (they are the score).
        mark, style = verification_mark(judgment)
        put(text, mark, styles(style))
        if judgment.get("confidence") == "low":
            text.append(" ")
            put(text, "low confidence", styles("low"))
        text.append(" " * (max(0, columns.mark - cell_len(mark)) + 2))
        room = columns.quote_room(text.cell_len + len("written "))
        put(text, "written " + visible(short(mask(judgment.get("note") or ""), room)), "italic")


def _evidence(
    text: Text, annotation: Mapping[str, Any] | None, low: bool, styles: Styles, mask, columns: Columns, lead: int
) -> None:
    """The verdict on an annotation's quote, and the quote: `✓ exact  “…”`, or `not scored`."""
    mark, style = verification_mark(annotation)
    if not mark or annotation is None:  # no mark: nothing scored
        put(text, "not scored", "dim")
        return
    quote = annotation.get("quote")
    put(text, mark, styles(style))
    if unsupported(annotation):  # a judge's answer without support: shown, not counted
        text.append(" ")
        put(text, "unsupported", styles("absent"))
    elif low:
        text.append(" ")
        put(text, "low confidence", styles("low"))
    if quote:
        text.append(" " * (max(0, columns.mark - cell_len(mark)) + 2))
        room = columns.quote_room(lead + columns.mark + 2)
        put(text, visible(short(mask(quote), room)), "italic")


class ScoreCardView(RowsView):
    """The card, one row per line (an item's row is keyed by the item's id; an extra quote's, by its annotation's).

    It has the focus like any list: `enter` or a click on a row says which (RowsView.Chosen).
    """

    COMPONENT_CLASSES = RowsView.COMPONENT_CLASSES | VERDICT_CLASSES

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self._shown: tuple | None = None
        self._width = 0
        # Rows added to the card's own by its screen (Review: what a judge or a detector proposes),
        # applied each time the card is drawn, a new width included.
        self.decorate: Callable[[list[Row]], list[Row]] | None = None

    def on_mount(self) -> None:
        self.border_title = "score card"

    def show(self, card: Card, mask=_same, counters_title: str = "Counters", only: str | None = None) -> None:
        self._shown = (card, mask, counters_title, only)
        self._width = self.scrollable_content_region.width
        width = self._width or None
        rows = card_rows(card, styles_of(self), mask, counters_title, only, width)
        self.set_rows(self.decorate(rows) if self.decorate is not None else rows)

    def on_resize(self) -> None:
        super().on_resize()
        # The quotes are cut to the width: a new width cuts them again.
        if self._shown is not None and self.scrollable_content_region.width != self._width:
            self.show(*self._shown)

    @property
    def text(self) -> str:
        return "\n".join(row.text.plain for row in self.rows)
