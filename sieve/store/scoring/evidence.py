"""Evidence: every quote verified before it is stored, and the scenario's rules about what may back a score.

The one rule every annotation passes, whoever makes it: a person in Review, an
accepted suggestion, an imported card, an adopted draft, a judge, a bundle's row
(`vet_rows`). What the scenario cannot hold is refused with a message (an item it
does not have, a score off the item's scale, a count claimed by one annotation
for several events or two events resting on one quote, an item given two values
on one card, a chain longer than the run's replies, a verdict on a step its
counter does not judge, a quote from a kind of step the item excludes). What it
can hold is kept and marked: the quote's verdict (exact, fuzzy, altered, short,
ambiguous, absent, the player's words) and whether it stands off the item's steps.
Only exact and fuzzy quotes on their step are evidence (standing.has_evidence).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario, Step
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import EXCERPT, Quote, Verified
from sieve.store.scoring import quotes
from sieve.store.scoring.runview import RunView

# The verdicts of a quote that stands in one place (evidence or not): the place it stands is where it was given.
PLACED = ("exact", "fuzzy", "altered", "short", "player")
OFF_STEP = "off its step"  # how a quote (or a turn) outside its item's steps is marked, everywhere it is shown


class EvidenceRefused(SieveUsageError):
    """An annotation the scenario cannot hold (an unknown item, a score off its scale, an impossible count or
    chain, a verdict on a step its counter does not judge, a quote from an excluded kind of step)."""


def repeats(scenario: Scenario, item_id: str | None) -> bool:
    """Whether the item's quotes may be of any length and stand in many places: a repetition chain (what
    repeats may be one word, and stands in many places by nature), and an excerpt, which is evidence of nothing."""
    if item_id == EXCERPT:
        return True
    counter = next((c for c in scenario.counters if c.id == item_id), None)
    return counter is not None and (counter.kind == "chain" or counter.detector == "repetition")


def verify(
    db: Database, run_id: str, quote: Quote, transcript: quotes.Transcript | None = None, *, repeats: bool = False
) -> Verified:
    """Check a quote: at the span it claims if it has one (a person's selection places it), else wherever it
    stands in the run, placed by the turn it claims.

    `repeats`: the item takes quotes of any length that stand in many places (see `repeats`).
    """
    if quote.turn_id and quote.start is not None:
        row = db.execute("SELECT text, role FROM turns WHERE id = ?", [quote.turn_id]).fetchone()
        if row is not None and quote.text and row[0][quote.start : quote.end] == quote.text:
            verdict = "exact" if row[1] == "assistant" else "player"
            if verdict == "exact" and not repeats and quotes.too_short(quote.text):
                verdict = "short"
            return Verified(quote, verdict, 1.0)
    transcript = transcript or quotes.Transcript(record.chosen_turns(db, run_id))
    found = transcript.locate(quote.text, prefer_turn=quote.turn_id or None, repeats=repeats)
    if found.verdict == "ambiguous":
        return Verified(Quote(None, None, None, quote.text), "ambiguous", None)
    if not found.found:
        return Verified(quote, "absent", None)
    return Verified(Quote(found.turn_id, found.start, found.end, quote.text), found.verdict, found.similarity)


# -- what the scenario cannot hold -----------------------------------------------------


def impossible(scenario: Scenario, fields: Mapping[str, Any], replies: int) -> str | None:
    """Why the scenario cannot hold this annotation at all, or None.

    `fields` are those of annotations.add (item, kind, rubric, score, score_high, value);
    `replies`: how many replies the run has (a chain runs across at most that many).
    """
    kind, item_id = fields.get("kind"), str(fields.get("item") or "")
    score, high = fields.get("score"), fields.get("score_high")
    for number in (score, high):
        if number is not None and (isinstance(number, bool) or not isinstance(number, (int, float))):
            return f"{item_id}: {number!r} is not a number"
        if number is not None and not math.isfinite(number):
            return f"{item_id}: {number!r} is not a finite number"
    if kind == "score":
        try:
            rubric, item = scenario.item(item_id)
        except KeyError:
            return f"'{item_id}' is no item of {scenario.name}"
        if fields.get("rubric") not in (None, rubric.id):
            return f"{item_id} is an item of rubric {rubric.id}, not {fields['rubric']}"
        if score is None:
            return f"{item_id}: a score needs a value"
        if not item.scale.allows(score, high):
            shown = item.scale.label(score) + (f"–{item.scale.label(high)}" if high is not None else "")
            scale = "/".join(item.scale.label(v) for v in item.scale.values)
            return f"{item_id}: {shown} is not on its scale ({scale})"
        return None
    if kind in ("count", "verdict"):
        counter = next((c for c in scenario.counters if c.id == item_id), None)
        if counter is None:
            return f"'{item_id}' is no counter of {scenario.name}"
        if kind == "count":
            return _count_problem(counter.id, counter.kind, score, replies)
        if counter.kind not in ("verdict", "yesno"):
            return f"{item_id} counts events (a {counter.kind}): it takes no verdict"
        if fields.get("value") not in counter.values:
            return f"{item_id}: {fields.get('value')!r} is not one of its values ({', '.join(counter.values)})"
        return None
    if kind == "probe":
        probe = next((p for p in scenario.probes if p.id == item_id), None)
        if probe is None:
            return f"'{item_id}' is no probe of {scenario.name}"
        if fields.get("value") not in probe.marks:
            return f"{item_id}: {fields.get('value')!r} is not one of its marks ({', '.join(probe.marks)})"
        return None
    if kind == "judgment":
        written = {w.id: r.id for r in scenario.rubrics for w in r.written}
        if item_id not in written:
            return f"'{item_id}' is no written judgment of {scenario.name}"
        return None
    if kind == "deduction":
        rubric_of = next((r for r in scenario.rubrics if r.id == (fields.get("rubric") or item_id)), None)
        if rubric_of is None or rubric_of.deductions is None:
            return f"{fields.get('rubric') or item_id} takes no deductions in {scenario.name}"
        if score is None or score <= 0:
            return f"a deduction takes off a positive amount, found {score!r}"
        return None
    return None  # a note or a flag: about anything


def _count_problem(counter_id: str, kind: str, score: float | None, replies: int) -> str | None:
    if kind == "count":
        if score is None or score == 1:
            return None
        return (
            f"{counter_id} counts events one at a time, each with its own quote: "
            f"{_number(score)} events cannot be claimed by one annotation"
        )
    if kind == "chain":
        if score is None or score < 1 or score != int(score):
            return f"{counter_id}: a chain is a number of replies in a row, found {score!r}"
        if score > replies:
            return (
                f"{counter_id}: a chain of {_number(score)} replies in a run of {replies}: "
                "a chain cannot be longer than the replies it runs across"
            )
        return None
    return f"{counter_id} takes a verdict (it is a {kind} counter), not a count"


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


# -- what one card may hold once (a judge's answer, an imported card) -------------------


def events_on_one_quote(places: Sequence[tuple[str | None, int | None]], events: int) -> str | None:
    """Why a count's events cannot stand together, or None: two of them rest on one quote (the same turn and
    start), one event counted twice. `places`: where each event's quote was found, for those found in one place."""
    twice = len(places) - len(set(places))
    if not twice:
        return None
    return (
        f"{twice} of its {events} events rest on a quote another event rests on: "
        "count each event once, each with its own quote"
    )


