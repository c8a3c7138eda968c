"""Plain-text tables for the CLI: aligned columns, nothing clever."""

from __future__ import annotations

from collections.abc import Sequence

from .safe_text import visible


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; None shows as an empty cell."""
    cells = [[visible("" if c is None else str(c)).replace("\n", " ") for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)
