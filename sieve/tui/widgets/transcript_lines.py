"""Drawing one line of the transcript as segments: the gutter, then a turn's title, its error, or its text with highlights, the selection and the cursor.

Pure: a line is drawn from its block, the styles by name and what is marked on
its turn; the widget (transcript.py) says what that is, caches the result and
knows nothing of how a line is cut. This is the hot path of drawing: nothing
here looks further than the line's own turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style

from sieve.tui.widgets.layout import Block

GUTTER = 2  # cells left of the text: the turn's colour bar and a mark

# The kinds of highlight the transcript draws, each a component class `highlight--KIND` (styles/highlights.tcss):
# an annotation's quote by its kind, a machine's suggestion waiting for a person, a search hit.
HIGHLIGHT_KINDS = ("score", "counter", "probe", "deduction", "judgment", "note", "suggestion", "search")
# How a quote was found, drawn over its kind's style: `highlight--VERDICT`.
HIGHLIGHT_VERDICTS = ("exact", "fuzzy", "absent", "player")

# The component classes a line is drawn in (the view's COMPONENT_CLASSES): a short name here is `transcript--NAME`.
LINE_CLASSES = {
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

# A style by its short name ("title", "cursor"), or by a full component class name ("highlight--score").
StyleOf = Callable[[str], Style]


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


def fit(segments: list[Segment], width: int, base: Style) -> list[Segment]:
    """Exactly `width` cells: padded with the background `base`, or cut (a long title)."""
    length = Segment.get_line_length(segments)
    if length < width:
        segments.append(Segment(" " * (width - length), base))
    elif length > width:
        segments = Segment.adjust_line_length(segments, width)
    return segments


def line_segments(
    block: Block,
    kind: str,
    index: int,
    style: StyleOf,
    role: str,
    selected: bool,
    highlights: Sequence[Highlight],
    selection: tuple[int, int] | None,
    cursor: int | None,
) -> list[Segment]:
    """One line of a block (`kind` and `index` as Layout.locate gives them), without the padding.

    `role` colours the bar; `selected` marks the turn (Play). `highlights` are the turn's, `selection`
    the (start, end) selected in it and `cursor` the cursor's offset in it, where it is drawn (else None).
    """
    base = style("base")
    bar = style(role)
    mark = "▶" if selected and kind == "title" else " "
    # On the widget's own background: a bare style would leave the terminal's showing (black in a light theme).
    gutter = [Segment("▌", base + bar), Segment(mark, base + style("mark"))]
    if kind == "title":
        title = base + style("title") + bar
        if selected:
            title += style("selected")
        return [*gutter, Segment(block.title, title)]
    if kind == "error":
        return [*gutter, Segment(block.error, base + style("error"))]
    if kind == "gap":
        return []
    start, end = block.lines[index]
    mark = line_mark(highlights, start, end)
    if mark:
        gutter[1] = Segment(mark, base + style("mark"))
    return [*gutter, *text_segments(block, start, end, base, style, highlights, selection, cursor)]


def line_mark(highlights: Sequence[Highlight], start: int, end: int) -> str:
    """The gutter's mark for a line: how many annotations it holds (• for one, + for more than 9), • for a hit."""
    here = [h for h in highlights if h.start < max(end, start + 1) and h.end > start]
    if not here:
        return ""
    count = len({h.key for h in here if h.key is not None})
    if count <= 1:
        return "•"
    return str(count) if count <= 9 else "+"


def highlight_style(highlight: Highlight, style: StyleOf) -> Style:
    kind = style(f"highlight--{highlight.style}")
    return kind + style(f"highlight--{highlight.verdict}") if highlight.verdict else kind


def text_segments(
    block: Block,
    start: int,
    end: int,
    base: Style,
    style: StyleOf,
    highlights: Sequence[Highlight],
    selection: tuple[int, int] | None,
    cursor: int | None,
) -> list[Segment]:
    """The line's text cut where its styles change: highlights, then the selection, then the cursor.

    Where two marked spans overlap the text is bold as well, so the edge of the inner one shows.
    """
    spans: list[tuple[int, int, Style, bool]] = [
        (max(h.start, start), min(h.end, end), highlight_style(h, style), h.key is not None)
        for h in highlights
        if h.start < end and h.end > start
    ]
    if selection and selection[0] < end and selection[1] > start:
        spans.append((max(selection[0], start), min(selection[1], end), style("selection"), False))
    cursor_at = None
    if cursor is not None and (start <= cursor < end or (cursor == end and _line_ends_at(block, start, end))):
        cursor_at = cursor
    cuts = {start, end}
    for a, b, _, _ in spans:
        cuts.update((a, b))
    if cursor_at is not None:
        cuts.update((cursor_at, cursor_at + 1))
    points = sorted(c for c in cuts if start <= c <= end)
    segments = []
    for a, b in zip(points, points[1:]):
        piece_style = base
        marked = 0
        for s, e, extra, keyed in spans:
            if s <= a and b <= e:
                piece_style += extra
                marked += keyed
        if marked > 1:
            piece_style += style("overlap")
        if cursor_at is not None and a == cursor_at:
            piece_style += style("cursor")
        piece = block.text[a:b]
        # Spaces that begin a piece are a run of their own (slanted or not, which spaces do not show): a
        # picture of the screen (SVG) draws each run at its own place, and some renderers drop leading spaces.
        lead = len(piece) - len(piece.lstrip(" "))
        if 0 < lead < len(piece):
            segments.append(Segment(piece[:lead], piece_style + Style(italic=not piece_style.italic)))
            piece = piece[lead:]
        segments.append(Segment(piece, piece_style))
    if cursor_at is not None and cursor_at >= end:  # the cursor past the line's last character
        segments.append(Segment(" ", base + style("cursor")))
    return segments


def _line_ends_at(block: Block, start: int, end: int) -> bool:
    """Whether a cursor at `end` is on this line: nothing follows it, or a character not drawn (a newline, the
    space it breaks at); a word broken where the line is full goes on at `end`, on the next line."""
    index = block.line_at(start)
    return index == len(block.lines) - 1 or block.lines[index + 1][0] > end
