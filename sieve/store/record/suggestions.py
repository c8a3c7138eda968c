"""Suggestions: events a detector or a judge proposes, and each reviewer's decision on them (storage only).

A suggestion is the annotation it would become (item, kind, score, value) with its
evidence spans, a reason, a confidence and where it came from (a detector and its
version, or a judge). It counts for nothing on its own. A reviewer accepts it (the
annotation is stored through sieve.store.scoring.evidence, verified like any other)
or rejects it; both are recorded, with who and when.

A decision stands per reviewer: the latest one. An acceptance stands while its
annotation does (or an edit of it): after an undo the suggestion is pending again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from sqlite_utils import Database

from sieve.errors import NotFound, SieveUsageError
from sieve.store.record.ids import new_id
from sieve.store.record.runs import now

SOURCES = ("detector", "judge")
DECISIONS = ("accepted", "rejected")
FIELDS = (
    "item",
    "kind",
    "score",
    "value",
    "step_id",
    "spans",
    "reason",
    "confidence",
    "category",
    "source",
    "source_name",
    "source_version",
)


def fingerprint(entry: dict[str, Any]) -> str:
    """What makes a suggestion the same one again: its source and version, what it proposes, where."""
    key = [entry["source"], entry["source_name"], str(entry["source_version"]), entry["item"], entry["kind"]]
    key += [entry.get("score"), entry.get("value")]
    key += [[s["turn_id"], s["start"], s["end"]] for s in entry.get("spans", [])]
    return hashlib.sha256(json.dumps(key).encode("utf-8")).hexdigest()[:32]


def add(db: Database, run_id: str, entries: Iterable[dict[str, Any]]) -> list[str]:
    """Store suggestions for a run (dicts with FIELDS); one already stored (same fingerprint) is skipped.

    Returns the ids of those stored now.
    """
    stored = []
    with db.atomic():
        for entry in entries:
            if entry["source"] not in SOURCES:
                raise SieveUsageError(f"unknown suggestion source {entry['source']!r}")
            spans = list(entry.get("spans", []))
            suggestion_id = new_id()
            cursor = db.execute(
                """
                INSERT OR IGNORE INTO suggestions (id, run_id, turn_id, item, kind, score, value, step_id, spans, reason,
                    confidence, category, source, source_name, source_version, fingerprint, created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    suggestion_id,
                    run_id,
                    spans[0]["turn_id"] if spans else entry.get("turn_id"),
                    entry["item"],
                    entry["kind"],
                    entry.get("score"),
                    entry.get("value"),
                    entry.get("step_id"),
                    json.dumps(spans, ensure_ascii=False),
                    entry["reason"],
                    entry.get("confidence"),
                    entry.get("category"),
                    entry["source"],
                    entry["source_name"],
                    str(entry["source_version"]),
                    fingerprint(entry),
                    now(),
                ],
            )
            if cursor.rowcount:
                stored.append(suggestion_id)
    return stored


