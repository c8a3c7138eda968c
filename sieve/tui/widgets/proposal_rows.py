"""What machines propose, drawn on the score card: the suggestions pending, and a judge's draft beside each item.

Neither counts: a pending suggestion is a line saying how many wait (and, on a
counter's row, how many are its), a judge's score is a dim line under the item it
scores, with its verification mark and quote. Both become the reviewer's own only
when the reviewer accepts or adopts them (Review's y, a, A).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.text import Text

from sieve.safe_text import visible
from sieve.store.scoring.draft import is_adopted
from sieve.store.scoring.scorecard import Card
from sieve.tui.widgets.rows import Row
from sieve.tui.widgets.scorecard import Styles, indent, put, short, verification_mark

INDENT = 7  # cells: under an item's value


def _same(text: str) -> str:
    return text


def pending_text(count: int) -> str:
    return f"{count} suggestion{'s' if count != 1 else ''} pending"


def with_proposals(
    rows: list[Row],
    styles: Styles,
    *,
    pending: list[dict[str, Any]],
    mine: Card,
    judge: str | None = None,
    judge_card: Card | None = None,
    mask=_same,
) -> list[Row]:
    """The card's rows with the pending suggestions counted under the totals, on each counter's row, and the
    judge's draft under each item it scored (or left unscored)."""
    by_counter = Counter(s["item"] for s in pending)
    out: list[Row] = []
    for n, row in enumerate(rows):
        if row.key in by_counter:
            text = row.text.copy()
            text.append(f"  +{by_counter[row.key]} pending", style=styles("fuzzy"))
            row = Row(text, row.key)
        out.append(row)
        if n == 0:
            out.extend(_heading(styles, len(pending), judge))
        if judge_card is not None and row.key is not None:
            line = _draft_line(row.key, mine, judge_card, styles, mask)
            if line is not None:
                out.append(Row(line))
    return out


def _heading(styles: Styles, pending: int, judge: str | None) -> list[Row]:
    rows = []
    if pending:
        rows.append(Row(Text(pending_text(pending) + "  (] the next: y accepts, x rejects)", style=styles("fuzzy"))))
    if judge is not None:
        rows.append(Row(Text(visible(f"draft of {judge} under each item  (a adopts, A walks it)"), style="dim")))
    return rows


def _draft_line(key: str, mine: Card, judge_card: Card, styles: Styles, mask) -> Text | None:
    """The judge's answer under an item's row (or a verdict or yes/no counter's), or None for other rows.

    Built with the card's own `indent` and `put`, so that no run of text begins with spaces: a
    picture of the screen (SVG) keeps the line where the terminal draws it.
    """
    line = Text()
    indent(line, INDENT, "dim")
    try:
        theirs, own = judge_card.item(key), mine.item(key)
    except KeyError:
        counter = next((c for c in judge_card.counters if c.counter.id == key), None)
        if counter is None or counter.counter.kind not in ("verdict", "yesno") or not counter.events:
            return None
        put(line, "judge", "dim", 1)
        put(line, visible(counter.display()), "dim")
        return line
    if is_adopted(own.annotation):
        put(line, "adopted from the judge", "dim")
        return line
    put(line, "judge", "dim", 1)
    if theirs.annotation is None:
        put(line, "–  left unscored", "dim")
        return line
    value = theirs.text()
    if len(value) < 3:
        line.append(" " * (3 - len(value)), style="not dim")  # right-aligned, in a run of its own
    put(line, value, "dim", 1)
    mark, style = verification_mark(theirs.annotation)
    put(line, mark, styles(style), 1)
    put(line, visible(short(mask(theirs.annotation.get("quote") or ""))), "dim italic")
    return line
