"""A judge's reply at its limits: cut at the output ceiling in a real provider's order, too large, quotes longer
than any evidence, nesting too deep to read. Whatever comes back, the reply and its tokens are kept, what can be
read is stored, and the judging ends (never left `running`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sieve.engine.judge import client
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


def db_size(db) -> int:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    return Path(path).stat().st_size


async def test_a_reply_past_the_judges_limit_is_read_up_to_there_and_kept(db, fake_server):
    # 43 quotes of 20,000 characters each: some 860 KB, sent in large chunks.
    (run,) = await play(db, fake_server, "vendor/model-bloat;tokens=40")
    before = db_size(db)
    (row,) = await judge(db, fake_server, [run], model=f"{JUDGE};bloat=20000;chunk=8192")
    (record,) = judgings.of_run(db, run)
    assert len(record["reply"]) == client.REPLY_MIN  # the raw reply, as far as it was read
    assert "passed 262144 characters, the limit of one reply" in record["error"]
    # The whole answers before the cut were read; their quotes, longer than any evidence, were refused
    # unsearched and asked for again with the rest.
    (repair,) = record["repairs"]
    assert 'T1: your quote "' in repair["request"] and "longer than its evidence could be" in repair["request"]
    assert "T12: missing from your answer" in repair["request"]  # past the cut
    answers = record["outcome"]["answers"]
    assert all(len(q["quote"]) <= 400 for a in answers.values() for q in a["quotes"] if q["quote"])
    assert row["status"] == "complete" and annotations(db, run)["T1"][0]["verification"] == "exact"
    assert record["completion_tokens"] > 0 and record["prompt_tokens"] > 0
    assert db_size(db) - before < 2_000_000  # the record keeps the reply it read, not the megabytes sent


@pytest.mark.parametrize("size", [1_000, 3_000])
async def test_a_quote_longer_than_its_evidence_could_be_is_refused_and_asked_again(db, fake_server, size):
    # The replies are some 300 characters: a quote of 1,000 cannot be one; 3,000 is past any quote's limit.
    (run,) = await play(db, fake_server, f"vendor/model-long-quotes-{size};tokens=40")
    (row,) = await judge(db, fake_server, [run], model=f"{JUDGE};bloat={size};chunk=512")
    (record,) = judgings.of_run(db, run)
    quotes = [q for a in record["outcome"]["answers"].values() for q in a["quotes"] if q["quote"]]
    assert quotes and all(q["verdict"] == "refused" or len(q["quote"]) < size for q in quotes)
    assert "longer than its evidence could be" in record["repairs"][0]["request"]
    assert row["status"] == "complete" and annotations(db, run)["T1"][0]["verification"] == "exact"


@pytest.mark.parametrize("depth", [100_000, 400_000])
async def test_a_reply_nested_too_deep_is_refused_cleanly_and_asked_again(db, fake_server, depth):
    (run,) = await play(db, fake_server, f"vendor/model-nest-{depth};tokens=40")
    (row,) = await judge(db, fake_server, [run], model=f"{JUDGE};nest={depth};chunk=8192")
    (record,) = judgings.of_run(db, run)
    assert record["reply"].startswith('{"T1": [[[') and record["completion_tokens"] > 0
    assert "nested too deeply" in record["repairs"][0]["because"]
    assert row["status"] == "complete" and record["status"] == "complete"


async def test_a_judge_that_only_nests_fails_with_its_reply_and_tokens_never_left_running(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/model-nest-always;tokens=40")
    (row,) = await judge(db, fake_server, [run], model=f"{JUDGE};nest=400000;nest_times=9;chunk=8192")
    (record,) = judgings.of_run(db, run)
    assert row["status"] == "failed" and record["status"] == "failed"
    assert "could not be read, twice" in record["error"] and "nested too deeply" in record["error"]
    assert record["reply"].startswith('{"T1": [[[') and record["prompt_tokens"] > 0 and record["completion_tokens"] > 0
    assert row["prompt_tokens"] > 0 and not list(db.query("SELECT id FROM judgings WHERE status = 'running'"))
