"""Adaptive pair queues in the record and judged by `sieve judge --pairs Q --adaptive` against the test server's
judge, whose strengths are known (it prefers the longer transcript): rounds, run combinations, catch trials, the
stopping rule, and the right top model found with a small budget."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter

import pytest
from rich.console import Console

from sieve import scenarios
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import resolve_settings
from sieve.store.record import pairs as pairing
from sieve.store.record import queue_plans
from sieve.store.scoring import adaptive, adaptive_queue, leaderboard, ratings
from tests.support import fakejudge
from tests.support.report_field import field
from tests.support.tui_helpers import FAST_RETRY

KEYKEEPER = scenarios.load("keykeeper")
JUDGE = "judge;reply=judge;quotes=exact;pair=longer"


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


def sieve(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True, timeout=timeout)


async def play(db, server, models: list[str], repeats: int = 1) -> dict[str, list[str]]:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    specs = [
        RunSpec(resolve_settings(m, KEYKEEPER, {"max_tokens": 200}), gateway, repeat=k)
        for m in models
        for k in range(repeats)
    ]
    rows = await run_batch(db, KEYKEEPER, specs, concurrency=8, retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row["model"], []).append(row["run"])
    return out


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


@pytest.mark.slow
async def test_rounds_grow_from_the_people_verdicts_never_twice_over_the_same_two_runs(db, fake_server):
    runs = await play(db, fake_server, [f"m{k};tokens={20 + 5 * k}" for k in range(6)], repeats=2)
    queue, made = adaptive_queue.create(db, "keykeeper", budget=14, catch=2, seed=5)
    assert made == {"sides": 6, "budget": 14, "round": 1, "pairs": 9, "order": "shuffled"}
    plan = queue_plans.get(db, queue)
    assert plan["budget"] == 14 and plan["stopped"] is None
    first = pairing.queue_pairs(db, queue, catches=False)
    assert {p["round"] for p in first} == {1} and len(first) == 9
    side_of = pairing.queue_sides(db, queue)
    assert set(side_of.values()) == set(runs)  # each run stands for its model
    # Nothing judged yet: the round waits, and nothing is added.
    waiting = adaptive_queue.extend(db, queue, "humans")
    assert waiting.waiting == 9 and waiting.added == []
    # A person judges every pair overall: the longer replies win.
    length = {m: int(m.split("=")[1]) for m in runs}
    for pair in pairing.queue_pairs(db, queue):
        a, b = length[side_of[pair["run_a"]]], length[side_of[pair["run_b"]]]
        pairing.judge(db, pair, pairing.OVERALL, "A" if a > b else "B", "ada")
    second = adaptive_queue.extend(db, queue, "humans")
    assert second.number == 2 and 0 < len(second.added) <= 14 - 9
    shown = pairing.queue_pairs(db, queue, catches=False)
    assert len(shown) <= 14 and {p["round"] for p in shown} == {1, 2}
    combos = Counter(frozenset((p["run_a"], p["run_b"])) for p in shown)
    assert max(combos.values()) == 1  # a pair of runs is never played twice
    per_side = Counter(side_of[r] for p in shown if p["round"] == 2 for r in (p["run_a"], p["run_b"]))
    assert max(per_side.values()) <= adaptive.PER_SIDE
    # The catch trials asked for are spread over the rounds; none counts as a pair of the budget.
    catches = [p for p in pairing.queue_pairs(db, queue) if p["catch_of"]]
    assert 1 <= len(catches) <= 2
    # A judge's verdicts do not move a queue the people drive.
    for pair in pairing.queue_pairs(db, queue):
        pairing.judge(db, pair, pairing.OVERALL, "A", "judge:x")
    assert adaptive_queue.extend(db, queue, "humans").waiting == len(second.added)


async def test_the_queue_ends_at_its_budget_and_says_so(db, fake_server):
    await play(db, fake_server, [f"m{k};tokens={20 + 5 * k}" for k in range(4)])
    queue, made = adaptive_queue.create(db, "keykeeper", budget=20, seed=1)
    assert made["budget"] == 6 and made["pairs"] == 6  # four models, one run each: six pairs in all, the anchors
    for pair in pairing.queue_pairs(db, queue):
        pairing.judge(db, pair, pairing.OVERALL, "tie", "ada")
    end = adaptive_queue.extend(db, queue, "humans")
    assert end.added == [] and end.reason == "the budget is spent (6 of 6 pairs)"
    assert queue_plans.get(db, queue)["stopped"] == end.reason
    assert adaptive_queue.extend(db, queue, "humans").reason == end.reason


def test_adaptive_needs_a_scenario_and_two_models(db, tmp_path):
    from click.testing import CliRunner

    from sieve.cli import main

    path = path_of(db)
    refused = CliRunner().invoke(main, ["pair", "--adaptive", "--db", path])
    assert refused.exit_code == 2 and "--adaptive makes a queue of every model of a --scenario" in refused.output
    refused = CliRunner().invoke(main, ["pair", "--scenario", "keykeeper", "--adaptive", "--summary", "--db", path])
    assert refused.exit_code == 2 and "at least two models" in refused.output
    refused = CliRunner().invoke(main, ["pair", "--scenario", "keykeeper", "--budget", "3", "--db", path])
    assert refused.exit_code == 2 and "--budget goes with --adaptive" in refused.output


@pytest.mark.slow
async def test_judged_round_by_round_with_a_small_budget_the_right_top_model_is_found(db, fake_server):
    # Eight models whose replies differ in length; the judge prefers the longer transcript in both orders, so the
    # true order is known. 12 of the 28 pairs: the anchors (12 for eight sides) leave no room, so 16.
    models = [f"m{k};tokens={20 + 8 * k}" for k in (3, 0, 6, 1, 7, 4, 2, 5)]
    await play(db, fake_server, models)
    path = path_of(db)
    made = sieve(
        "pair", "--scenario", "keykeeper", "--adaptive", "--budget", "16", "--seed", "2", "--summary", "--db", path
    )
    assert made.returncode == 0, made.stderr
    queue = made.stderr.split()[1].rstrip(":")
    assert "round 1: 12 pairs" in made.stderr
    judged = sieve(
        "judge", "--pairs", queue, "--adaptive", "-m", JUDGE, "--endpoint", fake_server.base_url, "--db", path, "--json"
    )
    assert judged.returncode == 0, judged.stderr
    result = json.loads(judged.stdout)
    assert result["stopped"] == "the budget is spent (16 of 16 pairs)"
    assert result["rounds"] == [{"round": 2, "pairs": 4}]
    assert "round 2: 4 pairs" in judged.stderr
    shown = pairing.queue_pairs(db, queue)
    assert len(shown) == 16 and all(r["status"] == "complete" for r in result["pairs"])
    # Every pair judged in both orders, once each (the first round was not judged again).
    orders = db.execute("SELECT pair_id, COUNT(*) FROM judgings WHERE kind = 'pair' GROUP BY pair_id").fetchall()
    assert len(orders) == 16 and {n for _, n in orders} == {2}
    votes = leaderboard.votes(db, "keykeeper")["judges"]
    fit = ratings.fit(votes)
    best = max(fit.strengths, key=fit.strengths.get)
    assert best == "m7;tokens=76"


@pytest.mark.slow
async def test_the_pairs_screen_serves_an_adaptive_queue_and_adds_the_next_round_when_a_person_is_done(db):
    from sieve.engine.endpoints import Endpoints
    from sieve.tui.app import SieveApp
    from sieve.tui.screens.pairs import JudgePicker, PairScreen
    from tests.support.tui_helpers import on_screen, screen_is, wait_until
    from tests.test_pairs import score_all, story_run

    for k in range(6):
        story_run(db, f"maker/m{k}")
    queue, made = adaptive_queue.create(db, "story-5", budget=11, seed=4)
    pairs = pairing.queue_pairs(db, queue)
    assert made["pairs"] == len(pairs) == 9
    for pair in pairs:
        score_all(db, pair["run_a"], "ada")
        score_all(db, pair["run_b"], "ada")
    for pair in pairs[:-1]:  # everything but the last pair judged already
        pairing.judge(db, pair, pairing.OVERALL, "A", "ada")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: PairScreen(queue), blind=True)
    async with app.run_test(size=(200, 55)) as pilot:
        await wait_until(pilot, on_screen(app, "pair 9 of 9"))  # served where ada has work left
        await pilot.press("j")
        await wait_until(pilot, screen_is(app, JudgePicker))
        await pilot.press(*"overall", "enter")
        await pilot.press("enter")  # A
        await wait_until(pilot, on_screen(app, "round 2: 2 pairs added"))
        await pilot.press("n")
        await wait_until(pilot, on_screen(app, "pair 10 of 11"))
    added = [p for p in pairing.queue_pairs(db, queue) if p["round"] == 2]
    assert len(added) == 2


@pytest.mark.slow
async def test_sieve_pair_without_a_terminal_makes_the_queue_prints_its_id_and_exits_so_judging_can_be_scripted(
    db, fake_server
):
    runs = await play(db, fake_server, ["m1;tokens=20", "m2;tokens=60", "m3;tokens=40"])
    path = path_of(db)

    def pair(*args: str) -> subprocess.CompletedProcess:
        # No terminal on either side, as in a script or CI; the timeout fails a command that waits for a screen.
        return subprocess.run(
            [sys.executable, "-m", "sieve", "pair", *args, "--db", path],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    plain = pair(runs["m1;tokens=20"][0], runs["m2;tokens=60"][0])
    assert plain.returncode == 0, plain.stderr
    assert "\x1b" not in plain.stdout and "not opened (no terminal)" in plain.stderr
    queue = plain.stdout.strip()
    assert len(pairing.queue_pairs(db, queue)) == 1

    made = pair("--scenario", "keykeeper", "--adaptive", "--budget", "3", "--json")
    assert made.returncode == 0, made.stderr
    found = json.loads(made.stdout)
    assert found["pairs"] == 3 and found["adaptive"]["sides"] == 3 and found["catch_trials"] == 0
    judged = sieve(
        "judge", "--pairs", found["queue"], "--adaptive", "-m", JUDGE, "--endpoint", fake_server.base_url, "--db", path
    )
    assert judged.returncode == 0, judged.stderr
    statuses = db.execute("SELECT DISTINCT status FROM judgings WHERE kind = 'pair'").fetchall()
    assert statuses == [("complete",)]
    # What it says in words: the rounds by number (none here: the budget is the anchors), the scenario by name.
    assert "adaptive: no round added after the first; stopped: the budget is spent (3 of 3 pairs)" in judged.stdout
    assert "sieve results --scenario keykeeper --ratings --voters judges" in judged.stdout
    assert "of none" not in judged.stdout and "1 pairs" not in judged.stdout + judged.stderr
    summary = sieve("pair", "--queue", found["queue"], "--summary", "--db", path).stdout
    overall = next(line for line in summary.splitlines() if line.startswith("overall"))
    assert all(f"{m} " in overall for m in runs), overall  # three sides: each one's share, not the leader's alone
    assert pair("--queue", found["queue"], "--no-open").stdout.strip() == found["queue"]


def test_the_first_order_is_said_in_words_whose_cards_it_follows(db):
    # QA: "order": "people' cards (T)".
    field(db, {"a/one": 1, "b/two": 1, "c/three": 1}, judge=False)
    _, made = adaptive_queue.create(db, "keykeeper", budget=3, seed=1)
    assert made["order"] == "people's cards (T)"
