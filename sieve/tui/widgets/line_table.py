"""A table whose rows span several lines, drawn line by line: Home's list of runs.

Textual's DataTable measures and stores every cell as it is added, one row at a
time, so a long list costs what it holds. Here rows are plain strings until a line
of them comes into view; the columns are as wide as their widest cell (cut at a
maximum), the heading stays at the top, and a row is chosen with a click (the
screen decides what enter does).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
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

GAP = 2  # cells between two columns


@dataclass(frozen=True)
class Column:
    heading: tuple[str, ...]  # one heading per line of a row
    max_width: int | None = None  # wider cells are cut with "…"


@dataclass(frozen=True)
class Row:
    key: str
    cells: tuple[tuple[str, ...], ...]  # per column, one string per line (already made safe for a terminal)
    styles: tuple[str | None, ...] = ()  # per column, a component class for its first line (a status's colour)


def cut(text: str, width: int) -> str:
    """`text` in exactly `width` cells: padded, or cut with "…"."""
    length = cell_len(text)
    if length <= width:
        return text + " " * (width - length)
    while cell_len(text) > width - 1:
        text = text[:-1]
    return text + "…" + " " * (width - 1 - cell_len(text))


class LineTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "line-table--header",
        "line-table--more",  # the lines of a row after its first
        "line-table--stripe",
        "line-table--cursor",
        "line-table--good",
        "line-table--busy",
        "line-table--bad",
        "line-table--warn",
    }
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="table.up"),
        Binding("down", "move(1)", "Down", show=False, id="table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("home", "edge(-1)", "First", show=False, id="table.first"),
        Binding("end", "edge(1)", "Last", show=False, id="table.last"),
    ]

    class Highlighted(Message):
        def __init__(self, table: LineTable, key: str | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> LineTable:
            return self.table

    class Chosen(Highlighted):
        """A click on a row."""

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.columns: list[Column] = []
        self.rows: list[Row] = []
        self.widths: list[int] = []
        self.cursor_row = 0
        self.row_height = 1
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(256)
        self._version = 0
        self._styles: dict[tuple[str, ...], Style] = {}

    # -- content -------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def header_height(self) -> int:
        return self.row_height

    def set_rows(self, columns: list[Column], rows: list[Row]) -> None:
        """Show these rows under these columns; the cursor stays on the row with the key it had."""
        key = self.cursor_key
        self.columns = columns
        self.rows = rows
        self.row_height = max((len(c.heading) for c in columns), default=1)
        self.widths = self._measure()
        index = next((i for i, r in enumerate(rows) if r.key == key), None) if key is not None else None
        self.cursor_row = index if index is not None else min(self.cursor_row, max(0, len(rows) - 1))
        self._changed()

    def _measure(self) -> list[int]:
        """Each column as wide as its widest cell or heading, within its maximum; the last takes what is left."""
        widths = []
        for n, column in enumerate(self.columns):
            seen = {line for row in self.rows for line in row.cells[n]}  # runs share most cells: measure each once
            width = max(cell_len(t) for t in (*column.heading, *seen)) if seen else max(map(cell_len, column.heading))
            widths.append(min(width, column.max_width) if column.max_width else width)
        return widths

    def cell_texts(self, index: int) -> list[str]:
        """The row's cells, each its lines joined by newlines."""
        return ["\n".join(lines) for lines in self.rows[index].cells]

    @property
    def cursor_key(self) -> str | None:
        return self.rows[self.cursor_row].key if 0 <= self.cursor_row < len(self.rows) else None

    def _changed(self) -> None:
        self._version += 1
        self._cache.clear()
        size = Size(sum(self.widths) + GAP * len(self.widths), self.header_height + len(self.rows) * self.row_height)
        if size != self.virtual_size:
            # Not the reactive's setter, which lays out the whole screen again (see TranscriptView).
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        self.refresh()

    # -- the cursor ----------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        if not self.rows:
            return
        row = max(0, min(len(self.rows) - 1, row))
        if row != self.cursor_row:
            self.cursor_row = row
            self._version += 1
            self._cache.clear()
            self.refresh()
            self.post_message(self.Highlighted(self, self.cursor_key))
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        top = self.cursor_row * self.row_height
        shown = max(self.row_height, self.scrollable_content_region.height - self.header_height)
        if top < self.scroll_offset.y:
            self.scroll_to(y=top, animate=False)
        elif top + self.row_height > self.scroll_offset.y + shown:
            self.scroll_to(y=top + self.row_height - shown, animate=False)

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        rows = max(1, (self.scrollable_content_region.height - self.header_height) // self.row_height)
        self.move_cursor(self.cursor_row + direction * rows)

    def action_edge(self, direction: int) -> None:
        self.move_cursor(0 if direction < 0 else len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        if event.y < self.header_height:
            return
        index = (event.y - self.header_height + self.scroll_offset.y) // self.row_height
        if 0 <= index < len(self.rows):
            self.focus()
            self.move_cursor(index)
            self.post_message(self.Chosen(self, self.rows[index].key))

    def on_focus(self) -> None:
        self._restyle()

    def on_blur(self) -> None:
        self._restyle()

    # -- drawing ---------------------------------------------------------------------

    def _restyle(self) -> None:
        self._styles.clear()
        self._cache.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    def _style(self, *names: str) -> Style:
        # The stylesheet is asked once per combination, not once per line drawn.
        style = self._styles.get(names)
        if style is None:
            style = self.rich_style
            for name in names:
                style += self.get_component_rich_style(f"line-table--{name}", partial=True)
            self._styles[names] = style
        return style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = y if y < self.header_height else self.header_height + self.scroll_offset.y + y - self.header_height
        key = (line, self._version, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._row_strip(line, width)
            self._cache[key] = strip
        return strip

    def _row_strip(self, line: int, width: int) -> Strip:
        if line < self.header_height:
            texts = [c.heading[line] if line < len(c.heading) else "" for c in self.columns]
            return self._strip(texts, [None] * len(texts), self._style("header"), width)
        index, part = divmod(line - self.header_height, self.row_height)
        if index >= len(self.rows):
            return Strip([Segment(" " * width, self.rich_style)], width)
        row = self.rows[index]
        names = ["stripe"] if index % 2 else []
        if index == self.cursor_row:
            names.append("cursor")
        if part:
            names.append("more")
        base = self._style(*names)
        texts = [lines[part] if part < len(lines) else "" for lines in row.cells]
        styles = [row.styles[n] if not part and n < len(row.styles) else None for n in range(len(texts))]
        return self._strip(texts, [self._style(*names, s) if s else None for s in styles], base, width)

    def _strip(self, texts: list[str], styles: list[Style | None], base: Style, width: int) -> Strip:
        segments = []
        last = len(texts) - 1
        for n, text in enumerate(texts):
            shown = cut(text, self.widths[n]) if n < last else text
            segments.append(Segment(" ", base))  # a margin on the left, then the gap between columns
            segments.append(Segment(shown, styles[n] or base))
            if n < last:
                segments.append(Segment(" " * (GAP - 1), base))
        return Strip(Segment.adjust_line_length(segments, width, style=base), width)

    def on_resize(self) -> None:
        self._version += 1
        self._cache.clear()
