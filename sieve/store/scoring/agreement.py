"""Agreement between reviewers on an item: Cohen's kappa (weighted, for ordinal scales) for two, Krippendorff's
alpha for more, each with a bootstrap interval; a model judge against the people who scored the same runs."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import TypeVar

Unit = TypeVar("Unit")


def cohen_kappa(pairs: Sequence[tuple[object, object]]) -> float | None:
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


# -- ordinal scales, intervals, judges beside people ------------------------------------

RESAMPLES = 500  # bootstrap resamples: enough for a stable 95% interval on a few dozen runs


def weighted_kappa(
    pairs: Sequence[tuple[float, float]], categories: Sequence[float] | None = None, weights: str = "linear"
) -> float | None:
    """Cohen's weighted kappa for an ordinal scale; None when it is undefined.

    `categories` are the scale's values (default: those seen); a disagreement
    weighs |i - j| / (k - 1) between positions i and j on the scale (linear,
    Cicchetti-Allison), or its square (quadratic).
    """
    if not pairs:
        return None
    cats = sorted(set(categories or ()) | {v for pair in pairs for v in pair})
    index = {c: i for i, c in enumerate(cats)}
    return kappa_of_positions([(index[a], index[b]) for a, b in pairs], len(cats), weights)


def kappa_of_positions(pairs: Sequence[tuple[int, int]], k: int, weights: str = "linear") -> float | None:
    """Weighted kappa over pairs of positions (0..k-1) on an ordinal scale of k values."""
    if not pairs:
        return None
    if k < 2:
        return 1.0  # one category: every pair agrees, and nothing else could happen

    def weight(i: int, j: int) -> float:
        d = abs(i - j) / (k - 1)
        return d * d if weights == "quadratic" else d

    n = len(pairs)
    observed = sum(weight(i, j) for i, j in pairs) / n
    rows, cols = Counter(i for i, _ in pairs), Counter(j for _, j in pairs)
    expected = sum(rows[i] * cols[j] * weight(i, j) for i in rows for j in cols) / (n * n)
    if expected == 0:
        return 1.0 if observed == 0 else None
    return 1 - observed / expected


def bootstrap_interval(
    units: Sequence[Unit],
    statistic: Callable[[list[Unit]], float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """A percentile interval of `statistic`, the units (runs) resampled with replacement; seeded, so repeatable.

    None with fewer than two units, or when the statistic is undefined in most resamples.
    """
    n = len(units)
    if n < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        value = statistic([units[rng.randrange(n)] for _ in range(n)])
        if value is not None:
            values.append(value)
    if len(values) < resamples / 2:
        return None
    values.sort()
    tail = (1 - level) / 2
    low = values[math.floor(tail * (len(values) - 1))]
    high = values[math.ceil((1 - tail) * (len(values) - 1))]
    return low, high


@dataclass(frozen=True)
class Figure:
    """One agreement figure: what was measured, its value and 95% interval, how many runs and raters it rests on."""

    measure: str
    value: float | None
    low: float | None
    high: float | None
    runs: int
    raters: int
    note: str = ""  # why there is no value, where there is none to be had


ONE_SCORE = "undefined: {who} gives every run one score"  # a constant agrees with nothing by chance


def _one_score(units: Sequence[list[tuple[int, int]]], side: int) -> bool:
    """Whether one rater's side of every pair is the same position: a constant rater, whose kappa is 0 or 1 by
    construction, not by agreement (its bootstrap interval 0 to 0 would claim a certainty nothing measured)."""
    return len({pair[side] for unit in units for pair in unit}) == 1


def _pooled(units: Sequence[list[tuple[int, int]]], k: int) -> float | None:
    return kappa_of_positions([pair for unit in units for pair in unit], k)


def judge_against_people(
    scores: dict[str, dict[str, float]], judge: str, people: Sequence[str], categories: Sequence[float]
) -> Figure | None:
    """Weighted kappa of a judge's scores against each person's on the same runs (pairs pooled over people),
    with a bootstrap interval over runs."""
    cats = sorted(set(categories) | {v for by in scores.values() for v in by.values()})
    index = {c: i for i, c in enumerate(cats)}
    units = [
        [(index[by[judge]], index[by[p]]) for p in people if p in by]
        for by in scores.values()
        if judge in by and any(p in by for p in people)
    ]
    if not units:
        return None
    raters = len({p for by in scores.values() if judge in by for p in people if p in by}) + 1
    if _one_score(units, 0):
        return Figure("weighted kappa", None, None, None, len(units), raters, ONE_SCORE.format(who="the judge"))
    if _one_score(units, 1):
        return Figure("weighted kappa", None, None, None, len(units), raters, ONE_SCORE.format(who="the people"))
    value = _pooled(units, len(cats))
    low, high = bootstrap_interval(units, lambda sample: _pooled(sample, len(cats))) or (None, None)
    return Figure("weighted kappa", value, low, high, len(units), raters)


def among_people(
    scores: dict[str, dict[str, float]], people: Sequence[str], categories: Sequence[float]
) -> Figure | None:
    """People against each other: weighted kappa for two, interval Krippendorff's alpha for more."""
    units = [{p: by[p] for p in people if p in by} for by in scores.values()]
    units = [u for u in units if len(u) >= 2]
    raters = len({p for u in units for p in u})
    if not units:
        return None
    if raters == 2:
        a, b = sorted({p for u in units for p in u})
        cats = sorted(set(categories) | {v for u in units for v in u.values()})
        index = {c: i for i, c in enumerate(cats)}
        pairs = [[(index[u[a]], index[u[b]])] for u in units]
        for side, who in ((0, a), (1, b)):
            if _one_score(pairs, side):
                return Figure("weighted kappa", None, None, None, len(units), 2, ONE_SCORE.format(who=who))
        value = _pooled(pairs, len(cats))
        low, high = bootstrap_interval(pairs, lambda sample: _pooled(sample, len(cats))) or (None, None)
        return Figure("weighted kappa", value, low, high, len(units), 2)
    values = [list(u.values()) for u in units]
    low, high = bootstrap_interval(values, krippendorff_alpha) or (None, None)
    return Figure("alpha", krippendorff_alpha(values), low, high, len(units), raters)