def once_a_card(scenario: Scenario, item_id: str) -> bool:
    """Whether a card holds one value of the item at most: a rubric item, a bonus, a chain's length (a count holds
    one annotation per event)."""
    counter = next((c for c in scenario.counters if c.id == item_id), None)
    return counter is None or counter.kind != "count"


def given_twice(item_id: str, first: tuple[str, str], second: tuple[str, str]) -> str:
    """Why a card that gives an item (once_a_card) two values cannot stand, naming both: (where, value) each."""
    return (
        f"{item_id} is given twice on one card ({first[0]}: {first[1]}; {second[0]}: {second[1]}): "
        "a card holds one value an item"
    )


def refused_quote(scenario: Scenario, item_id: str, step_of: Mapping[str, str], quoted: str | None) -> str | None:
    """Why the item's `exclude` refuses a quote standing in turn `quoted`, or None: replies to a kind of step
    (the story benchmark's filler action) that the scenario says are no evidence for it."""
    try:
        item = scenario.item(item_id)[1]
    except KeyError:
        return None
    if not item.exclude or quoted is None:
        return None
    step = _step(scenario, step_of.get(quoted))
    if step is not None and step.kind in item.exclude:
        return f"{item_id} is not scored on {step.kind} steps: choose a quote from another turn"
    return None


