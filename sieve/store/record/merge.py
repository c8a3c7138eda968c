"""Merging a bundle into a database that shares its history: removals carried over, repeats set aside, disagreements.

Two copies of one database go their own ways: a reviewer deletes a score in one,
another reviewer works in the other, a judge is run again in both. Merging one
copy's bundle into the other is more than adding the rows one side lacks:

- an annotation removed (or superseded, which removes it) in either copy stays
  removed: `removed` is no conflict, the removal wins;
- what says the same in both copies counts once: the bundle's repeat of what the
  database holds is kept in the record, set aside (removed at the merge);
- one reviewer saying two things about one item of one run (each side's value new
  to the other, both in force) is a disagreement: reported with both values, and
  settled as the user chose (theirs, ours), or the import fails.

A slot holds one value of a card: an item's score, a written judgment, a probe's
mark, a step's verdict, a yes/no counter's answer. Counted events and deductions
are a set, compared whole; notes, flags and excerpts add up (a repeat is set aside).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlite_utils import Database

from sieve.scenarios import ScenarioError, load_text

CHOICES = ("fail", "theirs", "ours")
CONFLICTS_SHOWN = 20
_VERBS = {"score": "scored", "judgment": "wrote", "deduction": "deducted", "probe": "marked", "verdict": "judged"}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _shown(annotation: dict[str, Any]) -> str:
    if annotation["value"] is not None and annotation["kind"] != "score":
        return str(annotation["value"])
    if annotation["score"] is None:
        return "no score"
    if annotation["score_high"] is not None:
        return f"{_number(annotation['score'])}–{_number(annotation['score_high'])}"
    return _number(annotation["score"])


def _value(annotation: dict[str, Any]) -> tuple[Any, ...]:
    """What a slot's annotation says (its quote is the evidence, not the value)."""
    return (annotation["kind"], annotation["score"], annotation["score_high"], annotation["value"])


def _event(annotation: dict[str, Any]) -> tuple[Any, ...]:
    """An event of a set: what it says and where it was seen."""
    return (*_value(annotation), annotation["quote"], annotation["quote_turn_id"], annotation["quote_start"])


@dataclass
class Disagreement:
    """One reviewer's two values for one slot of one run: the database's and the bundle's, each new to the other."""

    run_id: str
    reviewer: str
    trial: str | None
    item: str
    step: str | None
    ours: list[dict[str, Any]]
    theirs: list[dict[str, Any]]
    single: bool

    def _side(self, given: list[dict[str, Any]]) -> str:
        if self.single:
            return _shown(max(given, key=lambda a: a["id"]))
        return f"{len(given)} {'event' if len(given) == 1 else 'events'}"

    def describe(self) -> str:
        kind = self.ours[0]["kind"]
        verb = _VERBS.get(kind, "counted")
        where = f" at step {self.step}" if self.step else ""
        trial = f" (catch trial {self.trial})" if self.trial else ""
        return (
            f"{self.reviewer} {verb} {self.item}{where} of run {self.run_id}{trial} "
            f"{self._side(self.ours)} here, {self._side(self.theirs)} in the bundle"
        )

    def as_json(self, chosen: str | None) -> dict[str, Any]:
        def side(given: list[dict[str, Any]]) -> list[dict[str, Any]]:
            keys = ("id", "kind", "score", "score_high", "value", "quote", "verification", "created")
            return [{k: a[k] for k in keys} for a in sorted(given, key=lambda a: a["id"])]

        return {
            "run": self.run_id,
            "reviewer": self.reviewer,
            "trial": self.trial,
            "item": self.item,
            "step": self.step,
            "ours": side(self.ours),
            "theirs": side(self.theirs),
            "chosen": chosen,
            "text": self.describe(),
        }


