"""Inline SVG charts: one rubric against another per run, and a heat map of items × runs. No script, no style
attribute (the page's CSP allows neither): colours are presentation attributes."""

from __future__ import annotations

from dataclasses import dataclass, field

from sieve.report.markup import esc


@dataclass(frozen=True)
class Point:
    label: str  # the run's name as the page shows it (outside text: escaped here)
    href: str  # a link the report made
    x: float
    y: float


@dataclass
class Heat:
    x_title: str
    y_title: str
    columns: list[tuple[str, str]] = field(default_factory=list)  # (run name, href)
    rows: list[tuple[str, tuple[float, float]]] = field(default_factory=list)  # (item, its scale's min and max)
    values: dict[tuple[int, int], float] = field(default_factory=dict)  # (row, column) -> score


def scatter(
    points: list[Point], x_title: str = "", y_title: str = "", bounds: tuple[float, float, float, float] | None = None
) -> str:
    width, height, pad = 420, 320, 40
    xs = [p.x for p in points]
    ys = [p.y for p in points]
    x0, x1, y0, y1 = bounds or (min(xs), max(xs), min(ys), max(ys))
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y1 if y1 > y0 else y0 + 1

    def px(x: float) -> float:
        return pad + (x - x0) / (x1 - x0) * (width - 2 * pad)

    def py(y: float) -> float:
        return height - pad - (y - y0) / (y1 - y0) * (height - 2 * pad)

    dots = "".join(
        f'<a href="{esc(p.href)}"><circle cx="{px(p.x):.1f}" cy="{py(p.y):.1f}" r="5" fill="#5fafd7" '
        f'stroke="#084f8c"><title>{esc(p.label)}: {p.x:g}, {p.y:g}</title></circle></a>'
        for p in points
    )
    axes = (
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="currentColor"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="currentColor"/>'
        f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">{esc(x_title)} ({x0:g} to {x1:g})</text>'
        f'<text x="12" y="{height / 2}" text-anchor="middle" transform="rotate(-90 12 {height / 2})">'
        f"{esc(y_title)} ({y0:g} to {y1:g})</text>"
    )
    return (
        f'<figure><svg role="img" aria-label="{esc(y_title)} against {esc(x_title)} per run" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">{axes}{dots}</svg>'
        f"<figcaption>{esc(y_title)} against {esc(x_title)}, one point per run and group of evaluators (the "
        "mean of their totals, an undecided range at its low end).</figcaption></figure>"
    )


def _shade(share: float) -> str:
    # From a pale red (the scale's minimum) to a deep green (its maximum).
    low, high = (0xF4, 0xC7, 0xC3), (0x1E, 0x8E, 0x3E)
    r, g, b = (round(a + (z - a) * share) for a, z in zip(low, high))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map(heat: Heat) -> str:
    size, left, top = 18, 60, 90
    width = left + size * len(heat.columns) + 10
    height = top + size * len(heat.rows) + 10
    parts = []
    for c, (name, href) in enumerate(heat.columns):
        x = left + c * size + size / 2
        parts.append(
            f'<a href="{esc(href)}"><text x="{x:.1f}" y="{top - 6}" transform="rotate(-60 {x:.1f} {top - 6})">'
            f"{esc(name)}</text></a>"
        )
    for r, (item, (lowest, highest)) in enumerate(heat.rows):
        y = top + r * size
        parts.append(f'<text x="{left - 6}" y="{y + size - 5}" text-anchor="end">{esc(item)}</text>')
        for c in range(len(heat.columns)):
            value = heat.values.get((r, c))
            x = left + c * size
            if value is None:
                parts.append(
                    f'<rect x="{x}" y="{y}" width="{size - 1}" height="{size - 1}" fill="none" stroke="#8a8a8a"/>'
                )
                continue
            share = 0.0 if highest <= lowest else (value - lowest) / (highest - lowest)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{size - 1}" height="{size - 1}" fill="{_shade(share)}">'
                f"<title>{esc(item)} {value:g} · {esc(heat.columns[c][0])}</title></rect>"
            )
    return (
        f'<figure><svg role="img" aria-label="items by run" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}">{"".join(parts)}</svg><figcaption>Each item (a row) of each run (a column): pale at '
        "its scale's minimum, deep green at its maximum, an empty box where it is not scored (the mean of the "
        "evaluators' scores).</figcaption></figure>"
    )
