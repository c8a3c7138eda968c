"""How sure a number is: the intervals and tests every comparison in sieve uses, in one place.

Small samples are the rule here (three runs a model, nine pairs a queue), so each
method is chosen to stay honest on them:

- a share of pairs won: the Wilson score interval with continuity correction (ties count
  half), which stays wide and inside 0..1 when every vote went one way (9 of 9: 0.63 to 1.0);
- a mean over runs, and a difference of two sides' means: a bootstrap over runs,
  percentiles widened for small samples (Hesterberg's expanded percentile interval),
  and never narrower than Student's (Welch's) t-interval, with each side's variance
  at least that of a spread of one scale step: scores are whole steps, so runs that
  agree exactly say the spread is under a step, not that it is zero. (With three runs
  a side the bootstrap alone calls 8 in 100 null comparisons a difference; the t floor
  keeps that under 5.);
- a difference: a two-sided permutation p-value (exact when the splits are few);
- the runs needed: per side, to detect a difference at 80% power (Evan Miller, "Adding
  Error Bars to Evals", 2024: n = 2 (z_a/2 + z_b)^2 s^2 / d^2).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist, fmean, stdev

Z95 = NormalDist().inv_cdf(0.975)  # 1.96
ROUNDS = 2000  # bootstrap resamples
ALPHA = 0.05  # the two-sided level of every interval and test here (95%)
PERMUTATIONS = 10_000  # random splits when the exact ones are more


def wilson(share: float, n: float, z: float = Z95, corrected: bool = True) -> tuple[float, float]:
    """The Wilson score interval of a share observed over n trials, with continuity correction (Newcombe 1998,
    method 4): 9 of 9 is 0.63 to 1.0 (0.70 to 1.0 uncorrected). Uncorrected, 4 of 4 fair coin tosses would
    be called a difference one time in eight; corrected, a fair coin is called one at most one time in 20."""
    if n <= 0:
        return (0.0, 1.0)
    if corrected:
        p, zz = share, z * z
        low = 2 * n * p + zz - 1 - z * math.sqrt(max(0.0, zz - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)))
        high = 2 * n * p + zz + 1 + z * math.sqrt(max(0.0, zz + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)))
        low, high = low / (2 * (n + zz)), high / (2 * (n + zz))
        return (0.0 if p == 0 else max(0.0, low), 1.0 if p == 1 else min(1.0, high))
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def t_quantile(df: float, p: float = 0.975) -> float:
    """Student's t quantile, by bisection on its distribution function (no SciPy here)."""
    if df <= 0:
        return math.inf
    if df > 1e6:
        return NormalDist().inv_cdf(p)

    def cdf(t: float) -> float:
        x = df / (df + t * t)
        tail = 0.5 * _incomplete_beta(df / 2, 0.5, x)
        return 1 - tail if t > 0 else tail

    low, high = 0.0, 1e6
    for _ in range(200):
        middle = (low + high) / 2
        if cdf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > 1e-300 else 1e-300)
            c = 1 + numerator / c
            c = c if abs(c) > 1e-300 else 1e-300
            result *= d * c
        if abs(d * c - 1) < 1e-12:
            break
    return front * result / a


def _expanded_level(n: int) -> float:
    """The percentile level that widens a bootstrap interval for a sample of n (Hesterberg 2015):
    Phi^-1(level) = sqrt(n / (n - 1)) * t_(n-1, 0.975)."""
    if n < 2:
        return 1.0
    return NormalDist().cdf(math.sqrt(n / (n - 1)) * t_quantile(n - 1))


def _percentiles(values: list[float], level: float) -> tuple[float, float]:
    values = sorted(values)
    last = len(values) - 1
    low = values[max(0, min(last, math.floor((1 - level) * last)))]
    high = values[max(0, min(last, math.ceil(level * last)))]
    return low, high


Unit = Mapping[str, float]  # one run: each evaluator's figure for it
Units = Sequence[Unit | float]


def _units(values: Units) -> list[Unit]:
    return [v if isinstance(v, Mapping) else {"": float(v)} for v in values]


