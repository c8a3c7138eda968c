"""Runs and the scenario snapshots they point to."""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timezone
from typing import Any

from sqlite_utils import Database

from scenarios import Scenario

from .ids import new_id


def now() -> str:
    """A UTC timestamp in ISO 8601 with milliseconds, as every table stores it."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def owner_tag() -> str:
    """host:pid of this process, as runs record who is playing them."""
    return f"{socket.gethostname()}:{os.getpid()}"


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
        db["runs"].insert(
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


def list_runs(db: Database, scenario: str | None = None) -> list[dict[str, Any]]:
    """Every run, oldest first, with how many replies it holds (chosen ones)."""
    where = "WHERE r.scenario = ?" if scenario else ""
    sql = f"""
        SELECT r.id, r.scenario, r.model, r.endpoint, r.status, r.origin, r.started, r.ended,
               r.cost, r.parent_run,
               (SELECT COUNT(*) FROM turns t
                 WHERE t.run_id = r.id AND t.role = 'assistant' AND t.chosen = 1) AS replies
        FROM runs r {where}
        ORDER BY r.id
    """
    return [dict(row) for row in db.query(sql, [scenario] if scenario else [])]
