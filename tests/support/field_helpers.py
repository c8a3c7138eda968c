"""A field of runs to score: complete runs of a scenario made directly in the record, and cards filled in."""

from __future__ import annotations

from sieve import scenarios, store
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from tests.support.scores import score

TRAIN = scenarios.load("train")
TRAIN_ITEMS = [i.id for i in TRAIN.rubrics[0].items]  # T3 … T10, the whole card


def played_run(
    db,
    scenario=TRAIN,
    *,
    model: str = "vendor/model",
    endpoint: str = "fake",
    started: str | None = None,
    cost: float | None = 0.001,
    tokens: int = 100,
    provider: str = "Provider",
    reply: str = "Viktor nods and says nothing.",
) -> str:
    """A complete run of the scenario: every step sent and answered with the same reply."""
    run_id = store.create_run(db, scenario, model=model, endpoint=endpoint, settings={"temperature": 1.0})
    idx = 0
    for step in scenario.steps:
        record.add_turn(
            db, run_id, idx=idx, role="user", origin="script", text=step.text, step_id=step.id, step_repeat=1
        )
        turn = record.add_turn(db, run_id, idx=idx + 1, role="assistant", origin="reply", status="streaming")
        usage = {
            "provider": provider,
            "cost": cost,
            "prompt_tokens": tokens,
            "completion_tokens": tokens,
            "duration": tokens,
        }
        record.finish_turn(db, turn, "complete", reply, usage)
        idx += 2
    record.set_run_status(db, run_id, "complete")
    if started is not None:
        db.execute("UPDATE runs SET started = ?, ended = ? WHERE id = ?", [started, started, run_id])
    return run_id


def score_all(db, run_id: str, reviewer: str, value: float = 1.0, trial: str | None = None, items=None, seconds=None):
    """Score every item of the train key (or `items`) with `value`; the whole card includes its written judgment."""
    if items is None:
        notes.add(
            db, run_id, reviewer=reviewer, item="prose", rubric="key", kind="judgment", note="Concrete.", trial=trial
        )
    for item in items or TRAIN_ITEMS:
        score(db, run_id, item, value, reviewer=reviewer, trial=trial, seconds=seconds)
