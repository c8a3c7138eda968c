"""The transcript's cursor and selection (Review) as a value: where the keys and a drag move them over the laid-out turns.

A place is a turn's id and an offset into its shown text (the original's, in Review).
Every move returns a new Caret worked out from the Layout alone; the widget
(transcript.py) keeps the current one, draws it and scrolls to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sieve.tui.widgets import text_spans
from sieve.tui.widgets.layout import Block, Layout, cell_width

Place = tuple[str, int]  # (turn id, offset into its text)


@dataclass(frozen=True)
class Caret:
    """The cursor, and the place a selection began (None when nothing is being selected)."""

    cursor: Place | None = None
    anchor: Place | None = None

    @property
    def selection(self) -> tuple[str, int, int] | None:
        """(turn id, start, end) of the selected span, or None: a selection stands in one turn."""
        if not (self.cursor and self.anchor) or self.cursor[0] != self.anchor[0]:
            return None
        a, b = sorted((self.anchor[1], self.cursor[1]))
        return (self.cursor[0], a, b) if a != b else None

    def moved(self, layout: Layout, dx: int, dy: int, extend: bool = False) -> Caret | None:
        """A character left or right (`dx`), a line up or down (`dy`) at the same column, into the turn before
        or after past an edge (not while selecting: a selection stays in its turn); from the first turn's start
        if there was no cursor. `extend` selects from where the selection began. None: no turns to move over."""
        cursor = self.cursor
        if cursor is None:
            if not layout.blocks:
                return None
            cursor = (layout.blocks[0].key, 0)
        anchor = self._anchor(cursor, extend)
        key, offset = cursor
        block = layout[key]
        if dx:
            cursor = _step(layout, key, offset + dx, extend)
        elif dy:
            index = block.line_at(offset)
            column = cell_width(block.text[block.lines[index][0] : offset])
            target = index + dy
            if 0 <= target < len(block.lines):
                cursor = (key, offset_in_line(block, target, column))
            elif not extend:  # off the turn's first or last line: into the turn before or after
                cursor = _neighbour(layout, key, dy, column)
        return Caret(cursor, anchor)

    def to_line_edge(self, layout: Layout, direction: int, extend: bool = False) -> Caret:
        """To the start (`direction` < 0) or the end of the cursor's line; there must be a cursor."""
        assert self.cursor is not None
        anchor = self._anchor(self.cursor, extend)
        key, offset = self.cursor
        block = layout[key]
        start, end = block.lines[block.line_at(offset)] if block.lines else (0, 0)
        return Caret((key, start if direction < 0 else end), anchor)

    def by_word(self, layout: Layout, direction: int, extend: bool = False) -> Caret:
        """To the end of the next word (`direction` > 0) or the start of the word before, in the cursor's turn
        (ctrl+→ / ctrl+←; with shift, the selection grows or shrinks by a word). There must be a cursor."""
        assert self.cursor is not None
        key, offset = self.cursor
        text = layout[key].text
        if direction > 0:
            offset = text_spans.word_end_after(text, offset)
        else:
            offset = text_spans.word_start_before(text, offset)
        anchor = self._anchor(self.cursor, extend)
        if anchor is not None and anchor[0] == key:
            # A selection's edge stops at a word, not at the white space beside it: a quote has no loose ends.
            while offset > anchor[1] and text[offset - 1].isspace():
                offset -= 1
            while offset < anchor[1] and text[offset].isspace():
                offset += 1
        return Caret((key, offset), anchor)

    def word(self, layout: Layout, place: Place) -> Caret:
        """The word at `place` selected (a double click); on a gap between words, the cursor there."""
        span = text_spans.word_at(layout[place[0]].text, place[1])
        return _spanning(place[0], span) if span else Caret(place)

    def sentence(self, layout: Layout, place: Place | None = None) -> Caret | None:
        """The sentence under `place` (else the cursor) selected: `.`, or a triple click. None: no cursor."""
        place = place or self.cursor
        if place is None:
            return None
        span = text_spans.sentence_at(layout[place[0]].text, place[1])
        return _spanning(place[0], span) if span else Caret(place)

    def next_sentence(self, layout: Layout) -> Caret | None:
        """`>`: the selection grows to the end of the next sentence (or of the one it stops inside); with
        nothing selected, the sentence under the cursor. None: no cursor."""
        selection = self.selection
        if selection is None:
            return self.sentence(layout)
        key, start, end = selection
        stop = text_spans.sentence_end_after(layout[key].text, end)
        return Caret((key, stop if stop is not None else end), (key, start))

    def dragged_to(self, layout: Layout, under: Place) -> Caret | None:
        """The mouse dragged to `under`; None if no drag began (no anchor)."""
        anchor = self.anchor
        if anchor is None:
            return None
        # A quote stands in one turn: a drag past its end stops at its edge.
        if under[0] != anchor[0]:
            keys = [b.key for b in layout.blocks]
            after = keys.index(under[0]) > keys.index(anchor[0])
            under = (anchor[0], len(layout[anchor[0]].text) if after else 0)
        return Caret(under, anchor)

    def _anchor(self, cursor: Place, extend: bool) -> Place | None:
        """Where the selection begins after a move: kept while extending (else here), dropped otherwise."""
        if not extend:
            return None
        return cursor if self.anchor is None else self.anchor


def _spanning(key: str, span: tuple[int, int]) -> Caret:
    """A selection of [start, end) of a turn, the cursor at its end."""
    return Caret((key, span[1]), (key, span[0]))


def _step(layout: Layout, key: str, offset: int, extend: bool) -> Place:
    block = layout[key]
    if 0 <= offset <= len(block.text) or extend:
        return key, max(0, min(len(block.text), offset))
    return _neighbour(layout, key, 1 if offset > 0 else -1, 0 if offset > 0 else 10**9)


def _neighbour(layout: Layout, key: str, direction: int, column: int) -> Place:
    """The place at `column` on the nearest line of the turn before (`direction` < 0) or after; at the
    first or last turn, its start or end."""
    keys = [b.key for b in layout.blocks]
    i = keys.index(key) + direction
    if not 0 <= i < len(keys):
        block = layout[key]
        return key, (0 if direction < 0 else len(block.text))
    other = layout[keys[i]]
    line = 0 if direction > 0 else max(0, len(other.lines) - 1)
    return keys[i], offset_in_line(other, line, column) if other.lines else 0


def offset_in_line(block: Block, index: int, column: int) -> int:
    """The offset on line `index` of a block at cell `column` (the line's end if it is shorter)."""
    start, end = block.lines[index]
    used = 0
    for i in range(start, end):
        used += cell_width(block.text[i])
        if used > column:
            return i
    return end
