"""What a queue of blind pairs adds up to: per criterion, each reviewer's share first, then across reviewers.

A tie is an answer, never broken. A criterion on which reviewers disagree about
the direction of some pair (one says A, another B) is reported as unresolved for
that pair, not averaged away (the story benchmark's rule). The queue's catch
trials (pairs shown again) count only toward each reviewer's self-consistency.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.record import pairs as pairing
from sieve.store.scoring import consistency
from sieve.store.scoring.agreement import kappa_of_positions, krippendorff_alpha
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import totals_line

SHARE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def head_to_head(db: Database, queue: str) -> dict[str, dict[str, Any]]:
    """criterion -> each reviewer's mean share for A, the mean across reviewers, and the unresolved pairs."""
    per_reviewer: dict[str, dict[str, list[float]]] = {}
    unresolved: dict[str, list[int]] = {}
    by_pair: dict[str, dict[int, dict[str, str]]] = {}
    for pair in pairing.queue_pairs(db, queue, catches=False):
        by_criterion: dict[str, dict[str, str]] = {}
        for (reviewer, criterion), winner in pairing.verdicts(db, pair["id"]).items():
            by_criterion.setdefault(criterion, {})[reviewer] = winner
            by_pair.setdefault(criterion, {}).setdefault(pair["position"], {})[reviewer] = winner
            per_reviewer.setdefault(criterion, {}).setdefault(reviewer, []).append(SHARE[winner])
        for criterion, by_reviewer in by_criterion.items():
            if len({w for w in by_reviewer.values() if w != "tie"}) > 1:
                unresolved.setdefault(criterion, []).append(pair["position"])
    out = {}
    for criterion, reviewers in per_reviewer.items():
        means = {r: sum(v) / len(v) for r, v in reviewers.items()}
        out[criterion] = {
            "reviewers": means,
            "a_share": sum(means.values()) / len(means),
            "unresolved_pairs": unresolved.get(criterion, []),
            "status": "unresolved" if criterion in unresolved else "resolved",
            "agreement": verdict_agreement(by_pair.get(criterion, {})),
        }
    return out


ORDER = {"B": 0, "tie": 1, "A": 2}  # a verdict as a point on an ordinal scale: B, tie, A


def verdict_agreement(by_pair: dict[int, dict[str, str]]) -> dict[str, Any] | None:
    """How far reviewers agree on one criterion's verdicts: weighted kappa (B < tie < A) for two, alpha for more."""
    reviewers = sorted({r for given in by_pair.values() for r in given})
    if len(reviewers) < 2:
        return None
    if len(reviewers) == 2:
        a, b = reviewers
        pairs = [(ORDER[g[a]], ORDER[g[b]]) for g in by_pair.values() if a in g and b in g]
        value = kappa_of_positions(pairs, 3)
        return {"measure": "weighted kappa", "value": None if value is None else round(value, 3), "pairs": len(pairs)}
    units = [[SHARE[w] for w in g.values()] for g in by_pair.values() if len(g) >= 2]
    value = krippendorff_alpha(units)
    return {"measure": "alpha", "value": None if value is None else round(value, 3), "pairs": len(units)}


def position_bias(db: Database, queue: str) -> dict[str, dict[str, Any]]:
    """Per model judge, how its head-to-head verdicts held when a pair was shown again with the sides swapped.

    `flipped`: the same slot chosen both times (so a different run): counted as a
    tie. `first` / `second`: of those, how many went to the slot shown first.
    `bias`: (first - second) / verdicts, from -1 (always the second) to 1.
    """
    tally: dict[str, dict[str, int]] = {}
    for pair in pairing.queue_pairs(db, queue, catches=False):
        latest: dict[tuple[str, int], dict[str, str]] = {}
        for row in judgings.of_pair(db, pair["id"]):
            if row["status"] in ("complete", "partial"):
                latest[(row["reviewer"], row["swapped"])] = (row["outcome"] or {}).get("verdicts", {})
        for (reviewer, swapped), straight in latest.items():
            if swapped:
                continue
            turned = latest.get((reviewer, 1))
            if turned is None:
                continue
            counts = tally.setdefault(reviewer, {"verdicts": 0, "consistent": 0, "flipped": 0, "first": 0, "second": 0})
            for criterion, shown in straight.items():
                if criterion not in turned:
                    continue
                counts["verdicts"] += 1
                if shown == turned[criterion] and shown != "tie":
                    counts["flipped"] += 1
                    counts["first" if shown == "A" else "second"] += 1
                elif {shown, turned[criterion]} in ({"A", "B"}, {"tie"}):
                    counts["consistent"] += 1
    return {
        r: {**c, "bias": round((c["first"] - c["second"]) / c["verdicts"], 3) if c["verdicts"] else 0.0}
        for r, c in tally.items()
    }


def summary(db: Database, queue: str) -> dict[str, Any]:
    """The head-to-head verdicts, each pair's absolute totals by reviewer (scored on their own first), and each
    reviewer's self-consistency on the queue's catch trials."""
    pairs = []
    for pair in pairing.queue_pairs(db, queue, catches=False):
        sides = [RunView.open(db, pair["run_a"]), RunView.open(db, pair["run_b"])]
        cards = [side.cards() for side in sides]
        reviewers = sorted(set(cards[0]) | set(cards[1]))
        pairs.append(
            {
                "position": pair["position"],
                "run_a": pair["run_a"],
                "run_b": pair["run_b"],
                "totals": {r: [totals_line(c[r]) if r in c else "not scored" for c in cards] for r in reviewers},
            }
        )
    return {
        "criteria": head_to_head(db, queue),
        "pairs": pairs,
        "position_bias": position_bias(db, queue),
        "self_consistency": consistency.rows([consistency.of_pairs(db, queue)]),
    }
