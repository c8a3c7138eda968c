"""Self-consistency: what a reviewer said the second time they met a run or a pair (a catch trial) against the first.

A run's catch trial is its card scored again from nothing (annotations.trial): each
item, verdict step, yes/no answer and probe mark scored both times is compared, and
the item scores also give Krippendorff's interval alpha (each score placed on its
item's scale from 0 to 1). A pair's catch trial is the pair shown again with its
sides swapped: each criterion judged both times is compared (the second verdict
read back to the first showing's sides), with weighted kappa on B < tie < A.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from sieve.store.record.annotations import trial_annotations
from sieve.store.record.runs import not_archived
from sieve.store.scoring.agreement import kappa_of_positions, krippendorff_alpha
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, ItemCard

VERDICT_ORDER = {"B": 0, "tie": 1, "A": 2}  # a head-to-head verdict as a point on an ordinal scale
SWAPPED = {"A": "B", "B": "A", "tie": "tie"}


@dataclass
class Consistency:
    """One reviewer's catch trials of one kind (runs or pairs), against their first showings."""

    reviewer: str
    kind: str  # "runs" or "pairs"
    trials: int = 0  # catch trials with anything to compare
    compared: int = 0  # what was said both times: items, steps, marks; or criteria
    same: int = 0
    units: list[Any] = field(default_factory=list, repr=False)

    @property
    def share(self) -> float | None:
        return self.same / self.compared if self.compared else None

    @property
    def measure(self) -> str:
        return "alpha" if self.kind == "runs" else "weighted kappa"

    @property
    def value(self) -> float | None:
        if self.kind == "runs":
            return krippendorff_alpha(self.units)
        return kappa_of_positions(self.units, len(VERDICT_ORDER))

    def text(self) -> str:
        """`same 18 of 22 (0.82), α 0.79 over 3 runs`, or "" without a catch trial."""
        if not self.compared:
            return ""
        value = self.value
        figure = "" if value is None else f", {'α' if self.kind == 'runs' else 'κw'} {value:.2f}"
        return f"same {self.same} of {self.compared} ({self.share:.2f}){figure} over {self.trials} {self.kind}"

    def as_dict(self) -> dict[str, Any]:
        value = self.value
        return {
            "reviewer": self.reviewer,
            "kind": self.kind,
            "trials": self.trials,
            "compared": self.compared,
            "same": self.same,
            "share": None if self.share is None else round(self.share, 3),
            "measure": self.measure,
            "value": None if value is None else round(value, 3),
        }


def _on_scale(card_item: ItemCard) -> float:
    scale = card_item.item.scale
    low, high = scale.minimum, scale.maximum
    middle = (card_item.low + card_item.high) / 2
    return (middle - low) / (high - low) if high > low else 0.0


def compare_cards(first: Card, again: Card, into: Consistency) -> int:
    """Add what both cards say to `into`; returns how many things were compared."""
    before = into.compared
    for rubric_first, rubric_again in zip(first.rubrics, again.rubrics):
        for a, b in zip(rubric_first.items + rubric_first.bonuses, rubric_again.items + rubric_again.bonuses):
            scored = a.annotation, b.annotation
            if all(x is not None and x["score"] is not None for x in scored):
                into.compared += 1
                into.same += (a.low, a.high) == (b.low, b.high)
                into.units.append([_on_scale(a), _on_scale(b)])
    for c_first, c_again in zip(first.counters, again.counters):
        if c_first.counter.kind == "verdict":
            verdicts = c_again.verdicts
            for step, said in c_first.verdicts.items():
                if step in verdicts:
                    into.compared += 1
                    into.same += said == verdicts[step]
        elif c_first.counter.kind == "yesno" and c_first.events and c_again.events:
            into.compared += 1
            into.same += c_first.value == c_again.value
    for p_first, p_again in zip(first.probes, again.probes):
        if p_first.mark is not None and p_again.mark is not None:
            into.compared += 1
            into.same += p_first.mark == p_again.mark
    return into.compared - before


def of_runs(db: Database, scenario: str | None = None, reviewer: str | None = None) -> dict[str, Consistency]:
    """Reviewer -> their runs' catch trials against their first cards (of the scenario's runs, if named)."""
    out: dict[str, Consistency] = {}
    views: dict[str, RunView] = {}
    for (run_id, trial), given in sorted(trial_annotations(db, reviewer).items()):
        if run_id not in views:
            views[run_id] = RunView.open(db, run_id)
        view = views[run_id]
        if scenario is not None and view.run["scenario"] != scenario:
            continue
        who = given[0]["reviewer"]
        again = RunView(db, view.run, trial=trial).card(who, given)
        into = out.setdefault(who, Consistency(who, "runs"))
        if compare_cards(view.card(who), again, into):
            into.trials += 1
    return out


def of_pairs(
    db: Database, queue: str | None = None, scenario: str | None = None, reviewer: str | None = None
) -> dict[str, Consistency]:
    """Reviewer -> their head-to-head verdicts on catch pairs against the first showing (of a queue, or of the
    scenario's pairs, or of every queue)."""
    sql = (
        "SELECT again.id, again.run_a, first.id, first.run_a FROM pairs again JOIN pairs first ON first.id = again.catch_of"
        " JOIN runs r ON r.id = again.run_a WHERE 1"
    )
    params: list[Any] = []
    if queue is not None:
        sql += " AND again.queue = ?"
        params.append(queue)
    if scenario is not None:
        sql += f" AND r.scenario = ? AND {not_archived('r.id')}"
        params.append(scenario)
    out: dict[str, Consistency] = {}
    for again_id, again_a, first_id, first_a in db.execute(sql + " ORDER BY again.queue, again.position", params):
        swapped = again_a != first_a
        first = _verdicts(db, first_id, reviewer)
        compared = set()
        for (who, criterion), said in _verdicts(db, again_id, reviewer).items():
            if (who, criterion) not in first:
                continue
            into = out.setdefault(who, Consistency(who, "pairs"))
            back = SWAPPED[said] if swapped else said
            into.compared += 1
            into.same += back == first[(who, criterion)]
            into.units.append((VERDICT_ORDER[first[(who, criterion)]], VERDICT_ORDER[back]))
            compared.add(who)
        for who in compared:
            out[who].trials += 1
    return out


def _verdicts(db: Database, pair_id: str, reviewer: str | None) -> dict[tuple[str, str], str]:
    rows = db.execute(
        "SELECT reviewer, criterion, winner FROM judgments WHERE pair_id = ? ORDER BY id", [pair_id]
    ).fetchall()
    return {(r, c): w for r, c, w in rows if reviewer is None or r == reviewer}


def rows(found: Iterable[dict[str, Consistency]]) -> list[dict[str, Any]]:
    """The figures of several `of_runs` / `of_pairs` results as table rows, by reviewer then kind."""
    listed = [c for by_reviewer in found for c in by_reviewer.values() if c.compared]
    return [c.as_dict() | {"self-consistency": c.text()} for c in sorted(listed, key=lambda c: (c.reviewer, c.kind))]