def evaluators_mean(units: Sequence[Unit]) -> float:
    """Each evaluator's own mean over the runs they scored first, then the mean across evaluators
    (the story benchmark's rule; with one evaluator, the plain mean)."""
    if _balanced(units):
        return fmean(_run_values(units))
    own: dict[str, list[float]] = {}
    for unit in units:
        for evaluator, value in unit.items():
            own.setdefault(evaluator, []).append(value)
    return fmean(fmean(v) for v in own.values())


def evaluator_means(units: Units) -> dict[str, float]:
    own: dict[str, list[float]] = {}
    for unit in _units(units):
        for evaluator, value in unit.items():
            own.setdefault(evaluator, []).append(value)
    return {e: fmean(v) for e, v in sorted(own.items())}


def _run_values(units: Sequence[Unit]) -> list[float]:
    return [fmean(unit.values()) for unit in units]


def _balanced(units: Sequence[Unit]) -> bool:
    """Every run scored by the same evaluators: then the mean of their means is the mean of the runs' means,
    and the resampling can work on plain numbers (fast)."""
    keys = {frozenset(unit) for unit in units}
    return len(keys) <= 1


@dataclass(frozen=True)
class Spread:
    """A side's figures over its runs: how many, the mean, the run-to-run spread, a 95% interval, min and max."""

    n: int
    mean: float
    sd: float | None  # None with one run: one run has no spread
    low: float
    high: float
    minimum: float
    maximum: float

    @property
    def snapshot(self) -> bool:
        return self.n == 1


def spread(values: Units, step: float, bounds: tuple[float, float], seed: int = 0) -> Spread:
    """The distribution of a figure over runs (a run: a number, or each evaluator's number for it).
    `step` is the scale's resolution (the floor of the spread); `bounds` the figure's possible range:
    one run's interval is all of it (one run is a snapshot)."""
    units = _units(values)
    n = len(units)
    centre = evaluators_mean(units)
    per_run = _run_values(units)
    if n == 1:
        return Spread(1, centre, None, bounds[0], bounds[1], centre, centre)
    rng = random.Random(seed)
    means = [evaluators_mean(rng.choices(units, k=n)) for _ in range(ROUNDS)]
    low, high = _percentiles(means, _expanded_level(n))
    half = t_quantile(n - 1) * math.sqrt(_variance(per_run, step) / n)
    low, high = min(low, centre - half), max(high, centre + half)
    return Spread(n, centre, stdev(per_run), max(bounds[0], low), min(bounds[1], high), min(per_run), max(per_run))


def _floor_sd(step: float) -> float:
    # Scores are whole steps: runs that agree exactly put the spread below a step, not at zero.
    return step / 2 if step > 0 else 0.5


def _variance(values: Sequence[float], step: float) -> float:
    """The run-to-run variance, never below a one-step spread's."""
    return max(stdev(values) ** 2 if len(values) > 1 else 0.0, _floor_sd(step) ** 2)


@dataclass(frozen=True)
class Difference:
    """Side A's mean minus side B's, with a 95% interval and a permutation p-value."""

    a_mean: float
    b_mean: float
    difference: float
    low: float
    high: float
    p: float

    @property
    def within_noise(self) -> bool:
        """The interval includes no difference, or the permutation test does not reach ALPHA: a side is ahead only
        when both say so (with 3 runs a side, no relabelling test can go below p 0.1, however narrow the
        bootstrap's interval)."""
        return self.low <= 0 <= self.high or self.p > ALPHA


def smallest_p(a_runs: int, b_runs: int) -> float:
    """The smallest two-sided permutation p-value `a_runs` against `b_runs` can give: one split of C(n, k) at the
    extreme, or its mirror image too when the sides are the same size."""
    if a_runs < 1 or b_runs < 1:
        return 1.0
    return (2 if a_runs == b_runs else 1) / math.comb(a_runs + b_runs, a_runs)


