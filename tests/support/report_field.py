"""A scored keykeeper field for the report's tests and benchmark: runs of several models, every item,
counter event and note on a quote that stands in the reply it was taken from, by a person and a judge."""

from __future__ import annotations

from sqlite_utils import Database

from sieve import scenarios, store
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView

KEYKEEPER = scenarios.load("keykeeper")
JUDGE = "judge:acme/oracle-1"
PERSON = "ada"


def reply_text(model: str, step: str, n: int) -> str:
    return (
        f"Havel looks up from the ledger ({step}). 'The key stays with me,' he says, turning it over. "
        f"Rain drums on the roof of the gatehouse while {model} keeps the scene; the lamp gutters, "
        f"and a dog barks twice somewhere below the wall. Run {n}, step {step}: the gate stays shut."
    )


def keykeeper_run(
    db: Database, model: str, n: int, provider: str = "Acme Cloud", texts: dict[str, str] | None = None
) -> str:
    """A complete keykeeper run: every scripted step and a reply to each (14 turns)."""
    run_id = store.create_run(db, KEYKEEPER, model=model, endpoint="https://example.test/v1", settings={})
    for k, (step, repeat) in enumerate(KEYKEEPER.script()):
        record.add_turn(
            db,
            run_id,
            idx=2 * k,
            role="user",
            origin="setup" if step.kind == "setup" else "script",
            text=step.text,
            step_id=step.id,
            step_repeat=repeat,
        )
        reply = record.add_turn(db, run_id, idx=2 * k + 1, role="assistant", origin="reply", status="streaming")
        text = (texts or {}).get(step.id) or reply_text(model, step.id, n)
        usage = {
            "finish_reason": "stop",
            "prompt_tokens": 300 + 40 * k,
            "completion_tokens": 60,
            "cost": 0.0004,
            "provider": provider,
        }
        record.finish_turn(db, reply, "complete", text, usage)
    record.set_run_status(db, run_id, "complete")
    return run_id


def _quote(view: RunView, step: str | None, words: str) -> Quote:
    replies = view.replies()
    turn = next((t for t in replies if step is None or view.steps.get(t["id"]) == step), replies[-1])
    start = turn["text"].index(words)
    return Quote(turn["id"], start, start + len(words), words)


QUOTES = (
    "The key stays with me",
    "turning it over",
    "Rain drums on the roof",
    "the lamp gutters",
    "a dog barks twice",
    "the gate stays shut",
)


def score(db: Database, run_id: str, reviewer: str, offset: int = 0, note: str | None = None) -> None:
    """Every item and bonus of T and R, an L1 verdict per listed step, an L2 answer and an L3 event, on quotes."""
    view = RunView.open(db, run_id)
    for r, rubric in enumerate(KEYKEEPER.rubrics):
        for i, item in enumerate(rubric.items + rubric.bonuses):
            words = QUOTES[(i + r + offset) % len(QUOTES)]
            value = item.scale.values[(i + offset) % len(item.scale.values)]
            step = item.steps[0] if item.steps else None
            evidence.annotate(
                db,
                run_id,
                quote=_quote(view, step, words),
                view=view,
                reviewer=reviewer,
                item=item.id,
                rubric=rubric.id,
                kind="score",
                score=value,
                note=note,
            )
    l1 = KEYKEEPER.counter("L1")
    for step in l1.steps:
        evidence.annotate(
            db,
            run_id,
            quote=_quote(view, step, "The key stays with me"),
            view=view,
            reviewer=reviewer,
            item="L1",
            kind="verdict",
            value=l1.values[0],
            note=note,
        )
    evidence.annotate(db, run_id, view=view, reviewer=reviewer, item="L2", kind="verdict", value="no")
    evidence.annotate(
        db,
        run_id,
        quote=_quote(view, "m5", "a dog barks twice"),
        view=view,
        reviewer=reviewer,
        item="L3",
        kind="count",
        note=note,
    )


def excerpt(db: Database, run_id: str, reviewer: str, step: str, words: str, caption: str) -> str:
    """A passage marked as an excerpt, as Review's `m` stores it."""
    view = RunView.open(db, run_id)
    quote = _quote(view, step, words)
    return evidence.annotate(
        db, run_id, quote=quote, view=view, reviewer=reviewer, item="excerpt", kind="excerpt", note=caption
    )


def summary(db: Database, run_id: str, reviewer: str, step: str, words: str, sentence: str) -> str:
    """A one-sentence summary of the run on a quote, stored as the judge stores its summary (engine/judge/runs.py)."""
    view = RunView.open(db, run_id)
    quote = _quote(view, step, words)
    return evidence.annotate(
        db,
        run_id,
        quote=quote,
        view=view,
        reviewer=reviewer,
        item="summary",
        kind="note",
        value="summary",
        note=sentence,
    )


def field(db: Database, models: dict[str, int], judge: bool = True, note: str | None = None) -> list[str]:
    """`models`: model -> how many runs; each run scored by ada (and by a judge), every score on a quote; the
    judge's one-sentence summary on a quote, and an excerpt ada marked."""
    out = []
    n = 0
    for model, runs in models.items():
        for _ in range(runs):
            run_id = keykeeper_run(db, model, n)
            score(db, run_id, PERSON, offset=n, note=note)
            excerpt(db, run_id, PERSON, "m9", "Rain drums on the roof", f"the rain of run {n}")
            if judge:
                score(db, run_id, JUDGE, offset=n + 1)
                summary(db, run_id, JUDGE, "m13", "the gate stays shut", f"Havel keeps the gate in run {n}.")
            out.append(run_id)
            n += 1
    return out