def _rows(db: Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    out = []
    for row in cursor.fetchall():
        entry = dict(zip(names, row))
        if "spans" in entry:
            entry["spans"] = json.loads(entry["spans"] or "[]")
        out.append(entry)
    return out


def get(db: Database, suggestion_id: str) -> dict[str, Any]:
    rows = _rows(db, "SELECT * FROM suggestions WHERE id = ?", [suggestion_id])
    if not rows:
        raise NotFound(f"no suggestion with the id {suggestion_id}")
    return rows[0]


def for_run(db: Database, run_id: str, source: str | None = None) -> list[dict[str, Any]]:
    """The run's suggestions in the order of the transcript (first turn, then first offset)."""
    sql = "SELECT s.* FROM suggestions s LEFT JOIN turns t ON t.id = s.turn_id WHERE s.run_id = ?"
    params: list[Any] = [run_id]
    if source is not None:
        sql += " AND s.source = ?"
        params.append(source)
    rows = _rows(db, sql + " ORDER BY t.idx, s.id", params)
    return sorted(rows, key=lambda r: (r["spans"][0]["turn"] if r["spans"] else -1, _start(r), r["id"]))


def _start(row: dict[str, Any]) -> int:
    return row["spans"][0]["start"] if row["spans"] else 0


def count(db: Database, run_id: str, source: str | None = None) -> int:
    sql = "SELECT COUNT(*) FROM suggestions WHERE run_id = ?"
    params: list[Any] = [run_id]
    if source is not None:
        sql += " AND source = ?"
        params.append(source)
    found: int = db.execute(sql, params).fetchone()[0]
    return found


def decide(
    db: Database,
    suggestion_id: str,
    reviewer: str,
    decision: str,
    *,
    annotation_id: str | None = None,
    note: str | None = None,
) -> str:
    """Record a reviewer's decision (accepted needs the annotation it became); returns the decision's id."""
    if decision not in DECISIONS:
        raise SieveUsageError(f"unknown decision {decision!r} (accepted or rejected)")
    if (decision == "accepted") != (annotation_id is not None):
        raise SieveUsageError("an accepted suggestion names its annotation; a rejected one none")
    decision_id = new_id()
    db.execute(
        "INSERT INTO suggestion_decisions (id, suggestion_id, reviewer, decision, annotation_id, note, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [decision_id, suggestion_id, reviewer, decision, annotation_id, note, now()],
    )
    return decision_id


def standing(db: Database, run_id: str | None = None, reviewer: str | None = None) -> dict[tuple[str, str], str]:
    """(suggestion id, reviewer) -> 'accepted' or 'rejected', as each reviewer's decision stands now.

    An acceptance whose annotation was undone (and not edited into another) no longer stands.
    """
    sql = (
        "SELECT d.suggestion_id, d.reviewer, d.decision, d.annotation_id FROM suggestion_decisions d "
        "JOIN suggestions s ON s.id = d.suggestion_id WHERE 1 = 1"
    )
    params: list[Any] = []
    if run_id is not None:
        sql += " AND s.run_id = ?"
        params.append(run_id)
    if reviewer is not None:
        sql += " AND d.reviewer = ?"
        params.append(reviewer)
    latest: dict[tuple[str, str], tuple[str, str | None]] = {}
    for suggestion_id, who, decision, annotation_id in db.execute(sql + " ORDER BY d.id", params).fetchall():
        latest[(suggestion_id, who)] = (decision, annotation_id)
    alive = _in_force(db, [a for d, a in latest.values() if a])
    return {
        key: decision
        for key, (decision, annotation_id) in latest.items()
        if decision == "rejected" or annotation_id in alive
    }


def _in_force(db: Database, annotation_ids: list[str]) -> set[str]:
    """Of these annotations, those in force themselves or through an edit that replaced them."""
    if not annotation_ids:
        return set()
    marks = ", ".join("?" for _ in annotation_ids)
    rows = db.execute(
        f"""
        WITH RECURSIVE lineage(root, id) AS (
            SELECT id, id FROM annotations WHERE id IN ({marks})
            UNION
            SELECT lineage.root, a.id FROM annotations a JOIN lineage ON a.supersedes = lineage.id
        )
        SELECT DISTINCT lineage.root FROM lineage JOIN annotations a ON a.id = lineage.id WHERE a.removed IS NULL
        """,
        annotation_ids,
    ).fetchall()
    return {r[0] for r in rows}


def pending(db: Database, run_id: str, reviewer: str) -> list[dict[str, Any]]:
    """The run's suggestions this reviewer has not decided (or whose acceptance was undone), in transcript order."""
    decided = standing(db, run_id, reviewer)
    return [s for s in for_run(db, run_id) if (s["id"], reviewer) not in decided]


def decisions(db: Database, scenario: str | None = None) -> list[dict[str, Any]]:
    """Every standing decision with its suggestion's source, version, item and run's scenario."""
    sql = (
        "SELECT s.id, s.run_id, s.item, s.source, s.source_name, s.source_version, r.scenario "
        "FROM suggestions s JOIN runs r ON r.id = s.run_id"
    )
    params: list[Any] = []
    if scenario is not None:
        sql += " WHERE r.scenario = ?"
        params.append(scenario)
    suggestions = {row["id"]: row for row in _rows(db, sql, params)}
    out = []
    for (suggestion_id, reviewer), decision in standing(db).items():
        if suggestion_id in suggestions:
            out.append({**suggestions[suggestion_id], "reviewer": reviewer, "decision": decision})
    return out
