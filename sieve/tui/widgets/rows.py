"""A list of one-line rows drawn only where they are in view: the score card and the annotations list.

Unlike a Static or an OptionList, new rows never make the screen lay itself out
again: the widget keeps its size, swaps its lines and redraws only the rows that
changed (a saved score redraws its item's row and the totals, not the card), so
it reaches the screen in a frame however long the card is. A row with a key can
be highlighted (arrows, the mouse) and chosen (enter, a click).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from sieve.tui.widgets.lines_view import LinesView


@dataclass(frozen=True)
class Row:
    text: Text
    key: str | None = None  # rows without a key (headings, blank lines) cannot be highlighted


class RowsView(LinesView, can_focus=True):
    COMPONENT_CLASSES = {"rows--highlight"}
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="rows.up"),
        Binding("down", "move(1)", "Down", show=False, id="rows.down"),
        Binding("home", "edge(-1)", "First", show=False, id="rows.first"),
        Binding("end", "edge(1)", "Last", show=False, id="rows.last"),
        Binding("enter", "choose", "Open", show=False, id="rows.choose"),
    ]

    class Highlighted(Message):
        def __init__(self, view: RowsView, key: str | None) -> None:
            super().__init__()
            self.view = view
            self.key = key

        @property
        def control(self) -> RowsView:
            return self.view

    class Chosen(Highlighted):
        """Enter or a click on a row with a key."""

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.rows: list[Row] = []
        self.highlighted: int | None = None
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(512)  # (row, width) -> its line
        self._styles: dict[str, Style] = {}

    def _style(self, name: str) -> Style:
        # The stylesheet is asked once per style, not once per row drawn.
        style = self._styles.get(name)
        if style is None:
            style = self.rich_style if name == "base" else self.get_component_rich_style(name, partial=True)
            self._styles[name] = style
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def set_rows(self, rows: list[Row], keep: str | None = None) -> None:
        """Show these rows; the highlight stays on the row with the key it had (or `keep`).

        Only the rows that differ from those shown are drawn again.
        """
        key = keep if keep is not None else self.highlighted_key
        old, old_highlight = self.rows, self.highlighted
        self.rows = rows
        self.highlighted = next((i for i, r in enumerate(rows) if key is not None and r.key == key), None)
        if self.highlighted is None and self.has_focus:
            self.highlighted = self._first_key(0, 1)
        size = Size(self.scrollable_content_region.width, len(rows))
        if size != self.virtual_size:
            # Not the reactive's setter, which lays out the whole screen again (see TranscriptView).
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        changed = {i for i in range(max(len(old), len(rows))) if i >= len(old) or i >= len(rows) or old[i] != rows[i]}
        if self.highlighted != old_highlight:
            changed.update(i for i in (old_highlight, self.highlighted) if i is not None)
        self._redraw_rows(changed, self._moved_lines(old, old_highlight, changed))

    def _moved_lines(self, old: list[Row], old_highlight: int | None, changed: set[int]) -> dict[int, Strip]:
        """The lines already drawn of rows that only moved (a new annotation on top of the list moves the rest down),
        by their new place."""
        width = self.scrollable_content_region.width
        was = {row.key: i for i, row in enumerate(old) if row.key is not None}
        moved: dict[int, Strip] = {}
        for i in changed:
            key = self.rows[i].key if i < len(self.rows) else None
            j = was.get(key) if key is not None else None
            if j is None or old[j] != self.rows[i] or (j == old_highlight) != (i == self.highlighted):
                continue
            strip = self._cache.get((j, width))
            if strip is not None:
                moved[i] = strip
        return moved

    def _redraw_rows(self, indices: set[int], moved: dict[int, Strip] | None = None) -> None:
        """Draw these rows again (and only these: the others' lines are kept); `moved`: lines to take as they are."""
        if not indices:
            return
        width = self.scrollable_content_region.width
        for index in indices:
            self._cache.discard((index, width))
        for index, strip in (moved or {}).items():
            self._cache.set((index, width), strip)
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        in_view = sorted(i for i in indices if top <= i < top + height)  # a row out of view is drawn when it comes in
        if len(in_view) >= height:
            self.refresh()
        else:
            for index in in_view:
                self.refresh_line(index)

    @property
    def highlighted_key(self) -> str | None:
        if self.highlighted is None or self.highlighted >= len(self.rows):
            return None
        return self.rows[self.highlighted].key

    @property
    def keys(self) -> list[str]:
        return [r.key for r in self.rows if r.key is not None]

    def highlight(self, key: str | None) -> None:
        index = next((i for i, r in enumerate(self.rows) if key is not None and r.key == key), None)
        self._set_highlight(index)

    def _set_highlight(self, index: int | None) -> None:
        if index == self.highlighted:
            return
        previous, self.highlighted = self.highlighted, index
        self._redraw_rows({i for i in (previous, index) if i is not None})
        if index is not None:
            self.scroll_to_line(index)
        self.post_message(self.Highlighted(self, self.highlighted_key))

    def scroll_to_line(self, index: int) -> None:
        height = self.scrollable_content_region.height or 1
        if index < self.scroll_offset.y:
            self.scroll_to(y=index, animate=False)
        elif index >= self.scroll_offset.y + height:
            self.scroll_to(y=index - height + 1, animate=False)

    def _first_key(self, start: int, step: int) -> int | None:
        i = start
        while 0 <= i < len(self.rows):
            if self.rows[i].key is not None:
                return i
            i += step
        return None

    def action_move(self, step: int) -> None:
        start = (self.highlighted + step) if self.highlighted is not None else (0 if step > 0 else len(self.rows) - 1)
        found = self._first_key(start, step)
        if found is not None:
            self._set_highlight(found)

    def action_edge(self, direction: int) -> None:
        found = self._first_key(0, 1) if direction < 0 else self._first_key(len(self.rows) - 1, -1)
        if found is not None:
            self._set_highlight(found)

    def action_choose(self) -> None:
        if self.highlighted_key is not None:
            self.post_message(self.Chosen(self, self.highlighted_key))

    def on_click(self, event: events.Click) -> None:
        inside = event.get_content_offset(self)  # the card and the list have a border: rows start below it
        if inside is None:
            return
        index = inside.y + self.scroll_offset.y
        if 0 <= index < len(self.rows) and self.rows[index].key is not None:
            self._set_highlight(index)
            self.post_message(self.Chosen(self, self.rows[index].key))

    def on_focus(self) -> None:
        self._styles.clear()  # the highlight looks different with the focus
        self._cache.clear()
        self.refresh()
        if self.highlighted is None:
            self._set_highlight(self._first_key(0, 1))

    def on_blur(self) -> None:
        self._styles.clear()
        self._cache.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        key = (index, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(index, width)
            self._cache[key] = strip
        return strip

    def _render_row(self, index: int, width: int) -> Strip:
        base = self._style("base")
        if not 0 <= index < len(self.rows):
            return Strip([Segment(" " * width, base)], width)
        text = self.rows[index].text.copy()
        text.no_wrap = True
        text.overflow = "ellipsis"
        text.truncate(width, overflow="ellipsis", pad=True)
        style: Style = base
        segments = list(text.render(self.app.console))
        if index == self.highlighted and self.has_focus:
            # The cursor of a focused list in its own colours over the row's (a green verdict would not read on it).
            over = self._style("rows--highlight")
            segments = [Segment(s.text, base + s.style + over if s.style else base + over, s.control) for s in segments]
        else:
            if index == self.highlighted:
                style = base + self._style("rows--highlight")
            segments = [Segment(s.text, style + s.style if s.style else style, s.control) for s in segments]
        return Strip(Segment.adjust_line_length(segments, width, style=base), width)

    def on_resize(self) -> None:
        self._cache.clear()
