"""The evidence on Review's page: every annotation's quote highlighted in the transcript, what stands under the
cursor, and which quotes a row of the score card rests on.

Functions of the annotations in force (RunView.annotations), so the transcript, the
line under it, the card and the list of annotations always say the same thing.
A highlight's kind is a plain string (transcript.HIGHLIGHT_KINDS): a suggestion
waiting for a person has a kind of its own and is drawn beside these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rich.style import Style
from rich.text import Text

from sieve.safe_text import one_line, visible
from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import value_text
from sieve.tui.widgets.scorecard import put, verification_mark
from sieve.tui.widgets.transcript import Highlight

# An annotation's kind -> the kind of its highlight (the component class highlight--KIND).
HIGHLIGHT_OF = {
    "score": "score",
    "count": "counter",
    "verdict": "counter",
    "probe": "probe",
    "deduction": "deduction",
    "judgment": "judgment",
    "note": "note",
    "flag": "note",
}
# What the legend under the transcript calls each kind.
LEGEND = {
    "score": "score",
    "counter": "event",
    "probe": "probe",
    "deduction": "deduction",
    "judgment": "judgment",
    "note": "note",
}
VERDICTS = ("exact", "fuzzy", "absent", "player")

Annotation = dict[str, Any]


def span_of(annotation: Annotation) -> tuple[str, int, int] | None:
    """Where an annotation's quote stands (turn id, start, end), or None (no quote, or no place for it)."""
    turn, start, end = annotation.get("quote_turn_id"), annotation.get("quote_start"), annotation.get("quote_end")
    if not annotation.get("quote") or turn is None or start is None or end is None or end <= start:
        return None
    return turn, start, end


def highlight_of(annotation: Annotation) -> Highlight | None:
    span = span_of(annotation)
    if span is None:
        return None
    verdict = annotation.get("verification") or ""
    return Highlight(
        span[1],
        span[2],
        HIGHLIGHT_OF.get(annotation["kind"], "note"),
        verdict if verdict in VERDICTS else "",
        annotation["id"],
    )


def highlights(annotations: Iterable[Annotation]) -> dict[str, list[Highlight]]:
    """Every quoted annotation as a highlight of its turn.

    In each turn the longer spans come first and, of two as long, the older: the
    transcript draws later ones over earlier ones, so where spans overlap the
    innermost (then the latest) shows its colour.
    """
    out: dict[str, list[Highlight]] = {}
    for a in sorted(annotations, key=lambda a: a["id"]):
        found = highlight_of(a)
        if found is not None:
            out.setdefault(a["quote_turn_id"], []).append(found)
    for spans in out.values():
        spans.sort(key=lambda h: -(h.end - h.start))  # stable: of equal length, the older first
    return out


def merged(*layers: dict[str, list[Highlight]]) -> dict[str, list[Highlight]]:
    """Several sets of highlights in one, each later layer drawn over the earlier (search hits last)."""
    out: dict[str, list[Highlight]] = {}
    for layer in layers:
        for turn_id, spans in layer.items():
            out.setdefault(turn_id, []).extend(spans)
    return out


def under(spans: list[Highlight], by_id: dict[str, Annotation], chosen: str | None = None) -> list[Annotation]:
    """The annotations of the highlights at one place, the one drawn on top first (`chosen` before all)."""
    found = [by_id[h.key] for h in reversed(spans) if h.key in by_id]
    found.sort(key=lambda a: a["id"] != chosen)  # stable
    return found


def row_annotations(key: str, active: list[Annotation], order: dict[str, int]) -> list[Annotation]:
    """The annotations a row of the card (or of the list) stands for, in the order `enter` visits their quotes.

    A row keyed by an annotation's id (a deduction, another quote of an item) is that
    annotation; an item's row is its scores, the one that counts first; a counter's
    or a probe's row, its events in the order of the transcript. `order` is each
    turn's position.
    """
    exact = [a for a in active if a["id"] == key]
    if exact:
        return exact
    mine = [a for a in active if a["item"] == key and a["kind"] not in ("note", "flag")]
    if any(a["kind"] == "score" for a in mine):
        return sorted((a for a in mine if a["kind"] == "score"), key=lambda a: a["id"], reverse=True)

    def place(a: Annotation) -> tuple[int, int, str]:
        span = span_of(a)
        if span is None:
            return (len(order), 0, a["id"])
        return (order.get(span[0], len(order)), span[1], a["id"])

    return sorted(mine, key=place)


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
    if annotation.get("note"):
        put(text, "· ✎ " + one_line(mask(annotation["note"])), "italic")
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