def difference(a: Units, b: Units, step: float, bounds: tuple[float, float], seed: int = 0) -> Difference:
    """A minus B over runs: a bootstrap interval (runs resampled within each side, expanded for small samples,
    floored at a one-step spread) and a two-sided permutation p-value. With one run on a side, nothing is
    known of its spread: the interval is every difference the scale allows, and p is 1."""
    a_units, b_units = _units(a), _units(b)
    a_mean, b_mean = evaluators_mean(a_units), evaluators_mean(b_units)
    observed = a_mean - b_mean
    widest = bounds[1] - bounds[0]
    if len(a_units) < 2 or len(b_units) < 2:
        return Difference(a_mean, b_mean, observed, -widest, widest, 1.0)
    rng = random.Random(seed)
    if _balanced(a_units) and _balanced(b_units):
        a_plain, b_plain = _run_values(a_units), _run_values(b_units)
        draws = [
            fmean(rng.choices(a_plain, k=len(a_plain))) - fmean(rng.choices(b_plain, k=len(b_plain)))
            for _ in range(ROUNDS)
        ]
    else:
        draws = [
            evaluators_mean(rng.choices(a_units, k=len(a_units)))
            - evaluators_mean(rng.choices(b_units, k=len(b_units)))
            for _ in range(ROUNDS)
        ]
    low, high = _percentiles(draws, _expanded_level(min(len(a_units), len(b_units))))
    # Welch's t-interval, each variance floored at a one-step spread's, as the narrowest allowed.
    va, vb = _variance(_run_values(a_units), step) / len(a_units), _variance(_run_values(b_units), step) / len(b_units)
    df = (va + vb) ** 2 / (va * va / (len(a_units) - 1) + vb * vb / (len(b_units) - 1))
    half = t_quantile(df) * math.sqrt(va + vb)
    low, high = min(low, observed - half), max(high, observed + half)
    p = permutation_p(a_units, b_units, seed=seed)
    return Difference(a_mean, b_mean, observed, max(-widest, low), min(widest, high), p)


def permutation_p(a: Units, b: Units, seed: int = 0) -> float:
    """Two-sided: how often a random relabelling of the runs gives a difference at least as large."""
    a_units, b_units = _units(a), _units(b)
    pooled = a_units + b_units
    n, k = len(pooled), len(a_units)
    observed = abs(evaluators_mean(a_units) - evaluators_mean(b_units)) - 1e-9
    if _balanced(pooled):
        return _plain_permutation_p(_run_values(pooled), k, observed, seed)

    def gap(chosen: Sequence[int]) -> float:
        picked = set(chosen)
        first = [pooled[i] for i in picked]
        rest = [pooled[i] for i in range(n) if i not in picked]
        return abs(evaluators_mean(first) - evaluators_mean(rest))

    if math.comb(n, k) <= PERMUTATIONS:
        splits = list(itertools.combinations(range(n), k))
        return sum(1 for c in splits if gap(c) >= observed) / len(splits)
    rng = random.Random(seed)
    hits = sum(1 for _ in range(PERMUTATIONS) if gap(rng.sample(range(n), k)) >= observed)
    return (hits + 1) / (PERMUTATIONS + 1)


def _plain_permutation_p(pooled: list[float], k: int, observed: float, seed: int) -> float:
    n, total = len(pooled), sum(pooled)

    def gap(chosen_sum: float) -> float:
        return abs(chosen_sum / k - (total - chosen_sum) / (n - k))

    if math.comb(n, k) <= PERMUTATIONS:
        sums = [sum(c) for c in itertools.combinations(pooled, k)]
        return sum(1 for x in sums if gap(x) >= observed) / len(sums)
    rng = random.Random(seed)
    hits = sum(1 for _ in range(PERMUTATIONS) if gap(sum(rng.sample(pooled, k))) >= observed)
    return (hits + 1) / (PERMUTATIONS + 1)


def runs_needed(variance: float, effect: float = 1.0, power: float = 0.8, step: float = 1.0) -> int:
    """Runs per side to detect a difference of `effect` at this power (two-sided, 5%), from the run-to-run
    variance observed (never below the one-step floor)."""
    variance = max(variance, _floor_sd(step) ** 2)
    z = Z95 + NormalDist().inv_cdf(power)
    return max(2, math.ceil(2 * z * z * variance / (effect * effect)))


def pooled_variance(a: Units, b: Units) -> float | None:
    """The two sides' run-to-run variance, pooled; None when neither side has two runs."""
    values = [_run_values(_units(x)) for x in (a, b)]
    parts = [(len(x) - 1, stdev(x) ** 2) for x in values if len(x) >= 2]
    if not parts:
        return None
    return sum(df * v for df, v in parts) / sum(df for df, _ in parts)
