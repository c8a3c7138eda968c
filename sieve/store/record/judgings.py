"""Judgings: what a model judge was sent and what it answered, one row per packet.

A judge's scores are annotations like a person's (its reviewer name is
`judge:MODEL` unless given); this table keeps what they rest on: the packet and
its hash, the raw reply, every repair round, the settings, tokens, cost,
provider and duration, the precedents the packet held, and the maker the judge
shares with the scored model, if it does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlite_utils import Database

from sieve.store.record.annotations import JUDGE_PREFIX
from sieve.store.record.ids import new_id
from sieve.store.record.runs import now, owner_alive, owner_tag

_JSON_COLUMNS = ("settings", "covers", "repairs", "precedents", "outcome")


def judge_name(model: str) -> str:
    """The reviewer name of a model judge: `judge:MODEL`."""
    return JUDGE_PREFIX + model


def maker(model: str | None) -> str | None:
    """The maker part of a model id (`anthropic/claude-…` -> `anthropic`); None when the id names none."""
    if not model or "/" not in model:
        return None
    head = model.split("/", 1)[0].strip().lower()
    return head or None


def shared_maker(judge_model: str, scored_model: str) -> str | None:
    """The maker a judge and a scored model share (a conflict of interest), or None."""
    a, b = maker(judge_model), maker(scored_model)
    return a if a is not None and a == b else None


def packet_hash(packet: str) -> str:
    return hashlib.sha256(packet.encode("utf-8")).hexdigest()


def start(
    db: Database,
    *,
    judging: str,
    kind: str,
    reviewer: str,
    model: str,
    endpoint: str,
    packet: str,
    run_id: str | None = None,
    pair_id: str | None = None,
    swapped: bool | None = None,
    part: int = 1,
    parts: int = 1,
    settings: dict[str, Any] | None = None,
    blind: bool = True,
    covers: dict[str, Any] | None = None,
    precedents: list[str] | None = None,
    conflict: str | None = None,
) -> str:
    """Record a packet about to be sent; returns the row's id."""
    row_id = new_id()
    with db.atomic():
        db.execute(
            """
            INSERT INTO judgings (id, judging, kind, run_id, pair_id, swapped, part, parts, reviewer, model, endpoint,
                settings, blind, packet_sha256, packet, covers, precedents, conflict, status, started, owner)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)
            """,
            [
                row_id,
                judging,
                kind,
                run_id,
                pair_id,
                None if swapped is None else int(swapped),
                part,
                parts,
                reviewer,
                model,
                endpoint,
                json.dumps(settings or {}, sort_keys=True),
                int(blind),
                packet_hash(packet),
                packet,
                json.dumps(covers or {}, sort_keys=True),
                json.dumps(precedents or []),
                conflict,
                now(),
                owner_tag(),
            ],
        )
    return row_id


def recover(db: Database) -> list[str]:
    """Mark packets left `running` by a judging process that is gone as failed; returns their ids.

    Their scores were never stored (a judging's annotations are written with its status, in
    one transaction), so `sieve judge --unjudged` takes the run again. Packets of a live process, or of one on
    another host (which cannot be checked), are left alone.
    """
    stale = [
        row["id"]
        for row in db.query("SELECT id, owner FROM judgings WHERE status = 'running'")
        if not (row["owner"] and owner_alive(row["owner"]))
    ]
    if stale:
        marks = ",".join("?" * len(stale))
        with db.atomic():
            db.execute(
                f"UPDATE judgings SET status = 'failed', owner = NULL, ended = ?, "
                f"error = CASE WHEN reply IS NULL THEN 'interrupted: the judging process stopped before the judge answered' "
                f"ELSE 'interrupted: the judging process stopped before the card was stored' END WHERE id IN ({marks})",
                [now(), *stale],
            )
    return stale


def answered(
    db: Database,
    row_id: str,
    *,
    reply: str | None,
    repairs: list[dict[str, Any]],
    outcome: dict[str, Any],
    error: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    cost: float | None = None,
    provider: str | None = None,
    duration: float | None = None,
) -> None:
    """Keep what a packet's judge answered as soon as it has: the raw reply, the repairs, what was made of it, what
    it cost. The packet stays `running` until `close` says how it ended (with the card it gave, for a run)."""
    with db.atomic():
        db.execute(
            """
            UPDATE judgings SET reply = ?, repairs = ?, outcome = ?, error = ?, prompt_tokens = ?,
                completion_tokens = ?, cost = ?, provider = ?, duration = ?
            WHERE id = ?
            """,
            [
                reply,
                json.dumps(repairs),
                json.dumps(outcome, sort_keys=True),
                error,
                prompt_tokens,
                completion_tokens,
                cost,
                provider,
                duration,
                row_id,
            ],
        )


