"""Bundles: runs with everything they hold, out of one database and into another, exactly.

Export writes every row of the runs (scenario snapshots, turns with their
alternatives, annotations with their history, pair queues and judgments) with
its ids, and the runs a branch grew from; import restores them as they were.
Importing the same bundle twice adds nothing, and bundles of the same runs from
several reviewers, or from copies of one database, merge keeping the history
(store.record.merge). Every row is checked as the app would have written it
(bundle_rows). A row that says otherwise than the database about the same id, or
a reviewer's two values for one item, is a conflict: reported with both sides,
and the import fails, or takes the bundle's side (theirs) or the database's (ours).
An import is checked whole and written in one transaction: a bad bundle leaves
nothing behind. Each import is recorded in `merges`, with what came of it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
from sieve.files import read_text
from sieve.safe_text import dumps_json
from sieve.store.record import merge
from sieve.store.record.bundle_rows import RowError, Rows
from sieve.store.record.ids import new_id
from sieve.store.record.runs import now

FORMAT = "sieve-bundle"
VERSION = 3  # 2: pair queues (judgments point at them); 3: suggestions, their decisions, judgings
READS = (1, 2, 3)
MAX_BUNDLE_BYTES = 512 * 1024 * 1024
# Columns that describe this database rather than the record: who plays a run
# now, and the position of a history row in this file's sequence.
LOCAL_COLUMNS = {"runs": {"owner"}, "judgings": {"owner"}, "annotation_history": {"seq"}}
# Columns in which two copies may differ without a conflict: a removal wins (store.record.merge);
# when this database first stored a snapshot, and where its own undo stands, are its own.
MERGED_COLUMNS = {"scenarios": {"created"}, "annotations": {"removed"}, "annotation_history": {"undone"}}
TABLES = (
    "scenarios",
    "runs",
    "turns",
    "annotations",
    "annotation_history",
    "pairs",
    "judgments",
    "suggestions",
    "suggestion_decisions",
    "judgings",
    "catch_trials",
)
ORDER = {
    "scenarios": "sha256",
    "runs": "id",
    "turns": "run_id, idx, alt",
    "annotations": "run_id, id",
    "annotation_history": "seq",
    "pairs": "queue, position",
    "judgments": "id",
    "suggestions": "run_id, id",
    "suggestion_decisions": "id",
    "judgings": "id",
    "catch_trials": "id",
}
describe_conflict = merge.describe_conflict
describe_import = merge.describe_import


class BundleError(SieveInputError):
    """A bundle that cannot be imported: the file and where in it."""


class BundleConflict(BundleError):
    """Rows of the bundle that say otherwise than the database about the same ids."""


def _rows(db: Database, table: str, where: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY {ORDER[table]}", params)
    names = [d[0] for d in cursor.description]
    drop = LOCAL_COLUMNS.get(table, set())
    return [{k: v for k, v in zip(names, row) if k not in drop} for row in cursor.fetchall()]


def export_bundle(db: Database, run_ids: list[str]) -> dict[str, Any]:
    """The runs (and the runs their branches grew from) with all they hold, and the pair
    queues and judgments among them. KeyError names a run that is not there.

    A run still running here is written as interrupted (and a reply still streaming
    too): in another database no process plays it.
    """
    run_ids = sorted(set(run_ids))
    missing = [r for r in run_ids if not db.execute("SELECT 1 FROM runs WHERE id = ?", [r]).fetchone()]
    if missing:
        raise KeyError(", ".join(missing))
    wanted = set(run_ids)
    for run_id in run_ids:  # a branch cannot stand without the run it grew from
        parent = db.execute("SELECT parent_run FROM runs WHERE id = ?", [run_id]).fetchone()[0]
        while parent is not None and parent not in wanted:
            wanted.add(parent)
            parent = db.execute("SELECT parent_run FROM runs WHERE id = ?", [parent]).fetchone()[0]
    run_ids = sorted(wanted)
    marks = ", ".join("?" for _ in run_ids)
    runs = _rows(db, "runs", f"id IN ({marks})", run_ids)
    for run in runs:
        run["settings"] = json.loads(run["settings"] or "{}")
        # A run is running only where a process plays it; anywhere else it was interrupted.
        if run["status"] == "running":
            run["status"] = "interrupted"
    turns = _rows(db, "turns", f"run_id IN ({marks})", run_ids)
    for turn in turns:
        if turn["status"] == "streaming":
            turn["status"] = "interrupted"
    shas = sorted({r["scenario_sha256"] for r in runs})
    both = f"run_a IN ({marks}) AND run_b IN ({marks})"
    judgings = _rows(
        db, "judgings", f"run_id IN ({marks}) OR pair_id IN (SELECT id FROM pairs WHERE {both})", run_ids * 3
    )
    for judging in judgings:
        if judging["status"] == "running":  # nobody is judging it in another database
            judging["status"] = "failed"
            judging["error"] = judging["error"] or "stopped before it was done"
    return {
        "format": FORMAT,
        "version": VERSION,
        "scenarios": _rows(db, "scenarios", f"sha256 IN ({', '.join('?' for _ in shas)})", shas),
        "runs": runs,
        "turns": turns,
        "annotations": _rows(db, "annotations", f"run_id IN ({marks})", run_ids),
        "annotation_history": _rows(db, "annotation_history", f"run_id IN ({marks})", run_ids),
        "pairs": _rows(db, "pairs", both, run_ids + run_ids),
        "judgments": _rows(db, "judgments", both, run_ids + run_ids),
        "suggestions": _rows(db, "suggestions", f"run_id IN ({marks})", run_ids),
        "suggestion_decisions": _rows(
            db,
            "suggestion_decisions",
            f"suggestion_id IN (SELECT id FROM suggestions WHERE run_id IN ({marks}))",
            run_ids,
        ),
        "judgings": judgings,
        "catch_trials": _rows(db, "catch_trials", f"run_id IN ({marks})", run_ids),
    }


def dumps(data: dict[str, Any]) -> str:
    """The bundle as text: sorted keys, so the same record always gives the same bytes; no control
    or bidi character raw (they are \\u escapes), so printing a bundle is harmless."""
    return dumps_json(data, indent=2, sort_keys=True) + "\n"


def read_bundle(path: str | Path) -> Any:
    """The file's JSON as it reads, whatever it holds: check_bundle says whether it is a bundle."""
    text = read_text(path, MAX_BUNDLE_BYTES, "bundle", BundleError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(str(path), exc.msg, line=exc.lineno, col=exc.colno) from None
    except RecursionError:
        raise BundleError(str(path), "arrays or objects nested too deeply to read") from None
    at = _lone_surrogate(text) if _SURROGATE_ESCAPE.search(text) else None
    if at is not None:
        # JSON lets "\\ud800" stand alone, but no text can hold half a character: SQLite would keep
        # bytes no reader decodes, and writing the bundle out again would fail. Refused here, where
        # the line and column are still known.
        line = text.count("\n", 0, at) + 1
        col = at - text.rfind("\n", 0, at)
        raise BundleError(
            str(path), f"{text[at : at + 6]}: a lone surrogate (not text UTF-8 can hold)", line=line, col=col
        )
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(text: str) -> int | None:
    """Where the first \\uXXXX escape of an unpaired surrogate starts, or None.

    In valid JSON a backslash only ever starts an escape, so reading escape by escape is enough."""
    at = text.find("\\")
    while at != -1:
        if text.startswith("\\u", at):
            code = int(text[at + 2 : at + 6], 16)
            if 0xD800 <= code < 0xDC00:
                low = text[at + 8 : at + 12] if text.startswith("\\u", at + 6) else ""
                if not (len(low) == 4 and 0xDC00 <= int(low, 16) < 0xE000):
                    return at
                at += 12
            elif 0xDC00 <= code < 0xE000:
                return at
            else:
                at += 6
        else:
            at += 2
        at = text.find("\\", at)
    return None


def _columns(db: Database, table: str) -> dict[str, tuple[str, bool, Any]]:
    """Column name -> (declared type, NOT NULL, default or None) for the bundle's view of a table."""
    drop = LOCAL_COLUMNS.get(table, set())
    out = {}
    for _, name, kind, notnull, default, _pk in db.execute(f"PRAGMA table_info({table})").fetchall():
        if name not in drop:
            out[name] = (kind.upper(), bool(notnull), _literal(default))
    return out


def _literal(default: str | None) -> Any:
    """A column's SQL default as a value: 'text' -> text, 1 -> 1."""
    if default is None:
        return None
    if default.startswith("'") and default.endswith("'"):
        return default[1:-1].replace("''", "'")
    try:
        return int(default)
    except ValueError:
        return float(default)


_TYPES = {"TEXT": (str,), "INTEGER": (int,), "REAL": (int, float)}


def check_bundle(db: Database, path: str, data: Any) -> dict[str, list[dict[str, Any]]]:
    """Every table, row and value checked against the schema; a BundleError says where."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(path, f'not a sieve bundle (no "format": "{FORMAT}")')
    if data.get("version") not in READS:
        shown = " and ".join(str(v) for v in READS)
        raise BundleError(path, f"bundle version {data.get('version')!r}; this sieve reads versions {shown}")
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
            for name, (kind, notnull, default) in columns.items():
                if name not in row and default is not None:
                    # A column an older sieve did not write: what the database would put there.
                    row[name] = {} if (table, name) == ("runs", "settings") else default
                value = row.get(name)
                if value is None:
                    if notnull:
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
    try:
        Rows(db, path, tables).check()
    except RowError as exc:
        raise BundleError(exc.path, exc.message, key=exc.key) from None
    return tables


def _key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    if table == "annotation_history":
        return (row["annotation_id"], row["action"], row["grp"], row["at"])
    return (row["sha256"],) if table == "scenarios" else (row["id"],)


def _stored(db: Database, table: str, row: dict[str, Any]) -> dict[str, Any] | None:
    """The database's own row with the same key (in the bundle's shape), or None."""
    if table == "annotation_history":
        where = "annotation_id = ? AND action = ? AND grp = ? AND at = ?"
    elif table == "scenarios":
        where = "sha256 = ?"
    else:
        where = "id = ?"
    found = _rows(db, table, where, list(_key(table, row)))
    if not found:
        return None
    if table == "runs":
        found[0]["settings"] = json.loads(found[0]["settings"] or "{}")
    return found[0]


def conflicts(db: Database, tables: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows whose key the database holds with other values: table, index, key and the columns that differ."""
    out = []
    for table in TABLES:
        merged = MERGED_COLUMNS.get(table, set())
        for i, row in enumerate(tables[table]):
            stored = _stored(db, table, row)
            if stored is None:
                continue
            differ = sorted(c for c in set(row) | set(stored) if c not in merged and row.get(c) != stored.get(c))
            if differ:
                out.append({"table": table, "row": i, "key": list(_key(table, row)), "columns": differ})
    return out


