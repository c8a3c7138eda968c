"""Each reviewer's work and how far it can be trusted: what they scored, how long an item took them, how
consistent they are with themselves (catch trials), and how far they agree with the others.

Agreement with the others is weighted kappa (linear weights on the item's scale)
of the reviewer's scores against each other person's on the same runs, item by
item, then the mean over the items where it is defined: a person is compared with
the other people, a model judge with the people.
"""

from __future__ import annotations

from statistics import mean, median
from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.record.runs import not_archived
from sieve.store.scoring import consistency, results
from sieve.store.scoring.agreement import weighted_kappa
from sieve.store.scoring.runview import RunView

HEADERS = [
    "reviewer",
    "kind",
    "runs",
    "finished",
    "items scored",
    "median seconds",
    "timed",
    "self-consistency (runs)",
    "self-consistency (pairs)",
    "agreement",
    "items compared",
]


def reviewers(db: Database, scenario: str | None = None) -> list[dict[str, Any]]:
    """One row per reviewer (of the scenario's runs, if named), people first, then judges, each by name."""
    judges = judgings.judges(db)
    names = [scenario] if scenario else [r[0] for r in db.execute("SELECT DISTINCT scenario FROM runs ORDER BY 1")]
    rows: dict[str, dict[str, Any]] = {}

    def row(reviewer: str) -> dict[str, Any]:
        if reviewer not in rows:
            rows[reviewer] = {
                "reviewer": reviewer,
                "kind": "judge" if reviewer in judges else "person",
                "runs": 0,
                "finished": 0,
                "items scored": 0,
            }
        return rows[reviewer]

    for name in names:
        for view in RunView.of_scenario(db, name):
            for reviewer, card in view.cards().items():
                mine = row(reviewer)
                mine["runs"] += 1
                mine["finished"] += card.complete
                mine["items scored"] += card.progress.items_scored
    # Each item's scale and scores (run -> reviewer -> score), as the agreement table reads them.
    scores = [found for name in names for found in results.item_scores(db, name).values()]
    for reviewer, seconds in _seconds(db, scenario).items():
        mine = row(reviewer)
        mine["median seconds"] = round(median(seconds), 1)
        mine["timed"] = len(seconds)
    found = [consistency.of_runs(db, scenario), consistency.of_pairs(db, scenario=scenario)]
    for by_reviewer in found:
        for reviewer, figure in by_reviewer.items():
            if figure.compared:
                row(reviewer)[f"self-consistency ({figure.kind})"] = figure.as_dict() | {"text": figure.text()}
    people = sorted(r for r in rows if r not in judges)
    for reviewer, mine in rows.items():
        others = [p for p in people if p != reviewer]
        kappas = []
        for scale, by_run in scores:
            pairs = [(by[reviewer], by[o]) for by in by_run.values() if reviewer in by for o in others if o in by]
            value = weighted_kappa(pairs, scale) if pairs else None
            if value is not None:
                kappas.append(value)
        mine["agreement"] = round(mean(kappas), 3) if kappas else None
        mine["items compared"] = len(kappas)
    out = sorted(rows.values(), key=lambda r: (r["kind"] == "judge", r["reviewer"]))
    for mine in out:
        for header in HEADERS:
            mine.setdefault(header, None)
    return out


def _seconds(db: Database, scenario: str | None) -> dict[str, list[float]]:
    """reviewer -> the seconds each annotation in force took them (from opening the picker to saving)."""
    sql = "SELECT a.reviewer, a.seconds FROM annotations a JOIN runs r ON r.id = a.run_id"
    sql += f" WHERE a.removed IS NULL AND a.seconds IS NOT NULL AND {not_archived('r.id')}"
    sql += " AND r.scenario = ?" if scenario else ""
    out: dict[str, list[float]] = {}
    for reviewer, seconds in db.execute(sql, [scenario] if scenario else []):
        out.setdefault(reviewer, []).append(seconds)
    return out


def table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as the table prints them: self-consistency as one phrase each, agreement as κw."""
    out = []
    for row in rows:
        shown = dict(row)
        for kind in ("runs", "pairs"):
            figure = row[f"self-consistency ({kind})"]
            shown[f"self-consistency ({kind})"] = figure["text"] if figure else None
        if row["agreement"] is not None:
            shown["agreement"] = f"{row['agreement']:.2f} (κw)"
        out.append(shown)
    return out