def verdict_problem(scenario: Scenario, counter_id: str, step: str | None, played: set[str]) -> str | None:
    """Why a verdict of this counter cannot judge `step` (it is not one the counter lists), or None.

    A live run follows no script: where the run holds none of the counter's steps, the reviewer decides."""
    counter = scenario.counter(counter_id)
    if counter.kind != "verdict" or step in counter.steps or not played & set(counter.steps):
        return None
    listed = counter.steps[0] if len(counter.steps) == 1 else f"{counter.steps[0]} … {counter.steps[-1]}"
    scripted = _step(scenario, step)
    if scripted is None:
        where = "a message of its own, no scripted step" if step else "no step"
    else:
        where = scripted.id + (f", the {scripted.kind} step" if scripted.kind != "player" else "")
    return (
        f"{counter_id} is judged only on the steps it lists ({listed}, {len(counter.steps)} in all): "
        f"this turn answers {where}. Go to one of its steps (g)."
    )


# -- what the scenario holds, marked -------------------------------------------------------


def judged_on(scenario: Scenario, item_id: str, verdict_step: str | None = None) -> tuple[str, ...]:
    """The steps whose replies are evidence for the item (empty: the whole run): a rubric item's `steps`
    (unless its scenario says it takes evidence from the whole run), a probe's asked step, the step a
    verdict judges."""
    if verdict_step is not None:
        return (verdict_step,)
    try:
        item = scenario.item(item_id)[1]
    except KeyError:
        probe = next((p for p in scenario.probes if p.id == item_id), None)
        return probe.asked if probe is not None else ()
    return () if item.whole_run else item.steps


def off_step(
    scenario: Scenario, item_id: str, place: str | None, played: set[str], verdict_step: str | None = None
) -> bool:
    """Whether evidence standing at step `place` is off the steps the item is judged on.

    Only where the run holds one of those steps: a live run, or one that never reached them, follows
    no script, and there the reviewer decides."""
    steps = judged_on(scenario, item_id, verdict_step)
    if not steps or place is None or not played & set(steps):
        return False
    return place not in steps


def off_step_text(item_id: str, steps: tuple[str, ...]) -> str:
    """What is said of a quote off its step: `T1 is judged on m1: this quote is off its step`."""
    return f"{item_id} is judged on {', '.join(steps)}: this quote is off its step"


def _step(scenario: Scenario, step_id: str | None) -> Step | None:
    """The scripted step, or None for a live or explored turn (no kind to exclude)."""
    if step_id is None:
        return None
    try:
        return scenario.step(step_id)
    except KeyError:
        return None


# -- making an annotation ----------------------------------------------------------------


def annotate(
    db: Database,
    run_id: str,
    *,
    quote: Quote | None = None,
    verified: Verified | None = None,
    view: RunView | None = None,
    transcript: quotes.Transcript | None = None,
    **fields: Any,
) -> str:
    """Check the annotation against the scenario, verify its quote, mark it, and store it; returns its id.

    `fields` are those of `annotations.add`. `verified`: a quote already verified by the
    caller (a judge's, checked against the masked text it was shown), taken as it is.
    EvidenceRefused when the scenario cannot hold it; nothing is stored then. A view of a
    catch trial (RunView.trial) stores into that trial.
    """
    view = view or RunView.open(db, run_id)
    if view.trial is not None:
        fields.setdefault("trial", view.trial)
    if fields.get("kind") == EXCERPT:
        fields = _excerpt(fields, quote)
    scenario = view.scenario
    reason = impossible(scenario, fields, len(view.replies()))
    if reason:
        raise EvidenceRefused(reason)
    item = fields["item"]
    if verified is None and quote is not None:
        verified = verify(db, run_id, quote, transcript, repeats=repeats(scenario, item))
    quoted = verified.quote.turn_id if verified is not None and verified.verdict in PLACED else None
    reason = refused_quote(scenario, item, view.steps, quoted)
    if reason:
        raise EvidenceRefused(reason)
    verdict_step = None
    if fields.get("kind") == "verdict":
        fields = _one_verdict_per_step(view, fields, quoted)
        verdict_step = fields.get("step_id")
    place = quoted or fields.get("turn_id")
    off = off_step(scenario, item, view.steps.get(place or ""), set(view.steps.values()), verdict_step)
    return notes.add(db, run_id, quote=verified, off_step=off, **fields)


