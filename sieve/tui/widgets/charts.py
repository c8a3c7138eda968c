"""Charts for the Results screen, where looking is faster than reading a table.

Rubric against rubric per run (the keykeeper study keeps T and R apart: one axis
each, never summed), and a heat map of items by runs.
"""

from __future__ import annotations

from rich.text import Text

from sieve.safe_text import one_line
from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import Card

MARKERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Black text on each shade: readable in light and dark themes alike (no shade darker than grey50).
SHADES = [(0.0, "grey50"), (0.25, "red"), (0.5, "dark_orange"), (0.75, "yellow"), (1.0, "green")]


def scatter(points: list[tuple[str, float, float]], x_max: float, y_max: float, x_label: str, y_label: str) -> Text:
    """One marker per run at (x, y); runs on the same spot share a '*'. The legend names the markers."""
    width, height = int(x_max) + 1, int(y_max) + 1
    grid = [[" "] * width for _ in range(height)]
    legend = []
    for n, (name, x, y) in enumerate(points):
        marker = MARKERS[n % len(MARKERS)]
        col, row = min(width - 1, max(0, round(x))), min(height - 1, max(0, round(y)))
        grid[row][col] = marker if grid[row][col] == " " else "*"
        legend.append(f"{marker} {one_line(name)} ({x:g}, {y:g})")
    text = Text()
    text.append(one_line(f"{y_label} ↑") + "\n", style="bold")
    for row in range(height - 1, -1, -1):
        text.append(f"{row:>3} │", style="dim")
        for col in range(width):
            cell = grid[row][col]
            text.append(f" {cell}", style="bold cyan" if cell != " " else "")
        text.append("\n")
    text.append("    └" + "──" * width + "\n", style="dim")
    text.append(
        "     " + "".join(f"{c:>2}" if c % 2 == 0 else "  " for c in range(width)) + one_line(f"   → {x_label}") + "\n",
        style="dim",
    )
    text.append("\n" + "\n".join(legend) + "\n(* several runs on one spot)\n", style="")
    return text


def heat_map(scenario: Scenario, runs: list[tuple[str, Card | None]]) -> Text:
    """Rows: runs; columns: items; each cell shaded by score over the item's maximum."""
    items = [(r, i) for r in scenario.rubrics for i in r.items]
    text = Text()
    runs = [(one_line(name), card) for name, card in runs]
    name_width = min(28, max((len(name) for name, _ in runs), default=4))
    text.append(" " * (name_width + 1))
    for _, item in items:
        text.append(f"{item.id:>4}", style="bold")
    text.append("\n")
    for name, card in runs:
        text.append(f"{name[:name_width]:<{name_width}} ")
        for _rubric, item in items:
            if card is None:
                text.append("   ·", style="dim")
                continue
            cell = card.item(item.id)
            if not cell.counted:  # a judge's unsupported score is not counted: no figure
                text.append("   ·", style="dim")
                continue
            span = item.scale.maximum - item.scale.minimum or 1
            share = (cell.low - item.scale.minimum) / span
            colour = next(c for limit, c in reversed(SHADES) if share >= limit)
            text.append(f"{item.scale.label(cell.low):>3}", style=f"bold black on {colour}")
            text.append(" ")
        text.append("\n")
    text.append("\nscore over the item's maximum: ", style="dim")
    for limit, colour in SHADES:
        text.append(f" {int(limit * 100)}% ", style=f"black on {colour}")
    text.append("   · not scored", style="dim")
    return text
