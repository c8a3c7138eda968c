"""Laying out a transcript as lines: wrapping per turn, cached, with every line mapped to offsets of its text.

The transcript widget draws only the lines in view; this module knows which
line is which. A block is one turn (a title line, its text wrapped to the
width, an error line, a blank line). Wrapping is greedy at spaces and starts
afresh at every line, so text appended to a streaming turn re-wraps only from
its last line on, and a resize re-wraps each block once.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from rich.cells import get_character_cell_size

# Same-length stand-ins for control characters, so an offset in the shown text is an
# offset in the original (a quote selected on screen points into what was stored).
_STAND_INS = {i: "�" for i in [*range(0, 9), *range(11, 32), 127, *range(128, 160)]}
_STAND_INS[9] = " "
_STAND_INS[13] = "␍"
_STAND_INS[27] = "␛"
for _bidi in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)):
    _STAND_INS[_bidi] = "�"


def shown_text(text: str) -> str:
    """The text as the transcript shows it: every control or bidi character replaced one for one."""
    return text.translate(_STAND_INS)


@lru_cache(maxsize=4096)
def _cells(char: str) -> int:
    return get_character_cell_size(char)


def cell_width(text: str) -> int:
    return len(text) if text.isascii() else sum(_cells(c) for c in text)


def _fit(text: str, start: int, end: int, width: int) -> int:
    """The furthest index <= end such that text[start:index] fits in `width` cells (never looks past start+width)."""
    stop = min(end, start + width)
    if text[start:stop].isascii():
        return stop
    used = 0
    for i in range(start, stop):
        used += _cells(text[i])
        if used > width:
            return i
    return stop


def wrap(text: str, width: int, start: int = 0) -> list[tuple[int, int]]:
    """Lines of `text` from offset `start` as (start, end) spans: greedy at spaces, hard breaks in long words.

    A newline ends a line (it belongs to no line); the spaces a line breaks at are not drawn.
    Each line looks at most `width` characters ahead, so a long paragraph costs what it holds.
    """
    width = max(1, width)
    lines: list[tuple[int, int]] = []
    n = len(text)
    i = start
    while True:
        newline = text.find("\n", i, min(n, i + width + 1))
        limit = newline if newline >= 0 else n
        fit = _fit(text, i, limit, width)
        if fit >= limit:  # the rest of the paragraph (or of the text) fits
            lines.append((i, limit))
            if newline < 0:
                return lines
            i = newline + 1
            continue
        space = text.rfind(" ", i, fit + 1)
        if space > i:
            lines.append((i, space))
            i = space + 1
        else:  # one word longer than the line: break it where the line is full
            fit = max(fit, i + 1)
            lines.append((i, fit))
            i = fit


@dataclass
class Block:
    """One turn as laid out. `text` is what is shown (same length as the original in Review)."""

    key: str
    title: str
    text: str = ""
    error: str = ""
    lines: list[tuple[int, int]] = field(default_factory=list)
    width: int = 0

    @property
    def height(self) -> int:
        return 1 + len(self.lines) + (1 if self.error else 0) + 1

    def relayout(self, width: int) -> None:
        self.width = width
        self.lines = wrap(self.text, width)

    def append(self, more: str) -> None:
        """Add text at the end, re-wrapping from the last line only."""
        if not self.lines:
            self.text += more
            self.relayout(self.width)
            return
        from_offset = self.lines[-1][0]
        self.text += more
        self.lines[-1:] = wrap(self.text, self.width, from_offset)

    def line_at(self, offset: int) -> int:
        """The index of the text line holding `offset` (the end of a line belongs to it)."""
        return max(0, bisect_right(self.lines, offset, key=lambda line: line[0]) - 1)


class Layout:
    """Blocks in order, with where each begins: line y -> (block, kind, line) and back."""

    def __init__(self, width: int = 80):
        self.width = max(1, width)
        self.blocks: list[Block] = []
        self._index: dict[str, int] = {}
        self._starts: list[int] = []  # first line of each block
        self.height = 0

    # -- building -------------------------------------------------------------------

    def set_blocks(self, blocks: list[Block]) -> None:
        self.blocks = list(blocks)
        for block in self.blocks:
            block.relayout(self.width)
        self._reindex()

    def add(self, block: Block, at: int | None = None) -> None:
        block.relayout(self.width)
        if at is None:
            self.blocks.append(block)
            self._index[block.key] = len(self.blocks) - 1
            self._starts.append(self.height)
            self.height += block.height
        else:
            self.blocks.insert(at, block)
            self._reindex()

    def replace(self, key: str, block: Block) -> None:
        i = self._index[key]
        block.relayout(self.width)
        self.blocks[i] = block
        self._reindex()

    def block(self, key: str) -> Block | None:
        i = self._index.get(key)
        return None if i is None else self.blocks[i]

    def __getitem__(self, key: str) -> Block:
        """The block of a key that is laid out (KeyError for one that is not)."""
        return self.blocks[self._index[key]]

    def position(self, key: str) -> int | None:
        return self._index.get(key)

    def grew(self, key: str) -> None:
        """A block's height changed (text appended, an error set): move the blocks after it."""
        i = self._index[key]
        if i == len(self.blocks) - 1:  # the streaming turn is the last: nothing moves
            self.height = self._starts[i] + self.blocks[i].height
        else:
            self._reindex()

    def resize(self, width: int) -> bool:
        width = max(1, width)
        if width == self.width:
            return False
        self.width = width
        for block in self.blocks:
            block.relayout(width)
        self._reindex()
        return True

    def _reindex(self) -> None:
        self._index = {b.key: i for i, b in enumerate(self.blocks)}
        self._starts = []
        y = 0
        for block in self.blocks:
            self._starts.append(y)
            y += block.height
        self.height = y

    # -- finding ---------------------------------------------------------------------

    def top(self, key: str) -> int:
        """The line where a block begins (its title)."""
        return self._starts[self._index[key]]

    def locate(self, y: int) -> tuple[Block, str, int] | None:
        """Line y as (block, kind, index): kind is title, text (index: its line), error or gap."""
        if not 0 <= y < self.height or not self.blocks:
            return None
        i = bisect_right(self._starts, y) - 1
        block = self.blocks[i]
        local = y - self._starts[i]
        if local == 0:
            return block, "title", 0
        local -= 1
        if local < len(block.lines):
            return block, "text", local
        local -= len(block.lines)
        if block.error and local == 0:
            return block, "error", 0
        return block, "gap", 0

    def y_of(self, key: str, offset: int) -> int:
        """The line showing character `offset` of a block's text."""
        return self.top(key) + 1 + self[key].line_at(offset)

    def offset_at(self, y: int, x: int) -> tuple[Block, int] | None:
        """The block and text offset under cell (x, y) of the text area (x from the text's first cell)."""
        found = self.locate(y)
        if found is None:
            return None
        block, kind, index = found
        if kind != "text":
            if kind == "title":
                return block, 0
            return block, len(block.text)
        start, end = block.lines[index]
        if x <= 0:
            return block, start
        return block, _fit(block.text, start, end, x)
