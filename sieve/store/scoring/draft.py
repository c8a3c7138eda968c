"""A judge's card as a draft for a person: what the judge gave for each thing left to score, and adopting it.

When a model judge (a reviewer named `judge:…`) has scored a run, a person need not
start from nothing. For each thing left on their card (navigation.tasks: items,
verdict steps, yes/no answers, probes, written judgments) the draft holds the
judge's annotation, or None where the judge left it unscored. Adopting stores the
judge's score and quote as the person's own annotation through evidence.annotate,
the quote verified again, with the provenance `adopted from judge:X`; a quote that
is missing, not found or only the player's words is refused. Adopted scores count
toward the person's progress like any other; agreement says how many there are and
can leave them out (results.agreement), since a score copied from a judge agrees
with it by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.scenarios import Item, Scenario
from sieve.store.record import judgings
from sieve.store.record.annotations import JUDGE_PREFIX, Quote, is_evidence
from sieve.store.record.rows import Annotation
from sieve.store.record.runs import not_archived
from sieve.store.scoring import evidence, navigation
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card

# Why a quote of each verdict that is no evidence cannot be adopted.
NO_EVIDENCE = {
    "player": "only the player's words",
    "ambiguous": "in several places, none of them claimed",
    "altered": "the run with a negation flipped",
    "short": "too short to be evidence",
}

ADOPTED = "adopted from "
HALF = "h"  # the key for ½, as in the pickers


class AdoptRefused(SieveUsageError):
    """The judge's answer cannot become the person's: no quote, a quote not found, or the player's words."""


def is_adopted(annotation: Mapping[str, Any] | None) -> bool:
    """Whether a person's annotation was adopted from a judge's draft (with its value changed or not)."""
    return bool(annotation and (annotation.get("source") or "").startswith(ADOPTED))


def judge_of(view: RunView, reviewer: str) -> str | None:
    """The judge whose draft a reviewer sees on this run: of the judges that scored it, the latest; None if none."""
    annotations = view.annotations()
    judges = {a["reviewer"] for a in annotations if a["reviewer"].startswith(JUDGE_PREFIX)}
    judges |= {r[0] for r in view.db.execute("SELECT DISTINCT reviewer FROM judgings WHERE run_id = ?", [view.id])}
    judges.discard(reviewer)
    latest: dict[str, str] = {}
    for a in annotations:
        if a["reviewer"] in judges and a["kind"] != "note":
            latest[a["reviewer"]] = max(latest.get(a["reviewer"], ""), a["created"] or "")
    return max(latest, key=lambda j: (latest[j], j)) if latest else None


def given(judge_card: Card, scenario: Scenario, task: Task) -> Annotation | None:
    """The judge's annotation for one task (an item, a verdict at a step, an answer, a mark), or None."""
    for rubric in judge_card.rubrics:
        for item in rubric.items + rubric.bonuses:
            if item.item.id == task.id:
                return item.annotation
        if task.id in {w.id for w in rubric.rubric.written}:
            return rubric.written.get(task.id)
    for counter in judge_card.counters:
        if counter.counter.id == task.id:
            if counter.counter.kind == "verdict":
                found = [e for e in counter.events if e["value_step"] == task.step]
                return found[-1] if found else None
            return counter.events[-1] if counter.events else None
    for probe in judge_card.probes:
        if probe.probe.id == task.id:
            return probe.annotation
    return None


@dataclass(frozen=True)
class Proposal:
    """One thing left on a person's card, and what the judge gave for it (None: the judge left it unscored)."""

    task: Task
    judge: str
    annotation: Annotation | None

    @property
    def quote(self) -> Quote | None:
        a = self.annotation
        if not a or not a["quote"]:
            return None
        return Quote(a["quote_turn_id"], a["quote_start"], a["quote_end"], a["quote"])


