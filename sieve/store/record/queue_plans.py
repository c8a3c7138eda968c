"""Adaptive pair queues: what each was made for (scenario, budget, catch trials, seed) and why it ended.

The queue's pairs are ordinary rows of `pairs`, each with the round it was added in;
what to add next is decided by store.scoring.adaptive_queue.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record.runs import now


def create(
    db: Database, queue: str, scenario: str, budget: int, catch: int, seed: int | None, first_order: str
) -> None:
    """Record a queue as adaptive (inside the caller's transaction, with its first round)."""
    db.execute(
        "INSERT INTO queue_plans (queue, scenario, budget, catch, seed, first_order, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [queue, scenario, budget, catch, seed, first_order, now()],
    )


def get(db: Database, queue: str) -> dict[str, Any] | None:
    """The queue's plan, or None when the queue is not adaptive."""
    cursor = db.execute("SELECT * FROM queue_plans WHERE queue = ?", [queue])
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cursor.description], row))


def stop(db: Database, queue: str, reason: str) -> None:
    """Mark an adaptive queue as ended, and why (inside the caller's transaction)."""
    db.execute("UPDATE queue_plans SET stopped = ? WHERE queue = ? AND stopped IS NULL", [reason, queue])
