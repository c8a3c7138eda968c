"""Suggestions of a run: running the detectors, storing what they find, a reviewer accepting or rejecting each.

Nothing a detector (or later a judge) suggests counts until a reviewer accepts it.
Accepting stores that reviewer's annotation through `evidence.annotate`, with the
suggestion's first span as the quote, verified like any other; a chain counter's
event carries the chain's length as its score. Rejecting stores only the decision.
Both are kept with who, when and which source and version, so each detector's
precision can be reported per reviewer (`detector_table`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlite_utils import Database

from sieve import scenarios
from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.record import suggestions as stored
from sieve.store.record.annotations import Quote
from sieve.store.scoring import detectors, evidence
from sieve.store.scoring.runview import RunView


def scenario_for(view: RunView) -> Scenario:
    """The scenario whose detector declarations apply to a run: its snapshot.

    A snapshot made before scenarios declared detectors (none named, no player
    character) borrows the declarations of the scenario file of the same name,
    for the counters and items the snapshot has with the same id and kind.
    """
    snapshot = view.scenario
    if snapshot.detector_uses() or snapshot.player_names or snapshot.name not in scenarios.builtin_names():
        return snapshot
    current = scenarios.load(snapshot.name)
    rubrics = tuple(
        dataclasses.replace(
            r,
            items=tuple(_declared_like(current.item, i) for i in r.items),
            bonuses=tuple(_declared_like(current.item, i) for i in r.bonuses),
        )
        for r in snapshot.rubrics
    )
    return dataclasses.replace(
        snapshot,
        counters=tuple(_declared_like(current.counter, c) for c in snapshot.counters),
        rubrics=rubrics,
        player_character=current.player_character,
        player_aliases=current.player_aliases,
        language=current.language,
    )


def _declared_like(find: Any, mine: Any) -> Any:
    """A counter or item with the detector its namesake in the current file declares (same kind for counters)."""
    try:
        theirs = find(mine.id)
    except KeyError:
        return mine
    theirs = theirs[1] if isinstance(theirs, tuple) else theirs
    if not theirs.detector or getattr(theirs, "kind", None) != getattr(mine, "kind", None):
        return mine
    return dataclasses.replace(mine, detector=theirs.detector, detector_params=dict(theirs.detector_params))


def detect(view: RunView, only: set[str] | None = None) -> list[detectors.Suggestion]:
    """What the detectors suggest for a run now (nothing is stored)."""
    scenario = scenario_for(view)
    return detectors.suggest(detectors.run_text(view.turns, scenario), scenario, only)


def store(db: Database, view: RunView, only: set[str] | None = None) -> list[str]:
    """Run the detectors on a run and store their suggestions; one stored before is not stored twice."""
    return stored.add(db, view.id, [s.record() for s in detect(view, only)])


def store_missing(db: Database, views: list[RunView], only: set[str] | None = None) -> dict[str, int | None]:
    """Store the detectors' suggestions for every run that has none from them yet.

    Returns run id -> how many were stored, or None for a run skipped because it had some.
    """
    out: dict[str, int | None] = {}
    for view in views:
        if stored.count(db, view.id, source="detector"):
            out[view.id] = None
            continue
        out[view.id] = len(store(db, view, only))
    return out


def accept(
    db: Database,
    suggestion_id: str,
    reviewer: str,
    *,
    view: RunView | None = None,
    note: str | None = None,
    blind: bool = False,
) -> str:
    """The reviewer confirms a suggestion: it becomes their annotation (quote verified); returns its id.

    EvidenceRefused when the scenario's rules forbid that quote for the item.
    """
    suggestion = stored.get(db, suggestion_id)
    view = view or RunView.open(db, suggestion["run_id"])
    if view.id != suggestion["run_id"]:
        raise SieveUsageError(f"suggestion {suggestion_id} belongs to run {suggestion['run_id']}, not {view.id}")
    first = suggestion["spans"][0] if suggestion["spans"] else None
    quote = Quote(first["turn_id"], first["start"], first["end"], first["text"]) if first and first["text"] else None
    rubric = None
    try:
        rubric = view.scenario.item(suggestion["item"])[0].id
    except KeyError:
        pass  # a counter, or a detector's note of its own
    with db.atomic():
        annotation_id = evidence.annotate(
            db,
            view.id,
            quote=quote,
            view=view,
            reviewer=reviewer,
            item=suggestion["item"],
            rubric=rubric,
            kind=suggestion["kind"],
            score=suggestion["score"],
            value=suggestion["value"],
            note=note if note is not None else suggestion["reason"],
            turn_id=suggestion["turn_id"],
            step_id=suggestion["step_id"],
            blind=blind,
            source=source_text(suggestion),
        )
        stored.decide(db, suggestion_id, reviewer, "accepted", annotation_id=annotation_id)
    return annotation_id


def reject(db: Database, suggestion_id: str, reviewer: str, note: str | None = None) -> str:
    """The reviewer turns a suggestion down; it stays out of every count. Returns the decision's id."""
    stored.get(db, suggestion_id)
    return stored.decide(db, suggestion_id, reviewer, "rejected", note=note)


def source_text(suggestion: dict[str, Any]) -> str:
    """Where an accepted suggestion's annotation came from, as the annotation's `source` says it."""
    return f"suggestion {suggestion['id']}: {suggestion['source']} {suggestion['source_name']} v{suggestion['source_version']}"


def suggestion_dict(s: detectors.Suggestion) -> dict[str, Any]:
    """A suggestion that is not stored, as `sieve suggest --json` prints it."""
    return {**s.record(), "turns": sorted({span.turn_idx for span in s.spans}), "length": s.finding.length}


def detector_table(db: Database, scenario: str | None = None) -> list[dict[str, Any]]:
    """Per source (detector or judge), version and reviewer: suggestions accepted, rejected, and the precision."""
    tally: dict[tuple[str, str, str], dict[str, int]] = {}
    for d in stored.decisions(db, scenario):
        key = (d["source_name"], d["source_version"], d["reviewer"])
        tally.setdefault(key, {"accepted": 0, "rejected": 0})[d["decision"]] += 1
    rows = []
    for (name, version, reviewer), counts in sorted(tally.items()):
        decided = counts["accepted"] + counts["rejected"]
        rows.append(
            {
                "detector": name,
                "version": version,
                "reviewer": reviewer,
                "accepted": counts["accepted"],
                "rejected": counts["rejected"],
                "precision": round(counts["accepted"] / decided, 3) if decided else None,
            }
        )
    return rows
