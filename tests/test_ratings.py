"""Ratings with ties (Davidson's Bradley–Terry), checked against values known in closed form, and the leaderboard."""

from __future__ import annotations

import math
import random

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.scoring import leaderboard, ratings
from sieve.store.scoring.ratings import Vote
from sieve.tui.app import SieveApp
from sieve.tui.screens.ratings import RatingsScreen, interval_bar
from sieve.tui.screens.results import ResultsScreen
from tests.support.report_field import field
from tests.support.scores import score
from tests.support.tui_helpers import screen_text, wait_until


def votes(a: str, b: str, a_wins: int, b_wins: int, ties: int, pair: str = "") -> list[Vote]:
    out = [Vote(a, b, "A", pair or f"{a}{b}w{n}") for n in range(a_wins)]
    out += [Vote(a, b, "B", pair or f"{a}{b}l{n}") for n in range(b_wins)]
    out += [Vote(a, b, "tie", pair or f"{a}{b}t{n}") for n in range(ties)]
    return out


def test_two_sides_match_the_closed_form_of_davidsons_model():
    # With two sides the model is saturated: P(A) = 6/12, P(B) = 2/12, P(tie) = 4/12, so
    # p_A / p_B = 6 / 2 and v = ties / sqrt(wins_A * wins_B) = 4 / sqrt(12).
    fit = ratings.fit(votes("A", "B", 6, 2, 4), prior=0)
    assert fit.strengths["A"] - fit.strengths["B"] == pytest.approx(math.log(3), abs=1e-9)
    assert fit.tie == pytest.approx(4 / math.sqrt(12), abs=1e-9)
    # On the Elo scale: 400 * log10(3) points apart.
    assert fit.rating("A") - fit.rating("B") == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_a_tie_is_an_answer_not_half_a_win():
    # Four ties and no decision: equal strengths, and the tie parameter carries the ties.
    fit = ratings.fit(votes("A", "B", 1, 1, 4), prior=0)
    assert fit.strengths["A"] == pytest.approx(fit.strengths["B"], abs=1e-9)
    assert fit.tie == pytest.approx(4 / 1, abs=1e-9)
    # Half-win counting would give A and B the same too, but the tie rate it implies is lost:
    # here the fitted probability of a tie is the observed 4 in 6.
    u = v = math.exp(fit.strengths["A"])
    w = fit.tie * math.sqrt(u * v)
    assert w / (u + v + w) == pytest.approx(4 / 6, abs=1e-9)


def test_a_cycle_with_equal_records_rates_everyone_equal():
    data = votes("A", "B", 3, 1, 1) + votes("B", "C", 3, 1, 1) + votes("C", "A", 3, 1, 1)
    fit = ratings.fit(data, prior=0)
    assert max(fit.strengths.values()) - min(fit.strengths.values()) == pytest.approx(0, abs=1e-9)


def test_the_fit_is_where_the_likelihood_is_highest():
    rng = random.Random(4)
    sides = [f"m{i}" for i in range(6)]
    data = []
    for n in range(300):
        a, b = rng.sample(sides, 2)
        data.append(Vote(a, b, rng.choice(["A", "A", "B", "tie"]), f"p{n}"))
    fit = ratings.fit(data)
    best = ratings.log_likelihood(data, fit.strengths, fit.tie)
    for side in sides:  # any small move of one strength, or of the tie parameter, only lowers it
        for delta in (-1e-3, 1e-3):
            moved = dict(fit.strengths, **{side: fit.strengths[side] + delta})
            assert ratings.log_likelihood(data, moved, fit.tie) < best
    for factor in (0.999, 1.001):
        assert ratings.log_likelihood(data, fit.strengths, fit.tie * factor) < best


def test_a_side_that_never_lost_still_gets_a_finite_rating():
    fit = ratings.fit(votes("A", "B", 5, 0, 0) + votes("B", "C", 2, 2, 1))
    assert all(math.isfinite(s) for s in fit.strengths.values())
    assert fit.strengths["A"] > fit.strengths["B"]


