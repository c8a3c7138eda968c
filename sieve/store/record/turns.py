"""Turns of a run: what was sent and what came back, including regenerated alternatives.

Every write commits at once: a reply that is streaming is on disk as far as it
was last flushed, so a crash loses at most that much.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, cast

from sqlite_utils import Database

from sieve.errors import NotFound, SieveUsageError
from sieve.safe_text import storable
from sieve.store.record.archive import discard_if_unplayed
from sieve.store.record.ids import new_id
from sieve.store.record.rows import Run, Turn
from sieve.store.record.runs import now, owner_alive, owner_tag, read_runs

RESULT_FIELDS = (
    "finish_reason",
    "native_finish_reason",
    "provider",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "token_source",
    "cost",
    "ttft",
    "duration",
    "error",
)
INT64 = 2**63 - 1
STOPPED = "the process playing this run stopped while the reply streamed"


class RunBusy(SieveUsageError):
    """Another process that is still alive is playing the run."""


def _storable(value: Any) -> Any:
    """A value SQLite can hold as it means: text as UTF-8 allows, counts in 64 bits, finite numbers; else None."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if -INT64 - 1 <= value <= INT64 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _select(db: Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    # A plain cursor: db.query() wraps every read in a savepoint, which the hot
    # path of a streaming batch (dozens of runs, a query per turn) can do without.
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def get_run(db: Database, run_id: str) -> Run:
    """The run's row with settings parsed; KeyError if there is no such run."""
    rows = read_runs(db, "id = ?", [run_id])
    if not rows:
        raise KeyError(run_id)
    return rows[0]


def claim_run(db: Database, run_id: str) -> None:
    """Make this process the one playing the run, or RunBusy if another live process plays it.

    Taking a run is one compare-and-swap: of two processes that claim it at once,
    exactly one succeeds. A reply that a process which is gone left streaming is
    marked interrupted when the run is taken over.
    """
    me = owner_tag()
    row = db.execute("SELECT status, owner FROM runs WHERE id = ?", [run_id]).fetchone()
    if row is None:
        raise NotFound(f"no run with the id {run_id}")
    status, owner = row
    if status == "running" and owner == me:
        return
    if status == "running" and owner and owner_alive(owner):
        raise RunBusy(_busy(run_id, owner))
    with db.atomic():
        taken = db.execute(
            "UPDATE runs SET owner = ?, status = 'running', ended = NULL WHERE id = ? AND status IS ? AND owner IS ?",
            [me, run_id, status, owner],
        ).rowcount
        if taken != 1:
            raise RunBusy(_busy(run_id, "another process, which took it just now"))
        _interrupt_streaming(db, "run_id = ?", [run_id])


def release_runs(db: Database, keep: Sequence[str] = ()) -> int:
    """This process no longer plays its runs (but those in `keep`): whoever opens one next may take it.

    A run left this way is not closed: it stays unfinished, and lists show it as idle.
    """
    marks = ", ".join("?" for _ in keep)
    with db.atomic():
        return db.execute(
            f"UPDATE runs SET owner = NULL WHERE status = 'running' AND owner = ? AND id NOT IN ({marks})",
            [owner_tag(), *keep],
        ).rowcount


def _busy(run_id: str, owner: str) -> str:
    return f"run {run_id} is being played by {owner}: one process at a time plays a run; wait until it stops"


def _interrupt_streaming(db: Database, where: str, params: list[Any]) -> int:
    """Mark replies left streaming (by a process that is gone) interrupted, their partial text kept."""
    return db.execute(
        f"UPDATE turns SET status = 'interrupted', error = ?, updated = ? WHERE status = 'streaming' AND {where}",
        [STOPPED, now(), *params],
    ).rowcount


def set_run_status(db: Database, run_id: str, status: str, error: str | None = None) -> None:
    ended = None if status == "running" else now()
    with db.atomic():
        db.execute(
            "UPDATE runs SET status = ?, error = ?, ended = ?, owner = CASE WHEN ? = 'running' THEN owner END WHERE id = ?",
            [status, error, ended, status, run_id],
        )
        _update_totals(db, run_id)


def _update_totals(db: Database, run_id: str) -> None:
    # Totals count every request made, alternatives included: that is what was paid.
    db.execute(
        """
        UPDATE runs SET (cost, prompt_tokens, completion_tokens, reasoning_tokens) = (
            SELECT SUM(cost), SUM(prompt_tokens), SUM(completion_tokens), SUM(reasoning_tokens)
            FROM turns WHERE run_id = :id
        )
        WHERE id = :id
        """,
        {"id": run_id},
    )


