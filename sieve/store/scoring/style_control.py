"""Ratings controlled for style, as LMArena does: Bradley–Terry with ties and covariates (length, markdown).

A vote's log odds are the strengths' difference plus each covariate's coefficient times the
normalised difference of that feature between A and B (store.scoring.style):

    eta = b_A - b_B + sum_k g_k x_k,   P(A) = e^(eta/2) / D,  P(B) = e^(-eta/2) / D,  P(tie) = v / D,

with D the sum of the three: Davidson's model (ratings.py) with the covariates added, so with no
covariate it is the same fit. All parameters are fitted at once by Newton's method with the same
weak prior on the strengths (and a weaker one on the coefficients). The controlled rating is the
strength with the style's part taken out: what a side would rate if its replies were like the
others'. Intervals are the posterior's normal approximation (the curvature at the fit). A voter's
length bias is the coefficient of length, shown as the Elo a reply gains against one half as long
(x = 1/3), with the wider of that interval and a bootstrap over pairs; beside it, plainly, the share
of decisive verdicts that went to the longer reply, with its Wilson interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sieve.store.scoring import ratings
from sieve.store.scoring.agreement import bootstrap_interval
from sieve.store.scoring.statistics import Z95, wilson

COEFFICIENT_PRIOR = 0.01  # precision on each coefficient: sd 10, barely a pull
TWICE = 1 / 3  # the normalised difference of a reply twice as long as the other's
BOOTSTRAP = 100  # resamples for a voter's length bias


@dataclass
class ControlledFit:
    strengths: dict[str, float]  # log strengths with the style's part taken out, mean zero
    coefficients: list[float]  # one per covariate
    tie: float
    covariance: list[list[float]]  # of (strengths in `names` order, then coefficients)
    names: list[str]

    def rating(self, side: str) -> float:
        return 1000 + ratings.ELO * self.strengths[side]

    def interval(self, side: str) -> tuple[float, float]:
        """95% interval of a side's controlled rating (centred on the mean of the strengths)."""
        size = len(self.names)
        k = self.names.index(side)
        centred = [(1.0 if m == k else 0.0) - 1 / size for m in range(size)]
        variance = sum(centred[x] * self.covariance[x][y] * centred[y] for x in range(size) for y in range(size))
        half = Z95 * ratings.ELO * math.sqrt(max(variance, 0.0))
        return self.rating(side) - half, self.rating(side) + half

    def coefficient_interval(self, k: int) -> tuple[float, float]:
        index = len(self.names) + k
        half = Z95 * math.sqrt(max(self.covariance[index][index], 0.0))
        return self.coefficients[k] - half, self.coefficients[k] + half


def fit(
    votes: Sequence[ratings.Vote],
    sides: Sequence[str] | None = None,
    covariates: int | None = None,
    iterations: int = 50,
) -> ControlledFit:
    """The penalised maximum likelihood of the strengths, the covariates' coefficients and the tie parameter."""
    names = sorted(set(sides or ()) | {v.a for v in votes} | {v.b for v in votes})
    k = covariates if covariates is not None else max((len(v.style) for v in votes), default=0)
    n = len(names)
    index = {s: i for i, s in enumerate(names)}
    size = n + k + 1  # strengths, coefficients, log tie
    start = ratings.fit(votes, names, iterations=200, tolerance=1e-8)
    theta = [start.strengths[s] for s in names] + [0.0] * k + [math.log(start.tie)]
    hessian: list[list[float]] = []
    for _ in range(iterations):
        gradient = [0.0] * size
        hessian = [[0.0] * size for _ in range(size)]
        for i in range(size - 1):  # the priors: -prior * theta in the gradient, +prior in the curvature
            prior = ratings.PRIOR if i < n else COEFFICIENT_PRIOR
            gradient[i] -= prior * theta[i]
            hessian[i][i] += prior
        hessian[-1][-1] += 1e-6  # damping: with ties only (or none) the tie parameter has no finite maximum
        phi = theta[-1]
        nu = math.exp(phi)
        for vote in votes:
            x = list(vote.style[:k]) + [0.0] * (k - len(vote.style[:k]))
            eta = theta[index[vote.a]] - theta[index[vote.b]] + sum(theta[n + m] * x[m] for m in range(k))
            s, t = math.exp(eta / 2), math.exp(-eta / 2)
            d = s + t + nu
            d_eta = (0.5 if vote.winner == "A" else -0.5 if vote.winner == "B" else 0.0) - (s - t) / (2 * d)
            c_eta = ((s + t) / 4 * d - (s - t) ** 2 / 4) / (d * d)  # minus the second derivative in eta
            d_phi = (1.0 if vote.winner == "tie" else 0.0) - nu / d
            c_phi = nu / d - nu * nu / (d * d)
            c_cross = -(s - t) * nu / (2 * d * d)  # minus the mixed derivative
            jacobian = {index[vote.a]: 1.0}
            jacobian[index[vote.b]] = jacobian.get(index[vote.b], 0.0) - 1.0
            for m in range(k):
                if x[m]:
                    jacobian[n + m] = x[m]
            for p, jp in jacobian.items():
                gradient[p] += d_eta * jp
                hessian[p][size - 1] += c_cross * jp
                hessian[size - 1][p] += c_cross * jp
                for q, jq in jacobian.items():
                    hessian[p][q] += c_eta * jp * jq
            gradient[-1] += d_phi
            hessian[-1][-1] += c_phi
        inverse = ratings._inverse(hessian)
        step = [sum(inverse[i][j] * gradient[j] for j in range(size)) for i in range(size)]
        largest = max(abs(x) for x in step)
        scale = min(1.0, 2.0 / largest) if largest > 0 else 1.0
        theta = [v + scale * dv for v, dv in zip(theta, step)]
        theta[-1] = max(-20.0, min(20.0, theta[-1]))
        if largest < 1e-9:
            break
    covariance = ratings._inverse(hessian) if hessian else [[0.0]]
    mean = sum(theta[:n]) / n if n else 0.0
    return ControlledFit(
        {s: theta[i] - mean for s, i in index.items()}, theta[n : n + k], math.exp(theta[-1]), covariance, names
    )


