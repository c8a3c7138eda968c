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
from sieve.tui.app.widgets.rows import Row
from sieve.tui.app.widgets.scorecard import Styles, short, verification_mark

INDENT = " " * 7  # under an item's value


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
    """The judge's answer under an item's row (or a verdict or yes/no counter's), or None for other rows."""
    try:
        theirs, own = judge_card.item(key), mine.item(key)
    except KeyError:
        counter = next((c for c in judge_card.counters if c.counter.id == key), None)
        if counter is None or counter.counter.kind not in ("verdict", "yesno") or not counter.events:
            return None
        return Text(INDENT + "judge " + visible(counter.display()), style="dim")
    line = Text(INDENT, style="dim")
    if is_adopted(own.annotation):
        line.append("adopted from the judge", style="dim")
        return line
    if theirs.annotation is None:
        line.append("judge –  left unscored", style="dim")
        return line
    line.append(f"judge {theirs.text():>3} ", style="dim")
    mark, style = verification_mark(theirs.annotation)
    line.append(mark, style=styles(style))
    line.append(" " + visible(short(mask(theirs.annotation.get("quote") or ""))), style="dim italic")
    return line
