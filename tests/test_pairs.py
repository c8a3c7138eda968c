"""Blind pairs: a balanced queue, absolute scores first, head to head with ties; reviewers aggregated and compared."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.scoring import pair_summary
from sieve.store.scoring.agreement import cohen_kappa, item_agreement, krippendorff_alpha
from sieve.tui.app import SieveApp
from sieve.tui.screens.pairs import JudgePicker, PairScreen
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, screen_is, screen_text, wait_until

STORY = scenarios.load("story-5")


_DRAWS = itertools.count(1)


def story_run(db, model: str) -> str:
    """A complete run of story-5 whose replies are its own (repeats of a model are separate draws, not copies)."""
    draw = next(_DRAWS)
    run_id = store.create_run(db, STORY, model=model, endpoint="fake", settings={})
    for n, (step, _) in enumerate(STORY.script()):
        record.add_turn(
            db,
            run_id,
            idx=2 * n,
            role="user",
            origin="setup" if n == 0 else "script",
            text=step.text,
            step_id=step.id,
            step_repeat=1,
        )
        record.add_turn(
            db,
            run_id,
            idx=2 * n + 1,
            role="assistant",
            origin="reply",
            text=f"{model} narrates {step.id}, draw {draw}. I am {model}.",
        )
    record.set_run_status(db, run_id, "complete")
    return run_id


def score_all(db, run_id: str, reviewer: str, value: float = 3) -> None:
    for item in STORY.rubrics[0].items:
        score(db, run_id, item.id, value, reviewer=reviewer)


@pytest.fixture
def four(db):
    a = [story_run(db, f"engine-old/{n}") for n in range(2)]
    b = [story_run(db, f"engine-new/{n}") for n in range(2)]
    return a, b


def test_sides_are_drawn_at_random_and_balanced():
    pairs = pairing.every_pair(["a1", "a2", "a3"], ["b1", "b2", "b3"])
    for seed in range(20):
        sided = pairing.balanced_sides(pairs, seed)
        assert sorted(tuple(sorted(p)) for p in sided) == sorted(tuple(sorted(p)) for p in pairs)
        as_a, as_b = Counter(a for a, _ in sided), Counter(b for _, b in sided)
        assert all(abs(as_a[r] - as_b[r]) <= 1 for r in ["a1", "a2", "a3", "b1", "b2", "b3"])
    assert len({tuple(pairing.balanced_sides(pairs, seed)) for seed in range(20)}) > 1  # random, not fixed


@pytest.mark.slow
async def test_a_queue_of_four_pairs_judged_with_one_tie(db, four):
    a, b = four
    sides = {**{r: "old" for r in a}, **{r: "new" for r in b}}
    queue = pairing.create_queue(db, pairing.every_pair(a, b), seed=7, sides=sides)
    pairs = pairing.queue_pairs(db, queue)
    assert len(pairs) == 4
    assert all(Counter(p["run_a"] for p in pairs)[r] == 1 and Counter(p["run_b"] for p in pairs)[r] == 1 for r in a + b)
    app = SieveApp(db, Endpoints(), "ada", first=lambda: PairScreen(queue), blind=True)
    winners = ["A", "tie", "B", "A"]
    async with app.run_test(size=(200, 55)) as pilot:
        await wait_until(pilot, on_screen(app, "pair 1 of 4"))
        shown = screen_text(app)
        assert "pair 1 of 4" in shown and "engine" not in shown.lower()  # blind: the names are masked
        await pilot.press("j")  # not yet: absolute scores come first
        await wait_until(pilot, on_screen(app, "Score each transcript on its own first"))
        assert not isinstance(app.screen, JudgePicker)
        assert db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0
        for n, winner in enumerate(winners):
            score_all(db, pairs[n]["run_a"], "ada")
            score_all(db, pairs[n]["run_b"], "ada")
            await pilot.press("j")
            await wait_until(pilot, screen_is(app, JudgePicker))
            await pilot.press(*"overall", "enter")
            await pilot.press(*{"A": [], "B": ["down"], "tie": ["down", "down"]}[winner], "enter")
            await wait_until(pilot, on_screen(app, f"your verdicts: overall {winner}"))
            await pilot.press("n")
            if n < 3:
                await wait_until(pilot, on_screen(app, f"pair {n + 2} of 4"))
    judged = db.execute("SELECT pair_id, criterion, winner, run_a, run_b, blind FROM judgments ORDER BY id").fetchall()
    assert [w for _, c, w, _, _, _ in judged if c == "overall"] == winners
    assert all(blind == 1 for *_, blind in judged)
    assert [(ra, rb) for _, _, _, ra, rb, _ in judged] == [(p["run_a"], p["run_b"]) for p in pairs]
    summary = pair_summary.head_to_head(db, queue)["overall"]
    # Each verdict counts for the side its slot's run stands for, not for slot A.
    new_share = sum(
        0.5 if w == "tie" else float(sides[p["run_a" if w == "A" else "run_b"]] == "new")
        for p, w in zip(pairs, winners)
    ) / len(winners)
    leader, share = ("new", new_share) if new_share >= 0.5 else ("old", 1 - new_share)
    assert summary["side"] == leader and summary["share"] == pytest.approx(share)
    assert summary["status"] == "within noise" and summary["winner"] is None  # 4 pairs say little either way


def test_two_reviewers_are_averaged_per_reviewer_first_and_a_split_direction_is_unresolved(db, four):
    a, b = four
    sides = {**{r: "old" for r in a}, **{r: "new" for r in b}}
    queue = pairing.create_queue(db, pairing.every_pair(a, b), seed=3, sides=sides)
    pairs = pairing.queue_pairs(db, queue)

    def slot(pair, side):  # the slot (A or B) that shows this side's run in this pair
        return "A" if sides[pair["run_a"]] == side else "B"

    # ada prefers new on C1 and C2 in all four pairs; bob judges pair 1 only: old on C1, a tie on C2.
    for pair in pairs:
        pairing.judge(db, pair, "C1", slot(pair, "new"), "ada")
        pairing.judge(db, pair, "C2", slot(pair, "new"), "ada")
    pairing.judge(db, pairs[0], "C1", slot(pairs[0], "old"), "bob")
    pairing.judge(db, pairs[0], "C2", "tie", "bob")
    result = pair_summary.head_to_head(db, queue)
    assert result["C1"]["sides"]["new"]["evaluators"] == {"ada": 1.0, "bob": 0.0}
    # each reviewer's own mean first (1.0 and 0.0), not 5 verdicts pooled (which gives 0.8)
    assert result["C1"]["sides"]["new"]["share"] == 0.5
    assert result["C1"]["status"] == "unresolved" and result["C1"]["split_positions"] == [0]
    assert result["C2"]["status"] == "within noise" and result["C2"]["side"] == "new"
    assert result["C2"]["share"] == pytest.approx((1.0 + 0.5) / 2) and result["C2"]["split_pairs"] == 0
    out = CliRunner().invoke(
        main,
        [
            "pair",
            "--queue",
            queue,
            "--summary",
            "--json",
            "--db",
            db.conn.execute("PRAGMA database_list").fetchone()[2],
        ],
    )
    assert json.loads(out.output)["criteria"]["C1"]["status"] == "unresolved"


def test_agreement_between_reviewers():
    assert cohen_kappa([("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15) == pytest.approx(
        0.4
    )
    assert krippendorff_alpha([[1, 2], [2, 1], [3, 3]]) == pytest.approx(0.5833, abs=1e-3)
    assert krippendorff_alpha([[1, 1, 1], [2, 2, 2]]) == 1.0
    assert item_agreement({"r1": {"ada": 2, "bob": 2}, "r2": {"ada": 0, "bob": 1}})[0] == "kappa"
    assert item_agreement({"r1": {"a": 2, "b": 2, "c": 1}, "r2": {"a": 0, "b": 0, "c": 0}})[0] == "alpha"


def test_the_pair_command_builds_a_queue_from_two_models(db, four, tmp_path):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    result = CliRunner().invoke(
        main,
        [
            "pair",
            "--scenario",
            "story-5",
            "--model",
            "engine-old/0",
            "--model",
            "engine-new/1",
            "--summary",
            "--db",
            path,
        ],
    )
    assert result.exit_code == 0 and "queue" in result.output
    bad = CliRunner().invoke(main, ["pair", "--db", path])
    assert bad.exit_code == 2 and "give two runs" in bad.output


def test_one_pair_is_said_as_one_pair_wherever_pairs_are_counted():
    # QA #13 ("1 pairs"): the summaries of queues, comparisons and adaptive rounds count in words.
    from sieve.store.scoring import adaptive, comparison, pair_summary

    assert adaptive.stop_reason([], 1, 1) == "the budget is spent (1 of 1 pair)"
    three = {
        "side": "a/x",
        "share": 1.0,
        "low": 0.2,
        "high": 1.0,
        "sides": {
            "a/x": {"share": 1.0, "low": 0.21, "high": 1.0, "pairs": 1},
            "b/y": {"share": 0.5, "low": 0.1, "high": 0.9, "pairs": 2},
            "c/z": {"share": 0.0, "low": 0.0, "high": 0.79, "pairs": 1},
        },
    }
    said = pair_summary.share_text(three)
    assert said.startswith("a/x 1.00 (0.21 to 1.00, 1 pair), b/y") and "2 pairs" in said and "1 pairs" not in said
    row = {"status": "a ahead", "a_share": 1.0, "low": 0.21, "high": 1.0, "pairs": 1}
    assert comparison.head_to_head_text(row) == "a ahead (a 1.00, 0.21 to 1.00), 1 pair"
