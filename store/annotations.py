"""Annotations: scores, counted events, verdicts and notes, each with its quote, and their undo history.

Nothing is deleted: removing sets `removed`, and `annotation_history` records
every add and remove in order, grouped by gesture, which is what undo and redo
walk (per run and reviewer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from . import quotes, turns
from .ids import new_id
from .runs import now

KINDS = ("score", "count", "verdict", "note", "flag", "deduction", "judgment", "probe")


@dataclass(frozen=True)
class Quote:
    """A quote and, where known, the span of one turn's original text it claims: [start, end)."""

    turn_id: str | None
    start: int | None
    end: int | None
    text: str


def verify_quote(db: Database, run_id: str, quote: Quote) -> tuple[Quote, str, float | None]:
    """Check a quote: at the place it claims if it has one, else wherever it stands in the run.

    Returns the quote with its location as found, the verification (exact, fuzzy,
    absent, player) and the similarity.
    """
    if quote.turn_id:
        row = db.execute("SELECT text, role FROM turns WHERE id = ?", [quote.turn_id]).fetchone()
        if row is not None and quote.text and row[0][quote.start : quote.end] == quote.text:
            return quote, ("exact" if row[1] == "assistant" else "player"), 1.0
    found = quotes.verify(turns.chosen_turns(db, run_id), quote.text, prefer_turn=quote.turn_id or None)
    if not found.found:
        return quote, "absent", None
    located = Quote(found.turn_id, found.start, found.end, quote.text)
    return located, found.verdict, found.similarity


def reverify(db: Database, run_id: str) -> dict[str, int]:
    """Verify every quote of the run's annotations again; returns how many got each verdict."""
    counts: dict[str, int] = {}
    transcript = quotes.Transcript(turns.chosen_turns(db, run_id))
    rows = db.execute("SELECT id, quote, quote_turn_id FROM annotations WHERE run_id = ? AND quote IS NOT NULL", [run_id]).fetchall()
    with db.atomic():
        for annotation_id, text, turn_id in rows:
            found = transcript.locate(text, prefer_turn=turn_id)
            db.execute(
                "UPDATE annotations SET verification = ?, similarity = ?, quote_turn_id = COALESCE(?, quote_turn_id), "
                "quote_start = COALESCE(?, quote_start), quote_end = COALESCE(?, quote_end) WHERE id = ?",
                [found.verdict, found.similarity, found.turn_id, found.start, found.end, annotation_id],
            )
            counts[found.verdict] = counts.get(found.verdict, 0) + 1
    return counts


def _record(db: Database, annotation_id: str, run_id: str, reviewer: str, action: str, group: str) -> None:
    db.execute(
        "INSERT INTO annotation_history (annotation_id, run_id, reviewer, action, grp, at) VALUES (?, ?, ?, ?, ?, ?)",
        [annotation_id, run_id, reviewer, action, group, now()],
    )


def _forget_redo(db: Database, run_id: str, reviewer: str) -> None:
    # A new gesture after an undo makes the undone ones unreachable, as in any editor.
    db.execute("UPDATE annotation_history SET undone = 2 WHERE run_id = ? AND reviewer = ? AND undone = 1", [run_id, reviewer])


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
    quote: Quote | None = None,
    note: str | None = None,
    blind: bool = False,
    turn_id: str | None = None,
    replaces: str | None = None,
    verified: tuple[str, float | None] | None = None,
) -> str:
    """Store an annotation (verifying its quote); with `replaces`, as an edit of that one.

    `verified` is a verification already made (as by a card import that checked
    many quotes against one normalised transcript).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown annotation kind {kind!r}")
    verification, similarity = verified if verified else (None, None)
    if quote is not None and verified is None:
        quote, verification, similarity = verify_quote(db, run_id, quote)
    annotation_id = new_id()
    group = new_id()
    with db.atomic():
        _forget_redo(db, run_id, reviewer)
        if replaces:
            _set_removed(db, replaces, True)
            _record(db, replaces, run_id, reviewer, "remove", group)
        db.execute(
            """
            INSERT INTO annotations (id, run_id, turn_id, reviewer, rubric, item, kind, score, score_high, value,
                quote, quote_turn_id, quote_start, quote_end, verification, similarity, note, blind, supersedes, created)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                annotation_id, run_id, turn_id or (quote.turn_id if quote else None), reviewer, rubric, item, kind,
                score, score_high, value,
                quote.text if quote else None, quote.turn_id if quote else None,
                quote.start if quote else None, quote.end if quote else None,
                verification, similarity, note, int(blind), replaces, now(),
            ],
        )  # fmt: skip
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


def undo(db: Database, run_id: str, reviewer: str) -> list[str]:
    """Undo the reviewer's last gesture on this run; returns the annotation ids it touched."""
    row = db.execute(
        "SELECT grp FROM annotation_history WHERE run_id = ? AND reviewer = ? AND undone = 0 ORDER BY seq DESC LIMIT 1",
        [run_id, reviewer],
    ).fetchone()
    if row is None:
        return []
    return _flip(db, run_id, reviewer, row[0], undo=True)


def redo(db: Database, run_id: str, reviewer: str) -> list[str]:
    """Redo the gesture undone last; returns the annotation ids it touched."""
    row = db.execute(
        "SELECT grp FROM annotation_history WHERE run_id = ? AND reviewer = ? AND undone = 1 ORDER BY seq LIMIT 1",
        [run_id, reviewer],
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


def active(db: Database, run_id: str, reviewer: str | None = None) -> list[dict[str, Any]]:
    """The annotations in force (not removed), oldest first."""
    sql = "SELECT * FROM annotations WHERE run_id = ? AND removed IS NULL"
    params: list[Any] = [run_id]
    if reviewer is not None:
        sql += " AND reviewer = ?"
        params.append(reviewer)
    cursor = db.execute(sql + " ORDER BY id", params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