@dataclass
class Plan:
    """What merging the bundle's annotations does, worked out before anything is written."""

    removals: dict[str, str] = field(default_factory=dict)  # the database's id -> `removed`, carried over
    repeats: list[str] = field(default_factory=list)  # the bundle's ids that repeat what the database holds
    disagreements: list[Disagreement] = field(default_factory=list)

    def set_aside(self, choice: str) -> set[str]:
        """The bundle's annotations that come in removed: repeats, and their side of what was settled as ours."""
        out = set(self.repeats)
        if choice == "ours":
            out |= {a["id"] for d in self.disagreements for a in d.theirs}
        return out

    def retired(self, choice: str) -> list[str]:
        """The database's annotations removed by the merge: their side of what was settled as theirs."""
        return [a["id"] for d in self.disagreements for a in d.ours] if choice == "theirs" else []


def _counter_kinds(db: Database, run_ids: Iterable[str]) -> dict[str, dict[str, str]]:
    """run -> counter id -> its kind, from each run's scenario snapshot (a run the database lacks: none)."""
    out: dict[str, dict[str, str]] = {}
    for run_id in run_ids:
        row = db.execute(
            "SELECT s.toml, s.sha256 FROM runs r JOIN scenarios s ON s.sha256 = r.scenario_sha256 WHERE r.id = ?",
            [run_id],
        ).fetchone()
        kinds: dict[str, str] = {}
        if row is not None:
            try:
                kinds = {c.id: c.kind for c in load_text(row[0], f"<snapshot {row[1][:12]}>").counters}
            except ScenarioError:
                pass
        out[run_id] = kinds
    return out


def _slot(annotation: dict[str, Any], counters: dict[str, str]) -> tuple[tuple[Any, ...], str | None, str]:
    """(the slot's key, the step it is about, how its values combine: single, set or sum)."""
    kind, item = annotation["kind"], annotation["item"]
    if kind in ("score", "probe"):
        return (kind, item), None, "single"
    if kind == "judgment":
        return (kind, annotation["rubric"], item), None, "single"
    if kind == "verdict":
        if counters.get(item) == "yesno":
            return (kind, item), None, "single"
        step = annotation["step_id"] or annotation["turn_id"] or ""
        return (kind, item, step), annotation["step_id"], "single"
    if kind in ("note", "flag", "excerpt"):
        return (kind, item), None, "sum"
    return (kind, item), None, "set"


def plan(db: Database, annotations: list[dict[str, Any]]) -> Plan:
    """How the bundle's annotations merge with the database's annotations of the same runs."""
    out = Plan()
    if not annotations:
        return out
    theirs_by_id = {a["id"]: a for a in annotations}
    run_ids = sorted({a["run_id"] for a in annotations})
    marks = ", ".join("?" for _ in run_ids)
    cursor = db.execute(f"SELECT * FROM annotations WHERE run_id IN ({marks})", run_ids)
    names = [d[0] for d in cursor.description]
    ours_by_id = {row[0]: dict(zip(names, row)) for row in cursor.fetchall()}
    for annotation_id, theirs in theirs_by_id.items():
        ours = ours_by_id.get(annotation_id)
        if ours is not None and theirs["removed"] is not None and ours["removed"] is None:
            out.removals[annotation_id] = theirs["removed"]
    counters = _counter_kinds(db, run_ids)
    groups: dict[tuple[Any, ...], tuple[list[dict[str, Any]], list[dict[str, Any]], str | None, str]] = {}

    def group(annotation: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None, str]:
        slot, step, how = _slot(annotation, counters[annotation["run_id"]])
        key = (annotation["run_id"], annotation["reviewer"], annotation["trial"], slot)
        return groups.setdefault(key, ([], [], step, how))

    for annotation_id, ours in ours_by_id.items():
        if annotation_id not in theirs_by_id and ours["removed"] is None:
            group(ours)[0].append(ours)
    for annotation_id, theirs in theirs_by_id.items():
        if annotation_id not in ours_by_id and theirs["removed"] is None:
            group(theirs)[1].append(theirs)
    for (run_id, reviewer, trial, _), (ours_new, theirs_new, step, how) in sorted(
        groups.items(), key=lambda g: tuple(str(k) for k in g[0])
    ):
        if not ours_new or not theirs_new:
            continue  # only one side said something new here: it stands
        if how == "sum":
            have = {_event(a) for a in ours_new}
            out.repeats += [a["id"] for a in theirs_new if _event(a) in have]
            continue
        if how == "single":
            same = _value(max(ours_new, key=lambda a: a["id"])) == _value(max(theirs_new, key=lambda a: a["id"]))
        else:
            same = sorted(map(_event, ours_new), key=repr) == sorted(map(_event, theirs_new), key=repr)
        if same:
            out.repeats += [a["id"] for a in theirs_new]
        else:
            item = ours_new[0]["item"]
            out.disagreements.append(
                Disagreement(run_id, reviewer, trial, item, step, ours_new, theirs_new, how == "single")
            )
    return out


