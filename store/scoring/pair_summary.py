"""What a queue of blind pairs adds up to: per criterion, each reviewer's share first, then across reviewers.

A tie is an answer, never broken. A criterion on which reviewers disagree about
the direction of some pair (one says A, another B) is reported as unresolved for
that pair, not averaged away (the story benchmark's rule).
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record import pairs as pairing
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import totals_line

SHARE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def head_to_head(db: Database, queue: str) -> dict[str, dict[str, Any]]:
    """criterion -> each reviewer's mean share for A, the mean across reviewers, and the unresolved pairs."""
    per_reviewer: dict[str, dict[str, list[float]]] = {}
    unresolved: dict[str, list[int]] = {}
    for pair in pairing.queue_pairs(db, queue):
        by_criterion: dict[str, dict[str, str]] = {}
        for (reviewer, criterion), winner in pairing.verdicts(db, pair["id"]).items():
            by_criterion.setdefault(criterion, {})[reviewer] = winner
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
        }
    return out


def summary(db: Database, queue: str) -> dict[str, Any]:
    """The head-to-head verdicts, and each pair's absolute totals by reviewer (scored on their own first)."""
    pairs = []
    for pair in pairing.queue_pairs(db, queue):
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
    return {"criteria": head_to_head(db, queue), "pairs": pairs}