def mark_left_script(db: Database, run_id: str, position: int) -> None:
    """Record where the reviewer first left the script (the number of scripted messages sent)."""
    with db.atomic():
        db.execute("UPDATE runs SET left_script_at = ? WHERE id = ? AND left_script_at IS NULL", [position, run_id])


def add_turn(
    db: Database,
    run_id: str,
    *,
    idx: int,
    role: str,
    origin: str,
    text: str = "",
    status: str = "complete",
    step_id: str | None = None,
    step_repeat: int | None = None,
    alt: int = 0,
    played_by: str | None = None,
    played_settings: str | None = None,
) -> str:
    """Insert a turn (chosen among its alternatives); returns its id.

    `played_by` and `played_settings` (JSON) say which model wrote a player turn and how (origin 'player').
    """
    turn_id = new_id()
    t = now()
    with db.atomic():
        db.execute("UPDATE turns SET chosen = 0 WHERE run_id = ? AND idx = ?", [run_id, idx])
        db.execute(
            "INSERT INTO turns (id, run_id, idx, alt, chosen, role, origin, step_id, step_repeat, text, status, "
            "created, updated, played_by, played_settings) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                turn_id,
                run_id,
                idx,
                alt,
                role,
                origin,
                step_id,
                step_repeat,
                storable(text),
                status,
                t,
                t,
                played_by,
                played_settings,
            ],
        )
    return turn_id


def save_partial(db: Database, turn_id: str, text: str) -> None:
    """Flush the text streamed so far."""
    with db.atomic():
        db.execute("UPDATE turns SET text = ?, updated = ? WHERE id = ?", [storable(text), now(), turn_id])


def finish_turn(db: Database, turn_id: str, status: str, text: str, fields: dict[str, Any], attempts: int = 1) -> None:
    """Record how a reply ended. A field SQLite cannot hold as it means (a count past 64 bits,
    infinity, an object) is stored as missing; text is stored as UTF-8 allows."""
    values = {k: _storable(fields.get(k)) for k in RESULT_FIELDS}
    text = storable(text)
    sets = ", ".join(f"{k} = :{k}" for k in values)
    with db.atomic():
        db.execute(
            f"UPDATE turns SET status = :status, text = :text, attempts = :attempts, updated = :updated, {sets} WHERE id = :id",
            {**values, "status": status, "text": text, "attempts": attempts, "updated": now(), "id": turn_id},
        )
        run_id = db.execute("SELECT run_id FROM turns WHERE id = ?", [turn_id]).fetchone()[0]
        _update_totals(db, run_id)


def last_turn(db: Database, run_id: str) -> dict[str, Any] | None:
    """The chosen turn at the end of the conversation (without its text)."""
    rows = _select(
        db,
        "SELECT id, idx, role, origin, status FROM turns WHERE run_id = ? AND chosen = 1 ORDER BY idx DESC LIMIT 1",
        [run_id],
    )
    return rows[0] if rows else None


def script_position(db: Database, run_id: str) -> int:
    """How many scripted messages (setup, script, filler) the conversation holds."""
    count: int = db.execute(
        "SELECT COUNT(*) FROM turns WHERE run_id = ? AND chosen = 1 AND role = 'user' AND origin IN ('setup', 'script', 'filler')",
        [run_id],
    ).fetchone()[0]
    return count


def conversation(db: Database, run_id: str, before_idx: int) -> list[dict[str, str]]:
    """The messages sent for a reply at `before_idx`: every chosen turn before it that has text.

    A player model's message that never finished was never said: it is left out.
    """
    rows = db.execute(
        "SELECT role, text FROM turns WHERE run_id = ? AND chosen = 1 AND idx < ? AND text != '' "
        "AND NOT (origin = 'player' AND status NOT IN ('complete', 'length')) ORDER BY idx",
        [run_id, before_idx],
    ).fetchall()
    return [{"role": role, "content": text} for role, text in rows]


def chosen_turns(db: Database, run_id: str) -> list[Turn]:
    """The conversation as it stands: the chosen turn at each position, in order."""
    return cast(list[Turn], _select(db, "SELECT * FROM turns WHERE run_id = ? AND chosen = 1 ORDER BY idx", [run_id]))


def all_turns(db: Database, run_id: str) -> list[Turn]:
    return cast(list[Turn], _select(db, "SELECT * FROM turns WHERE run_id = ? ORDER BY idx, alt", [run_id]))


