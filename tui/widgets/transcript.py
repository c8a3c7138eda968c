"""The transcript: every turn as lines, drawn only where they are in view.

Model text is data: it is shown as plain text (never Rich markup), control
characters replaced one for one (Review, where offsets must stay exact) or
written out as escapes (Play). Wrapping is done per turn, cached, and redone
only on resize (layout.py); a streaming reply appends to its last lines, so the
cost of a delta does not grow with the transcript. Deltas are drawn at most
twenty times a second.

In Review the view has a cursor and a selection, by keyboard (arrows, with
shift to select) and by mouse (drag), always as offsets into one turn's
original text. Highlights (annotations' quotes, search hits) are drawn over the
text in styles of their kind, and the gutter counts them on each line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from sieve.safe_text import one_line, visible
from sieve.store.scoring.labels import ROLE_TITLES, played_label, turn_label
from sieve.tui.widgets.layout import Block, Layout, cell_width, shown_text

FRAME = 0.05  # seconds between redraws of a streaming reply
FAST_FRAME = 0.25  # ... when more than FAST_CHARS arrived in one frame: faster than anyone reads
FAST_CHARS = 4000
GUTTER = 2  # cells left of the text: the turn's colour bar and a mark

STATUS_NOTES = {
    "streaming": "streaming…",
    "cancelled": "cancelled by the reviewer (partial text kept)",
    "failed": "failed",
    "filtered": "filtered",
    "length": "cut at the output ceiling",
    "interrupted": "interrupted (partial text kept)",
}


def turn_title(turn: Mapping[str, Any], alternatives: int = 1) -> str:
    role = ROLE_TITLES.get(turn["role"], turn["role"])
    if turn.get("speaker"):  # a chat's speaker by name (a group chat has several)
        role += f" ({turn['speaker']})"
    if turn["role"] == "user":
        if turn["origin"] == "live":
            where = "live"
        elif turn["origin"] == "player":
            where = played_label(turn)
        elif turn["step_id"]:
            where = turn_label(turn)
        else:
            where = turn["origin"]
        title = f"{turn['idx']} · {role} · {where}"
    else:
        title = f"{turn['idx']} · {role}"
    if alternatives > 1:
        title += f" · alternative {turn['alt'] + 1} of {alternatives}" + (" (chosen)" if turn["chosen"] else "")
    note = STATUS_NOTES.get(turn["status"])
    if note:
        title += f" · {note}"
    return title


# The kinds of highlight the transcript draws, each a component class `highlight--KIND` (styles/transcript.tcss):
# an annotation's quote by its kind, a machine's suggestion waiting for a person, a search hit.
HIGHLIGHT_KINDS = ("score", "counter", "probe", "deduction", "judgment", "note", "suggestion", "search")
# How a quote was found, drawn over its kind's style: `highlight--VERDICT`.
HIGHLIGHT_VERDICTS = ("exact", "fuzzy", "absent", "player")


@dataclass(frozen=True)
class Highlight:
    """A span of a turn drawn in a style of its own (an annotation's quote, a suggestion, a search hit).

    Where highlights overlap, the one later in its turn's list is drawn over the others.
    """

    start: int
    end: int
    style: str  # its kind, one of HIGHLIGHT_KINDS: the component class `highlight--{style}`
    verdict: str = ""  # one of HIGHLIGHT_VERDICTS, or "" (a search hit)
    key: str | None = None  # what it marks (an annotation's id); keyed highlights are counted in the gutter


class TranscriptView(ScrollView, can_focus=True):
    """Turns as lines; Play streams into it, Review selects quotes in it."""

    COMPONENT_CLASSES = {
        "transcript--user",
        "transcript--assistant",
        "transcript--system",
        "transcript--title",
        "transcript--selected",
        "transcript--error",
        "transcript--cursor",
        "transcript--selection",
        "transcript--mark",
        "transcript--overlap",
        *(f"highlight--{name}" for name in (*HIGHLIGHT_KINDS, *HIGHLIGHT_VERDICTS)),
    }
    BINDINGS = [
        Binding("left", "move(-1, 0)", "Left", show=False, id="transcript.left"),
        Binding("right", "move(1, 0)", "Right", show=False, id="transcript.right"),
        Binding("up", "move(0, -1)", "Up", show=False, id="transcript.up"),
        Binding("down", "move(0, 1)", "Down", show=False, id="transcript.down"),
        Binding("home", "line_edge(-1)", "Line start", show=False, id="transcript.home"),
        Binding("end", "line_edge(1)", "Line end", show=False, id="transcript.end"),
        Binding("shift+left", "move(-1, 0, True)", "Select left", show=False, id="transcript.select_left"),
        Binding("shift+right", "move(1, 0, True)", "Select right", show=False, id="transcript.select_right"),
        Binding("shift+up", "move(0, -1, True)", "Select up", show=False, id="transcript.select_up"),
        Binding("shift+down", "move(0, 1, True)", "Select down", show=False, id="transcript.select_down"),
        Binding("shift+home", "line_edge(-1, True)", "Select to line start", show=False, id="transcript.select_home"),
        Binding("shift+end", "line_edge(1, True)", "Select to line end", show=False, id="transcript.select_end"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
    ]

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
        self.text_layout = Layout(80)
        self.turns: dict[str, dict[str, Any]] = {}
        self.selected: str | None = None  # the selected turn (Play)
        self.cursor: tuple[str, int] | None = None
        self.selection_anchor: tuple[str, int] | None = None
        self.highlights: dict[str, list[Highlight]] = {}
        self.pointer: tuple[str, int] | None = None  # the character under the mouse (Review)
        self._pending: dict[str, list[str]] = {}
        self._scheduled = False
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self._version = 0
        self._dragging = False
        self._frame = FRAME
        self._styles: dict[str, Style] = {}

    # -- content ----------------------------------------------------------------------

    def _shown(self, text: str) -> str:
        return shown_text(text) if self.exact else visible(text)

    def _block(self, turn: Mapping[str, Any], alternatives: int = 1) -> Block:
        error = turn.get("error") if turn["status"] in ("failed", "filtered", "interrupted", "cancelled") else ""
        return Block(
            key=turn["id"],
            # A caller may title a block itself (the step view names the run a reply comes from).
            title=one_line(turn.get("title") or turn_title(turn, alternatives)),
            text=self._shown(turn["text"]),
            error=one_line(error or ""),
        )

    def set_turns(self, turns: Sequence[Mapping[str, Any]], alternatives: dict[str, int] | None = None) -> None:
        """Show exactly these turns, in this order."""
        alternatives = alternatives or {}
        self.turns = {t["id"]: dict(t) for t in turns}
        self._pending.clear()
        self.text_layout.set_blocks([self._block(t, alternatives.get(t["id"], 1)) for t in turns])
        if self.cursor and self.cursor[0] not in self.turns:
            self.cursor = self.selection_anchor = None
        self._changed()

    def show(self, turn: Mapping[str, Any], alternatives: int = 1) -> None:
        """Add a turn at the end, or replace the turn at the same position (a new alternative)."""
        self._flush()
        old = next((k for k, t in self.turns.items() if t["idx"] == turn["idx"]), None)
        block = self._block(turn, alternatives)
        if old is not None:
            self.turns.pop(old)
            self.turns[turn["id"]] = dict(turn)
            self.text_layout.replace(old, block)
            if self.selected == old:
                self.selected = turn["id"]
        else:
            self.turns[turn["id"]] = dict(turn)
            self.text_layout.add(block)
        self._changed(follow=True)

    def feed(self, key: str, text: str) -> None:
        """A streamed delta; drawn with the others at the next frame."""
        self._pending.setdefault(key, []).append(text)
        if not self._scheduled and self.is_mounted:
            self._scheduled = True
            self.set_timer(self._frame, self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        follow = self.is_vertical_scroll_end
        arrived = 0
        for key, parts in self._pending.items():
            block = self.text_layout.block(key)
            if block is None:
                continue
            more = "".join(parts)
            arrived += len(more)
            block.append(self._shown(more))
            self.text_layout.grew(key)
        # A stream faster than anyone reads gets fewer, larger frames: a frame's time is taken from the stream.
        self._frame = FAST_FRAME if arrived > FAST_CHARS else FRAME
        self._pending.clear()
        self._changed(follow=follow)

    def finish(self, turn: Mapping[str, Any], alternatives: int = 1) -> None:
        """The turn's final state: title, error, and its text as stored."""
        self._pending.pop(turn["id"], None)
        old = next((k for k, t in self.turns.items() if t["idx"] == turn["idx"]), turn["id"])
        follow = self.is_vertical_scroll_end
        self.turns.pop(old, None)
        self.turns[turn["id"]] = dict(turn)
        if self.text_layout.block(old) is None:
            self.text_layout.add(self._block(turn, alternatives))
        else:
            self.text_layout.replace(old, self._block(turn, alternatives))
        if self.selected == old:
            self.selected = turn["id"]
        self._changed(follow=follow)

    def text_of(self, key: str) -> str:
        """What is shown of a turn, with what is still waiting for the next frame."""
        block = self.text_layout.block(key)
        shown = block.text if block else ""
        return shown + self._shown("".join(self._pending.get(key, [])))

    @property
    def keys(self) -> list[str]:
        return [b.key for b in self.text_layout.blocks]

    @property
    def text(self) -> str:
        """The shown text of the turn under the cursor (or the only one)."""
        key = self.cursor[0] if self.cursor else (self.keys[0] if self.keys else None)
        return self.text_of(key) if key else ""

    def set_highlights(self, highlights: dict[str, list[Highlight]]) -> None:
        """Draw these spans over the text, per turn id; later ones in a turn's list over earlier ones."""
        self.highlights = highlights
        self._changed()

    def highlights_at(self, key: str, offset: int) -> list[Highlight]:
        """The highlights covering character `offset` of a turn, the one drawn on top last."""
        return [h for h in self.highlights.get(key, ()) if h.start <= offset < h.end]

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
        self._version += 1
        self._cache.clear()
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

    # -- size ------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        if self.text_layout.resize(max(10, self.scrollable_content_region.width - GUTTER)):
            self._changed()

    # -- drawing ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        key = (line, self._version, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._fit(self._line_segments(line), width)
            self._cache[key] = strip
        return strip

    def _fit(self, segments: list[Segment], width: int) -> Strip:
        """Exactly `width` cells: padded with the background, or cut (a long title). One Strip per line."""
        length = Segment.get_line_length(segments)
        if length < width:
            segments.append(Segment(" " * (width - length), self._style("base")))
        elif length > width:
            segments = Segment.adjust_line_length(segments, width)
        return Strip(segments, width)

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

    def _highlight_style(self, highlight: Highlight) -> Style:
        style = self._style(f"highlight--{highlight.style}")
        return style + self._style(f"highlight--{highlight.verdict}") if highlight.verdict else style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def _line_segments(self, y: int) -> list[Segment]:
        found = self.text_layout.locate(y)
        base = self._style("base")
        if found is None:
            return []
        block, kind, index = found
        role = self.turns.get(block.key, {}).get("role", "assistant")
        bar = self._style(role)
        selected = block.key == self.selected
        mark = "▶" if selected and kind == "title" else " "
        # On the widget's own background: a bare style would leave the terminal's showing (black in a light theme).
        gutter = [Segment("▌", base + bar), Segment(mark, base + self._style("mark"))]
        if kind == "title":
            style = base + self._style("title") + bar
            if selected:
                style += self._style("selected")
            return [*gutter, Segment(block.title, style)]
        if kind == "error":
            return [*gutter, Segment(block.error, base + self._style("error"))]
        if kind == "gap":
            return []
        start, end = block.lines[index]
        mark = self._line_mark(block.key, start, end)
        if mark:
            gutter[1] = Segment(mark, base + self._style("mark"))
        return [*gutter, *self._text_segments(block, start, end, base)]

    def _line_mark(self, key: str, start: int, end: int) -> str:
        """The gutter's mark for a line: how many annotations it holds (• for one, + for more than 9), • for a hit."""
        here = [h for h in self.highlights.get(key, ()) if h.start < max(end, start + 1) and h.end > start]
        if not here:
            return ""
        count = len({h.key for h in here if h.key is not None})
        if count <= 1:
            return "•"
        return str(count) if count <= 9 else "+"

    def _text_segments(self, block: Block, start: int, end: int, base: Style) -> list[Segment]:
        """The line's text cut where its styles change: highlights, then the selection, then the cursor.

        Where two marked spans overlap the text is bold as well, so the edge of the inner one shows.
        """
        spans: list[tuple[int, int, Style, bool]] = [
            (max(h.start, start), min(h.end, end), self._highlight_style(h), h.key is not None)
            for h in self.highlights.get(block.key, ())
            if h.start < end and h.end > start
        ]
        selection = self.selection
        if selection and selection[0] == block.key and selection[1] < end and selection[2] > start:
            spans.append((max(selection[1], start), min(selection[2], end), self._style("selection"), False))
        cursor_at = None
        if self.cursor_enabled and self.cursor and self.cursor[0] == block.key and self.has_focus:
            offset = self.cursor[1]
            if start <= offset < end or (offset == end and self._line_ends_at(block, start, end)):
                cursor_at = offset
        cuts = {start, end}
        for a, b, _, _ in spans:
            cuts.update((a, b))
        if cursor_at is not None:
            cuts.update((cursor_at, cursor_at + 1))
        points = sorted(c for c in cuts if start <= c <= end)
        segments = []
        for a, b in zip(points, points[1:]):
            style = base
            marked = 0
            for s, e, extra, keyed in spans:
                if s <= a and b <= e:
                    style += extra
                    marked += keyed
            if marked > 1:
                style += self._style("overlap")
            if cursor_at is not None and a == cursor_at:
                style += self._style("cursor")
            piece = block.text[a:b]
            # Spaces that begin a piece are a run of their own (slanted or not, which spaces do not show): a
            # picture of the screen (SVG) draws each run at its own place, and some renderers drop leading spaces.
            lead = len(piece) - len(piece.lstrip(" "))
            if 0 < lead < len(piece):
                segments.append(Segment(piece[:lead], style + Style(italic=not style.italic)))
                piece = piece[lead:]
            segments.append(Segment(piece, style))
        if cursor_at is not None and cursor_at >= end:  # the cursor past the line's last character
            segments.append(Segment(" ", base + self._style("cursor")))
        return segments

    @staticmethod
    def _line_ends_at(block: Block, start: int, end: int) -> bool:
        index = block.line_at(start)
        return index == len(block.lines) - 1 or block.lines[index + 1][0] > end

    # -- the cursor and the selection (Review) ------------------------------------------

    @property
    def selection(self) -> tuple[str, int, int] | None:
        """(turn id, start, end) of the selected span, or None."""
        if not (self.cursor and self.selection_anchor) or self.cursor[0] != self.selection_anchor[0]:
            return None
        a, b = sorted((self.selection_anchor[1], self.cursor[1]))
        return (self.cursor[0], a, b) if a != b else None

    def select_span(self, key: str, start: int, end: int) -> None:
        self.selection_anchor, self.cursor = (key, start), (key, end)
        self._moved(scroll=True)

    def place_cursor(self, key: str, offset: int = 0) -> None:
        self.selection_anchor, self.cursor = None, (key, offset)
        self._moved(scroll=True)

    def _moved(self, scroll: bool = False) -> None:
        self._changed()
        if scroll and self.cursor and self.text_layout.block(self.cursor[0]) is not None:
            y = self.text_layout.y_of(*self.cursor)
            self.scroll_to_region_lines(y, y + 1)
        self.post_message(self.SelectionChanged())

    def _start_selecting(self, extend: bool) -> None:
        if extend and self.selection_anchor is None:
            self.selection_anchor = self.cursor
        if not extend:
            self.selection_anchor = None

    def action_move(self, dx: int, dy: int, extend: bool = False) -> None:
        if not self.cursor_enabled:
            self.scroll_relative(y=dy, animate=False)
            return
        if self.cursor is None:
            if not self.keys:
                return
            self.cursor = (self.keys[0], 0)
        self._start_selecting(extend)
        key, offset = self.cursor
        block = self.text_layout[key]
        if dx:
            self.cursor = self._step(key, offset + dx, extend)
        elif dy:
            index = block.line_at(offset)
            column = cell_width(block.text[block.lines[index][0] : offset])
            target = index + dy
            if 0 <= target < len(block.lines):
                self.cursor = (key, self._offset_in_line(block, target, column))
            elif not extend:  # off the turn's first or last line: into the turn before or after
                self.cursor = self._neighbour(key, dy, column)
        self._moved(scroll=True)

    def _step(self, key: str, offset: int, extend: bool) -> tuple[str, int]:
        block = self.text_layout[key]
        if 0 <= offset <= len(block.text) or extend:
            return key, max(0, min(len(block.text), offset))
        neighbour = self._neighbour(key, 1 if offset > 0 else -1, 0 if offset > 0 else 10**9)
        return neighbour

    def _neighbour(self, key: str, direction: int, column: int) -> tuple[str, int]:
        keys = self.keys
        i = keys.index(key) + direction
        if not 0 <= i < len(keys):
            block = self.text_layout[key]
            return key, (0 if direction < 0 else len(block.text))
        other = self.text_layout[keys[i]]
        line = 0 if direction > 0 else max(0, len(other.lines) - 1)
        return keys[i], self._offset_in_line(other, line, column) if other.lines else 0

    @staticmethod
    def _offset_in_line(block: Block, index: int, column: int) -> int:
        start, end = block.lines[index]
        used = 0
        for i in range(start, end):
            used += cell_width(block.text[i])
            if used > column:
                return i
        return end

    def action_line_edge(self, direction: int, extend: bool = False) -> None:
        if not self.cursor_enabled or self.cursor is None:
            self.scroll_home(animate=False) if direction < 0 else self.scroll_end(animate=False)
            return
        self._start_selecting(extend)
        key, offset = self.cursor
        block = self.text_layout[key]
        start, end = block.lines[block.line_at(offset)] if block.lines else (0, 0)
        self.cursor = (key, start if direction < 0 else end)
        self._moved(scroll=True)

    def action_page(self, direction: int) -> None:
        self.scroll_relative(y=direction * max(1, self.scrollable_content_region.height - 1), animate=False)

    def _under(self, event: events.MouseEvent) -> tuple[str, int] | None:
        x, y = event.x + self.scroll_offset.x - GUTTER, event.y + self.scroll_offset.y
        found = self.text_layout.offset_at(y, x)
        return (found[0].key, found[1]) if found else None

    def on_click(self, event: events.Click) -> None:
        if self.cursor_enabled:
            return  # Review: the mouse places the cursor and drags a selection (on_mouse_down)
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
        self.selection_anchor = self.cursor = under
        self._dragging = True
        self.capture_mouse()
        self._moved()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if not self._dragging:
            self._point(self._under(event) if self.cursor_enabled else None)
            return
        under = self._under(event)
        if under is not None and self.selection_anchor is not None:
            # A quote stands in one turn: a drag past its end stops at its edge.
            if under[0] != self.selection_anchor[0]:
                block = self.text_layout[self.selection_anchor[0]]
                after = self.keys.index(under[0]) > self.keys.index(self.selection_anchor[0])
                under = (self.selection_anchor[0], len(block.text) if after else 0)
            self.cursor = under
            self._moved()

    def on_leave(self, event: events.Leave) -> None:
        self._point(None)

    def _point(self, under: tuple[str, int] | None) -> None:
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
        if not (self.cursor_enabled and self.cursor) or self.text_layout.block(self.cursor[0]) is None:
            return
        y = self.text_layout.y_of(*self.cursor)
        width = self.scrollable_content_region.width
        self._cache.discard((y, self._version, width))
        self.refresh_line(y - self.scroll_offset.y)