# A check of the annotations a bundle writes, made inside the import's transaction (the database holds the
# bundle's runs and turns by then): it raises BundleError to refuse the bundle, and returns what it changed.
# The evidence rule is one (sieve.store.scoring.bundle_evidence): the record cannot apply it itself.
Vet = Callable[[Database, str, list[tuple[int, dict[str, Any]]]], list[dict[str, Any]]]


def import_bundle(
    db: Database, path: str, data: Any, on_conflict: str = "fail", vet: Vet | None = None
) -> dict[str, Any]:
    """Merge the bundle into the database; returns what came of it (rows added per table, removals carried over,
    repeats set aside, conflicts and how they were settled, and what `vet` marked).

    A row whose id the database holds with other values, and a reviewer's two values
    for one item of one run (store.record.merge), are conflicts: with
    `on_conflict="fail"` nothing is written and BundleConflict lists them with both
    sides; with "theirs" the bundle's side stands, with "ours" (or "skip", its older
    name) the database's. The side that does not stand is kept in the record, removed.
    `vet` checks every annotation the bundle writes (added, or taking a conflict's
    place), in the same transaction: its BundleError leaves nothing behind.
    """
    choice = "ours" if on_conflict == "skip" else on_conflict
    if choice not in merge.CHOICES:
        raise ValueError(f"on_conflict must be one of {', '.join(merge.CHOICES)}, not {on_conflict!r}")
    tables = check_bundle(db, path, data)
    digest = hashlib.sha256(dumps(data).encode("utf-8")).hexdigest()  # of what was read (and checked)
    found = conflicts(db, tables)
    merging = merge.plan(db, tables["annotations"])
    if (found or merging.disagreements) and choice == "fail":
        raise BundleConflict(path, merge.refusal(found, merging.disagreements))
    added = {t: 0 for t in TABLES}
    at = now()
    set_aside = merging.set_aside(choice)
    # Parents before branches: a run that points at another must come after it.
    tables["runs"] = sorted(tables["runs"], key=lambda r: (_depth(tables["runs"], r), r["id"]))
    merge_id = new_id()
    report: dict[str, Any] = {
        "added": added,
        "removals": len(merging.removals),
        "set_aside": len(merging.repeats),
        "conflicts": [d.as_json(choice) for d in merging.disagreements],
        "skipped" if choice == "ours" else "replaced": found,
    }
    try:
        with db.atomic():
            db.execute("PRAGMA defer_foreign_keys = ON")
            merge.write(db, merging, choice, at)
            written: list[tuple[int, dict[str, Any]]] = []  # the annotations the bundle writes: for `vet`
            if choice == "theirs":
                for conflict in found:
                    _replace(db, conflict["table"], tables[conflict["table"]][conflict["row"]], conflict["columns"])
                    if conflict["table"] == "annotations":
                        written.append((conflict["row"], tables["annotations"][conflict["row"]]))
            renamed: dict[str, str] = {}  # a suggestion both sides made, under two ids: the database's
            for table in TABLES:
                for i, row in enumerate(tables[table]):
                    if _exists(db, table, row):
                        continue
                    if table == "annotations":
                        written.append((i, row))
                    values = _storable(table, row)
                    if table == "suggestions":
                        same = _same_suggestion(db, values)
                        if same is not None:
                            renamed[values["id"]] = same
                            continue
                    if table == "suggestion_decisions":
                        values["suggestion_id"] = renamed.get(values["suggestion_id"], values["suggestion_id"])
                    if table == "annotations" and values["id"] in set_aside:
                        values["removed"] = values["removed"] or at
                    names = list(values)
                    db.execute(
                        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                        [values[n] for n in names],
                    )
                    added[table] += 1
            if vet is not None:
                report["marked"] = vet(db, path, written)
            db.execute(
                "INSERT INTO merges (id, source, bundle_sha256, on_conflict, at, report) VALUES (?, ?, ?, ?, ?, ?)",
                [merge_id, str(path), digest, choice, at, dumps_json(report, sort_keys=True)],
            )
    except Exception as exc:  # a constraint the checks above did not foresee: nothing is kept
        if isinstance(exc, BundleError):
            raise
        raise BundleError(path, f"the bundle does not fit the database: {exc}") from None
    return {"marked": [], **report, "merge": merge_id}


