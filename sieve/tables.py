"""Plain-text tables for the terminal: aligned columns, nothing clever. The only table renderer; and counts in words."""

from __future__ import annotations

from collections.abc import Sequence

from sieve.safe_text import one_line


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; None shows as an empty cell; every cell and header made safe to print."""
    headers = [one_line(h) for h in headers]
    cells = [[one_line("" if c is None else str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """A number and its noun, singular for one: `1 probe`, `3 probes`, `1 reply`, `2 replies` (`nouns` when not +s)."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"
