"""How often the comparisons' 95% intervals cover the truth, on simulated fields with a known answer.

    python -m tests.perf.bench_coverage [--fields 300]   (about 2 minutes on two cores)

Each field is two sides of n runs. A run's card total is the sum of ten items
scored 1 to 5 around its side's mean (a rounded normal, sd 0.8 an item), so the
true difference of the sides' expected totals is known (found by a large draw).
For each n and each effect, the benchmark prints how often the difference interval
(statistics.difference) covers that true difference, how often it calls a side
ahead (the power; under no effect, the false alarms), and the same for the head to
head's Wilson interval on pairs judged by a judge that prefers the better side with
a known probability. Coverage should be near 95% or above (the intervals are built
to be conservative on small samples); false alarms at or under 5%.
"""

from __future__ import annotations

import argparse
import random
import time
from statistics import fmean

from sieve.store.scoring import statistics
from tests.perf.timing import machine_line

ITEMS = 10


def item(rng: random.Random, centre: float) -> int:
    return max(1, min(5, round(rng.gauss(centre, 0.8))))


def total(rng: random.Random, centre: float) -> int:
    return sum(item(rng, centre) for _ in range(ITEMS))


def expected_total(centre: float, draws: int = 200_000) -> float:
    rng = random.Random(99)
    return fmean(item(rng, centre) for _ in range(draws)) * ITEMS


def differences(fields: int, runs: int, a: float, b: float, truth: float, seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    covered = ahead = 0
    for _ in range(fields):
        found = statistics.difference(
            [total(rng, a) for _ in range(runs)], [total(rng, b) for _ in range(runs)], 1, (10, 50), seed=seed
        )
        covered += found.low <= truth <= found.high
        ahead += not found.within_noise
    return covered / fields, ahead / fields


def head_to_head(fields: int, pairs: int, prefer: float, seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    covered = ahead = 0
    for _ in range(fields):
        share = sum(rng.random() < prefer for _ in range(pairs)) / pairs
        low, high = statistics.wilson(share, pairs)
        covered += low <= prefer <= high
        ahead += low > 0.5 or high < 0.5
    return covered / fields, ahead / fields


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fields", type=int, default=300)
    fields = parser.parse_args().fields
    print(machine_line())
    started = time.perf_counter()
    print(f"difference of two sides' mean card totals, {fields} fields each (coverage, then how often 'ahead')")
    print(f"{'runs a side':>12} {'effect':>8} {'true diff':>10} {'coverage':>9} {'ahead':>7}")
    for effect in (0.0, 0.25, 0.5):
        truth = expected_total(3.0 + effect) - expected_total(3.0)
        for runs in (3, 5, 10, 20):
            cover, ahead = differences(fields, runs, 3.0 + effect, 3.0, truth, seed=runs * 100 + int(effect * 100))
            print(f"{runs:>12} {effect:>8.2f} {truth:>10.2f} {cover:>9.3f} {ahead:>7.3f}")
    print()
    print(f"head to head: share of pairs won, Wilson 95% (continuity-corrected), {fields} queues each")
    print(f"{'pairs':>12} {'prefers':>8} {'coverage':>9} {'ahead':>7}")
    for prefer in (0.5, 0.7, 0.9):
        for pairs in (4, 9, 20, 40):
            cover, ahead = head_to_head(fields, pairs, prefer, seed=pairs * 10 + int(prefer * 10))
            print(f"{pairs:>12} {prefer:>8.2f} {cover:>9.3f} {ahead:>7.3f}")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
