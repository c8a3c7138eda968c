"""One answer from the parts of a long run, each judged on its share of the steps."""

from __future__ import annotations

from sieve.engine.judge.exchange import Answer, Checked
from sieve.engine.judge.packet import Part, Question
from sieve.engine.judge.reply import Claim
from sieve.store.scoring.scorecard import value_text


def combine(q: Question, answers: list[tuple[Part, Answer]]) -> Answer:
    """One answer from the parts of a long run that each judged a whole-run question on their share.

    A score: the lowest with evidence (else the lowest) stands, since a flaw in
    any part is a flaw of the run; counted events: all of them; a chain: the
    longest; yes/no: the first value ("yes") wherever a part shows it; a mark:
    the first with evidence.
    """
    shares = ", ".join(
        f"{_steps_text(part)}: {_value_text(answer.claim)}" for part, answer in answers if answer is not None
    )
    note = f"judged in {len(answers)} parts, not as one ({shares})"
    given = [a for _, a in answers]
    backed = [a for a in given if any(c.is_evidence for c in a.checks)] or given
    if q.kind == "score":
        chosen = min(backed, key=lambda a: a.claim.value[0])
        return Answer(chosen.claim, chosen.checks, note + "; the lowest stands")
    if q.kind == "count":
        checks: list[Checked] = []
        seen = set()
        for a in given:
            for c in a.checks:
                where = (c.verified.quote.turn_id, c.verified.quote.start) if c.verified and c.is_evidence else id(c)
                if where not in seen:
                    seen.add(where)
                    checks.append(c)
        return Answer(Claim(q, None, tuple(c.evidence for c in checks)), checks, note)
    if q.kind == "chain":
        chosen = max(backed, key=lambda a: a.claim.value)
        return Answer(chosen.claim, chosen.checks, note + "; the longest stands")
    if q.kind == "yesno" and q.values:
        shown = [a for a in backed if a.claim.value == q.values[0]]
        chosen = shown[0] if shown else given[-1]
        return Answer(chosen.claim, chosen.checks, note)
    chosen = backed[0]
    return Answer(chosen.claim, chosen.checks, note)


def _steps_text(part: Part) -> str:
    if part.steps is None:
        return "all steps"
    return part.steps[0] if len(part.steps) == 1 else f"{part.steps[0]}–{part.steps[-1]}"


def _value_text(claim: Claim) -> str:
    if claim.question.kind == "score":
        low, high = claim.value
        return value_text({"kind": "score", "score": low, "score_high": high}, decimals=True)
    if claim.question.kind == "count":
        return f"{len(claim.evidence)} events"
    return str(claim.value)
