"""Adaptive pairs: a field ranked for a fraction of the round robin's judgments, round by round.

A field of 38 models has 703 pairs, and most are settled before they are played
(rank 1 against rank 37). After EQ-Bench 3's sampling schedule, the queue grows in rounds:

- Round 1, the anchors: each side meets about three others spread across the
  current order (the cards' totals where there are any, else a seeded shuffle), so
  every side is placed against the whole field and the pairs connect it: a cycle
  through the order at a stride near a third of it, and across it at a half.
- Every later round refits Bradley–Terry with ties (store.scoring.ratings) to the
  verdicts so far and plays the pairs whose order is least certain under the fit:
  the chance that the fitted order of the two is wrong, from the posterior's normal
  approximation (their ratings' intervals overlap most), shared by how often the two
  have met already. A side plays at most twice in a round, so a round spreads over
  the field; a round is half as many pairs as the field has sides.
- It stops at the budget (pairs), when no pair is left to play, or when the ranking
  has stopped changing: STABLE_ROUNDS rounds in a row each of which left the order with
  a Kendall tau of at least STABLE_TAU against the order before it. In a field of 38,
  that is at most 10 of its 703 pairs of sides swapped a round (neighbours within noise
  keep swapping for ever, so an order left exactly as it was almost never comes); in a
  field of ten or fewer, no swap at all. Simulated (bench_adaptive), it ends a field of
  38 at about 46% of the round robin's judgments with tau about 0.95 against the truth.

Pure: sides are names, votes are ratings.Vote, and what may still be played is given
(`room`: how many more distinct pairs of runs two sides have). The record and the
judge loop are elsewhere (store.scoring.adaptive_queue).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from sieve.store.scoring import ranks, ratings
from sieve.tables import counted

ANCHOR_DEGREE = 3  # opponents of each side in the first round (about; a stride and a half-turn)
PER_SIDE = 2  # pairs a side may play in one later round
STABLE_ROUNDS = 2  # rounds in a row with the order (all but) unchanged that end the queue before its budget
STABLE_TAU = 0.97  # "all but": Kendall's tau of a round's order with the one before, at least
FIT_TOLERANCE = 1e-7
TOP_WEIGHT = 0.5  # a pair's priority is raised by TOP_WEIGHT / (1 + the rank of its better side, 0 first)

Pair = tuple[str, str]


def key(a: str, b: str) -> Pair:
    """A pair of sides, in one order (sorted), whatever order it was met in."""
    return (a, b) if a <= b else (b, a)


def round_size(sides: int) -> int:
    """Pairs in a round after the first: half as many as the field has sides, at least two."""
    return max(2, sides // 2)


def _stride(n: int) -> int:
    """A step near a third of the field that visits every side (coprime with n), so its cycle connects them all."""
    if n < 3:
        return 1
    target = n / 3
    return min((s for s in range(1, n) if math.gcd(s, n) == 1), key=lambda s: (abs(s - target), s))


def anchors(order: Sequence[str]) -> list[Pair]:
    """The first round: each side against sides spread across `order`, the graph connected. For n sides, a cycle at
    a stride near n/3 (coprime with n), and for an even n a half-turn across the order: about 1.5 n pairs (57 of 703
    for 38); for four sides or fewer, every pair."""
    n = len(order)
    found: list[Pair] = []
    seen: set[Pair] = set()

    def add(i: int, j: int) -> None:
        pair = key(order[i % n], order[j % n])
        if pair[0] != pair[1] and pair not in seen:
            seen.add(pair)
            found.append((order[i % n], order[j % n]))

    if n <= 4:
        for i in range(n):
            for j in range(i + 1, n):
                add(i, j)
        return found
    stride = _stride(n)
    for i in range(n):
        add(i, i + stride)
    if ANCHOR_DEGREE >= 3:
        half = n // 2 if n % 2 == 0 else _stride_near(n, n / 2, avoid=stride)
        for i in range(n if n % 2 else n // 2):
            add(i, i + half)
    return found


def _stride_near(n: int, target: float, avoid: int) -> int:
    options = [s for s in range(1, n) if math.gcd(s, n) == 1 and s not in (avoid, n - avoid)]
    return min(options, key=lambda s: (abs(s - target), s)) if options else avoid


def shuffled(sides: Sequence[str], seed: int | str | None) -> list[str]:
    """The sides in a seeded random order: the first round's order when nothing ranks them yet."""
    order = sorted(sides)
    random.Random(seed).shuffle(order)
    return order


