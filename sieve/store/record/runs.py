"""Runs and the scenario snapshots they point to."""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from typing import Any, cast

from sqlite_utils import Database

from sieve.errors import NotFound, SieveUsageError
from sieve.scenarios import Scenario, load_text
from sieve.store.record.ids import new_id
from sieve.store.record.rows import ListedRun, Run


def now() -> str:
    """A UTC timestamp in ISO 8601 with milliseconds, as every table stores it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def owner_tag() -> str:
    """host:pid of this process, as runs record who is playing them."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: str) -> bool:
    """Whether the process named host:pid may still be playing (one on another host cannot be checked: yes)."""
    owner_host, _, pid = owner.rpartition(":")
    if owner_host != socket.gethostname():
        return True
    return not pid.isdigit() or _alive(int(pid))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (killed, not yet reaped by its parent) no longer plays anything.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def activity(status: str, owner: str | None, streaming: bool) -> str:
    """What a run is doing, in a word, for a list: `running` in the record says only that it was not closed.

    playing: a live process owns it and a reply is streaming; open: a live process owns it
    (Play has it open, between turns); idle: nobody plays it (left, or its process is gone);
    otherwise the record's own word (complete, interrupted, failed).
    """
    if status != "running":
        return status
    if not (owner and owner_alive(owner)):
        return "idle"
    return "playing" if streaming else "open"


# Parsed snapshots by sha256: the text of a sha never changes, so neither does its parse.
_SCENARIOS: dict[str, Scenario] = {}


def snapshot(db: Database, sha256: str, name: str = "scenario") -> Scenario:
    """The scenario version a run was played with, parsed once per process.

    ScenarioError if the stored text is not a valid scenario (a tampered bundle),
    NotFound if the snapshot is missing.
    """
    scenario = _SCENARIOS.get(sha256)
    if scenario is None:
        row = db.execute("SELECT toml, name FROM scenarios WHERE sha256 = ?", [sha256]).fetchone()
        if row is None:
            raise NotFound(f"the scenario snapshot {sha256[:12]} is not in the database")
        scenario = load_text(row[0], f"<snapshot {sha256[:12]}>/{row[1] or name}.toml")
        _SCENARIOS[sha256] = scenario
    return scenario


def snapshot_scenario(db: Database, scenario: Scenario) -> str:
    """Store the scenario's exact text once per version; returns its sha256."""
    with db.atomic():
        db.execute(
            "INSERT OR IGNORE INTO scenarios (sha256, name, version, title, toml, created) VALUES (?, ?, ?, ?, ?, ?)",
            [scenario.sha256, scenario.name, scenario.version, scenario.title, scenario.source, now()],
        )
    return scenario.sha256


def create_run(
    db: Database,
    scenario: Scenario,
    *,
    model: str,
    endpoint: str,
    settings: dict[str, Any],
    origin: str = "script",
    repeat: int = 0,
) -> str:
    """A new run of `scenario` with the settings it actually uses; returns its id."""
    run_id = new_id()
    with db.atomic():
        sha = snapshot_scenario(db, scenario)
        db.table("runs").insert(
            {
                "id": run_id,
                "scenario_sha256": sha,
                "scenario": scenario.name,
                "model": model,
                "endpoint": endpoint,
                "settings": json.dumps(settings, sort_keys=True),
                "status": "running",
                "origin": origin,
                "repeat": repeat,
                "started": now(),
                # The creating process plays it until it says otherwise.
                "owner": owner_tag(),
            }
        )
    return run_id


def read_runs(db: Database, where: str = "1", params: list[Any] | None = None) -> list[Run]:
    """The runs matching `where` (SQL on the runs table), oldest first, each with its settings parsed."""
    # A plain cursor, as turns._select: no savepoint around a read.
    cursor = db.execute(f"SELECT * FROM runs WHERE {where} ORDER BY id", params or [])
    names = [d[0] for d in cursor.description]
    runs = []
    for row in cursor.fetchall():
        run = dict(zip(names, row))
        run["settings"] = json.loads(run["settings"] or "{}")
        runs.append(cast(Run, run))
    return runs


def not_archived(column: str = "id") -> str:
    """SQL: the run `column` holds is not archived (record.archive). The one test of what "the field" is: every
    reader of a scenario's runs (lists, results, ratings, compare, the report, searches, the judge's --scenario)
    leaves archived runs out through it; naming a run by its id still opens it."""
    return f"{column} NOT IN (SELECT run_id FROM archived_runs)"


# A condition on a run's id (`r.` + NOT_ARCHIVED on an alias): runs put out of sight (runs_kept.archive) are left out.
NOT_ARCHIVED = not_archived()


def list_runs(db: Database, scenario: str | None = None, *, archived: bool | None = False) -> list[ListedRun]:
    """Every run, oldest first, with how many replies it holds (chosen ones) and what it is doing (`activity`).

    Archived runs are left out; `archived=True`: only they are listed; None: every run, archived or not.
    """
    conditions = ["1"]
    if archived is not None:
        conditions.append("r." + NOT_ARCHIVED if not archived else "r.id IN (SELECT run_id FROM archived_runs)")
    if scenario:
        conditions.append("r.scenario = ?")
    where = "WHERE " + " AND ".join(conditions)
    sql = f"""
        SELECT r.*,
               (SELECT COUNT(*) FROM turns t
                 WHERE t.run_id = r.id AND t.role = 'assistant' AND t.chosen = 1) AS replies,
               r.status = 'running' AND EXISTS
                 (SELECT 1 FROM turns s WHERE s.run_id = r.id AND s.status = 'streaming') AS streaming
        FROM runs r {where}
        ORDER BY r.id
    """
    rows = [dict(row) for row in db.query(sql, [scenario] if scenario else [])]
    for row in rows:
        row["settings"] = json.loads(row["settings"] or "{}")
        # Which process plays it is this machine's business, not the record's: only what it means is kept.
        row["activity"] = activity(row["status"], row.pop("owner", None), bool(row.pop("streaming")))
    return cast(list[ListedRun], rows)


def find_run(db: Database, given: str) -> str:
    """The full id of the run `given` names: its id, or a unique prefix or suffix (Home shows the last 8 characters).

    NotFound or SieveUsageError (ambiguous) list the candidates.
    """
    given = given.strip()
    if db.execute("SELECT 1 FROM runs WHERE id = ?", [given]).fetchone():
        return given
    if len(given) < 4:
        raise SieveUsageError(f"'{given}' is too short to name a run: give at least 4 characters of its id")
    upper = given.upper()
    rows = db.execute(
        "SELECT id, scenario, model FROM runs WHERE id LIKE ? ESCAPE '!' OR id LIKE ? ESCAPE '!' ORDER BY id LIMIT 11",
        [_like(upper) + "%", "%" + _like(upper)],
    ).fetchall()
    if len(rows) == 1:
        return str(rows[0][0])
    if rows:
        listed = "\n".join(f"  {r[0]}  {r[1]}  {r[2]}" for r in rows[:10]) + ("\n  …" if len(rows) > 10 else "")
        raise SieveUsageError(f"'{given}' names more than one run:\n{listed}")
    recent = db.execute("SELECT id, scenario, model FROM runs ORDER BY id DESC LIMIT 5").fetchall()
    hint = ("; the latest runs:\n" + "\n".join(f"  {r[0]}  {r[1]}  {r[2]}" for r in recent)) if recent else ""
    raise NotFound(f"no run with the id {given}{hint}")


def _like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")
