"""Annotations: scores, counted events, verdicts and notes, each with its quote, and their undo history.

Nothing is deleted: removing sets `removed`, and `annotation_history` records
every add and remove in order, grouped by gesture, which is what undo and redo
walk (per run and reviewer).

A catch trial's annotations (the run scored again, later, under a new code)
carry the trial's id in `trial`; everything here reads a reviewer's first card
unless a trial is named, so a catch trial never changes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.store.record.ids import new_id
from sieve.store.record.rows import Annotation
from sieve.store.record.runs import now

# An excerpt marks a passage for publication (the report's excerpts page), with its caption as the note: it scores nothing.
KINDS = ("score", "count", "verdict", "note", "flag", "deduction", "judgment", "probe", "excerpt")
EXCERPT = "excerpt"  # the kind, and the item every excerpt is stored under


@dataclass(frozen=True)
class Quote:
    """A quote and, where known, the span of one turn's original text it claims: [start, end)."""

    turn_id: str | None
    start: int | None
    end: int | None
    text: str


# The verdicts a quote may have that make it evidence (of migrations.QUOTE_VERDICTS): found in the model's
# own words, as written or nearly, and long enough to point at a passage. An altered quote (its negation
# flipped), a short one, the player's words or an absent one are not.
EVIDENCE = ("exact", "fuzzy")


# The verdicts of a quote the run does not hold as written (`sieve verify` exits 1 on any).
NOT_AS_WRITTEN = ("absent", "altered")

# What each verdict says, in words (the report's provenance, the Markdown export's capitals): one place for them.
VERDICT_WORDS = {
    "exact": "found exactly",
    "fuzzy": "found nearly",
    "absent": "not found",
    "player": "the player's words",
    "altered": "a negation flipped",
    "short": "too short",
    "ambiguous": "in several places",
}


def is_evidence(verdict: str | None) -> bool:
    """Whether a quote with this verdict backs a score (the one test every reader of a verdict asks)."""
    return verdict in EVIDENCE


# The reviewer name every model judge's is made from (judge:MODEL), and the source of a judging's annotations.
JUDGE_PREFIX = "judge:"
JUDGING_SOURCE = "judging "


def by_judge(annotation: Mapping[str, Any]) -> bool:
    """Whether a model judge made the annotation: a reviewer named judge:..., or stored by a judging (any name).

    A judge's answer that its quote does not back is `unsupported` (store.scoring.scorecard): shown,
    kept, never counted. A person's own choice counts, with low confidence.
    """
    return str(annotation.get("reviewer") or "").startswith(JUDGE_PREFIX) or str(
        annotation.get("source") or ""
    ).startswith(JUDGING_SOURCE)


@dataclass(frozen=True)
class Verified:
    """What the verifier said of a quote: where it stands, and how (one of migrations.QUOTE_VERDICTS)."""

    quote: Quote
    verdict: str
    similarity: float | None = None


def set_verification(db: Database, annotation_id: str, found: Verified, off_step: bool = False) -> None:
    """Store a new verdict on an annotation's quote (its text is never changed), and whether it is off its step.

    A quote found in one place is placed there; an ambiguous one (several places, none claimed) keeps
    the place it claimed, if any."""
    q = found.quote
    db.execute(
        "UPDATE annotations SET verification = ?, similarity = ?, quote_turn_id = COALESCE(?, quote_turn_id), "
        "quote_start = COALESCE(?, quote_start), quote_end = COALESCE(?, quote_end), off_step = ? WHERE id = ?",
        [found.verdict, found.similarity, q.turn_id, q.start, q.end, int(off_step), annotation_id],
    )


def _record(db: Database, annotation_id: str, run_id: str, reviewer: str, action: str, group: str) -> None:
    db.execute(
        "INSERT INTO annotation_history (annotation_id, run_id, reviewer, action, grp, at) VALUES (?, ?, ?, ?, ?, ?)",
        [annotation_id, run_id, reviewer, action, group, now()],
    )


def _forget_redo(db: Database, run_id: str, reviewer: str) -> None:
    # A new gesture after an undo makes the undone ones unreachable, as in any editor.
    db.execute(
        "UPDATE annotation_history SET undone = 2 WHERE run_id = ? AND reviewer = ? AND undone = 1", [run_id, reviewer]
    )