def close(db: Database, row_id: str, status: str, error: str | None = None) -> None:
    """Say how a packet's judging ended; `error`, if given, is added to what the row says already."""
    with db.atomic():
        db.execute(
            "UPDATE judgings SET status = ?, error = CASE WHEN ? IS NULL THEN error WHEN error IS NULL THEN ? "
            "ELSE error || '; ' || ? END, ended = ?, owner = NULL WHERE id = ?",
            [status, error, error, error, now(), row_id],
        )


def finish(
    db: Database,
    row_id: str,
    *,
    status: str,
    reply: str | None,
    repairs: list[dict[str, Any]],
    outcome: dict[str, Any],
    error: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    cost: float | None = None,
    provider: str | None = None,
    duration: float | None = None,
) -> None:
    """Record how a packet's judging ended: the raw reply, the repairs, what was made of it, what it cost."""
    with db.atomic():
        answered(
            db,
            row_id,
            reply=reply,
            repairs=repairs,
            outcome=outcome,
            error=error,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            provider=provider,
            duration=duration,
        )
        close(db, row_id, status)


def note_set_aside(db: Database, row_id: str, label: str, reason: str) -> None:
    """Name in a packet's outcome an answer that was set aside when it was stored (the scenario cannot hold it)."""
    row = db.execute("SELECT outcome FROM judgings WHERE id = ?", [row_id]).fetchone()
    if row is None:
        return
    outcome = json.loads(row[0]) if row[0] else {}
    outcome.setdefault("set_aside", {})[label] = reason
    db.execute("UPDATE judgings SET outcome = ? WHERE id = ?", [json.dumps(outcome, sort_keys=True), row_id])


def _select(db: Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    rows = []
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        for column in _JSON_COLUMNS:
            row[column] = json.loads(row[column]) if row[column] else None
        rows.append(row)
    return rows


def get(db: Database, row_id: str) -> dict[str, Any]:
    rows = _select(db, "SELECT * FROM judgings WHERE id = ?", [row_id])
    if not rows:
        raise KeyError(row_id)
    return rows[0]


def of_run(db: Database, run_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
    """The packets sent about a run (its absolute judgings), oldest first."""
    return _packets(db, "run_id", run_id, reviewer)


def of_pair(db: Database, pair_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
    """The packets sent about a pair (each order it was shown in), oldest first."""
    return _packets(db, "pair_id", pair_id, reviewer)


def _packets(db: Database, column: str, value: str, reviewer: str | None) -> list[dict[str, Any]]:
    sql = f"SELECT * FROM judgings WHERE {column} = ?"
    params: list[Any] = [value]
    if reviewer is not None:
        sql += " AND reviewer = ?"
        params.append(reviewer)
    return _select(db, sql + " ORDER BY id", params)


def judged_runs(db: Database, reviewer: str, scenario: str | None = None) -> set[str]:
    """The runs this judge has a finished card judging of (complete or partial)."""
    sql = "SELECT DISTINCT j.run_id FROM judgings j JOIN runs r ON r.id = j.run_id WHERE j.kind = 'card'"
    sql += " AND j.reviewer = ? AND j.status IN ('complete', 'partial')"
    params: list[Any] = [reviewer]
    if scenario is not None:
        sql += " AND r.scenario = ?"
        params.append(scenario)
    return {row[0] for row in db.execute(sql, params).fetchall()}


def judges(db: Database) -> set[str]:
    """Every reviewer who is a model judge: named `judge:…`, or recorded as judging here."""
    named = {r[0] for r in db.execute("SELECT DISTINCT reviewer FROM annotations WHERE reviewer LIKE 'judge:%'")}
    named |= {r[0] for r in db.execute("SELECT DISTINCT reviewer FROM judgments WHERE reviewer LIKE 'judge:%'")}
    return named | {r[0] for r in db.execute("SELECT DISTINCT reviewer FROM judgings")}


def conflicts(db: Database, run_id: str) -> dict[str, str]:
    """reviewer -> the maker they share with the run's model, for the judges of a run that do."""
    rows = db.execute(
        "SELECT DISTINCT reviewer, conflict FROM judgings WHERE run_id = ? AND conflict IS NOT NULL", [run_id]
    ).fetchall()
    return {reviewer: maker_name for reviewer, maker_name in rows}