@dataclass
class LengthBias:
    """How strongly length predicts one voter's verdicts."""

    voter: str
    votes: int
    elo: float | None  # Elo a reply gains against one half as long, the models' strengths held
    low: float | None
    high: float | None
    longer_won: int  # decisive verdicts for the longer reply
    decisive: int  # decisive verdicts between replies of different lengths
    share_low: float
    share_high: float

    @property
    def share(self) -> float | None:
        return self.longer_won / self.decisive if self.decisive else None

    def as_dict(self) -> dict[str, object]:
        def r(value: float | None, digits: int = 1) -> float | None:
            return None if value is None else round(value, digits)

        return {
            "voter": self.voter,
            "votes": self.votes,
            "length_bias_elo": r(self.elo),
            "low": r(self.low),
            "high": r(self.high),
            "longer_won": self.longer_won,
            "decisive": self.decisive,
            "longer_share": r(self.share, 3),
            "share_low": r(self.share_low, 3),
            "share_high": r(self.share_high, 3),
        }


def length_bias(voter: str, votes: Sequence[ratings.Vote], length_at: int = 0) -> LengthBias:
    """A voter's length bias: the coefficient of length (covariate `length_at` of each vote's style) in the
    controlled fit of their votes, as Elo at twice the length, with the wider of the curvature's interval and a
    bootstrap over pairs; and the share of their decisive verdicts that went to the longer reply (Wilson)."""
    decisive = [v for v in votes if v.winner != "tie" and v.style and v.style[length_at] != 0]
    longer = sum(1 for v in decisive if (v.winner == "A") == (v.style[length_at] > 0))
    share_low, share_high = wilson(longer / len(decisive) if decisive else 0.0, len(decisive))
    usable = [v for v in votes if v.style]
    if len(usable) < 2:
        return LengthBias(voter, len(votes), None, None, None, longer, len(decisive), share_low, share_high)

    def only_length(sample: Sequence[ratings.Vote]) -> list[ratings.Vote]:
        return [ratings.Vote(v.a, v.b, v.winner, v.pair, v.voter, (v.style[length_at],)) for v in sample]

    found = fit(only_length(usable), covariates=1)
    to_elo = ratings.ELO * TWICE
    low, high = found.coefficient_interval(0)
    by_pair: dict[str, list[ratings.Vote]] = {}
    for vote in usable:
        by_pair.setdefault(vote.pair or str(id(vote)), []).append(vote)
    sides = found.names
    resampled = bootstrap_interval(
        list(by_pair.values()),
        lambda sample: fit(only_length([v for group in sample for v in group]), sides, 1, iterations=15).coefficients[
            0
        ],
        resamples=BOOTSTRAP,
    )
    if resampled is not None:
        low, high = min(low, resampled[0]), max(high, resampled[1])
    return LengthBias(
        voter,
        len(votes),
        found.coefficients[0] * to_elo,
        low * to_elo,
        high * to_elo,
        longer,
        len(decisive),
        share_low,
        share_high,
    )
