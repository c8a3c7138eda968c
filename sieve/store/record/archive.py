"""Runs put out of sight and runs removed: archiving (kept whole, restorable), deleting with everything said
about them, and the run a Play screen opened but never sent anything in.

Lists, results, ratings, the report, the field and searches leave archived runs out (runs.not_archived);
naming one by its id still opens it. A run other reviewers scored is theirs too:
archiving or deleting it is refused unless forced (the command says so).
"""

from __future__ import annotations

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.store.record.runs import now


def archive(db: Database, run_id: str, reviewer: str) -> bool:
    """Put the run out of sight; False if it already was."""
    with db.atomic():
        return bool(
            db.execute(
                "INSERT OR IGNORE INTO archived_runs (run_id, reviewer, at) VALUES (?, ?, ?)", [run_id, reviewer, now()]
            ).rowcount
        )


def unarchive(db: Database, run_id: str) -> bool:
    """Bring an archived run back into lists and results; False if it was not archived."""
    with db.atomic():
        return bool(db.execute("DELETE FROM archived_runs WHERE run_id = ?", [run_id]).rowcount)


def other_reviewers(db: Database, run_id: str, reviewer: str) -> list[str]:
    """Who else has scored the run (annotations in force, head-to-head verdicts on it): people and judges."""
    rows = db.execute(
        """
        SELECT reviewer FROM annotations WHERE run_id = ? AND removed IS NULL AND reviewer != ?
        UNION SELECT reviewer FROM judgments WHERE (run_a = ? OR run_b = ?) AND reviewer != ?
        ORDER BY 1
        """,
        [run_id, reviewer, run_id, run_id, reviewer],
    ).fetchall()
    return [r[0] for r in rows]


def what_goes(db: Database, run_id: str) -> dict[str, int]:
    """What deleting the run removes with it, counted: turns, annotations (in force), suggestions, judgings."""

    def count(sql: str) -> int:
        return int(db.execute(sql, [run_id]).fetchone()[0])

    return {
        "turns": count("SELECT COUNT(*) FROM turns WHERE run_id = ?"),
        "annotations": count("SELECT COUNT(*) FROM annotations WHERE run_id = ? AND removed IS NULL"),
        "suggestions": count("SELECT COUNT(*) FROM suggestions WHERE run_id = ?"),
        "judgings": count("SELECT COUNT(*) FROM judgings WHERE run_id = ?"),
    }


def delete_run(db: Database, run_id: str) -> None:
    """Remove the run, its turns, and everything said about it (annotations and their history, suggestions
    and decisions, judgings, catch trials), in one transaction.

    SieveUsageError, and nothing removed, for a run that others stand on: a branch taken from
    it, or a pair of a head-to-head queue (its verdicts are about two runs).
    """
    branches = [r[0] for r in db.execute("SELECT id FROM runs WHERE parent_run = ? ORDER BY id", [run_id])]
    if branches:
        raise SieveUsageError(
            f"run {run_id} has branches taken from it ({', '.join(branches)}): delete them first, or archive it"
        )
    queues = [r[0] for r in db.execute("SELECT DISTINCT queue FROM pairs WHERE ? IN (run_a, run_b)", [run_id])]
    judged = db.execute("SELECT COUNT(*) FROM judgments WHERE ? IN (run_a, run_b)", [run_id]).fetchone()[0]
    if queues or judged:
        where = f"the head-to-head queue {', '.join(queues)}" if queues else f"{judged} head-to-head verdicts"
        raise SieveUsageError(
            f"run {run_id} is in {where}: pairs and verdicts are about two runs, and would go with it; "
            "archive it instead"
        )
    mine = "SELECT id FROM annotations WHERE run_id = ?"
    with db.atomic():
        db.execute(
            f"DELETE FROM suggestion_decisions WHERE annotation_id IN ({mine}) "
            "OR suggestion_id IN (SELECT id FROM suggestions WHERE run_id = ?)",
            [run_id, run_id],
        )
        db.execute("DELETE FROM suggestions WHERE run_id = ?", [run_id])
        db.execute(f"DELETE FROM annotation_history WHERE annotation_id IN ({mine})", [run_id])
        # An annotation may supersede another of the run: unlinked first, so their order does not matter.
        db.execute("UPDATE annotations SET supersedes = NULL WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM annotations WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM judgings WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM runs WHERE id = ?", [run_id])  # its turns, catch trials, queue sides go with it


def unplayed(db: Database, run_id: str) -> bool:
    """Whether nothing was ever sent in the run (at most its system prompt): no player message, no reply."""
    return (
        db.execute("SELECT 1 FROM turns WHERE run_id = ? AND role != 'system' LIMIT 1", [run_id]).fetchone() is None
        and db.execute("SELECT 1 FROM annotations WHERE run_id = ? LIMIT 1", [run_id]).fetchone() is None
        and db.execute("SELECT 1 FROM runs WHERE parent_run = ? LIMIT 1", [run_id]).fetchone() is None
    )


def discard_if_unplayed(db: Database, run_id: str) -> bool:
    """Remove a run nothing was sent in (a Play screen left before its first send); True if it was removed."""
    with db.atomic():
        if db.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone() is None or not unplayed(db, run_id):
            return False
        db.execute("DELETE FROM runs WHERE id = ?", [run_id])
    return True
