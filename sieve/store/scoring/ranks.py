"""Rank correlation: how far two orders of a field agree (Spearman's rho, Kendall's tau-b), ties handled.

Both take two mappings side -> value (a rating, a mean total) over the same sides
and return None when the figure is undefined: fewer than two sides in common, or one
of the two gives every side the same value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def _common(x: Mapping[str, float], y: Mapping[str, float]) -> list[str]:
    return sorted(set(x) & set(y))


def midranks(values: Sequence[float]) -> list[float]:
    """Each value's rank, 1 for the smallest; tied values share the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(x: Mapping[str, float], y: Mapping[str, float]) -> float | None:
    """Spearman's rho: Pearson's correlation of the midranks (so ties are handled as in the textbooks)."""
    sides = _common(x, y)
    if len(sides) < 2:
        return None
    rx, ry = midranks([x[s] for s in sides]), midranks([y[s] for s in sides])
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx, syy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def kendall(x: Mapping[str, float], y: Mapping[str, float]) -> float | None:
    """Kendall's tau-b: (concordant - discordant) / sqrt((n0 - ties in x)(n0 - ties in y)) over pairs of sides."""
    sides = _common(x, y)
    if len(sides) < 2:
        return None
    concordant = discordant = tied_x = tied_y = 0
    for i, a in enumerate(sides):
        for b in sides[i + 1 :]:
            dx, dy = x[a] - x[b], y[a] - y[b]
            if dx == 0 and dy == 0:
                tied_x += 1
                tied_y += 1
            elif dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    pairs = len(sides) * (len(sides) - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    if denominator == 0:
        return None
    return (concordant - discordant) / denominator


def of_orders(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Kendall's tau between two orders of the same sides (best first)."""
    return kendall({s: -i for i, s in enumerate(first)}, {s: -i for i, s in enumerate(second)})
