"""Scores given in a test the way a reviewer gives them: through the evidence rules, as Review stores one."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView


def score(
    db: Database,
    run: str,
    item: str,
    value: float,
    quote: Quote | str | None = None,
    *,
    reviewer: str = "ada",
    **fields,
) -> str:
    """Score `item` of the run's card with `value`; returns the annotation's id.

    The rubric is the item's own in the run's scenario (a KeyError names an item it does not
    have). `quote` is verified against the transcript: a Quote with its turn and span, or text
    alone, which the verifier looks for. `fields` are the rest of `annotations.add` (blind,
    trial, seconds, note, ...). EvidenceRefused when the scenario's rules refuse the quote.
    """
    view = RunView.open(db, run)
    rubric, _ = view.scenario.item(item)
    if isinstance(quote, str):
        quote = Quote(None, None, None, quote)
    given: dict[str, Any] = {"reviewer": reviewer, "item": item, "rubric": rubric.id, "kind": "score", "score": value}
    return evidence.annotate(db, run, quote=quote, view=view, **given, **fields)


def backed(db: Database, run: str, item: str) -> Quote:
    """A quote that backs `item` as a judge's score must be backed: the whole reply to the item's first step
    (to the last reply for an item of the whole run), with its place."""
    view = RunView.open(db, run)
    steps = evidence.judged_on(view.scenario, item)
    replies = view.replies_to(steps[0]) if steps else view.replies()
    reply = replies[-1]
    return Quote(reply["id"], 0, len(reply["text"]), reply["text"])