def proposals(view: RunView, reviewer: str, judge: str, card: Card | None = None) -> list[Proposal]:
    """What is left on the reviewer's card, in the order of the script, each with the judge's answer."""
    judge_card = view.card(judge)
    mine = card if card is not None else view.card(reviewer)
    return [Proposal(t, judge, given(judge_card, view.scenario, t)) for t in navigation.tasks(view.scenario, mine)]


def walk(view: RunView, reviewer: str, judge: str, card: Card | None = None) -> list[Proposal]:
    """The draft walk: the proposals up to and including the first the judge left unscored (where it ends)."""
    out = []
    for proposal in proposals(view, reviewer, judge, card):
        out.append(proposal)
        if proposal.annotation is None:
            break
    return out


def task_for(view: RunView, target: str, step: str | None = None) -> Task:
    """The task of an item, counter or probe by id (a verdict counter at `step`)."""
    scenario = view.scenario
    try:
        rubric, item = scenario.item(target)
        return Task(item.id, "score", item.steps[0] if item.steps else None)
    except KeyError:
        pass
    for rubric in scenario.rubrics:
        for written in rubric.written:
            if written.id == target:
                return Task(written.id, "score", None)
    return Task(target, "count", step)


def _item(view: RunView, task: Task) -> Item | None:
    """The rubric item a task scores, or None (a counter, a probe, a written judgment)."""
    try:
        return view.scenario.item(task.id)[1]
    except KeyError:
        return None


def value_for_key(view: RunView, task: Task, key: str) -> dict[str, Any] | None:
    """What a typed key means as another value for a task: a digit is a score on the item's scale (`h` ½), or
    for a verdict, an answer or a probe the n-th of its values (1 the first). None if it means nothing."""
    scenario = view.scenario
    item = _item(view, task)
    if item is not None:
        score = 0.5 if key == HALF else (float(key) if key.isdigit() else None)
        return {"score": score} if score is not None and score in item.scale.values else None
    values: tuple[str, ...] = ()
    counter = next((c for c in scenario.counters if c.id == task.id), None)
    if counter is not None and counter.kind in ("verdict", "yesno"):
        values = counter.values
    probe = next((p for p in scenario.probes if p.id == task.id), None)
    if probe is not None:
        values = probe.marks
    if key.isdigit() and 1 <= int(key) <= len(values):
        return {"value": values[int(key) - 1]}
    return None


def value_keys(view: RunView, task: Task) -> str:
    """The keys that give a task another value, as the walk's line names them: `0 1 2`, `1 played out  2 annulled`."""
    scenario = view.scenario
    item = _item(view, task)
    if item is not None:
        keys = [HALF if v == 0.5 else str(int(v)) for v in item.scale.values if v == 0.5 or (v == int(v) and v < 10)]
        return " ".join(sorted(keys, key=lambda k: -1 if k == HALF else int(k)))
    counter = next((c for c in scenario.counters if c.id == task.id), None)
    probe = next((p for p in scenario.probes if p.id == task.id), None)
    values = counter.values if counter is not None else (probe.marks if probe is not None else ())
    return "  ".join(f"{n} {v}" for n, v in enumerate(values[:9], start=1))


