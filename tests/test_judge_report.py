"""Judges judged (store.scoring.judge_report, `sieve results --judge-report`, `sieve judge --again`), each figure on
records built to have it: a judge that flips two items, judges that rank the field as the people do or not, and a
judge that favours its own maker's models."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sieve import scenarios
from sieve.cli import main
from sieve.store.record import catches
from sieve.store.scoring import judge_report, statistics
from tests.support import fakejudge
from tests.support.scores import backed, score
from tests.test_pairs import story_run

STORY = scenarios.load("story-5")
ITEMS = [i.id for i in STORY.rubrics[0].items]  # C1 … C10, each 1 to 5
RUBRIC = STORY.rubrics[0].id


def card(db, run: str, reviewer: str, total: int, trial: str | None = None, changed: dict | None = None) -> None:
    """A whole card whose rubric total is `total` (items of 3, the first ones a point higher or lower)."""
    offset = total - 3 * len(ITEMS)
    for n, item in enumerate(ITEMS):
        value = 3 + (1 if n < offset else -1 if n < -offset else 0)
        # A judge's score counts only on a verified quote (issue 24); a person's on their say-so too.
        quote = backed(db, run, item) if reviewer.startswith("judge:") else None
        score(db, run, item, (changed or {}).get(item, value), quote, reviewer=reviewer, trial=trial)


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


def test_a_judge_that_flips_two_items_on_a_repeat_has_them_counted_and_listed(db):
    first, second = story_run(db, "maker/a"), story_run(db, "maker/b")
    for run in (first, second):
        card(db, run, "judge:x", 30)
    card(db, first, "judge:x", 30, trial=catches.create(db, "judge:x", first), changed={"C3": 4, "C7": 2})
    card(db, second, "judge:x", 30, trial=catches.create(db, "judge:x", second))
    card(db, first, "ada", 30, trial=catches.create(db, "ada", first), changed={"C1": 5})  # a person: not a judge
    found = judge_report.stability(db, "story-5")
    assert list(found) == ["judge:x"]
    entry = found["judge:x"]
    by_item = {row["item"]: row for row in entry["items"]}
    assert by_item["C3"]["repeats"] == 2 and by_item["C3"]["flipped"] == 1 and by_item["C3"]["rate"] == 0.5
    assert (by_item["C3"]["low"], by_item["C3"]["high"]) == statistics.wilson(0.5, 2)
    assert by_item["C1"]["flipped"] == 0 and by_item["C1"]["low"] == 0.0
    assert entry["compared"] == 20 and entry["flipped"] == 2
    assert (entry["low"], entry["high"]) == statistics.wilson(0.1, 20)
    listed = [(f["run"], f["item"], f["first"], f["again"]) for f in entry["flipped_items"]]
    assert listed == [(first, "C3", "3", "4"), (first, "C7", "3", "2")]
    # The first card is the judge's card still: the repeat changed nothing in it.
    from sieve.store.scoring.runview import RunView

    assert RunView.open(db, first).card("judge:x").rubrics[0].low == 30


def field(db, judge_totals: dict[str, list[int]], people: list[int]) -> list[str]:
    """Four models, two runs each; the people's totals per model rise with `people`; each judge's per model given."""
    models = [f"maker/m{k}" for k in range(4)]
    for k, model in enumerate(models):
        for r in range(2):
            run = story_run(db, model)
            card(db, run, "ada", people[k] + r)
            card(db, run, "bob", people[k] + 1 - r)
            for judge, totals in judge_totals.items():
                card(db, run, judge, totals[k] + r)
    return models


@pytest.mark.slow
def test_rank_correlation_with_the_people_per_judge_and_for_the_judges_mean(db):
    field(db, {"judge:same": [22, 26, 30, 34], "judge:swap": [22, 30, 26, 34]}, people=[20, 25, 30, 35])
    found = judge_report.field_agreement(db, "story-5")[RUBRIC]
    same, swap = found["judges"]["judge:same"], found["judges"]["judge:swap"]
    assert same["spearman"] == 1 and same["kendall"] == 1 and same["runs"] == 8 and same["models"] == 4
    assert same["spearman_low"] <= 1 <= same["spearman_high"]
    # One neighbouring pair swapped in four: rho = 1 - 6 * 2 / (4 * 15), tau = (5 - 1) / 6.
    assert swap["spearman"] == pytest.approx(0.8) and swap["kendall"] == pytest.approx(0.667, abs=1e-3)
    assert swap["kendall_low"] <= swap["kendall"] <= swap["kendall_high"] and swap["kendall_low"] < 1
    # Their mean ties m1 and m2 (28 each): rho on midranks 4.5 / sqrt(4.5 * 5), tau-b 5 / sqrt(5 * 6).
    assert found["ensemble"]["spearman"] == pytest.approx(4.5 / 22.5**0.5, abs=1e-3)
    assert found["ensemble"]["kendall"] == pytest.approx(5 / 30**0.5, abs=1e-3)
    means = found["means"]["maker/m1"]
    assert means["judge:same"] == 26.5 and means["judge:swap"] == 30.5 and means["judges' mean"] == 28.5


def test_a_judge_that_favours_its_own_maker_has_a_bias_with_an_interval_that_excludes_none(db):
    judges = ["judge:anthropic/claude", "judge:openai/gpt"]
    for model, lift in (("anthropic/a", 4), ("openai/b", 1), ("google/c", 1)):
        for r in range(3):  # 3 of its own against 6: a permutation test can tell (2 against 4 could not: p >= 1/15)
            run = story_run(db, model)
            card(db, run, judges[1], 28 + r)
            card(db, run, judges[0], 28 + r + lift)
    rows = {r["judge"]: r for r in judge_report.same_maker(db, "story-5")}
    claude = rows["judge:anthropic/claude"]
    assert claude["own_runs"] == 3 and claude["own_gap"] == 4 and claude["other_gap"] == 1
    assert claude["bias"] == 3 and claude["low"] > 0 and claude["status"] == "favours its maker"
    assert claude["own_low"] < 4 < claude["own_high"]
    gpt = rows["judge:openai/gpt"]  # harsher than claude everywhere, least so on its own maker's: lenience, not bias
    assert gpt["own_gap"] == -1 and gpt["other_gap"] == -2.5


def test_results_judge_report_prints_every_part(db):
    runs = [story_run(db, "maker/a"), story_run(db, "maker/b"), story_run(db, "maker/c")]
    for n, run in enumerate(runs):
        card(db, run, "ada", 25 + 3 * n)
        card(db, run, "judge:x", 26 + 3 * n)
    card(db, runs[0], "judge:x", 26, trial=catches.create(db, "judge:x", runs[0]), changed={"C5": 1})
    args = ["results", "--scenario", "story-5", "--judge-report", "--db", path_of(db)]
    text = CliRunner().invoke(main, args).output
    assert "flip rate" in text and "the items that flipped" in text and "C5" in text
    assert "spearman" in text and "judge:x" in text
    found = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    assert found["field"][RUBRIC]["judges"]["judge:x"]["spearman"] == 1
    assert found["stability"]["judge:x"]["flipped"] == 1


@pytest.fixture(scope="module")
def judge_on_the_server():
    fakejudge.install()


@pytest.mark.slow
async def test_judge_again_repeats_with_the_recorded_judge_and_keeps_its_first_card(
    db, fake_server, judge_on_the_server
):
    from tests.test_judge import play

    (run,) = await play(db, fake_server, "vendor/a")
    path = path_of(db)

    def sieve(*args):
        return subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True, timeout=300)

    first = sieve(
        "judge", run, "-m", "judge;reply=judge;quotes=exact", "--endpoint", fake_server.base_url, "--db", path
    )
    assert first.returncode == 0, first.stderr
    before = db.execute("SELECT id FROM annotations WHERE reviewer LIKE 'judge:%' AND removed IS NULL").fetchall()
    again = sieve("judge", run, "--again", "--db", path)
    assert again.returncode == 0, again.stderr
    after = db.execute(
        "SELECT id FROM annotations WHERE reviewer LIKE 'judge:%' AND removed IS NULL AND trial IS NULL"
    ).fetchall()
    assert after == before  # the first card as it was
    (trial,) = [t["id"] for t in catches.of_reviewer(db, "judge:judge;reply=judge;quotes=exact")]
    packets = db.execute("SELECT covers, settings FROM judgings WHERE kind = 'card' ORDER BY id").fetchall()
    assert len(packets) == 2 and json.loads(packets[1][0])["trial"] == trial
    assert json.loads(packets[1][1])["temperature"] == json.loads(packets[0][1])["temperature"]
    found = judge_report.stability(db, "keykeeper")["judge:judge;reply=judge;quotes=exact"]
    assert found["compared"] > 0 and found["flipped"] == 0  # the same packet, the same card
    nothing = sieve("judge", story_run(db, "maker/z"), "--again", "--db", path)
    assert nothing.returncode == 2 and "no judge has judged these runs" in nothing.stderr


def test_a_judge_that_ties_every_model_has_no_rank_correlation_and_says_why(db):
    # QA #17: Spearman and Kendall were left blank with no reason when a judge gives every model one mean total.
    field(db, {"judge:flat": [30, 30, 30, 30]}, people=[20, 25, 30, 35])
    flat = judge_report.field_agreement(db, "story-5")[RUBRIC]["judges"]["judge:flat"]
    assert flat["spearman"] is None and flat["kendall"] is None
    assert flat["spearman_low"] is None and flat["kendall_high"] is None  # no interval around nothing
    assert flat["undefined"] == "undefined: the judge gives every model the same total"
    text = CliRunner().invoke(main, ["results", "--scenario", "story-5", "--judge-report", "--db", path_of(db)]).output
    line = next(line for line in text.splitlines() if "judge:flat" in line and RUBRIC in line)
    assert "the judge gives every model the same total" in line


def test_a_judge_that_orders_the_models_has_no_note(db):
    field(db, {"judge:same": [22, 26, 30, 34]}, people=[20, 25, 30, 35])
    same = judge_report.field_agreement(db, "story-5")[RUBRIC]["judges"]["judge:same"]
    assert same["undefined"] is None and same["spearman"] == 1
