"""`sieve suggest` on runs of megabytes (issue 25 §8): the detectors read a bounded share of a run, say which
turns they read in part, and still find a model stuck in a loop. The timings are tests/perf/bench_big's."""

from __future__ import annotations

import json
import random
import tracemalloc

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.store.record import turns as record
from sieve.store.scoring import detectors, suggestions
from sieve.store.scoring.runview import RunView
from tests.support.fakeserver import WORDS
from tests.support.field_helpers import TRAIN, played_run


def looping_reply(size: int, seed: int = 1) -> str:
    """About `size` characters of a model stuck in a loop: one long paragraph said again and again."""
    rng = random.Random(seed)
    paragraph = " ".join(rng.choice(WORDS) for _ in range(400)) + ".\n\n"
    return paragraph * (size // len(paragraph) + 1)


def big_run(db, sizes: dict[int, int]) -> str:
    """A train run whose n-th reply (from 0) is a loop of sizes[n] characters; the others are short."""
    run_id = played_run(db, model="vendor/big")
    replies = [t for t in record.chosen_turns(db, run_id) if t["role"] == "assistant"]
    for n, size in sizes.items():
        db.execute("UPDATE turns SET text = ? WHERE id = ?", [looping_reply(size, n), replies[n]["id"]])
    return run_id


def test_the_budget_is_shared_the_short_turns_whole_and_the_long_ones_alike():
    assert detectors.shares([10, 20, 30], budget=100) == [10, 20, 30]  # the run fits: all of it
    assert detectors.shares([10, 500, 1000], budget=310) == [10, 150, 150]
    assert detectors.shares([100, 100, 100, 100], budget=200) == [50, 50, 50, 50]
    assert sum(detectors.shares([7, 10**7, 3, 10**6, 42] * 50, budget=10**5)) <= 10**5


@pytest.fixture
def small_budget(monkeypatch):
    """A budget of 100,000 characters: the same rule on a run a tenth the size, quickly."""
    monkeypatch.setattr(detectors, "READ_BUDGET", 100_000)
    return 100_000


def test_a_run_past_the_budget_is_read_in_part_from_each_long_turns_start(db, small_budget):
    run = big_run(db, {2: 90_000, 5: 70_000})
    view = RunView.open(db, run)
    read = detectors.run_text(view.turns, TRAIN)
    assert sum(len(t["text"]) for t in read.turns) <= small_budget
    whole = {t["id"]: t["text"] for t in view.turns}
    for turn in read.turns:
        assert whole[turn["id"]].startswith(turn["text"])  # a prefix: the spans point into the whole text
    cut = detectors.partly_read(view.turns)
    assert [idx for idx, _, _ in cut] == [5, 11] and all(r < size for _, r, size in cut)
    # The loop is still found, its quotes where they stand in the stored text.
    found = suggestions.detect(view)
    looping = [s for s in found if s.detector == "repetition" and any(sp.turn_idx == 5 for sp in s.spans)]
    assert looping
    for s in looping:
        for sp in s.spans:
            assert whole[sp.turn_id][sp.start : sp.end] == sp.text


def test_suggest_says_which_turns_it_read_in_part(db, small_budget):
    run = big_run(db, {0: 120_000})
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    shown = CliRunner().invoke(main, ["suggest", run, "--db", path])
    assert shown.exit_code == 0, shown.output
    assert "turn 1 read in part: its first" in shown.output and "of 120 KB" in shown.output
    assert "(the detectors read at most 100 KB of a run)" in shown.output
    data = json.loads(CliRunner().invoke(main, ["suggest", run, "--json", "--db", path]).output)
    ((cut,),) = [entry["read_in_part"] for entry in data]
    assert cut["turn"] == 1 and cut["of"] >= 120_000 and cut["read"] < small_budget


@pytest.mark.slow
def test_the_detectors_memory_stays_bounded_on_a_20_mb_run(db):
    run = big_run(db, {n: 20_000_000 // 10 for n in range(10)})
    view = RunView.open(db, run)
    assert sum(len(t["text"]) for t in view.turns) > 20_000_000
    tracemalloc.start()
    try:
        found = suggestions.detect(view)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found and peak < 150_000_000, f"peak {peak / 1e6:.0f} MB"