def adopt(
    db: Database,
    view: RunView,
    reviewer: str,
    proposal: Proposal,
    *,
    quote: Quote | None = None,
    changed: dict[str, Any] | None = None,
    blind: bool = False,
    seconds: float | None = None,
) -> str:
    """Store the judge's answer as the reviewer's annotation; returns its id.

    `quote`: the reviewer's own choice of quote, else the judge's; either is verified
    again, and one that is missing, not found or only the player's words is refused
    (AdoptRefused). `changed`: another score or value (`{"score": 1}`), the quote kept.
    The reviewer's earlier annotation of the same item (or verdict of the same step)
    is replaced in the same gesture, so one undo takes the adoption back.
    """
    judged = proposal.annotation
    task = proposal.task
    if judged is None:
        raise AdoptRefused(f"{proposal.judge} left {task.label} unscored: nothing to adopt")
    quote = quote or proposal.quote
    if quote is None:
        raise AdoptRefused(f"{proposal.judge} gave no quote for {task.label}: select one to adopt it with, or score it")
    found = evidence.verify(db, view.id, quote, repeats=evidence.repeats(view.scenario, task.id))
    if not is_evidence(found.verdict):
        what = NO_EVIDENCE.get(found.verdict, "not found in the run")
        raise AdoptRefused(f"the quote for {task.label} is {what}: select another to adopt it with, or skip it")
    fields: dict[str, Any] = {
        k: judged.get(k) for k in ("rubric", "kind", "score", "score_high", "value", "note", "step_id")
    }
    verdict_step = task.step if judged["kind"] == "verdict" and task.step else None
    steps = evidence.judged_on(view.scenario, task.id, verdict_step)
    place = view.steps.get(found.quote.turn_id or "")
    if evidence.off_step(view.scenario, task.id, place, set(view.steps.values()), verdict_step):
        raise AdoptRefused(
            f"the quote for {task.label} stands at {place}, off its step ({task.id} is judged on "
            f"{', '.join(steps)}): select another and press enter, or skip it"
        )
    if changed:
        fields.update(changed)
        if "score" in changed:
            fields["score_high"] = None
    if fields["kind"] != "verdict":
        fields["step_id"] = view.steps.get(found.quote.turn_id or "")  # where its quote stands, as Review records it
    source = ADOPTED + proposal.judge + (" (value changed)" if changed else "")
    replaces = [] if judged["kind"] == "verdict" else _mine(view, reviewer, task, judged["kind"])
    return evidence.annotate(
        db,
        view.id,
        verified=found,
        view=view,
        reviewer=reviewer,
        item=task.id,
        turn_id=found.quote.turn_id,
        replaces=replaces or None,
        blind=blind,
        seconds=seconds,
        source=source,
        **fields,
    )


def _mine(view: RunView, reviewer: str, task: Task, kind: str) -> list[str]:
    """The reviewer's annotations an adoption replaces: their own of the same item and kind."""
    return [a["id"] for a in view.annotations(reviewer) if a["item"] == task.id and a["kind"] == kind]


def adopted_counts(annotations: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """reviewer -> (scores adopted from a judge, scores in all), over annotations of kind score."""
    out: dict[str, tuple[int, int]] = {}
    for a in annotations:
        if a["kind"] != "score":
            continue
        adopted, total = out.get(a["reviewer"], (0, 0))
        out[a["reviewer"]] = (adopted + is_adopted(a), total + 1)
    return out


def adopted_by_item(db: Database, scenario_name: str, judges: set[str] | None = None) -> dict[str, int]:
    """item -> how many people's scores in force on the scenario's runs were adopted from a judge's draft."""
    judges = judgings.judges(db) if judges is None else judges
    rows = db.execute(
        "SELECT a.item, a.reviewer FROM annotations a JOIN runs r ON r.id = a.run_id "
        f"WHERE r.scenario = ? AND {not_archived('r.id')} AND a.kind = 'score' AND a.removed IS NULL "
        "AND a.trial IS NULL AND a.source LIKE ?",
        [scenario_name, ADOPTED + "%"],
    ).fetchall()
    out: dict[str, int] = {}
    for item, reviewer in rows:
        if reviewer not in judges:
            out[item] = out.get(item, 0) + 1
    return out


def adopted_by_reviewer(db: Database, scenario_name: str) -> dict[str, tuple[int, int]]:
    """person -> (scores adopted from a judge's draft, scores in all), in force on the scenario's runs."""
    judges = judgings.judges(db)
    rows = db.execute(
        "SELECT a.reviewer, a.kind, a.source FROM annotations a JOIN runs r ON r.id = a.run_id "
        f"WHERE r.scenario = ? AND {not_archived('r.id')} AND a.kind = 'score' AND a.removed IS NULL "
        "AND a.trial IS NULL",
        [scenario_name],
    ).fetchall()
    counts = adopted_counts([{"reviewer": r, "kind": k, "source": s} for r, k, s in rows if r not in judges])
    return dict(sorted(counts.items()))