def test_intervals_contain_the_rating_and_narrow_with_more_votes():
    few = ratings.table(votes("A", "B", 3, 1, 1) + votes("B", "C", 3, 1, 1), rounds=100, stability=False)
    many = ratings.table(votes("A", "B", 30, 10, 10) + votes("B", "C", 30, 10, 10), rounds=100, stability=False)
    for rows in (few, many):
        for row in rows:
            assert row.low <= row.rating <= row.high
    width = {r.side: r.high - r.low for r in few}
    assert all(r.high - r.low < width[r.side] for r in many)


def test_stability_finds_how_few_votes_flip_a_close_order():
    # A leads B 3 to 2: take away two of A's wins and B is ahead ("a ranking can flip when
    # only two votes are removed").
    close = ratings.table(votes("A", "B", 3, 2, 1), rounds=20)
    assert [r.side for r in close] == ["A", "B"]
    assert close[0].flips_at == 2 and close[0].stability == "flips at k = 2"
    assert close[1].stability == ""  # the last row has no row below it
    # A far ahead of B holds past the number of removals tried.
    clear = ratings.table(votes("A", "B", 30, 1, 0) + votes("B", "C", 15, 15, 0), rounds=20)
    assert clear[0].side == "A" and clear[0].flips_at is None and "stable" in clear[0].stability


def story_run(db, model: str) -> str:
    story = scenarios.load("story-5")
    run_id = store.create_run(db, story, model=model, endpoint="fake", settings={})
    for n, step in enumerate(story.steps[:2]):
        record.add_turn(db, run_id, idx=2 * n, role="user", origin="script", text=step.text, step_id=step.id)
        record.add_turn(db, run_id, idx=2 * n + 1, role="assistant", origin="reply", text=f"{model} says {n}.")
    record.set_run_status(db, run_id, "complete")
    return run_id


def test_the_leaderboard_fits_people_and_judges_apart_and_shows_card_totals_per_rubric(db):
    old = [story_run(db, "engine/old") for _ in range(2)]
    new = [story_run(db, "engine/new") for _ in range(2)]
    queue = pairing.create_queue(db, pairing.every_pair(old, new), seed=1)
    for pair in pairing.queue_pairs(db, queue):
        new_side = "A" if pair["run_a"] in new else "B"
        pairing.judge(db, pair, "overall", new_side, "ada")  # the people prefer the new engine
        pairing.judge(db, pair, "overall", "tie", "judge:m")  # the judge sees no difference
    for run_id, value in [(old[0], 2), (new[0], 4)]:
        score(db, run_id, "C1", value)
    board = leaderboard.leaderboard(db, "story-5", rounds=50)
    humans = {r["side"]: r for r in board["groups"]["humans"]}
    judges = {r["side"]: r for r in board["groups"]["judges"]}
    assert humans["engine/new"]["rating"] > humans["engine/old"]["rating"]
    assert humans["engine/new"]["votes"] == 4 and humans["engine/new"]["wins"] == 4
    assert judges["engine/new"]["rating"] == pytest.approx(judges["engine/old"]["rating"])
    assert judges["engine/new"]["ties"] == 4
    assert board["rubrics"] == ["C"]
    assert humans["engine/new"]["C"] == "4 (partial)" and humans["engine/old"]["C"] == "2 (partial)"
    only_judges = leaderboard.leaderboard(db, "story-5", voters="judges", rounds=10)
    assert list(only_judges["groups"]) == ["judges"]


def test_an_interval_bar_puts_the_rating_inside_its_interval_on_a_shared_scale():
    bar = interval_bar(900, 1000, 1100, 800, 1200, width=21).plain
    assert bar.index("●") == 10 and bar[5:16].strip(" ") == bar[5:16] and bar[:5].strip() == ""
    assert interval_bar(1000, 1000, 1000, 1000, 1000, width=5).plain.count("●") == 1


