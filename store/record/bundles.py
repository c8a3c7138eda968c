"""Bundles: runs with everything they hold, out of one database and into another, exactly.

Export writes every row of the runs (scenario snapshots, turns with their
alternatives, annotations with their history, judgments) with its ids; import
restores them as they were. Importing the same bundle twice adds nothing, and
bundles of the same runs from several reviewers merge. An import is checked
whole and written in one transaction: a bad bundle leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
from sieve.files import read_text
from sieve.safe_text import dumps_json

FORMAT = "sieve-bundle"
VERSION = 1
MAX_BUNDLE_BYTES = 512 * 1024 * 1024
# Columns that describe this database rather than the record: who plays a run
# now, and the position of a history row in this file's sequence.
LOCAL_COLUMNS = {"runs": {"owner"}, "annotation_history": {"seq"}}
TABLES = ("scenarios", "runs", "turns", "annotations", "annotation_history", "judgments")
ORDER = {
    "scenarios": "sha256",
    "runs": "id",
    "turns": "run_id, idx, alt",
    "annotations": "run_id, id",
    "annotation_history": "seq",
    "judgments": "id",
}


class BundleError(SieveInputError):
    """A bundle that cannot be imported: the file and where in it."""


def _rows(db: Database, table: str, where: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY {ORDER[table]}", params)
    names = [d[0] for d in cursor.description]
    drop = LOCAL_COLUMNS.get(table, set())
    return [{k: v for k, v in zip(names, row) if k not in drop} for row in cursor.fetchall()]


def export_bundle(db: Database, run_ids: list[str]) -> dict[str, Any]:
    """The runs and all they hold, with their ids. KeyError names a run that is not there."""
    run_ids = sorted(set(run_ids))
    missing = [r for r in run_ids if not db.execute("SELECT 1 FROM runs WHERE id = ?", [r]).fetchone()]
    if missing:
        raise KeyError(", ".join(missing))
    marks = ", ".join("?" for _ in run_ids)
    runs = _rows(db, "runs", f"id IN ({marks})", run_ids)
    for run in runs:
        run["settings"] = json.loads(run["settings"] or "{}")
    shas = sorted({r["scenario_sha256"] for r in runs})
    return {
        "format": FORMAT,
        "version": VERSION,
        "scenarios": _rows(db, "scenarios", f"sha256 IN ({', '.join('?' for _ in shas)})", shas),
        "runs": runs,
        "turns": _rows(db, "turns", f"run_id IN ({marks})", run_ids),
        "annotations": _rows(db, "annotations", f"run_id IN ({marks})", run_ids),
        "annotation_history": _rows(db, "annotation_history", f"run_id IN ({marks})", run_ids),
        "judgments": _rows(db, "judgments", f"run_a IN ({marks}) OR run_b IN ({marks})", run_ids + run_ids),
    }


def dumps(data: dict[str, Any]) -> str:
    """The bundle as text: sorted keys, so the same record always gives the same bytes; no control
    or bidi character raw (they are \\u escapes), so printing a bundle is harmless."""
    return dumps_json(data, indent=2, sort_keys=True) + "\n"


def read_bundle(path: str | Path) -> dict[str, Any]:
    text = read_text(path, MAX_BUNDLE_BYTES, "bundle", BundleError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(str(path), exc.msg, line=exc.lineno, col=exc.colno) from None
    return data


def _columns(db: Database, table: str) -> dict[str, tuple[str, bool]]:
    """Column name -> (declared type, required) for the bundle's view of a table."""
    drop = LOCAL_COLUMNS.get(table, set())
    out = {}
    for _, name, kind, notnull, default, pk in db.execute(f"PRAGMA table_info({table})").fetchall():
        if name not in drop:
            out[name] = (kind.upper(), bool(notnull) and default is None and not (pk and kind.upper() == "INTEGER"))
    return out


_TYPES = {"TEXT": (str,), "INTEGER": (int,), "REAL": (int, float)}


def check_bundle(db: Database, path: str, data: Any) -> dict[str, list[dict[str, Any]]]:
    """Every table, row and value checked against the schema; a BundleError says where."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(path, f'not a sieve bundle (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise BundleError(path, f"bundle version {data.get('version')!r}; this sieve reads version {VERSION}")
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        rows = data.get(table, [])
        if not isinstance(rows, list):
            raise BundleError(path, f"expected a list, found {type(rows).__name__}", key=table)
        columns = _columns(db, table)
        for i, row in enumerate(rows):
            where = f"{table}[{i}]"
            if not isinstance(row, dict):
                raise BundleError(path, f"expected an object, found {type(row).__name__}", key=where)
            unknown = set(row) - set(columns)
            if unknown:
                raise BundleError(path, f"unknown column '{sorted(unknown)[0]}'", key=where)
            for name, (kind, required) in columns.items():
                value = row.get(name)
                if value is None:
                    if required:
                        raise BundleError(path, f"missing '{name}'", key=where)
                    continue
                if table == "runs" and name == "settings":
                    if not isinstance(value, dict):
                        raise BundleError(path, "settings must be an object", key=f"{where}.settings")
                    continue
                if not isinstance(value, _TYPES.get(kind, (str, int, float))) or isinstance(value, bool):
                    raise BundleError(
                        path, f"'{name}' must be {kind.lower()}, found {type(value).__name__}", key=f"{where}.{name}"
                    )
        tables[table] = rows
    for i, scenario in enumerate(tables["scenarios"]):
        if hashlib.sha256(scenario["toml"].encode("utf-8")).hexdigest() != scenario["sha256"]:
            raise BundleError(path, "the scenario text does not match its sha256", key=f"scenarios[{i}]")
    return tables


def _key(table: str, row: dict[str, Any]) -> tuple:
    if table == "annotation_history":
        return (row["annotation_id"], row["action"], row["grp"], row["at"])
    return (row["sha256"],) if table == "scenarios" else (row["id"],)


def import_bundle(db: Database, path: str, data: Any) -> dict[str, int]:
    """Add what the database does not hold yet; returns rows added per table."""
    tables = check_bundle(db, path, data)
    added = {t: 0 for t in TABLES}
    # Parents before branches: a run that points at another must come after it.
    runs = sorted(tables["runs"], key=lambda r: (r.get("parent_run") is not None, r["id"]))
    tables["runs"] = runs
    try:
        with db.atomic():
            db.execute("PRAGMA defer_foreign_keys = ON")
            for table in TABLES:
                for row in tables[table]:
                    if _exists(db, table, row):
                        continue
                    values = dict(row)
                    if table == "runs":
                        values["settings"] = json.dumps(values["settings"], sort_keys=True)
                    names = list(values)
                    db.execute(
                        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                        [values[n] for n in names],
                    )
                    added[table] += 1
    except Exception as exc:  # a constraint the checks above did not foresee: nothing is kept
        if isinstance(exc, BundleError):
            raise
        raise BundleError(path, f"the bundle does not fit the database: {exc}") from None
    return added


def _exists(db: Database, table: str, row: dict[str, Any]) -> bool:
    if table == "annotation_history":
        sql = "SELECT 1 FROM annotation_history WHERE annotation_id = ? AND action = ? AND grp = ? AND at = ?"
    elif table == "scenarios":
        sql = "SELECT 1 FROM scenarios WHERE sha256 = ?"
    else:
        sql = f"SELECT 1 FROM {table} WHERE id = ?"
    return db.execute(sql, list(_key(table, row))).fetchone() is not None
