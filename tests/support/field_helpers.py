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


def unlike_runs(db, reviewer: str = "ada") -> list[str]:
    """Three train runs as unlike as runs of one scenario get (complete; interrupted after a message typed live;
    a filtered empty reply, which flags it extreme), each scored alike by `reviewer` (T3–T5 = 1), and scored
    otherwise by bob and by a judge: blind, nothing in a list of them may tell them apart but their codes."""
    plain = played_run(db, model="vendor/plain")
    live = played_run(db, model="vendor/live", tokens=900, cost=0.5)
    record.add_turn(db, live, idx=100, role="user", origin="live", text="One more thing.")
    turn = record.add_turn(db, live, idx=101, role="assistant", origin="reply", status="streaming")
    record.finish_turn(db, turn, "complete", "Viktor shrugs.", {})
    db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", [live])
    filtered = played_run(db, model="vendor/filtered")
    db.execute("UPDATE turns SET status = 'filtered', text = '' WHERE run_id = ? AND idx = 3", [filtered])
    runs = [plain, live, filtered]
    for run in runs:
        score_all(db, run, reviewer, 1.0, items=TRAIN_ITEMS[:3])
    score(db, plain, "T3", 0.0, reviewer="bob")
    score(db, plain, "T9", 0.5, reviewer="bob")
    score(db, live, "T6", 0.5, reviewer="judge:other/wise-owl")
    return runs
