"""Who is ahead, and how sure we are: Bradley–Terry ratings with ties (Davidson's model) from head-to-head votes.

A vote is one voter's verdict on one pair: A won, B won, or a tie. Ties are not
split into half wins: Davidson (1970) gives a tie its own probability,

    P(i beats j) = p_i / D,   P(tie) = v * sqrt(p_i * p_j) / D,   D = p_i + p_j + v * sqrt(p_i * p_j),

and the tie parameter v is fitted with the strengths. The fit maximises the
likelihood by Newton steps, one coordinate at a time, with a weak normal prior on
the log strengths (PRIOR) so that a side that never lost still gets a finite
rating. Ratings are shown on the Elo scale: 400 * log10(p) around 1000.

A 95% interval is the wider of two: bootstrap percentiles, resampled by pair (a
pair's votes stay together), and the posterior's normal approximation (the
curvature of the penalised likelihood at the fit, the prior included). The
bootstrap alone has no width when every vote went one way (each resample is the
same), which would claim certainty from nine votes; the curvature stays finite and
wide there, since the prior keeps the fit from running off to infinity. Stability asks how many of the most influential votes must go before
a row's order against the next row flips (the k of "a ranking can flip when two
votes are removed").
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

PRIOR = 0.25  # the prior's precision on log strengths (sd 2, about 350 Elo): a weak pull towards the middle
ELO = 400 / math.log(10)
STABLE_UP_TO = 10  # how many removed votes are tried before an order is called stable


@dataclass(frozen=True)
class Vote:
    a: str
    b: str
    winner: str  # "A", "B" or "tie"
    pair: str = ""  # what the bootstrap resamples by
    voter: str = ""
    style: tuple[float, ...] = ()  # covariates of A against B (store.scoring.style), for a controlled fit


@dataclass
class Fit:
    strengths: dict[str, float]  # log strengths, mean zero
    tie: float  # Davidson's v
    votes: int

    def rating(self, side: str) -> float:
        return 1000 + ELO * self.strengths[side]


def _terms(bi: float, bj: float, phi: float) -> tuple[float, float, float, float]:
    """For one comparison: u = e^bi, v = e^bj, w = nu * e^((bi+bj)/2), and D, scaled to avoid overflow."""
    top = max(bi, bj, phi + (bi + bj) / 2)
    u, v, w = math.exp(bi - top), math.exp(bj - top), math.exp(phi + (bi + bj) / 2 - top)
    return u, v, w, u + v + w


def _tally(votes: Sequence[Vote]) -> dict[tuple[str, str], list[int]]:
    """Votes summed per pair of sides, (i, j) in sorted order: [i won, j won, ties]. The likelihood needs no more."""
    counts: dict[tuple[str, str], list[int]] = {}
    for vote in votes:
        i, j = sorted((vote.a, vote.b))
        entry = counts.setdefault((i, j), [0, 0, 0])
        if vote.winner == "tie":
            entry[2] += 1
        elif (vote.winner == "A") == (vote.a == i):
            entry[0] += 1
        else:
            entry[1] += 1
    return counts


def log_likelihood(votes: Sequence[Vote], strengths: dict[str, float], tie: float, prior: float = PRIOR) -> float:
    phi = math.log(tie)
    total = -prior / 2 * sum(b * b for b in strengths.values())
    for (i, j), (won_i, won_j, ties) in _tally(votes).items():
        u, v, w, d = _terms(strengths[i], strengths[j], phi)
        total += won_i * math.log(u / d) + won_j * math.log(v / d) + (ties * math.log(w / d) if ties else 0.0)
    return total


def fit(
    votes: Sequence[Vote],
    sides: Sequence[str] | None = None,
    iterations: int = 500,
    tolerance: float = 1e-10,
    prior: float = PRIOR,
) -> Fit:
    """The maximum (penalised) likelihood strengths and tie parameter for these votes."""
    names = sorted(set(sides or ()) | {v.a for v in votes} | {v.b for v in votes})
    beta = {n: 0.0 for n in names}
    counts = _tally(votes)
    ties = sum(c[2] for c in counts.values())
    # With no ties at all the tie parameter's estimate is 0; keep it small and finite.
    phi = math.log(max(ties, 0.5) / max(len(votes), 1))
    by_side: dict[str, list[tuple[str, int, int, int]]] = {n: [] for n in names}
    for (i, j), (won_i, won_j, tied) in counts.items():
        by_side[i].append((j, won_i, won_j, tied))
        by_side[j].append((i, won_j, won_i, tied))
    for _ in range(iterations):
        largest = 0.0
        for name in names:
            gradient, curvature = -prior * beta[name], prior
            for other, won, lost, tied in by_side[name]:
                n = won + lost + tied
                u, v, w, d = _terms(beta[name], beta[other], phi)
                share = (u + w / 2) / d  # d log D / d beta_name
                gradient += won + 0.5 * tied - n * share
                curvature += n * (share - share * share - w / (4 * d))
            step = gradient / curvature if curvature > 1e-12 else 0.0
            step = max(-2.0, min(2.0, step))
            beta[name] += step
            largest = max(largest, abs(step))
        if counts:
            gradient = curvature = 0.0
            for (i, j), (won_i, won_j, tied) in counts.items():
                n = won_i + won_j + tied
                u, v, w, d = _terms(beta[i], beta[j], phi)
                share = w / d
                gradient += tied - n * share
                curvature += n * (share - share * share)
            step = gradient / curvature if curvature > 1e-12 else 0.0
            step = max(-2.0, min(2.0, step))
            phi += step
            largest = max(largest, abs(step))
        mean = sum(beta.values()) / len(beta) if beta else 0.0
        for name in names:
            beta[name] -= mean
        if largest < tolerance:
            break
    return Fit(beta, math.exp(phi), len(votes))


@dataclass
class Row:
    side: str
    rating: float
    low: float
    high: float
    votes: int
    wins: int
    ties: int
    losses: int
    flips_at: int | None = None  # votes to remove before it falls below the next row; None: stable
    has_next: bool = True  # the last row has no order below it to keep

    @property
    def stability(self) -> str:
        if not self.has_next:
            return ""
        if self.flips_at is None:
            return f"stable (k > {STABLE_UP_TO})"
        return f"flips at k = {self.flips_at}"


def bootstrap(
    votes: Sequence[Vote], sides: Sequence[str], rounds: int = 200, seed: int = 7
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of each side's rating, resampling pairs with their votes."""
    by_pair: dict[str, list[Vote]] = {}
    for vote in votes:
        by_pair.setdefault(vote.pair or f"{vote.a}|{vote.b}|{id(vote)}", []).append(vote)
    pairs = list(by_pair.values())
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {s: [] for s in sides}
    for _ in range(rounds):
        drawn = [v for _ in pairs for v in rng.choice(pairs)]
        result = fit(drawn, sides, iterations=200, tolerance=1e-7)
        for side in sides:
            samples[side].append(result.rating(side))
    out = {}
    for side, values in samples.items():
        values.sort()
        out[side] = (values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))])
    return out