def alternatives(db: Database, run_id: str, idx: int) -> list[Turn]:
    return cast(list[Turn], _select(db, "SELECT * FROM turns WHERE run_id = ? AND idx = ? ORDER BY alt", [run_id, idx]))


def next_alt(db: Database, run_id: str, idx: int) -> int:
    row = db.execute("SELECT MAX(alt) FROM turns WHERE run_id = ? AND idx = ?", [run_id, idx]).fetchone()
    return 0 if row[0] is None else int(row[0]) + 1


def choose(db: Database, run_id: str, idx: int, alt: int) -> None:
    """Make alternative `alt` the chosen reply at position `idx`."""
    with db.atomic():
        if not db.execute(
            "SELECT 1 FROM turns WHERE run_id = ? AND idx = ? AND alt = ?", [run_id, idx, alt]
        ).fetchone():
            raise KeyError(f"run {run_id} has no alternative {alt} at turn {idx}")
        db.execute("UPDATE turns SET chosen = (alt = ?) WHERE run_id = ? AND idx = ?", [alt, run_id, idx])


def recover(db: Database) -> list[str]:
    """Mark runs whose playing process is gone (without releasing them) as interrupted; returns their ids.

    A run released between turns (`release_runs`, as the TUI does when it quits) is left
    as it is: unfinished, idle. A reply left streaming keeps its partial text and is marked interrupted; so is
    one left streaming in a run that is not running at all (a failure that could
    not be recorded). Runs owned by a live process (or by another host, which we
    cannot check) are left alone. A run whose process is gone before it sent
    anything (a Play screen killed before its first send) is removed: there is
    nothing in it to keep.
    """
    # A run its process let go of (release_runs: owner NULL) was left whole between turns: it stays unfinished,
    # idle, for whoever goes on with it. Only a process that is gone without letting go interrupted its run.
    # (A released run with a reply still streaming was let go of mid-reply, by a bug: interrupted all the same.)
    gone = [
        row["id"]
        for row in db.query(
            "SELECT id, owner FROM runs WHERE status = 'running' AND (owner IS NOT NULL OR EXISTS "
            "(SELECT 1 FROM turns WHERE turns.run_id = runs.id AND turns.status = 'streaming'))"
        )
        if not (row["owner"] and owner_alive(row["owner"]))
    ]
    recovered = [run_id for run_id in gone if not discard_if_unplayed(db, run_id)]
    for run_id in recovered:
        with db.atomic():
            _interrupt_streaming(db, "run_id = ?", [run_id])
        set_run_status(db, run_id, "interrupted")
    # Found through the partial index on streaming turns: no scan of the transcript.
    if db.execute("SELECT 1 FROM turns WHERE status = 'streaming' LIMIT 1").fetchone():
        with db.atomic():
            _interrupt_streaming(db, "run_id IN (SELECT id FROM runs WHERE status != 'running')", [])
    return recovered


def branch_run(db: Database, run_id: str, upto_idx: int) -> str:
    """A new run sharing the chosen turns of `run_id` up to and including `upto_idx`."""
    parent = get_run(db, run_id)
    new = new_id()
    with db.atomic():
        db.table("runs").insert(
            {
                "id": new,
                "scenario_sha256": parent["scenario_sha256"],
                "scenario": parent["scenario"],
                "model": parent["model"],
                "endpoint": parent["endpoint"],
                "settings": json.dumps(parent["settings"], sort_keys=True),
                "status": "running",
                "origin": parent["origin"],
                "parent_run": run_id,
                "parent_turn": upto_idx,
                "repeat": parent["repeat"],
                "left_script_at": parent["left_script_at"]
                if parent["left_script_at"] is not None
                and _script_sent(db, run_id, upto_idx) >= parent["left_script_at"]
                else None,
                "started": now(),
            }
        )
        for turn in chosen_turns(db, run_id):
            if turn["idx"] > upto_idx:
                break
            copy = dict(turn, id=new_id(), run_id=new, alt=0, chosen=1)
            db.table("turns").insert(copy)
        _update_totals(db, new)
    return new


def _script_sent(db: Database, run_id: str, upto_idx: int) -> int:
    sent: int = db.execute(
        "SELECT COUNT(*) FROM turns WHERE run_id = ? AND chosen = 1 AND idx <= ? AND origin IN ('setup', 'script', 'filler') AND role = 'user'",
        [run_id, upto_idx],
    ).fetchone()[0]
    return sent