def _storable(table: str, row: dict[str, Any]) -> dict[str, Any]:
    values = dict(row)
    if table == "runs":
        values["settings"] = json.dumps(values["settings"], sort_keys=True)
    return values


def _replace(db: Database, table: str, row: dict[str, Any], columns: list[str]) -> None:
    """The database's row with the same key takes the bundle's values in the columns that differ (theirs)."""
    values = _storable(table, row)
    key = list(_key(table, row))
    if table == "annotation_history":
        where = "annotation_id = ? AND action = ? AND grp = ? AND at = ?"
    elif table == "scenarios":
        where = "sha256 = ?"
    else:
        where = "id = ?"
    assignments = ", ".join(f"{c} = ?" for c in columns)
    db.execute(f"UPDATE {table} SET {assignments} WHERE {where}", [values.get(c) for c in columns] + key)


def _same_suggestion(db: Database, row: dict[str, Any]) -> str | None:
    """The id under which the database holds the same suggestion (run and fingerprint), if another."""
    found = db.execute(
        "SELECT id FROM suggestions WHERE run_id = ? AND fingerprint = ? AND id != ?",
        [row["run_id"], row["fingerprint"], row["id"]],
    ).fetchone()
    return found[0] if found else None


def _depth(runs: list[dict[str, Any]], run: dict[str, Any]) -> int:
    by_id = {r["id"]: r for r in runs}
    depth, parent = 0, run.get("parent_run")
    while parent in by_id and depth <= len(runs):
        depth, parent = depth + 1, by_id[parent].get("parent_run")
    return depth


def _exists(db: Database, table: str, row: dict[str, Any]) -> bool:
    if table == "annotation_history":
        sql = "SELECT 1 FROM annotation_history WHERE annotation_id = ? AND action = ? AND grp = ? AND at = ?"
    elif table == "scenarios":
        sql = "SELECT 1 FROM scenarios WHERE sha256 = ?"
    else:
        sql = f"SELECT 1 FROM {table} WHERE id = ?"
    return db.execute(sql, list(_key(table, row))).fetchone() is not None
