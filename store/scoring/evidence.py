"""Evidence: every quote verified before it is stored, and the scenario's rules about what may back a score.

Review, card imports, the judge and accepted suggestions all store annotations
through `annotate`, so a quote is checked the same way whoever gave it.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote, Verified
from sieve.store.scoring import quotes
from sieve.store.scoring.runview import RunView


class EvidenceRefused(SieveUsageError):
    """A quote that the scenario says cannot back this item (an excluded step, a probe asked elsewhere)."""


def verify(db: Database, run_id: str, quote: Quote, transcript: quotes.Transcript | None = None) -> Verified:
    """Check a quote: at the place it claims if it has one, else wherever it stands in the run."""
    if quote.turn_id and quote.start is not None:
        row = db.execute("SELECT text, role FROM turns WHERE id = ?", [quote.turn_id]).fetchone()
        if row is not None and quote.text and row[0][quote.start : quote.end] == quote.text:
            return Verified(quote, "exact" if row[1] == "assistant" else "player", 1.0)
    transcript = transcript or quotes.Transcript(record.chosen_turns(db, run_id))
    found = transcript.locate(quote.text, prefer_turn=quote.turn_id or None)
    if not found.found:
        return Verified(quote, "absent", None)
    return Verified(Quote(found.turn_id, found.start, found.end, quote.text), found.verdict, found.similarity)


def problem(scenario: Scenario, item_id: str, turn: dict[str, Any] | None, step_of: dict[str, str]) -> str | None:
    """Why a quote from `turn` cannot back `item_id`, or None.

    `exclude` names step kinds whose replies are no evidence for an item (the story
    benchmark's filler action); a probe is marked from the reply to the step that asks it.
    """
    if turn is None:
        return None
    step_id = step_of.get(turn["id"])
    try:
        step = scenario.step(step_id) if step_id else None
    except KeyError:
        step = None  # a live or explored turn: no step kind to exclude
    try:
        _, item = scenario.item(item_id)
    except KeyError:
        item = None
    if item is not None and step is not None and step.kind in item.exclude:
        return f"{item_id} is not scored on {step.kind} steps: choose a quote from another turn"
    probe = next((p for p in scenario.probes if p.id == item_id), None)
    if probe is not None and probe.asked and step_id not in probe.asked:
        return f"{item_id} is asked at {', '.join(probe.asked)}: mark it from the reply to that step"
    return None


def annotate(
    db: Database,
    run_id: str,
    *,
    quote: Quote | None = None,
    view: RunView | None = None,
    transcript: quotes.Transcript | None = None,
    **fields: Any,
) -> str:
    """Verify the quote, check it may back the item, and store the annotation; returns its id.

    `fields` are those of `annotations.add`. EvidenceRefused when the scenario's
    rules forbid the quote for this item.
    """
    verified = None
    if quote is not None:
        view = view or RunView.open(db, run_id)
        scenario, step_of = view.scenario, view.steps
        verified = verify(db, run_id, quote, transcript)
        turn = None
        if verified.quote.turn_id:
            row = db.execute("SELECT id, role FROM turns WHERE id = ?", [verified.quote.turn_id]).fetchone()
            turn = {"id": row[0], "role": row[1]} if row else None
        reason = problem(scenario, fields["item"], turn, step_of)
        if reason:
            raise EvidenceRefused(reason)
    return notes.add(db, run_id, quote=verified, **fields)


def reverify(db: Database, run_id: str) -> dict[str, int]:
    """Verify every quote of the run's annotations again; returns how many got each verdict."""
    counts: dict[str, int] = {}
    transcript = quotes.Transcript(record.chosen_turns(db, run_id))
    rows = db.execute(
        "SELECT id, quote, quote_turn_id FROM annotations WHERE run_id = ? AND quote IS NOT NULL", [run_id]
    ).fetchall()
    with db.atomic():
        for annotation_id, text, turn_id in rows:
            found = transcript.locate(text, prefer_turn=turn_id)
            notes.set_verification(
                db,
                annotation_id,
                Verified(Quote(found.turn_id, found.start, found.end, text), found.verdict, found.similarity),
            )
            counts[found.verdict] = counts.get(found.verdict, 0) + 1
    return counts
