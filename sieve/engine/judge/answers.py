"""What a judge's answer becomes: the annotations stored for it, and the counted events proposed to a person."""

from __future__ import annotations

from typing import Any

from sieve.engine.judge.exchange import Answer, Checked, refusal_note
from sieve.store.scoring.runview import RunView


def suggested(view: RunView, answer: Answer, reviewer: str, model: str) -> list[dict[str, Any]]:
    """The judge's counted events, where no detector covers the counter, wait for a person as suggestions.

    Only an event whose quote was found in the model's words is proposed; like a
    detector's, it counts for nothing until someone accepts it (the judge's own card
    keeps it either way).
    """
    q = answer.claim.question
    if q.kind not in ("count", "chain"):
        return []
    if any(use.item == q.target for use in view.scenario.detector_uses()):
        return []  # a detector proposes this counter's events already
    entries = []
    for kind, fields, check in stored_as(view, answer):
        if check is None or check.verified is None or not check.is_evidence:
            continue
        quote = check.verified.quote
        turn = next((t for t in view.turns if t["id"] == quote.turn_id), None)
        if turn is None:
            continue
        entries.append(
            {
                "item": q.target,
                "kind": kind,
                "score": fields.get("score"),
                "spans": [
                    {
                        "turn_id": quote.turn_id,
                        "turn": turn["idx"],
                        "start": quote.start,
                        "end": quote.end,
                        "text": turn["text"][quote.start : quote.end],
                    },
                ],
                "reason": fields.get("note") or f"{reviewer} counts this as {q.target}",
                "confidence": check.verified.similarity,
                "source": "judge",
                "source_name": reviewer,
                "source_version": model,
            }
        )
    return entries


def stored_as(view: RunView, answer: Answer) -> list[tuple[str, dict[str, Any], Checked | None]]:
    """(kind, fields, the quote's check) of each annotation an answer becomes."""
    q, claim = answer.claim.question, answer.claim
    notes_text = [n for n in (answer.note, *(refusal_note(c) for c in answer.checks)) if n]
    note = "; ".join(notes_text) or None
    first = answer.checks[0] if answer.checks else None
    if q.kind == "score":
        low, high = claim.value
        return [
            (
                "score",
                {
                    "rubric": q.rubric,
                    "score": low,
                    "score_high": high,
                    "note": note,
                    "step_id": step_of(view, first),
                },
                first,
            )
        ]
    if q.kind == "count":
        return [("count", {"note": refusal_note(c)}, c) for c in answer.checks]
    if q.kind == "chain":
        # A chain of one is no repetition: nothing to count.
        return [("count", {"score": float(claim.value), "note": note}, first)] if claim.value >= 2 else []
    if q.kind == "verdict":
        step = q.path[1]
        turn = view.replies_to(step)
        fields = {"value": claim.value, "step_id": step, "note": note}
        if turn and (first is None or first.verdict == "none"):
            fields["turn_id"] = turn[-1]["id"]
        return [("verdict", fields, first)]
    if q.kind == "yesno":
        return [("verdict", {"value": claim.value, "note": note}, first)]
    if q.kind == "probe":
        return [("probe", {"value": claim.value, "note": note, "step_id": step_of(view, first)}, first)]
    return [("note", {"note": claim.value, "value": "summary"}, first)]


def step_of(view: RunView, check: Checked | None) -> str | None:
    if check is None or check.verdict == "none" or check.verified is None:
        return None
    return view.steps.get(check.verified.quote.turn_id or "")
