"""The transcript: every turn as lines, drawn only where they are in view.

Model text is data: it is shown as plain text (never Rich markup), control
characters replaced one for one (Review, where offsets must stay exact) or
written out as escapes (Play). The turns are kept as blocks (transcript_turns.py),
wrapped per turn, cached, and redone only on resize (layout.py); a streaming reply
appends to its last lines, so the cost of a delta does not grow with the
transcript. Deltas are drawn at most twenty times a second; a line in view is
drawn (transcript_lines.py) and cached until the transcript changes. New
highlights, a moved cursor or selection draw again only the lines they touch
(a saved quote redraws its own lines, not the screen's worth).

In Review the view has a cursor and a selection (transcript_cursor.py), by
keyboard (arrows, with shift to select; ctrl by words; `.` a sentence, `>` the
next one too) and by mouse (drag; a double click a word, a triple click a
sentence), always as offsets into one turn's original text. Highlights (annotations' quotes, search hits) are
drawn over the text in styles of their kind, and the gutter counts them on each line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from sieve.tui.widgets.layout import Layout
from sieve.tui.widgets.lines_view import LinesView
from sieve.tui.widgets.transcript_cursor import Caret, Place
from sieve.tui.widgets.transcript_keys import KEYS
from sieve.tui.widgets.transcript_lines import GUTTER, HIGHLIGHT_KINDS, LINE_CLASSES, Highlight, fit, line_segments
from sieve.tui.widgets.transcript_turns import TurnBlocks, turn_title

# What Review, Results and the tests import from here; each is defined where the imports above say.
__all__ = ["GUTTER", "HIGHLIGHT_KINDS", "Highlight", "TranscriptView", "turn_title"]


class TranscriptView(LinesView, can_focus=True):
    """Turns as lines; Play streams into it, Review selects quotes in it."""

    COMPONENT_CLASSES = LINE_CLASSES
    BINDINGS = KEYS

    class SelectionChanged(Message):
        """The cursor or the selection moved (Review shows what is under it)."""

    class Pointed(Message):
        """The mouse moved onto another character of the text, or off it (Review shows what is under it)."""

    class TurnClicked(Message):
        """A click on a turn of a transcript without a cursor (Play selects the turn)."""

        def __init__(self, view: TranscriptView, key: str) -> None:
            super().__init__()
            self.view = view
            self.key = key

        @property
        def control(self) -> TranscriptView:
            return self.view

    def __init__(self, *, exact: bool = True, cursor: bool = False, id: str | None = None, classes: str | None = None):
        """`exact`: control characters as same-length stand-ins, so offsets are the original's (Review);
        else written out as escapes (Play). `cursor`: a text cursor and a selection (Review)."""
        super().__init__(id=id, classes=classes)
        self.exact = exact
        self.cursor_enabled = cursor
        self.turn_blocks = TurnBlocks(exact)  # the turns, laid out as blocks of lines
        self.selected: str | None = None  # the selected turn (Play)
        self.caret = Caret()  # the cursor and the selection (Review)
        self.highlights: dict[str, list[Highlight]] = {}
        self.pointer: Place | None = None  # the character under the mouse (Review)
        self._scheduled = False
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(1024)  # (line, width) -> the line drawn
        self._drawn = Caret()  # the cursor and selection as the lines in the cache show them
        self._dragging = False
        self._styles: dict[str, Style] = {}
        self._restyled = False  # the stylesheet was applied again since the styles were last looked at

    # -- content ----------------------------------------------------------------------

    @property
    def turns(self) -> dict[str, dict[str, Any]]:
        """The turns shown, by id, in order."""
        return self.turn_blocks.turns

    @property
    def text_layout(self) -> Layout:
        return self.turn_blocks.layout

    def set_turns(self, turns: Sequence[Mapping[str, Any]], alternatives: dict[str, int] | None = None) -> None:
        """Show exactly these turns, in this order."""
        self.turn_blocks.set_turns(turns, alternatives or {})
        if self.cursor and self.cursor[0] not in self.turns:
            self.caret = Caret()
        self._changed()

    def show(self, turn: Mapping[str, Any], alternatives: int = 1) -> None:
        """Add a turn at the end, or replace the turn at the same position (a new alternative)."""
        self._flush()
        old = self.turn_blocks.show(turn, alternatives)
        if old is not None and self.selected == old:
            self.selected = turn["id"]
        self._changed(follow=True)

    def feed(self, key: str, text: str) -> None:
        """A streamed delta; drawn with the others at the next frame."""
        self.turn_blocks.pending.setdefault(key, []).append(text)  # here, not in a call: once a token
        if not self._scheduled and self.is_mounted:
            self._scheduled = True
            self.set_timer(self.turn_blocks.frame, self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        if not self.turn_blocks.pending:
            return
        follow = self.is_vertical_scroll_end
        self.turn_blocks.flush()
        self._changed(follow=follow)

    def finish(self, turn: Mapping[str, Any], alternatives: int = 1) -> None:
        """The turn's final state: title, error, and its text as stored."""
        follow = self.is_vertical_scroll_end
        old = self.turn_blocks.finish(turn, alternatives)
        if self.selected == old:
            self.selected = turn["id"]
        self._changed(follow=follow)

    def text_of(self, key: str) -> str:
        """What is shown of a turn, with what is still waiting for the next frame."""
        return self.turn_blocks.text_of(key)

    @property
    def keys(self) -> list[str]:
        return self.turn_blocks.keys

    @property
    def text(self) -> str:
        """The shown text of the turn under the cursor (or the only one)."""
        key = self.cursor[0] if self.cursor else (self.keys[0] if self.keys else None)
        return self.text_of(key) if key else ""

    def set_highlights(self, highlights: dict[str, list[Highlight]]) -> None:
        """Draw these spans over the text, per turn id; later ones in a turn's list over earlier ones.

        Only the lines where a highlight came, went or changed are drawn again.
        """
        old, self.highlights = self.highlights, highlights
        spans: list[tuple[str, int, int]] = []
        for key in old.keys() | highlights.keys():
            before, after = old.get(key, []), highlights.get(key, [])
            if before == after:
                continue
            changed = set(before) ^ set(after)
            # The same spans in another order: where they overlap, another is on top.
            spans.extend((key, h.start, h.end) for h in (changed or before))
        self._redraw_spans(spans)

    def select_turn(self, key: str | None) -> None:
        """Mark a turn as selected (Play): a mark in the gutter and its title reversed; scroll to it."""
        self.selected = key
        self._changed()
        if key is not None and self.text_layout.block(key) is not None:
            top = self.text_layout.top(key)
            self.scroll_to_region_lines(top, top + self.text_layout[key].height)

    def scroll_to_region_lines(self, top: int, bottom: int) -> None:
        height = self.scrollable_content_region.height or 1
        if top < self.scroll_offset.y:
            self.scroll_to(y=top, animate=False)
        elif bottom > self.scroll_offset.y + height:
            self.scroll_to(y=max(top, bottom - height), animate=False)

    def _changed(self, follow: bool = False) -> None:
        """The turns changed (or their layout): every line is drawn again."""
        self._cache.clear()
        self._drawn = self.caret
        size = Size(self.text_layout.width + GUTTER, self.text_layout.height)
        if size != self.virtual_size:
            # Not the reactive's setter: that lays out the whole screen again, twenty times a
            # second while a reply streams. The scrollbar is always there (overflow-y: scroll),
            # so a taller transcript changes nothing but the scrollbar's window.
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        self.refresh()
        if follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def _redraw_spans(self, spans: Iterable[tuple[str, int, int]]) -> None:
        """Draw again the lines showing these (turn id, start, end) character ranges, and no others."""
        layout = self.text_layout
        lines: set[int] = set()
        for key, start, end in spans:
            block = layout.block(key)
            if block is None:  # a turn not shown (Review shows one at a time)
                continue
            first = layout.top(key) + 1
            lines.update(range(first + block.line_at(start), first + block.line_at(max(start, end)) + 1))
        if not lines:
            return
        width, top = self.scrollable_content_region.width, self.scroll_offset.y
        height = self.scrollable_content_region.height
        for y in lines:
            self._cache.discard((y, width))
        in_view = sorted(y for y in lines if top <= y < top + height)  # a line out of view is drawn when it comes in
        if len(in_view) >= height:  # a screenful: all of it, at once
            self.refresh()
        else:
            for y in in_view:
                self.refresh_line(y)

    # -- size ------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        if self.text_layout.resize(max(10, self.scrollable_content_region.width - GUTTER)):
            self._changed()

    # -- drawing ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        if self._restyled:
            self._check_styles()
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        key = (line, width)
        strip = self._cache.get(key)
        if strip is None:
            # One Strip per line, exactly `width` cells (transcript_lines.py draws it).
            strip = Strip(fit(self._line_segments(line), width, self._style("base")), width)
            self._cache[key] = strip
        return strip

    def _line_segments(self, y: int) -> list[Segment]:
        turn_blocks = self.turn_blocks
        found = turn_blocks.layout.locate(y)
        if found is None:
            return []
        block, kind, index = found
        key = block.key
        selection: tuple[int, int] | None = None
        cursor: int | None = None
        if kind == "text":  # what only a line of text shows
            caret = self.caret
            span = caret.selection
            if span and span[0] == key:
                selection = (span[1], span[2])
            if self.cursor_enabled and caret.cursor and caret.cursor[0] == key and self.has_focus:
                cursor = caret.cursor[1]
        role = turn_blocks.turns.get(key, {}).get("role", "assistant")
        highlights = self.highlights.get(key, ())
        return line_segments(block, kind, index, self._style, role, key == self.selected, highlights, selection, cursor)

    def _style(self, name: str) -> Style:
        """A style by its short name ("title", "cursor"), or by a full component class name ("highlight--score")."""
        # Asking the stylesheet costs more than drawing a line: once per style until the styles change.
        style = self._styles.get(name)
        if style is None:
            if name == "base":
                style = self.rich_style
            else:
                name_of_class = name if "--" in name else f"transcript--{name}"
                style = self.get_component_rich_style(name_of_class, partial=True)
            self._styles[name] = style
        return style

    def notify_style_update(self) -> None:
        # Textual applies the stylesheet again on every focus change, mostly to no effect: the lines drawn are
        # kept until a style they use turns out to have changed (the component classes are only read after
        # this call, so that is known when the next line is drawn).
        super().notify_style_update()
        self._restyled = True

    def _check_styles(self) -> None:
        self._restyled = False
        known, self._styles = self._styles, {}
        if any(self._style(name) != style for name, style in known.items()):
            self._cache.clear()

    # -- the cursor and the selection (Review) ------------------------------------------

    @property
    def cursor(self) -> Place | None:
        """(turn id, offset) of the cursor, or None."""
        return self.caret.cursor

    @property
    def selection(self) -> tuple[str, int, int] | None:
        """(turn id, start, end) of the selected span, or None."""
        return self.caret.selection

    def select_span(self, key: str, start: int, end: int) -> None:
        self.caret = Caret(cursor=(key, end), anchor=(key, start))
        self._moved(scroll=True)

    def place_cursor(self, key: str, offset: int = 0) -> None:
        self.caret = Caret(cursor=(key, offset))
        self._moved(scroll=True)

    def clear_selection(self) -> None:
        """Nothing selected any more (after a save); the cursor where the selection began, on what was just
        saved (the line under the transcript names it, `e` and `x` act on it)."""
        selection = self.caret.selection
        if self.caret.anchor is not None:
            self.caret = Caret(cursor=(selection[0], selection[1]) if selection else self.caret.cursor)
            self._moved()

    def move_selection(self, move: str) -> None:
        """A move of the selection by name (what a picker's quote keys ask): sentence, next_sentence,
        word_left, word_right."""
        if move == "sentence":
            self.action_sentence()
        elif move == "next_sentence":
            self.action_next_sentence()
        elif move in ("word_left", "word_right"):
            self.action_word(-1 if move == "word_left" else 1, True)

    def _moved(self, scroll: bool = False) -> None:
        self._redraw_caret()
        if scroll and self.cursor and self.text_layout.block(self.cursor[0]) is not None:
            y = self.text_layout.y_of(*self.cursor)
            self.scroll_to_region_lines(y, y + 1)
        self.post_message(self.SelectionChanged())

    def _redraw_caret(self) -> None:
        """Draw again the lines where the cursor or the selection was or is now (only where an edge moved)."""
        before, after = self._drawn, self.caret
        self._drawn = after
        if before == after:
            return
        spans = [(place[0], place[1], place[1]) for place in (before.cursor, after.cursor) if place is not None]
        old, new = before.selection, after.selection
        if old and new and old[0] == new[0]:  # the same turn: what lies between the old edges and the new
            spans.append((old[0], min(old[1], new[1]), max(old[1], new[1])))
            spans.append((old[0], min(old[2], new[2]), max(old[2], new[2])))
        else:
            spans.extend(selection for selection in (old, new) if selection is not None)
        self._redraw_spans(spans)

    def action_move(self, dx: int, dy: int, extend: bool = False) -> None:
        if not self.cursor_enabled:
            self.scroll_relative(y=dy, animate=False)
            return
        caret = self.caret.moved(self.text_layout, dx, dy, extend)
        if caret is not None:
            self.caret = caret
            self._moved(scroll=True)

    def action_line_edge(self, direction: int, extend: bool = False) -> None:
        if not self.cursor_enabled or self.cursor is None:
            self.scroll_home(animate=False) if direction < 0 else self.scroll_end(animate=False)
            return
        self.caret = self.caret.to_line_edge(self.text_layout, direction, extend)
        self._moved(scroll=True)

    def action_word(self, direction: int, extend: bool = False) -> None:
        if not self.cursor_enabled or self.cursor is None:
            return
        self.caret = self.caret.by_word(self.text_layout, direction, extend)
        self._moved(scroll=True)

    def action_sentence(self) -> None:
        self._set_caret(self.caret.sentence(self.text_layout) if self.cursor_enabled else None)

    def action_next_sentence(self) -> None:
        self._set_caret(self.caret.next_sentence(self.text_layout) if self.cursor_enabled else None)

    def _set_caret(self, caret: Caret | None) -> None:
        if caret is not None:
            self.caret = caret
            self._moved(scroll=True)

    def action_page(self, direction: int) -> None:
        self.scroll_relative(y=direction * max(1, self.scrollable_content_region.height - 1), animate=False)

    def _under(self, event: events.MouseEvent) -> Place | None:
        x, y = event.x + self.scroll_offset.x - GUTTER, event.y + self.scroll_offset.y
        found = self.text_layout.offset_at(y, x)
        return (found[0].key, found[1]) if found else None

    def on_click(self, event: events.Click) -> None:
        if self.cursor_enabled:
            # Review: the mouse places the cursor and drags a selection (on_mouse_down); a double click
            # selects the word under it, a triple click the sentence.
            under = self._under(event) if event.chain > 1 else None
            if under is not None:
                layout = self.text_layout
                self._set_caret(
                    self.caret.word(layout, under) if event.chain == 2 else self.caret.sentence(layout, under)
                )
            return
        found = self.text_layout.locate(event.y + self.scroll_offset.y)
        if found is not None:
            self.post_message(self.TurnClicked(self, found[0].key))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if not self.cursor_enabled:
            return
        under = self._under(event)
        if under is None:
            return
        self.focus()
        self.caret = Caret(cursor=under, anchor=under)
        self._dragging = True
        self.capture_mouse()
        self._moved()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if not self._dragging:
            self._point(self._under(event) if self.cursor_enabled else None)
            return
        under = self._under(event)
        caret = self.caret.dragged_to(self.text_layout, under) if under is not None else None
        if caret is not None:
            self.caret = caret
            self._moved()

    def on_leave(self, event: events.Leave) -> None:
        self._point(None)

    def _point(self, under: Place | None) -> None:
        if under != self.pointer:
            self.pointer = under
            self.post_message(self.Pointed())

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()

    def on_focus(self) -> None:
        self._redraw_cursor()

    def on_blur(self) -> None:
        self._redraw_cursor()

    def _redraw_cursor(self) -> None:
        """Focus shows or hides the cursor: only its line changes (a picker closing redraws nothing else)."""
        if self.cursor_enabled and self.cursor:
            self._redraw_spans([(self.cursor[0], self.cursor[1], self.cursor[1])])
