"""Catch trials of runs: a run a reviewer has already scored, given back to them later under a new code.

The reviewer scores it again from nothing; those annotations carry the trial's id
(annotations.trial), so the first card stays as it was and the two can be compared
(sieve.store.scoring.consistency). Pairs have their catch trials in the queue itself
(pairs.catch_of).
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record.ids import new_id
from sieve.store.record.runs import now


def create(db: Database, reviewer: str, run_id: str) -> str:
    """A new catch trial of the run for the reviewer; returns its id."""
    trial = new_id()
    with db.atomic():
        db.execute(
            "INSERT INTO catch_trials (id, reviewer, run_id, created) VALUES (?, ?, ?, ?)",
            [trial, reviewer, run_id, now()],
        )
    return trial


def of_reviewer(db: Database, reviewer: str) -> list[dict[str, Any]]:
    """The reviewer's catch trials, oldest first: id, run_id, created."""
    rows = db.execute(
        "SELECT id, run_id, created FROM catch_trials WHERE reviewer = ? ORDER BY id", [reviewer]
    ).fetchall()
    return [{"id": i, "run_id": r, "created": c} for i, r, c in rows]
