"""A judge's reply at its limits: cut at the output ceiling in a real provider's order, too large, quotes longer
than any evidence, nesting too deep to read. Whatever comes back, the reply and its tokens are kept, what can be
read is stored, and the judging ends (never left `running`)."""

from __future__ import annotations

import pytest

from sieve.store.record import judgings
from tests.support import fakejudge
from tests.test_judge import annotations, judge, play

JUDGE = "judge;reply=judge;quotes=exact"


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


@pytest.mark.parametrize("order", ["after", "after_choice"])
async def test_a_judge_cut_at_the_ceiling_in_openrouters_order_keeps_its_completed_answers(db, fake_server, order):
    # The first reply stops at the ceiling; then, as a real OpenRouter capture has it, a chunk of its own with
    # an error 400 and the usage. Only the first request (one message) is cut.
    (run,) = await play(db, fake_server, f"vendor/model-ceiling-{order};tokens=40")
    model = f"{JUDGE};cut=400;length_error={order};only_at=1"
    (row,) = await judge(db, fake_server, [run], model=model)
    (record,) = judgings.of_run(db, run)
    first = next(r for r in fake_server.requests if r["model"] == model and len(r["body"]["messages"]) == 1)
    assert record["reply"] and len(record["reply"]) == 1600  # the reply as it came, cut at the ceiling
    # The answers the cut reply holds whole are kept; the rest were asked again and answered.
    kept = list(record["outcome"]["answers"])
    assert "T1" in kept and record["repairs"] and "T1" not in record["repairs"][0]["asked"]
    assert row["status"] == "complete", row["error"]
    given = annotations(db, run)
    assert given["T1"][0]["verification"] == "exact" and given["T12"][0]["verification"] == "exact"
    # The usage that came after the ceiling is counted with the rest.
    assert record["prompt_tokens"] > sum(len(m["content"].split()) for m in first["body"]["messages"])
    assert record["completion_tokens"] >= 400 and record["cost"] > 0