@pytest.mark.slow
async def test_the_ratings_view_shows_people_and_judges_and_switches_voters(db):
    old = [story_run(db, "engine/old") for _ in range(2)]
    new = [story_run(db, "engine/new") for _ in range(2)]
    queue = pairing.create_queue(db, pairing.every_pair(old, new), seed=1)
    for pair in pairing.queue_pairs(db, queue):
        pairing.judge(db, pair, "overall", "A" if pair["run_a"] in new else "B", "ada")
        pairing.judge(db, pair, "overall", "tie", "judge:m")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("story-5"))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.press("R")  # from the scenario's Results
        await wait_until(pilot, lambda: isinstance(app.screen, RatingsScreen))
        await wait_until(pilot, lambda: "engine/new" in screen_text(app), timeout=20)
        shown = screen_text(app)
        assert "humans" in shown and "judges" in shown and "●" in shown and "4/0/0" in shown and "0/4/0" in shown
        await pilot.press("v")  # people only
        await wait_until(pilot, lambda: "judges" not in screen_text(app).split("\n", 2)[2], timeout=20)
        assert "humans" in screen_text(app)


def test_the_totals_beside_the_ratings_are_each_groups_own_cards_as_results_shows_them_and_archived_runs_are_out(db):
    from sieve.store.record import archive
    from tests.support.field_helpers import TRAIN_ITEMS, played_run, score_all
    from tests.support.scores import backed

    a, a_archived, b = (played_run(db, model=m) for m in ("vendor/a", "vendor/a", "vendor/b"))
    score_all(db, a, "ada", 1.0)
    score(db, a, TRAIN_ITEMS[0], 0.5, reviewer="ada", score_high=1.0)  # undecided, ½–1: ada's card is 7½–8
    score_all(db, a, "bob", 0.5, items=TRAIN_ITEMS[:4])  # bob's leaves half the key unscored: 2, partial

    def judge_card(run_id: str, value: float) -> None:  # a judge's scores count only on a quote that backs them
        for item in TRAIN_ITEMS:
            score(db, run_id, item, value, backed(db, run_id, item), reviewer="judge:m")

    judge_card(a, 0.0)  # the judge's: 0, never pooled with the people's
    for run_id in (b, a_archived):
        score_all(db, run_id, "ada", 1.0 if run_id == b else 0.0)
        judge_card(run_id, 1.0)
    for winner, run_a in (("A", a), ("B", a_archived)):
        queue = pairing.create_queue(db, pairing.every_pair([run_a], [b]), seed=1)
        for pair in pairing.queue_pairs(db, queue):
            for voter in ("ada", "judge:m"):
                pairing.judge(
                    db, pair, "overall", winner if pair["run_a"] == run_a else "AB".replace(winner, ""), voter
                )
    archive.archive(db, a_archived, "ada")

    board = leaderboard.leaderboard(db, "train", rounds=20)
    humans = {r["side"]: r for r in board["groups"]["humans"]}
    judges = {r["side"]: r for r in board["groups"]["judges"]}
    assert humans["vendor/a"]["key"] == "4.75–5 (partial)"  # (7½–8 + 2) / 2, as results prints the run's total
    assert humans["vendor/a"]["totals"]["key"] == {
        "low": 4.75,
        "high": 5.0,
        "runs": 1,
        "partial_runs": 1,
        "unsupported_left_out": 0,
    }
    assert judges["vendor/a"]["key"] == "0" and judges["vendor/b"]["key"] == "8" and humans["vendor/b"]["key"] == "8"
    assert humans["vendor/a"]["votes"] == 1 and judges["vendor/b"]["votes"] == 1  # the archived run's vote is out
    assert humans["vendor/a"]["wins"] == 1

    from sieve.store.scoring import results

    _, rows = results.table(db, "train")
    assert [r["run"] for r in rows] == [a, b] and rows[0]["key"].startswith("4.75–5 (partial")


def test_ratings_with_no_judgment_yet_say_so_instead_of_an_empty_table(db):
    field(db, {"a/one": 1, "b/two": 1}, judge=False)
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    out = CliRunner().invoke(main, ["results", "--scenario", "keykeeper", "--ratings", "--db", path])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("no head-to-head judgments (people's or judges') of keykeeper's runs on overall")
    assert "sieve pair --scenario keykeeper" in out.output and "rating" not in out.output