def _excerpt(fields: dict[str, Any], quote: Quote | None) -> dict[str, Any]:
    """An excerpt is a passage with a caption (its note): it needs the passage, and is stored under its own item."""
    if quote is None or not quote.text:
        raise EvidenceRefused("An excerpt is a passage: select the words it holds first.")
    if fields.get("item", EXCERPT) != EXCERPT or fields.get("score") is not None:
        raise EvidenceRefused("An excerpt scores nothing: it is stored as an excerpt, with no item and no score.")
    return {**fields, "item": EXCERPT, "rubric": None}


def _one_verdict_per_step(view: RunView, fields: dict[str, Any], quoted: str | None) -> dict[str, Any]:
    """A verdict names the step it judges, and replaces the reviewer's earlier verdict there (one gesture).

    A yes/no counter has one answer per run: a new answer replaces the last.
    """
    counter = view.scenario.counter(fields["item"])  # `impossible` made sure it is one
    step = None
    if counter.kind == "verdict":
        step = fields.get("step_id") or view.steps.get(quoted or fields.get("turn_id") or "")
        reason = verdict_problem(view.scenario, counter.id, step, set(view.steps.values()))
        if reason:
            raise EvidenceRefused(reason)
    replaced = fields.get("replaces")
    replaces = [replaced] if isinstance(replaced, str) else list(replaced or ())
    for a in view.annotations(fields["reviewer"]):
        if a["item"] != counter.id or a["kind"] != "verdict":
            continue
        if counter.kind != "verdict" or (a["step_id"] or view.steps.get(a["turn_id"] or "")) == step:
            replaces.append(a["id"])
    return {**fields, "step_id": step, "replaces": replaces or None}


def reverify(db: Database, run_id: str) -> dict[str, int]:
    """Verify every quote of the run's annotations again, and mark each off its step or not; returns how many of
    those in force (not undone or removed) got each verdict (and `off its step`, how many of the found ones stand off
    their item's steps)."""
    counts: dict[str, int] = {}
    view = RunView.open(db, run_id)
    transcript = quotes.Transcript(view.turns)
    scenario = view.scenario
    played = set(view.steps.values())
    rows = db.execute(
        "SELECT id, quote, quote_turn_id, item, kind, step_id, turn_id, removed FROM annotations "
        "WHERE run_id = ? AND quote IS NOT NULL",
        [run_id],
    ).fetchall()
    with db.atomic():
        for annotation_id, text, turn_id, item, kind, step_id, given_on, removed in rows:
            found = transcript.locate(text, prefer_turn=turn_id, repeats=repeats(scenario, item))
            place = found.turn_id if found.verdict in PLACED else given_on
            verdict_step = step_id if kind == "verdict" else None  # a yes/no answer names no step
            off = off_step(scenario, item, view.steps.get(place or ""), played, verdict_step)
            notes.set_verification(
                db,
                annotation_id,
                Verified(Quote(found.turn_id, found.start, found.end, text), found.verdict, found.similarity),
                off,
            )
            if removed:  # verified all the same, for a redo to bring back; but no longer said, nor counted
                continue
            counts[found.verdict] = counts.get(found.verdict, 0) + 1
            if off and found.verdict in PLACED:
                counts[OFF_STEP] = counts.get(OFF_STEP, 0) + 1
    return counts
