"""Cost known before spending it: `--dry-run` counts the packets (or turns) and prices them from the endpoint's
/models, and `--max-cost` stops before the spend would pass the limit, saying what was left; against the test server
serving a price list."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sieve.engine.spending import Budget, Price
from tests.support import fakejudge
from tests.test_judge import play

JUDGE = "judge;reply=judge;quotes=exact"
PRICE = (1e-6, 1e-4)  # US dollars a token: prompt, completion


@pytest.fixture
def priced(fake_server):
    fakejudge.install()
    fake_server.prices = {JUDGE: PRICE, "vendor/priced": PRICE}
    yield fake_server
    fake_server.prices = {}


def sieve(*args):
    return subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True, timeout=300)


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


def test_a_budget_holds_each_request_at_its_worst_and_never_passes_the_limit():
    budget = Budget(1.0, {"m": Price(0.001, 0.01)})
    worst = budget.worst_case([{"role": "user", "content": "x" * 399}], "m", 50)
    assert worst == pytest.approx(100 * 0.001 + 50 * 0.01)  # 400 characters: 100 tokens
    assert budget.hold(worst) and budget.hold(0.4)
    assert not budget.hold(0.2)  # 0.6 + 0.4 held: 0.2 more would pass 1.0
    budget.settle(worst, 0.1)  # the first cost 0.1 in the end: room again
    assert budget.hold(0.2)
    assert budget.refused == 1 and "1 requests not sent" in budget.summary()
    with pytest.raises(Exception, match="needs a price for other"):
        budget.price("other")


async def test_a_request_that_does_not_fit_beside_those_in_flight_waits_for_them_and_is_refused_only_on_the_spend():
    import asyncio

    budget = Budget(1.0, {})
    assert await budget.acquire(0.6)  # in flight, at worst 0.6
    waiting = asyncio.ensure_future(budget.acquire(0.6))  # 0.6 + 0.6 would pass 1.0 if the first cost its worst
    await asyncio.sleep(0)
    assert not waiting.done() and budget.refused == 0
    budget.settle(0.6, 0.05)  # it cost 0.05: room
    assert await asyncio.wait_for(waiting, 1) is True
    assert budget.spent == pytest.approx(0.05) and budget.held == pytest.approx(0.6)
    budget.settle(0.6, 0.9)  # a cost over the worst counts as the worst: 0.65 spent, nothing in flight
    assert budget.in_flight == 0 and budget.spent == pytest.approx(0.65)
    assert not await asyncio.wait_for(budget.acquire(0.6), 1)
    assert budget.refused == 1 and budget.spent <= budget.limit


@pytest.mark.slow
async def test_judge_dry_run_prints_the_packets_tokens_and_their_cost_and_sends_nothing(db, priced):
    runs = await play(db, priced, "vendor/a", "vendor/b")
    base = ["--endpoint", priced.base_url, "--db", path_of(db), "--max-tokens", "1000"]
    before = len(priced.requests)
    found = sieve("judge", *runs, "-m", JUDGE, *base, "--dry-run", "--json")
    assert found.returncode == 0, found.stderr
    rows = json.loads(found.stdout)
    assert [r["run"] for r in rows] == runs and all(r["packets"] >= 1 and r["prompt_tokens"] > 300 for r in rows)
    for row in rows:  # each packet's reply at its ceiling, at most
        assert row["reply_ceiling"] == 1000 * row["packets"] and row["expected_cost"] is None  # never replied before
        assert row["cost_at_most"] == pytest.approx(Price(*PRICE).cost(row["prompt_tokens"], row["reply_ceiling"]))
    assert len(priced.requests) == before  # no chat request: only the price list was asked for
    assert db.execute("SELECT COUNT(*) FROM judgings").fetchone()[0] == 0
    text = sieve("judge", *runs, "-m", JUDGE, *base, "--dry-run").stdout
    assert "at most $" in text and "Nothing was sent" in text
    unpriced = sieve("judge", *runs, "-m", JUDGE + ";x=1", *base, "--dry-run").stdout
    assert "no price" in unpriced


@pytest.mark.slow
async def test_judge_max_cost_stops_before_the_limit_and_says_what_was_left(db, priced):
    runs = await play(db, priced, "vendor/a", "vendor/b", "vendor/c")
    base = ["--endpoint", priced.base_url, "--db", path_of(db), "--max-tokens", "1000", "--concurrency", "1"]
    estimate = json.loads(sieve("judge", *runs, "-m", JUDGE, *base, "--dry-run", "--json").stdout)
    limit = estimate[0]["cost_at_most"] / 2  # less than one judging's worst case, far more than its actual cost
    result = sieve("judge", *runs, "-m", JUDGE, *base, "--max-cost", f"{limit:.6f}")
    assert result.returncode == 1
    assert "stopped before passing it" in result.stderr and "requests not sent" in result.stderr
    spent = db.execute("SELECT SUM(cost) FROM judgings").fetchone()[0]
    assert 0 < spent <= limit
    statuses = [s for (s,) in db.execute("SELECT status FROM judgings ORDER BY started")]
    assert "complete" in statuses and "failed" in statuses
    errors = [e for (e,) in db.execute("SELECT error FROM judgings WHERE status = 'failed'")]
    assert errors and all(e.startswith("not sent: at worst $") for e in errors)
    refused = sieve("judge", *runs, "-m", JUDGE + ";x=1", *base, "--max-cost", "1")
    assert refused.returncode == 2 and "needs a price for" in refused.stderr


@pytest.mark.slow
async def test_max_cost_lets_through_what_it_can_afford_whatever_the_concurrency(db, priced):
    runs = await play(db, priced, "vendor/a", "vendor/b", "vendor/c")
    base = ["--endpoint", priced.base_url, "--db", path_of(db), "--max-tokens", "1000"]
    estimate = json.loads(sieve("judge", *runs, "-m", JUDGE, *base, "--dry-run", "--json").stdout)
    worst = max(row["cost_at_most"] / row["packets"] for row in estimate)  # one request at its worst
    one_at_a_time = sieve("judge", *runs, "-m", JUDGE, *base, "--concurrency", "1")
    assert one_at_a_time.returncode == 0, one_at_a_time.stderr
    cost = db.execute("SELECT SUM(cost) FROM judgings").fetchone()[0]
    # Enough for every request one at a time (the last one's worst case beside all the rest really cost), and far
    # less than the worst cases of the requests that eight judgings at once put in flight.
    limit = cost + 1.5 * worst
    assert limit < 8 * worst
    other = JUDGE + ";x=2"  # the same judge under another name: a judging of its own, at the same price
    priced.prices[other] = PRICE
    at_once = sieve("judge", *runs, "-m", other, *base, "--max-cost", f"{limit:.6f}", "--concurrency", "8")
    assert at_once.returncode == 0, at_once.stderr
    assert "not sent" not in at_once.stderr and "spent $" in at_once.stderr
    mine = "SELECT {} FROM judgings WHERE model = ?"
    assert [s for (s,) in db.execute(mine.format("DISTINCT status"), [other])] == ["complete"]
    assert 0 < db.execute(mine.format("SUM(cost)"), [other]).fetchone()[0] <= limit


@pytest.mark.slow
def test_run_dry_run_and_max_cost(db, priced):
    path = path_of(db)
    base = ["keykeeper", "-m", "vendor/priced", "--endpoint", priced.base_url, "--db", path, "--max-tokens", "100"]
    found = sieve("run", *base, "--dry-run", "--json", "--repeat", "2")
    assert found.returncode == 0, found.stderr
    (row,) = json.loads(found.stdout)
    assert row["runs"] == 2 and row["requests"] == 28 and row["reply_ceiling"] == 2 * 14 * 100
    assert 0 < row["cost_at_least"] < row["cost_at_most"]
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    text = sieve("run", *base, "--dry-run").stdout  # priced, never played: the price is known, a reply's length not
    assert "no price" not in text and "no replies yet" in text and f"${row['cost_at_most'] / 2:.4f}" in text
    played = sieve("run", *base, "--max-cost", f"{row['cost_at_most'] / 2 / 3:.6f}")
    assert played.returncode == 1
    assert "stopped before passing it" in played.stderr
    (status, cost) = db.execute(
        "SELECT status, (SELECT SUM(cost) FROM turns WHERE run_id = runs.id) FROM runs"
    ).fetchone()
    assert status == "failed" and cost <= row["cost_at_most"] / 6
    # The turn the limit refused is not an empty reply from the model: no extreme flag says it was.
    (error,) = db.execute("SELECT error FROM turns WHERE status = 'failed'").fetchone()
    assert error.startswith("not sent: at worst")
    (listed,) = json.loads(sieve("runs", "--db", path, "--json").stdout)
    assert listed["extreme"] == []
    refused = sieve("run", *base, "--max-cost", "0.000001")  # not even the first request fits
    assert refused.returncode == 1
    flags = [r["extreme"] for r in json.loads(sieve("runs", "--db", path, "--json").stdout)]
    assert flags == [[], []]


@pytest.mark.slow
async def test_judge_pairs_dry_run_counts_the_cards_and_both_orders_and_the_rounds_to_come(db, priced):
    from sieve.engine.spending import estimate_tokens
    from sieve.store.scoring import adaptive_queue

    runs = await play(db, priced, "vendor/a", "vendor/b", "vendor/c", "vendor/d")
    queue, made = adaptive_queue.create(db, "keykeeper", budget=5, seed=3)
    base = ["--endpoint", priced.base_url, "--db", path_of(db), "--max-tokens", "1000"]
    before = len(priced.requests)
    found = sieve("judge", "--pairs", queue, "--adaptive", "-m", JUDGE, *base, "--dry-run", "--json")
    assert found.returncode == 0, found.stderr
    estimate = json.loads(found.stdout)
    cards = [r for r in estimate["requests"] if r["what"] == "card"]
    pairs = [r for r in estimate["requests"] if r["what"] != "card"]
    assert sorted(r["run"] for r in cards) == sorted(runs)  # no side has the judge's card yet: each is judged first
    assert len(pairs) == made["pairs"] and all(r["packets"] == 2 and r["reply_ceiling"] == 2000 for r in pairs)
    for row in pairs:
        assert row["cost_at_most"] == pytest.approx(Price(*PRICE).cost(row["prompt_tokens"], row["reply_ceiling"]))
    later = estimate["later_rounds"]
    assert later["budget"] == 5 and later["pairs_at_most"] == 5 - made["pairs"]
    if later["pairs_at_most"]:
        mean = sum(r["cost_at_most"] for r in pairs) / len(pairs)
        assert later["cost_at_most"] == pytest.approx(mean * later["pairs_at_most"])
    assert len(priced.requests) == before and db.execute("SELECT COUNT(*) FROM judgings").fetchone()[0] == 0
    text = sieve("judge", "--pairs", queue, "--adaptive", "-m", JUDGE, *base, "--dry-run").stdout
    assert "card of " in text and "pair 1" in text and "later rounds: " in text and "Nothing was sent" in text

    # What was counted is what is sent: judged (one round, not adaptive), each pair's two packets are the ones priced.
    judged = sieve("judge", "--pairs", queue, "-m", JUDGE, *base)
    assert judged.returncode == 0, judged.stderr
    sent = db.execute("SELECT packet FROM judgings WHERE kind = 'pair' ORDER BY pair_id, part").fetchall()
    assert sum(estimate_tokens(p) for (p,) in sent) == sum(r["prompt_tokens"] for r in pairs)
    again = json.loads(sieve("judge", "--pairs", queue, "--adaptive", "-m", JUDGE, *base, "--dry-run", "--json").stdout)
    assert [r for r in again["requests"] if r["what"] == "card"] == []  # every side has its card now
    assert [r for r in again["requests"] if r["what"] != "card"] == []  # and the judge's verdict on every pair
    done = sieve("judge", "--pairs", queue, "--adaptive", "-m", JUDGE, *base, "--dry-run").stdout
    assert "nothing to send" in done, done
    assert all(r["expected_cost"] is None for r in pairs)  # before: nothing replied yet to expect from