def covariance(votes: Sequence[Vote], result: Fit, sides: Sequence[str]) -> list[list[float]]:
    """The posterior's covariance of the log strengths at the fit, in the order of `sides`: the inverse of the
    penalised likelihood's curvature (the tie parameter held at its fit; the prior keeps it invertible)."""
    names = list(sides)
    index = {n: k for k, n in enumerate(names)}
    size = len(names)
    hessian = [[0.0] * size for _ in range(size)]
    for k in range(size):
        hessian[k][k] = PRIOR
    phi = math.log(result.tie)
    for (i, j), (won_i, won_j, tied) in _tally(votes).items():
        n = won_i + won_j + tied
        u, v, w, d = _terms(result.strengths[i], result.strengths[j], phi)
        s_i, s_j = (u + w / 2) / d, (v + w / 2) / d
        a, b = index[i], index[j]
        hessian[a][a] += n * (s_i - s_i * s_i - w / (4 * d))
        hessian[b][b] += n * (s_j - s_j * s_j - w / (4 * d))
        hessian[a][b] += n * (w / (4 * d) - s_i * s_j)
        hessian[b][a] += n * (w / (4 * d) - s_i * s_j)
    return _inverse(hessian)


def curvature_intervals(
    votes: Sequence[Vote], result: Fit, sides: Sequence[str], z: float = 1.96
) -> dict[str, tuple[float, float]]:
    """95% intervals of each side's rating from the posterior's normal approximation at the fit (`covariance`),
    for ratings centred on their mean."""
    names = list(sides)
    size = len(names)
    matrix = covariance(votes, result, names)
    out = {}
    for k, name in enumerate(names):
        # The variance of b_k minus the mean of all b: (e_k - 1/n)' C (e_k - 1/n).
        centred = [(1.0 if m == k else 0.0) - 1 / size for m in range(size)]
        variance = sum(centred[x] * matrix[x][y] * centred[y] for x in range(size) for y in range(size))
        half = z * ELO * math.sqrt(max(variance, 0.0))
        out[name] = (result.rating(name) - half, result.rating(name) + half)
    return out


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inversion with partial pivoting (the matrix is small: one row per side)."""
    size = len(matrix)
    work = [row[:] + [1.0 if i == k else 0.0 for k in range(size)] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(work[r][col]))
        work[col], work[pivot] = work[pivot], work[col]
        lead = work[col][col]
        work[col] = [x / lead for x in work[col]]
        for r in range(size):
            if r != col and work[r][col]:
                factor = work[r][col]
                work[r] = [x - factor * y for x, y in zip(work[r], work[col])]
    return [row[size:] for row in work]


def _contribution(vote: Vote, side: str, result: Fit) -> tuple[float, float]:
    """A vote's share of a side's gradient and curvature at the fit (what removing it would take away)."""
    is_a = vote.a == side
    mine, theirs = (vote.a, vote.b) if is_a else (vote.b, vote.a)
    u, v, w, d = _terms(result.strengths[mine], result.strengths[theirs], math.log(result.tie))
    share = (u + w / 2) / d
    won = vote.winner == ("A" if is_a else "B")
    return (1.0 if won else 0.5 if vote.winner == "tie" else 0.0) - share, share - share * share - w / (4 * d)


def flips_at(votes: Sequence[Vote], sides: Sequence[str], upper: str, lower: str) -> int | None:
    """How many of the most influential votes must be removed before `lower` rates above `upper`.

    Each round removes the vote whose removal narrows the gap most by a one-step
    (Newton) estimate, then refits; None when the order holds past STABLE_UP_TO removals.
    """
    remaining = list(votes)
    result = fit(remaining, sides, iterations=200, tolerance=1e-7)
    for k in range(1, STABLE_UP_TO + 1):
        curvature = {s: PRIOR for s in (upper, lower)}
        for vote in remaining:
            for side in (upper, lower):
                if side in (vote.a, vote.b):
                    curvature[side] += _contribution(vote, side, result)[1]
        best, best_drop = None, 0.0
        for i, vote in enumerate(remaining):
            drop = 0.0  # how much the gap upper - lower shrinks without this vote
            if upper in (vote.a, vote.b):
                drop += _contribution(vote, upper, result)[0] / curvature[upper]
            if lower in (vote.a, vote.b):
                drop -= _contribution(vote, lower, result)[0] / curvature[lower]
            if drop > best_drop:
                best, best_drop = i, drop
        if best is None:
            return None
        del remaining[best]
        result = fit(remaining, sides, iterations=200, tolerance=1e-7)
        if result.strengths[upper] < result.strengths[lower]:
            return k
    return None


def table(
    votes: Sequence[Vote], sides: Sequence[str] | None = None, rounds: int = 200, stability: bool = True
) -> list[Row]:
    """One row per side, best first: rating, 95% interval (the wider of the pair bootstrap's and the curvature's),
    votes, wins/ties/losses, stability against the next row."""
    names = sorted(set(sides or ()) | {v.a for v in votes} | {v.b for v in votes})
    if not names:
        return []
    result = fit(votes, names)
    curved = curvature_intervals(votes, result, names)
    resampled = bootstrap(votes, names, rounds) if votes else curved
    rows = []
    for name in names:
        mine = [v for v in votes if name in (v.a, v.b)]
        wins = sum(1 for v in mine if (v.winner == "A" and v.a == name) or (v.winner == "B" and v.b == name))
        ties = sum(1 for v in mine if v.winner == "tie")
        low, high = min(resampled[name][0], curved[name][0]), max(resampled[name][1], curved[name][1])
        rows.append(Row(name, result.rating(name), low, high, len(mine), wins, ties, len(mine) - wins - ties))
    rows.sort(key=lambda r: -r.rating)
    rows[-1].has_next = False
    if stability:
        for upper, lower in zip(rows, rows[1:]):
            upper.flips_at = flips_at(votes, names, upper.side, lower.side)
    return rows
