"""Runs out of the database as data: a JSON bundle with every field of every row."""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

BUNDLE_FORMAT = "sieve-bundle"
BUNDLE_VERSION = 1


def _rows(db: Database, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    return [dict(r) for r in db.query(sql, params)]


def bundle(db: Database, run_ids: list[str]) -> dict[str, Any]:
    """The runs with their scenario snapshots, turns (all alternatives), annotations and judgments."""
    missing = [r for r in run_ids if not db.execute("SELECT 1 FROM runs WHERE id = ?", [r]).fetchone()]
    if missing:
        raise KeyError(", ".join(missing))
    marks = ", ".join("?" for _ in run_ids)
    runs = _rows(db, f"SELECT * FROM runs WHERE id IN ({marks}) ORDER BY id", run_ids)
    for run in runs:
        run["settings"] = json.loads(run["settings"] or "{}")
    shas = sorted({r["scenario_sha256"] for r in runs})
    return {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "scenarios": _rows(db, f"SELECT * FROM scenarios WHERE sha256 IN ({', '.join('?' for _ in shas)}) ORDER BY sha256", shas),
        "runs": runs,
        "turns": _rows(db, f"SELECT * FROM turns WHERE run_id IN ({marks}) ORDER BY run_id, idx, alt", run_ids),
        "annotations": _rows(db, f"SELECT * FROM annotations WHERE run_id IN ({marks}) ORDER BY run_id, id", run_ids),
        "annotation_history": _rows(db, f"SELECT * FROM annotation_history WHERE run_id IN ({marks}) ORDER BY seq", run_ids),
        "judgments": _rows(
            db, f"SELECT * FROM judgments WHERE run_a IN ({marks}) OR run_b IN ({marks}) ORDER BY id", run_ids + run_ids
        ),
    }


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