def write(db: Database, merge_plan: Plan, choice: str, at: str) -> None:
    """The database's side of the plan (in the caller's transaction): removals carried over, its side of what was
    settled as theirs removed. The bundle's side is written as its rows are inserted (`Plan.set_aside`)."""
    for annotation_id, removed in merge_plan.removals.items():
        db.execute("UPDATE annotations SET removed = ? WHERE id = ? AND removed IS NULL", [removed, annotation_id])
    for annotation_id in merge_plan.retired(choice):
        db.execute("UPDATE annotations SET removed = ? WHERE id = ? AND removed IS NULL", [at, annotation_id])


# -- what a merge says -------------------------------------------------------------------------


def describe_conflict(conflict: dict[str, Any]) -> str:
    """table[row] (its key): the columns that differ."""
    key = ", ".join(str(k) for k in conflict["key"])
    return f"{conflict['table']}[{conflict['row']}] ({key}): {', '.join(conflict['columns'])}"


def refusal(found: list[dict[str, Any]], disagreements: list[Disagreement]) -> str:
    """Why a bundle was refused: every conflict, each with both sides."""
    parts = []
    if found:
        parts.append(f"{len(found)} rows say otherwise than the database (table[row] (id): the columns that differ)")
    if disagreements:
        n = len(disagreements)
        parts.append(f"{n} {'item' if n == 1 else 'items'} a reviewer gave otherwise here than in the bundle")
    lines = [d.describe() for d in disagreements] + [describe_conflict(c) for c in found]
    listed = "\n  ".join(lines[:CONFLICTS_SHOWN])
    more = f"\n  … and {len(lines) - CONFLICTS_SHOWN} more" if len(lines) > CONFLICTS_SHOWN else ""
    total = len(lines)
    return (
        f"{total} {'conflict' if total == 1 else 'conflicts'}: {'; '.join(parts)}; nothing was imported "
        f"(--on-conflict theirs takes the bundle's side, ours keeps the database's):\n  {listed}{more}"
    )


def describe_import(path: str, result: dict[str, Any]) -> str:
    """What an import did, for a person: rows added, the history carried over, every conflict and the side taken."""
    added = ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in result["added"].items())
    said = [f"{path}: added {added}"]
    if result["removals"]:
        n = result["removals"]
        said.append(f"{n} {'annotation' if n == 1 else 'annotations'} removed in the bundle removed here too")
    if result["set_aside"]:
        said.append(f"{result['set_aside']} of its annotations repeat this database's and were set aside")
    if result.get("skipped"):
        said.append(f"skipped {len(result['skipped'])} rows that say otherwise than the database (it keeps its own)")
    if result.get("replaced"):
        said.append(f"took the bundle's side of {len(result['replaced'])} rows that said otherwise than the database")
    lines = [
        f"{c['text']}: {'the bundle' if c['chosen'] == 'theirs' else 'this database'}'s stands ({c['chosen']})"
        for c in result["conflicts"]
    ]
    lines += [describe_conflict(c) for c in result.get("skipped", []) + result.get("replaced", [])]
    return "; ".join(said) + "".join(f"\n  {line}" for line in lines)