@dataclass
class Standing:
    """The field under the current fit: sides best first, log strengths, and their posterior covariance."""

    order: list[str]
    fit: ratings.Fit
    names: list[str]
    cov: list[list[float]]

    def wrong_order_chance(self, a: str, b: str) -> float:
        """The chance that the fitted order of a and b is the wrong one: Phi(-|difference| / its sd)."""
        i, j = self.names.index(a), self.names.index(b)
        variance = self.cov[i][i] + self.cov[j][j] - 2 * self.cov[i][j]
        gap = abs(self.fit.strengths[a] - self.fit.strengths[b])
        if variance <= 0:
            return 0.0 if gap > 0 else 0.5
        return NormalDist().cdf(-gap / math.sqrt(variance))


def standing(votes: Sequence[ratings.Vote], sides: Sequence[str]) -> Standing:
    names = sorted(sides)
    fit = ratings.fit(votes, names, iterations=300, tolerance=FIT_TOLERANCE)
    cov = ratings.covariance(votes, fit, names)
    order = sorted(names, key=lambda s: (-fit.strengths[s], s))
    return Standing(order, fit, names, cov)


def next_round(
    votes: Sequence[ratings.Vote],
    sides: Sequence[str],
    room: Mapping[Pair, int],
    size: int,
    played: Mapping[Pair, int] | None = None,
) -> list[Pair]:
    """The pairs (best-rated side first) whose order is least certain under the fit to `votes`: each pair's chance of
    the wrong order over 1 + the times it was played, highest first, at most PER_SIDE a side; only pairs with room."""
    found = standing(votes, sides)
    played = played or {}
    scored = []
    for i, a in enumerate(found.order):
        for b in found.order[i + 1 :]:
            if room.get(key(a, b), 0) <= 0:
                continue
            chance = found.wrong_order_chance(a, b) / (1 + played.get(key(a, b), 0))
            scored.append((chance * (1 + TOP_WEIGHT / (1 + i)), i, a, b))
    scored.sort(key=lambda entry: (-entry[0], entry[1], entry[2], entry[3]))
    used: Counter[str] = Counter()
    chosen: list[Pair] = []
    for _, _, a, b in scored:
        if len(chosen) >= size:
            break
        if used[a] >= PER_SIDE or used[b] >= PER_SIDE:
            continue
        used[a] += 1
        used[b] += 1
        chosen.append((a, b))
    return chosen


def stop_reason(orders: Sequence[Sequence[str]], spent: int, budget: int, proposed: int | None = None) -> str | None:
    """Why the queue ends here, or None: the budget spent, nothing left to play, or the order all but unchanged over
    the last STABLE_ROUNDS rounds (`orders`: the fitted order after each round so far, oldest first)."""
    if spent >= budget:
        return f"the budget is spent ({spent} of {counted(budget, 'pair')})"
    if proposed == 0:
        return "no pair is left to play"
    if len(orders) > STABLE_ROUNDS and all(_settled(orders[-1 - k], orders[-2 - k]) for k in range(STABLE_ROUNDS)):
        return (
            f"the ranking stopped changing ({STABLE_ROUNDS} rounds in a row each left the order with a Kendall tau "
            f"of at least {STABLE_TAU} against the one before)"
        )
    return None


def _settled(order: Sequence[str], before: Sequence[str]) -> bool:
    if list(order) == list(before):
        return True
    tau = ranks.of_orders(order, before) if sorted(order) == sorted(before) else None
    return tau is not None and tau >= STABLE_TAU


def propose(
    votes: Sequence[ratings.Vote],
    sides: Sequence[str],
    room: Mapping[Pair, int],
    played: Mapping[Pair, int],
    spent: int,
    budget: int,
    first_order: Sequence[str] | None = None,
) -> list[Pair]:
    """The next round's pairs of sides: the anchors first (in `first_order`, else sorted), then by uncertainty;
    never more than the budget has left."""
    left = budget - spent
    if left <= 0:
        return []
    if not played:
        chosen = [p for p in anchors(list(first_order or sorted(sides))) if room.get(key(*p), 0) > 0]
        return chosen[:left]
    return next_round(votes, sides, room, min(round_size(len(sides)), left), played)


def tau_with(order: Sequence[str], truth: Sequence[str]) -> float | None:
    """Kendall's tau of an order against another (the true one, in a simulation)."""
    return ranks.of_orders(order, truth)
