"""The judge's counted events wait for a person, where no detector covers the counter (issue 13's judge part)."""

from __future__ import annotations

import pytest

from sieve.store.record import suggestions as stored
from sieve.store.scoring import suggestions
from sieve.store.scoring.runview import RunView
from tests.support import fakejudge
from tests.test_judge import judge, play


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


async def test_a_judges_counted_events_are_suggestions_only_for_counters_no_detector_covers(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/events;tokens=60")
    await judge(db, fake_server, [run], model="judge;reply=judge;quotes=exact")
    view = RunView.open(db, run)
    judged = {a["item"] for a in view.annotations("judge:test") if a["kind"] == "count"}
    covered = {use.item for use in view.scenario.detector_uses()}
    from_judge = stored.for_run(db, run, source="judge")
    assert from_judge, "the judge counted events, and none became a suggestion"
    assert {s["item"] for s in from_judge} <= judged - covered  # L3, L4, L7: no detector proposes these
    assert all(s["source_name"] == "judge:test" for s in from_judge)
    # They count for nothing until a person accepts one.
    item = from_judge[0]["item"]
    before = next(c for c in view.card("ada").counters if c.counter.id == item).value
    assert before == 0 and len(view.pending_suggestions("ada")) >= len(from_judge)
    suggestions.accept(db, from_judge[0]["id"], "ada", view=view)
    after = next(c for c in view.card("ada").counters if c.counter.id == item).value
    assert after == 1
    # Judging again proposes nothing twice.
    await judge(db, fake_server, [run], model="judge;reply=judge;quotes=exact")
    assert len(stored.for_run(db, run, source="judge")) == len(from_judge)
