"""Evidence: every quote verified before it is stored, and the scenario's rules about what may back a score.

Review, card imports, the judge and accepted suggestions all store annotations
through `annotate`, so a quote is checked the same way whoever gave it.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario, Step
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import EXCERPT, Quote, Verified
from sieve.store.scoring import quotes
from sieve.store.scoring.runview import RunView


class EvidenceRefused(SieveUsageError):
    """A quote that the scenario says cannot back this item (an excluded step, a probe asked elsewhere)."""


def takes_short_quotes(scenario: Scenario, item_id: str | None) -> bool:
    """Whether the item takes quotes of any length: a repetition chain, where what repeats may be one word,
    and an excerpt, which is evidence of nothing."""
    if item_id == EXCERPT:
        return True
    counter = next((c for c in scenario.counters if c.id == item_id), None)
    return counter is not None and (counter.kind == "chain" or counter.detector == "repetition")


def verify(
    db: Database, run_id: str, quote: Quote, transcript: quotes.Transcript | None = None, *, short_ok: bool = False
) -> Verified:
    """Check a quote: at the place it claims if it has one, else wherever it stands in the run.

    `short_ok`: the item takes quotes of any length (takes_short_quotes); else a short one is `short`.
    """
    if quote.turn_id and quote.start is not None:
        row = db.execute("SELECT text, role FROM turns WHERE id = ?", [quote.turn_id]).fetchone()
        if row is not None and quote.text and row[0][quote.start : quote.end] == quote.text:
            verdict = "exact" if row[1] == "assistant" else "player"
            if verdict == "exact" and not short_ok and quotes.too_short(quote.text):
                verdict = "short"
            return Verified(quote, verdict, 1.0)
    transcript = transcript or quotes.Transcript(record.chosen_turns(db, run_id))
    found = transcript.locate(quote.text, prefer_turn=quote.turn_id or None, short_ok=short_ok)
    if not found.found:
        return Verified(quote, "absent", None)
    return Verified(Quote(found.turn_id, found.start, found.end, quote.text), found.verdict, found.similarity)


def problem(
    scenario: Scenario, item_id: str, step_of: dict[str, str], *, quoted: str | None = None, given_on: str | None = None
) -> str | None:
    """Why the scenario's rules refuse this evidence for `item_id`, or None.

    `quoted` is the turn the quote stands in, `given_on` the turn the annotation
    was given on (the turn shown when there is no quote). `exclude` names step
    kinds whose replies are no evidence for an item (the story benchmark's filler
    action): it applies to a quote. A probe is marked from the reply to the step
    that asks it, and a per-step verdict (L1) is given only on the steps its
    counter lists, quoted or not, as long as the run holds one of those steps at
    all (a live run follows no script, so there the reviewer decides).
    """
    try:
        item = scenario.item(item_id)[1]
    except KeyError:
        item = None  # a counter or a probe
    if item is not None and item.exclude and quoted is not None:
        step = _step(scenario, step_of.get(quoted))
        if step is not None and step.kind in item.exclude:
            return f"{item_id} is not scored on {step.kind} steps: choose a quote from another turn"
    marked_on = quoted or given_on
    if marked_on is None:
        return None
    probe = next((p for p in scenario.probes if p.id == item_id), None)
    if probe is not None and probe.asked:
        played = set(step_of.values())
        if step_of.get(marked_on) not in probe.asked and played & set(probe.asked):
            return f"{item_id} is asked at {', '.join(probe.asked)}: mark it from the reply to that step"
    counter = next((c for c in scenario.counters if c.id == item_id), None)
    if counter is not None and counter.kind == "verdict":
        return verdict_problem(scenario, counter.id, step_of.get(marked_on), set(step_of.values()))
    return None


def verdict_problem(scenario: Scenario, counter_id: str, step: str | None, played: set[str]) -> str | None:
    """Why a verdict of this counter cannot judge `step` (it is not one the counter lists), or None."""
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


def _step(scenario: Scenario, step_id: str | None) -> Step | None:
    """The scripted step, or None for a live or explored turn (no kind to exclude)."""
    if step_id is None:
        return None
    try:
        return scenario.step(step_id)
    except KeyError:
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
    rules forbid the quote (or, for a probe, the turn) for this item; nothing is stored then.
    A view of a catch trial (RunView.trial) stores into that trial.
    """
    if view is not None and view.trial is not None:
        fields.setdefault("trial", view.trial)
    if fields.get("kind") == EXCERPT:
        fields = _excerpt(fields, quote)
    verified = None
    if quote is not None:
        view = view or RunView.open(db, run_id)
        short_ok = takes_short_quotes(view.scenario, fields.get("item"))
        verified = verify(db, run_id, quote, transcript, short_ok=short_ok)
    quoted = verified.quote.turn_id if verified is not None else None
    if quoted is not None or fields.get("turn_id"):
        view = view or RunView.open(db, run_id)
        reason = problem(view.scenario, fields["item"], view.steps, quoted=quoted, given_on=fields.get("turn_id"))
        if reason:
            raise EvidenceRefused(reason)
    if fields.get("kind") == "verdict":
        view = view or RunView.open(db, run_id)
        fields = _one_verdict_per_step(view, fields, quoted)
    return notes.add(db, run_id, quote=verified, **fields)


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
    try:
        counter = view.scenario.counter(fields["item"])
    except KeyError:
        return fields
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
    """Verify every quote of the run's annotations again; returns how many got each verdict."""
    counts: dict[str, int] = {}
    transcript = quotes.Transcript(record.chosen_turns(db, run_id))
    scenario = RunView.open(db, run_id).scenario
    rows = db.execute(
        "SELECT id, quote, quote_turn_id, item FROM annotations WHERE run_id = ? AND quote IS NOT NULL", [run_id]
    ).fetchall()
    with db.atomic():
        for annotation_id, text, turn_id, item in rows:
            found = transcript.locate(text, prefer_turn=turn_id, short_ok=takes_short_quotes(scenario, item))
            notes.set_verification(
                db,
                annotation_id,
                Verified(Quote(found.turn_id, found.start, found.end, text), found.verdict, found.similarity),
            )
            counts[found.verdict] = counts.get(found.verdict, 0) + 1
    return counts
