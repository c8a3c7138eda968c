"""A turn's text as HTML with every quote marked: `<mark id="q-…">` around the span it was found at.

Marks nest: where two quotes overlap without one holding the other, the later-starting one is
split at the edge of the earlier, and only its first piece carries the anchor (the others name it
in `data-q`). Positions are those of the record's text (masking keeps lengths), and each piece is
escaped on its own, so a quote's span never falls inside an escape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sieve.report.markup import esc

# An annotation's kind -> the kind of its highlight (as sieve/tui/screens/review/evidence.py HIGHLIGHT_OF).
HIGHLIGHT_OF = {
    "score": "score",
    "count": "counter",
    "verdict": "counter",
    "probe": "probe",
    "deduction": "deduction",
    "judgment": "judgment",
    "note": "note",
    "flag": "note",
    "excerpt": "excerpt",  # the report's own (Review draws an excerpt as a note)
}


@dataclass(frozen=True)
class Mark:
    """One quote's span in a turn: [start, end), its highlight kind and verdict, and its anchor id."""

    start: int
    end: int
    kind: str
    verdict: str
    anchor: str
    title: str = ""  # what the mark stands for ("T3 2 by ada"), shown on hover


def _open(mark: Mark, first: bool) -> str:
    classes = f"k-{mark.kind}" + (f" v-{mark.verdict}" if mark.verdict else "")
    title = f' title="{esc(mark.title)}"' if mark.title else ""
    if first:
        return f'<mark id="{mark.anchor}" class="{classes}"{title}>'
    return f'<mark class="{classes} cont" data-q="{mark.anchor}"{title}>'


def marked(text: str, marks: Sequence[Mark]) -> str:
    """`text` escaped, with each mark's span wrapped (outer spans first where they start together)."""
    size = len(text)
    spans = [m for m in marks if 0 <= m.start < m.end <= size]
    if not spans:
        return esc(text)
    order = {id(m): n for n, m in enumerate(sorted(spans, key=lambda m: (m.start, -m.end)))}
    bounds = sorted({0, size, *(m.start for m in spans), *(m.end for m in spans)})
    out: list[str] = []
    stack: list[Mark] = []
    opened: set[str] = set()
    for left, right in zip(bounds, bounds[1:]):
        covering = [m for m in spans if m.start <= left and right <= m.end]
        # Close from the top until what stays open covers this segment (a crossing span is closed and reopened).
        keep = 0
        while keep < len(stack) and stack[keep] in covering:
            keep += 1
        for _ in range(len(stack) - keep):
            stack.pop()
            out.append("</mark>")
        for mark in sorted((m for m in covering if m not in stack), key=lambda m: order[id(m)]):
            out.append(_open(mark, mark.anchor not in opened))
            opened.add(mark.anchor)
            stack.append(mark)
        out.append(esc(text[left:right]))
    out.append("</mark>" * len(stack))
    return "".join(out)
