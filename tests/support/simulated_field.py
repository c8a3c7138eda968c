"""A simulated field with known strengths and a noisy judge, for the adaptive queue's test and benchmark.

A judge compares two transcripts shown in an order: Davidson's model (ties an answer
of their own, tie parameter TIE) on the true log strengths, plus a position bias (a
bonus in log odds for the one shown first). Each pair is judged twice with the sides
swapped and settled as `sieve judge --pairs` settles it (engine.judge.pairs.settle):
the same run both times stands, anything else is a tie. So a pair costs two judgments.
Everything is drawn from a seeded random.Random: the same seed, the same numbers.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from sieve.engine.judge.pairs import SWAP, settle
from sieve.store.scoring import adaptive, ratings

TIE = 0.4  # Davidson's v: with equal strengths a tie one time in six
POSITION = 0.35  # log odds the first shown gains: a judge that picks it about 59% of the time between equals
SPREAD = 4.0  # the field's width: evenly spaced, 3.4 * SPREAD from first to last (neighbours 64 Elo apart for 38)
RUNS = 3  # runs of each model: two models can meet in up to 9 different pairs of runs


@dataclass
class Field:
    strengths: dict[str, float]
    tie: float = TIE
    position: float = POSITION
    rng: random.Random = field(default_factory=random.Random)
    judgments: int = 0

    @property
    def truth(self) -> list[str]:
        return sorted(self.strengths, key=lambda s: -self.strengths[s])

    def judge_once(self, first: str, second: str) -> str:
        """One judgment of two transcripts shown in this order: A (the first), B, or tie."""
        self.judgments += 1
        eta = self.strengths[first] - self.strengths[second] + self.position
        u, v, w = math.exp(eta / 2), math.exp(-eta / 2), self.tie
        draw = self.rng.random() * (u + v + w)
        return "A" if draw < u else ("B" if draw < u + v else "tie")

    def verdict(self, a: str, b: str, pair: str) -> ratings.Vote:
        """The pair judged as shown (a as A) and with the sides swapped, settled into one vote."""
        straight = self.judge_once(a, b)
        turned = SWAP[self.judge_once(b, a)]
        winner, _ = settle(straight, turned)
        return ratings.Vote(a, b, winner, pair, "judge")


def make_field(sides: int, seed: int, spread: float = SPREAD, ladder: bool = True, **options: float) -> Field:
    """A field of known strengths: a ladder (evenly spaced, shuffled among the names), or drawn from a normal
    distribution of sd `spread` (ladder False)."""
    rng = random.Random(seed)
    names = [f"m{k:02d}" for k in range(sides)]
    if ladder:
        rungs = [spread * 3.4 * (k / (sides - 1) - 0.5) for k in range(sides)]
        rng.shuffle(rungs)
        return Field(dict(zip(names, rungs)), rng=random.Random(f"judge:{seed}"), **options)
    return Field({n: rng.gauss(0, spread) for n in names}, rng=random.Random(f"judge:{seed}"), **options)


Checkpoint = Callable[[int, list[ratings.Vote]], None]


def play_adaptive(
    sim: Field, budget: int, seed: int, stop: bool = False, at: Checkpoint | None = None, runs: int = RUNS
) -> tuple[list[ratings.Vote], str | None]:
    """Play an adaptive queue of `budget` pairs (one run a side: a pair is never played twice); `at(pairs, votes)`
    is called after every round. With `stop`, the stopping rule may end it early; returns the votes and why it ended."""
    sides = sorted(sim.strengths)
    room = {adaptive.key(a, b): runs * runs for i, a in enumerate(sides) for b in sides[i + 1 :]}
    played: Counter[adaptive.Pair] = Counter()
    votes: list[ratings.Vote] = []
    orders: list[list[str]] = []
    first = adaptive.shuffled(sides, seed)
    reason = None
    while True:
        chosen = adaptive.propose(votes, sides, room, played, len(votes), budget, first)
        reason = adaptive.stop_reason(orders, len(votes), budget, len(chosen))
        if reason is not None and (stop or not chosen):
            break
        for a, b in chosen:
            votes.append(sim.verdict(a, b, f"{a}|{b}|{played[adaptive.key(a, b)]}"))
            room[adaptive.key(a, b)] -= 1
            played[adaptive.key(a, b)] += 1
        orders.append(adaptive.standing(votes, sides).order)
        if at is not None:
            at(len(votes), votes)
    return votes, reason


def play_round_robin(sim: Field, budget: int, seed: int) -> list[ratings.Vote]:
    """The round robin's pairs in a random order, the first `budget` of them: its cost equal to the adaptive's."""
    sides = sorted(sim.strengths)
    pairs = [(a, b) for i, a in enumerate(sides) for b in sides[i + 1 :]]
    random.Random(f"order:{seed}").shuffle(pairs)
    return [sim.verdict(a, b, f"{a}|{b}") for a, b in pairs[:budget]]


def measures(sim: Field, votes: list[ratings.Vote]) -> dict[str, float]:
    """Kendall's tau with the true order, the mean 95% interval width (Elo, the posterior's normal approximation),
    whether the top 3 are right (the true first three, in order), and whether they are the top 3 in some order
    (models 64 Elo apart are hard to order even with every pair played: both say how the top is read)."""
    sides = sorted(sim.strengths)
    fit = ratings.fit(votes, sides, iterations=300, tolerance=adaptive.FIT_TOLERANCE)
    order = sorted(sides, key=lambda s: -fit.strengths[s])
    widths = ratings.curvature_intervals(votes, fit, sides)
    tau = adaptive.tau_with(order, sim.truth) or 0.0
    return {
        "tau": tau,
        "width": sum(high - low for low, high in widths.values()) / len(widths),
        "top3": float(order[:3] == sim.truth[:3]),
        "top3set": float(set(order[:3]) == set(sim.truth[:3])),
        "top1": float(order[0] == sim.truth[0]),
    }
