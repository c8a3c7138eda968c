"""Agreement between reviewers on an item: Cohen's kappa for two, Krippendorff's alpha for more."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations


def cohen_kappa(pairs: list[tuple[object, object]]) -> float | None:
    """Unweighted kappa over units rated by both reviewers; None when it is undefined."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[k] * second.get(k, 0) for k in first) / (n * n)
    if expected == 1:
        return 1.0 if observed == 1 else None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(units: list[list[float]]) -> float | None:
    """Interval alpha over units (each: the values its reviewers gave); units with one value are dropped."""
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    if n < 2:
        return None
    observed = sum(sum((a - b) ** 2 for a, b in permutations(u, 2)) / (len(u) - 1) for u in units) / n
    expected = sum((a - b) ** 2 for a, b in combinations(values, 2)) * 2 / (n * (n - 1))
    if expected == 0:
        return 1.0 if observed == 0 else None
    return 1 - observed / expected


def item_agreement(scores: dict[str, dict[str, float]]) -> tuple[str, float | None, int]:
    """scores: run -> reviewer -> score. Returns (measure, value, units)."""
    reviewers = sorted({r for by in scores.values() for r in by})
    if len(reviewers) == 2:
        a, b = reviewers
        pairs = [(by[a], by[b]) for by in scores.values() if a in by and b in by]
        return "kappa", cohen_kappa(pairs), len(pairs)
    units = [list(by.values()) for by in scores.values()]
    return "alpha", krippendorff_alpha(units), sum(1 for u in units if len(u) >= 2)