def add(
    db: Database,
    run_id: str,
    *,
    reviewer: str,
    item: str,
    kind: str,
    rubric: str | None = None,
    score: float | None = None,
    score_high: float | None = None,
    value: str | None = None,
    quote: Verified | None = None,
    note: str | None = None,
    blind: bool = False,
    turn_id: str | None = None,
    step_id: str | None = None,
    confidence: str | None = None,
    seconds: float | None = None,
    source: str | None = None,
    replaces: str | Sequence[str] | None = None,
    trial: str | None = None,
    off_step: bool = False,
) -> str:
    """Store an annotation with its quote as verified (sieve.store.scoring.evidence verifies, and says
    whether it stands off the item's steps: `off_step`);
    with `replaces` (an id, or several), as an edit of those (one gesture for undo). The first
    one replaced is the one it supersedes."""
    if kind not in KINDS:
        raise SieveUsageError(f"unknown annotation kind {kind!r}")
    q = quote.quote if quote else None
    replaced = [replaces] if isinstance(replaces, str) else list(dict.fromkeys(replaces or ()))
    annotation_id = new_id()
    group = new_id()
    with db.atomic():
        _forget_redo(db, run_id, reviewer)
        for old in replaced:
            _set_removed(db, old, True)
            _record(db, old, run_id, reviewer, "remove", group)
        db.execute(
            """
            INSERT INTO annotations (id, run_id, turn_id, reviewer, rubric, item, kind, score, score_high, value,
                quote, quote_turn_id, quote_start, quote_end, verification, similarity, note, blind, supersedes, created,
                step_id, confidence, seconds, source, trial, off_step)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                annotation_id,
                run_id,
                turn_id or (q.turn_id if q else None),
                reviewer,
                rubric,
                item,
                kind,
                score,
                score_high,
                value,
                q.text if q else None,
                q.turn_id if q else None,
                q.start if q else None,
                q.end if q else None,
                quote.verdict if quote else None,
                quote.similarity if quote else None,
                note,
                int(blind),
                replaced[0] if replaced else None,
                now(),
                step_id,
                confidence,
                seconds,
                source,
                trial,
                int(off_step),
            ],
        )
        _record(db, annotation_id, run_id, reviewer, "add", group)
    return annotation_id


def remove(db: Database, annotation_id: str, reviewer: str) -> None:
    run_id = db.execute("SELECT run_id FROM annotations WHERE id = ?", [annotation_id]).fetchone()[0]
    with db.atomic():
        _forget_redo(db, run_id, reviewer)
        _set_removed(db, annotation_id, True)
        _record(db, annotation_id, run_id, reviewer, "remove", new_id())


def _set_removed(db: Database, annotation_id: str, removed: bool) -> None:
    db.execute("UPDATE annotations SET removed = ? WHERE id = ?", [now() if removed else None, annotation_id])


# The default of undo and redo: the reviewer's gestures since their latest catch
# trial of the run began (every gesture when there is none), so that undoing in a
# catch trial never reaches back into the first card.
SINCE_LAST_TRIAL = object()


def _gestures(db: Database, run_id: str, reviewer: str, trial: object) -> tuple[str, list[Any]]:
    """The SQL condition (on history row h) and its parameters for the gestures undo and redo may touch."""
    if trial is SINCE_LAST_TRIAL:
        began = db.execute(
            "SELECT MAX(created) FROM catch_trials WHERE run_id = ? AND reviewer = ?", [run_id, reviewer]
        ).fetchone()[0]
        return ("h.at >= ?", [began]) if began else ("1", [])
    if trial is None:
        return ("(SELECT trial FROM annotations a WHERE a.id = h.annotation_id) IS NULL", [])
    return ("(SELECT trial FROM annotations a WHERE a.id = h.annotation_id) = ?", [trial])


def undo(db: Database, run_id: str, reviewer: str, trial: object = SINCE_LAST_TRIAL) -> list[str]:
    """Undo the reviewer's last gesture on this run (in `trial`: None for the first card, or a catch
    trial's id); returns the annotation ids it touched."""
    where, params = _gestures(db, run_id, reviewer, trial)
    row = db.execute(
        f"SELECT grp FROM annotation_history h WHERE run_id = ? AND reviewer = ? AND undone = 0 AND {where} "
        "ORDER BY seq DESC LIMIT 1",
        [run_id, reviewer, *params],
    ).fetchone()
    if row is None:
        return []
    return _flip(db, run_id, reviewer, row[0], undo=True)


def redo(db: Database, run_id: str, reviewer: str, trial: object = SINCE_LAST_TRIAL) -> list[str]:
    """Redo the gesture undone last (in `trial`, as for undo); returns the annotation ids it touched."""
    where, params = _gestures(db, run_id, reviewer, trial)
    row = db.execute(
        f"SELECT grp FROM annotation_history h WHERE run_id = ? AND reviewer = ? AND undone = 1 AND {where} "
        "ORDER BY seq LIMIT 1",
        [run_id, reviewer, *params],
    ).fetchone()
    if row is None:
        return []
    return _flip(db, run_id, reviewer, row[0], undo=False)


def _flip(db: Database, run_id: str, reviewer: str, group: str, *, undo: bool) -> list[str]:
    rows = db.execute(
        "SELECT seq, annotation_id, action FROM annotation_history WHERE grp = ? ORDER BY seq", [group]
    ).fetchall()
    with db.atomic():
        for seq, annotation_id, action in reversed(rows) if undo else rows:
            # Undoing an add removes the annotation; undoing a remove brings it back.
            _set_removed(db, annotation_id, (action == "add") == undo)
            db.execute("UPDATE annotation_history SET undone = ? WHERE seq = ?", [1 if undo else 0, seq])
    return [r[1] for r in rows]


def active(db: Database, run_id: str, reviewer: str | None = None, trial: str | None = None) -> list[Annotation]:
    """The annotations in force (not removed), oldest first: the first card's, or a catch trial's."""
    sql = "SELECT * FROM annotations WHERE run_id = ? AND removed IS NULL"
    params: list[Any] = [run_id]
    if reviewer is not None:
        sql += " AND reviewer = ?"
        params.append(reviewer)
    if trial is None:
        sql += " AND trial IS NULL"
    else:
        sql += " AND trial = ?"
        params.append(trial)
    cursor = db.execute(sql + " ORDER BY id", params)
    names = [d[0] for d in cursor.description]
    return [cast(Annotation, dict(zip(names, row))) for row in cursor.fetchall()]


def annotations_by_run(db: Database, reviewer: str) -> dict[str, list[Annotation]]:
    """One reviewer's annotations in force on every run (their first cards), by run, from one query."""
    return _by_run(db, "reviewer = ? AND trial IS NULL", [reviewer])


def trial_annotations(db: Database, reviewer: str | None = None) -> dict[tuple[str, str], list[Annotation]]:
    """The annotations in force of every catch trial (of one reviewer, if named), by (run, trial)."""
    where, params = (
        ("trial IS NOT NULL", []) if reviewer is None else ("trial IS NOT NULL AND reviewer = ?", [reviewer])
    )
    out: dict[tuple[str, str], list[Annotation]] = {}
    for run_id, given in _by_run(db, where, params).items():
        for annotation in given:
            trial = annotation["trial"]
            if trial is not None:  # always, by the query
                out.setdefault((run_id, trial), []).append(annotation)
    return out


def _by_run(db: Database, where: str, params: list[Any]) -> dict[str, list[Annotation]]:
    cursor = db.execute(f"SELECT * FROM annotations WHERE {where} AND removed IS NULL ORDER BY id", params)
    names = [d[0] for d in cursor.description]
    out: dict[str, list[Annotation]] = {}
    for row in cursor.fetchall():
        annotation = cast(Annotation, dict(zip(names, row)))
        out.setdefault(annotation["run_id"], []).append(annotation)
    return out


def by_ids(db: Database, ids: Sequence[str]) -> list[Annotation]:
    """These annotations, removed or not, in the order of `ids` (what an undo touched, to name it)."""
    if not ids:
        return []
    cursor = db.execute(f"SELECT * FROM annotations WHERE id IN ({', '.join('?' for _ in ids)})", list(ids))
    names = [d[0] for d in cursor.description]
    found = {row[names.index("id")]: cast(Annotation, dict(zip(names, row))) for row in cursor.fetchall()}
    return [found[i] for i in ids if i in found]
