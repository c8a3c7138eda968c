"""The evidence on Review's page: every annotation's quote highlighted in the transcript, what stands under the
cursor, and which quotes a row of the score card rests on.

Functions of the annotations in force (RunView.annotations), so the transcript, the
line under it, the card and the list of annotations always say the same thing.
A highlight's kind is a plain string (transcript.HIGHLIGHT_KINDS): a suggestion
waiting for a person has a kind of its own and is drawn beside these. `Evidence`
holds them for the screen, and takes the reviewer to the quotes (enter on the card
or the list).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.store.record.annotations import is_evidence
from sieve.store.record.rows import Annotation, Turn
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.tui.screens.review.host import Notifies
from sieve.tui.widgets.rows import RowsView
from sieve.tui.widgets.transcript import Highlight, TranscriptView

if TYPE_CHECKING:
    from sieve.tui.screens.review.annotation_list import AnnotationList
    from sieve.tui.screens.review.under_cursor import UnderCursor

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
    "excerpt": "note",
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
    if verdict and not is_evidence(verdict) and verdict != "player":
        verdict = "absent"  # altered: no evidence, struck through like a quote not found
    elif annotation.get("off_step") and is_evidence(verdict):
        verdict = "player"  # found, but off the item's steps: no evidence, drawn as the player's words are
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
        found, turn_id = highlight_of(a), a.get("quote_turn_id")
        if found is not None and turn_id is not None:  # a highlight is only made of a quote placed in its turn
            out.setdefault(turn_id, []).append(found)
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


class EvidenceHost(Notifies, Protocol):
    """What the evidence needs of its screen."""

    view: RunView
    scenario: Scenario
    card: Card | None

    @property
    def reviewer(self) -> str: ...
    @property
    def is_mounted(self) -> bool: ...
    @property
    def turns(self) -> list[Turn]: ...
    @property
    def position(self) -> int: ...
    @property
    def whole(self) -> bool: ...
    @property
    def transcript(self) -> TranscriptView: ...
    @property
    def under_cursor(self) -> UnderCursor: ...
    @property
    def annotation_list(self) -> AnnotationList: ...
    def mask(self, text: str) -> str: ...
    def show_turn(self, position: int) -> None: ...
    def select_span(self, start: int, end: int) -> None: ...
    def show_highlights(self) -> None: ...
    def e_edits_here(self) -> bool: ...


class Evidence:
    """The annotations in force on the page: their highlights, which stand at a place, and going to one's quote."""

    def __init__(self, host: EvidenceHost) -> None:
        self.host = host
        self.highlights: dict[str, list[Highlight]] = {}  # each quoted annotation's span, by turn
        self.active: dict[str, Annotation] = {}  # the annotations in force, by id
        self.chosen: str | None = None  # the annotation enter went to last (from the card or the list)
        self.visit: tuple[str, int] | None = None  # the card's row enter was pressed on, and which of its quotes

    def show(self, active: list[Annotation]) -> None:
        """Highlight every quote in force where it stands, and say again what is under the cursor."""
        self.active = {a["id"]: a for a in active}
        self.highlights = highlights(active)
        self.host.show_highlights()
        self.show_under_cursor()

    def cursor_place(self) -> tuple[str, int] | None:
        """Where the keyboard's cursor points: the start of the selection, else the cursor."""
        transcript = self.host.transcript
        selection = transcript.selection
        if selection is not None:
            return selection[0], selection[1]
        return transcript.cursor

    def at(self, place: tuple[str, int] | None) -> list[Annotation]:
        """The annotations whose quotes cover a character, the one drawn on top (or chosen last) first."""
        if place is None:
            return []
        spans = [h for h in self.highlights.get(place[0], ()) if h.start <= place[1] < h.end]
        return under(spans, self.active, self.chosen)

    def show_under_cursor(self) -> None:
        """The line under the transcript: the annotations under the mouse, else under the cursor, else a legend."""
        host = self.host
        if not host.is_mounted:
            return
        transcript = host.transcript
        pointed = self.at(transcript.pointer)
        here = pointed or self.at(self.cursor_place())
        if not here:
            kinds = {h.style for spans in self.highlights.values() for h in spans}
            host.under_cursor.show_legend(kinds, transcript.get_component_rich_style)
            return
        edits = not pointed and host.e_edits_here()
        host.under_cursor.show_annotations(here, host.scenario, host.mask, self.quote_number, edits)

    def quote_number(self, annotation: Annotation) -> tuple[int, int] | None:
        """Which of its item's quotes this is (an item given on several passages rests on each)."""
        card = self.host.card
        if annotation["kind"] != "score" or card is None:
            return None
        try:
            quoted = card.item(annotation["item"]).quoted
        except KeyError:
            return None
        ids = [a["id"] for a in quoted]
        return (ids.index(annotation["id"]) + 1, len(ids)) if annotation["id"] in ids else None

    def listed(self) -> Annotation | None:
        """The annotation highlighted in the list, as the database holds it now."""
        host = self.host
        key = host.annotation_list.highlighted_key
        if key is None:
            return None
        return next((a for a in host.view.annotations(host.reviewer) if a["id"] == key), None)

    def to_edit(self) -> Annotation | None:
        """What `e` and `x` act on: the annotation under the cursor, else the one highlighted in the list
        (in the list, always the list's)."""
        if self.host.annotation_list.has_focus:
            return self.listed()
        here = self.at(self.cursor_place())
        return here[0] if here else self.listed()

    def go_to(self, annotation: Annotation) -> bool:
        """Show the turn an annotation's quote stands in, with the quote selected (what `s` would score with);
        without a quote, the turn it was given on. False when neither is in this run's transcript."""
        host = self.host
        span = span_of(annotation)
        turn_id = span[0] if span else annotation.get("turn_id")
        position = next((i for i, t in enumerate(host.turns) if t["id"] == turn_id), None)
        if position is None or turn_id is None:
            return False
        self.chosen = annotation["id"]
        if not host.whole and position != host.position:
            host.show_turn(position)  # the whole transcript holds it already: the selection scrolls to it
        if span is not None:
            host.transcript.select_span(*span)
        else:
            host.transcript.place_cursor(turn_id, 0)
        if host.whole:
            self._show_with_its_turn(turn_id, span[1] if span else 0)
        return True

    def _show_with_its_turn(self, turn_id: str, offset: int) -> None:
        """In the whole transcript, scroll so a place shows below its turn's title, or a third down the view."""
        transcript = self.host.transcript
        layout = transcript.text_layout
        y, top = layout.y_of(turn_id, offset), layout.top(turn_id)
        height = transcript.scrollable_content_region.height or 1
        transcript.scroll_to(y=top if y - top < height * 2 // 3 else y - height // 3, animate=False)

    def choose_card_row(self, key: str | None) -> None:
        """`enter` on an item of the card: its quote, selected in its turn; again, its next quote (or event)."""
        host = self.host
        if key is None:
            return
        order = {t["id"]: i for i, t in enumerate(host.turns)}
        found = row_annotations(key, list(self.active.values()), order)
        if not found:
            host.notify(f"{key} has nothing given yet: select a quote and score it (s or l).")
            return
        index = (self.visit[1] + 1) % len(found) if self.visit and self.visit[0] == key else 0
        self.visit = (key, index)
        annotation = found[index]
        if not self.go_to(annotation):
            host.notify(f"{visible(annotation['item'])}: its quote is not in this run's transcript.")
            return
        if span_of(annotation) is None:
            host.notify(f"{visible(annotation['item'])} has no quote: its turn is shown.")
        self.show_under_cursor()

    def choose_listed(self, key: str | None) -> None:
        """`enter` on an annotation in the list: its quote, selected in its turn, and the keys back on the text."""
        annotation = self.active.get(key or "")
        if annotation is None:
            return
        self.visit = None
        if self.go_to(annotation):
            self.host.transcript.focus()

    def jump_to_quote(self, listed: RowsView) -> None:
        """Highlighting an annotation in the list shows its quote in its turn."""
        if not listed.has_focus:
            return  # a refresh of the list, not the reviewer browsing it
        annotation = self.listed()
        if not annotation or annotation["quote_turn_id"] is None:
            return
        host = self.host
        start, end = annotation["quote_start"], annotation["quote_end"]
        for i, turn in enumerate(host.turns):
            if turn["id"] == annotation["quote_turn_id"]:
                if i != host.position:
                    host.show_turn(i)
                if start is not None and end is not None:  # a quote not found keeps the turn it named, not a span
                    host.select_span(start, end)
                break
