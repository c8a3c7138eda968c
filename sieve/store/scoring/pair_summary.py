"""What a queue of blind pairs adds up to, per criterion, reported as the sides the queue was made from.

A verdict names slot A or B of one pair, and slots were drawn at random, so a
share of "A" says nothing; each verdict is mapped back to the side its run stands
for (the --model, or the --a / --b set, the queue was made from: `pairs.queue_sides`).
Per criterion, each evaluator's own share for a side comes first, then the mean
across evaluators (the story benchmark's rule). A tie is an answer, worth half.

The interval is Wilson's score interval with continuity correction over the pairs
(a pair is one comparison, however many evaluators judged it; ties count half), so
9 pairs of 9 won is 0.63 to 1.0, not certainty. A criterion is *unresolved* when evaluators' own shares
fall on opposite sides of even (they disagree about direction), *within noise* when
its interval includes even, and otherwise the leading side is *ahead*. Pairs that
evaluators split on (one says A, another B) are counted, not made a verdict. The
queue's catch trials (pairs shown again) count only toward each reviewer's self-consistency.
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
from sieve.store.scoring.statistics import wilson
from sieve.tables import counted

SHARE = {"A": 1.0, "B": 0.0, "tie": 0.5}
AHEAD, NOISE, UNRESOLVED = "ahead", "within noise", "unresolved"


def head_to_head(db: Database, queue: str) -> dict[str, dict[str, Any]]:
    """criterion -> the leading side, its share of pairs won (each evaluator's, then their mean) with a 95%
    Wilson interval, the status (ahead, within noise, unresolved) and the pairs evaluators split on."""
    side_of = pairing.queue_sides(db, queue)
    names = sorted(set(side_of.values()))
    # criterion -> side -> evaluator -> that side's scores (1, 0.5, 0), one per pair the evaluator judged
    scores: dict[str, dict[str, dict[str, list[float]]]] = {}
    pairs_of: dict[str, dict[str, set[int]]] = {}  # criterion -> side -> the pairs it played
    split: dict[str, list[int]] = {}
    by_pair: dict[str, dict[int, dict[str, str]]] = {}
    for pair in pairing.queue_pairs(db, queue, catches=False):
        slots = {"A": side_of.get(pair["run_a"], pair["run_a"]), "B": side_of.get(pair["run_b"], pair["run_b"])}
        by_criterion: dict[str, dict[str, str]] = {}
        for (reviewer, criterion), winner in pairing.verdicts(db, pair["id"]).items():
            by_criterion.setdefault(criterion, {})[reviewer] = winner
            by_pair.setdefault(criterion, {}).setdefault(pair["position"], {})[reviewer] = winner
            if slots["A"] == slots["B"]:
                continue  # two runs of one side: nothing about the sides
            for slot, side in slots.items():
                share = SHARE[winner] if slot == "A" else 1 - SHARE[winner]
                scores.setdefault(criterion, {}).setdefault(side, {}).setdefault(reviewer, []).append(share)
                pairs_of.setdefault(criterion, {}).setdefault(side, set()).add(pair["position"])
        for criterion, by_reviewer in by_criterion.items():
            if len({w for w in by_reviewer.values() if w != "tie"}) > 1:
                split.setdefault(criterion, []).append(pair["position"])
    out = {}
    for criterion in sorted(set(scores) | set(by_pair)):
        sides = {
            side: _side_share(evaluators, len(pairs_of[criterion][side]))
            for side, evaluators in sorted(scores.get(criterion, {}).items())
        }
        out[criterion] = {
            **_verdict(sides),
            "sides": sides,
            "names": names,
            "split_pairs": len(split.get(criterion, [])),
            "split_positions": split.get(criterion, []),
            "agreement": verdict_agreement(by_pair.get(criterion, {})),
        }
    return out


def _side_share(evaluators: dict[str, list[float]], pairs: int) -> dict[str, Any]:
    own = {r: sum(v) / len(v) for r, v in sorted(evaluators.items())}
    share = sum(own.values()) / len(own)
    low, high = wilson(share, pairs)
    return {"share": share, "low": low, "high": high, "pairs": pairs, "evaluators": own}


def _verdict(sides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The side with the largest share, and whether it is ahead, within noise, or unresolved."""
    if not sides:
        return {"winner": None, "side": None, "status": NOISE, "share": None, "low": None, "high": None}
    leader = max(sides, key=lambda s: sides[s]["share"])
    figure = sides[leader]
    own = figure["evaluators"].values()
    if any(v > 0.5 for v in own) and any(v < 0.5 for v in own):
        status = UNRESOLVED
    elif figure["low"] <= 0.5:
        status = NOISE
    else:
        status = AHEAD
    return {
        "winner": leader if status == AHEAD else None,
        "side": leader,
        "status": status,
        "share": figure["share"],
        "low": figure["low"],
        "high": figure["high"],
        "evaluators": figure["evaluators"],
        "pairs": figure["pairs"],
    }


def verdict_text(row: dict[str, Any]) -> str:
    """A criterion's result in words: 'engine/a ahead', 'within noise', 'unresolved'."""
    status: str = row["status"]
    if status == AHEAD:
        return f"{row['winner']} ahead"
    return status


def share_text(row: dict[str, Any]) -> str:
    """'engine/a 0.89 (0.56 to 0.99)': the leading side's share of pairs won with its interval; with more than two
    sides, every side's, the leader first, each with its pairs (with two, the other's share is the rest)."""
    if row.get("share") is None:
        return ""
    sides = row.get("sides") or {}
    if len(sides) <= 2:
        return f"{row['side']} {row['share']:.2f} ({row['low']:.2f} to {row['high']:.2f})"
    ordered = sorted(sides.items(), key=lambda kv: (kv[0] != row["side"], -kv[1]["share"], kv[0]))
    return ", ".join(
        f"{side} {f['share']:.2f} ({f['low']:.2f} to {f['high']:.2f}, {counted(f['pairs'], 'pair')})"
        for side, f in ordered
    )


def criterion_rows(criteria: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The head to head as flat rows (text, csv, md and the Pairs screen say the same)."""
    return [
        {
            "criterion": c,
            "result": verdict_text(r),
            "share": share_text(r),
            "pairs": r.get("pairs") or 0,
            "split": f"{r['split_pairs']} of {counted(r.get('pairs') or 0, 'pair')} split" if r["split_pairs"] else "",
            "evaluators": " ".join(f"{name} {v:.2f}" for name, v in (r.get("evaluators") or {}).items()),
        }
        for c, r in sorted(criteria.items())
    ]


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
