"""Ratings controlled for style (length, markdown), as LMArena does: a simulated field whose judge prefers longer
replies is set right, a field without that bias is left as it was, and each voter's length bias has its interval."""

from __future__ import annotations

import json
import math
import random

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.scoring import ratings, style, style_control
from sieve.store.scoring.ratings import Vote

SIDES = [f"s{k}" for k in range(6)]


def simulated(bias: float, seed: int = 0, runs: int = 4) -> list[Vote]:
    """Six models, s5 the best by 0.4 log odds a step, the weaker writing longer (each run around its model's mean
    length); every pair of runs judged twice. `bias`: the judge's coefficient on the normalised length difference."""
    rng = random.Random(seed)
    strength = {s: 0.4 * k for k, s in enumerate(SIDES)}
    length = {(s, r): 1000 * (6 - k) * math.exp(rng.gauss(0, 0.5)) for k, s in enumerate(SIDES) for r in range(runs)}
    votes = []
    for i, a in enumerate(SIDES):
        for b in SIDES[i + 1 :]:
            for ra in range(runs):
                for rb in range(runs):
                    for k in range(2):
                        x = style.difference({"length": length[a, ra]}, {"length": length[b, rb]}, ["length"])
                        eta = strength[a] - strength[b] + bias * x[0]
                        s, t = math.exp(eta / 2), math.exp(-eta / 2)
                        draw = rng.random() * (s + t + 0.3)
                        winner = "A" if draw < s else "B" if draw < s + t else "tie"
                        votes.append(Vote(a, b, winner, f"{a}{ra}{b}{rb}{k}", "judge", x))
    return votes


def order(strengths: dict[str, float]) -> list[str]:
    return sorted(strengths, key=lambda s: -strengths[s])


@pytest.mark.slow
def test_a_judge_that_prefers_longer_replies_is_set_right_by_the_length_control():
    votes = simulated(bias=4.0)
    raw = ratings.fit(votes)
    controlled = style_control.fit(votes)
    truth = list(reversed(SIDES))
    assert order(raw.strengths) != truth  # length pulls the long-winded weak models up
    assert order(controlled.strengths) == truth
    low, high = controlled.coefficient_interval(0)
    assert 0 < low < controlled.coefficients[0] < high
    bias = style_control.length_bias("judge", votes)
    assert bias.elo > 0 and bias.low > 0  # the interval excludes no bias


@pytest.mark.slow
def test_without_that_bias_the_controlled_ratings_stay_as_they_were():
    votes = simulated(bias=0.0)
    raw_rows = {r.side: r for r in ratings.table(votes, rounds=50, stability=False)}
    controlled = style_control.fit(votes)
    assert order(controlled.strengths) == order(ratings.fit(votes).strengths) == list(reversed(SIDES))
    for side in SIDES:  # every controlled rating inside its raw interval
        assert raw_rows[side].low <= controlled.rating(side) <= raw_rows[side].high
    bias = style_control.length_bias("judge", votes)
    assert bias.low <= 0 <= bias.high


def test_with_no_covariate_the_controlled_fit_is_the_plain_fit():
    rng = random.Random(3)
    votes = [Vote(*rng.sample(SIDES, 2), rng.choice(["A", "B", "tie", "A"]), f"p{n}") for n in range(200)]
    plain = ratings.fit(votes)
    controlled = style_control.fit(votes, covariates=0)
    for side in SIDES:
        assert controlled.strengths[side] == pytest.approx(plain.strengths[side], abs=1e-5)
    assert controlled.tie == pytest.approx(plain.tie, rel=1e-5)


def test_style_features_count_length_and_markdown():
    text = "# Title\n\nSome **bold** words.\n\n- one\n- two\n1. three\n__also bold__"
    found = style.features([text, "plain"])
    assert found == {"length": len(text) + 5, "headers": 1, "lists": 3, "bold": 2}
    a, b = {"length": 200.0, "bold": 0.0}, {"length": 100.0, "bold": 0.0}
    assert style.difference(a, b, ["length", "bold"]) == (pytest.approx(1 / 3), 0.0)
    assert style.covariate_names(("length", "markdown", "length")) == ["length", "headers", "lists", "bold"]


STORY = scenarios.load("story-5")


def run_of(db, model: str, words: int) -> str:
    run_id = store.create_run(db, STORY, model=model, endpoint="fake", settings={})
    for n, (step, _) in enumerate(STORY.script()):
        record.add_turn(db, run_id, idx=2 * n, role="user", origin="script", text=step.text, step_id=step.id)
        record.add_turn(db, run_id, idx=2 * n + 1, role="assistant", origin="reply", text="word " * words)
    record.set_run_status(db, run_id, "complete")
    return run_id


@pytest.mark.slow
def test_results_ratings_control_length_shows_both_and_each_voters_length_bias(db):
    rng = random.Random(1)
    runs = {m: [run_of(db, m, rng.randint(20, 200)) for _ in range(3)] for m in ("v/a", "v/b", "v/c")}
    length = {r: style.of_runs(db, [r])[r]["length"] for rs in runs.values() for r in rs}
    everyone = [r for rs in runs.values() for r in rs]
    queue = pairing.create_queue(db, [(x, y) for i, x in enumerate(everyone) for y in everyone[i + 1 :]], seed=1)
    for pair in pairing.queue_pairs(db, queue):
        longer = "A" if length[pair["run_a"]] > length[pair["run_b"]] else "B"
        pairing.judge(db, pair, "overall", longer, "ada")  # ada always prefers the longer
        pairing.judge(db, pair, "overall", "tie", "bob")  # bob cannot tell them apart
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    args = ["results", "--scenario", "story-5", "--ratings", "--control", "length", "--voters", "humans", "--db", path]
    invoked = CliRunner().invoke(main, [*args, "--format", "json"])
    assert invoked.exit_code == 0, (invoked.output, invoked.exception)
    board = json.loads(invoked.output)
    assert board["covariates"] == ["length"]
    assert all(
        "controlled" in row and row["controlled_low"] < row["controlled_high"] for row in board["groups"]["humans"]
    )
    biases = {b["voter"]: b for b in board["length_bias"]}
    assert biases["ada"]["low"] > 0 and biases["ada"]["longer_share"] == 1.0
    assert biases["bob"]["decisive"] == 0 and biases["bob"]["longer_share"] is None
    text = CliRunner().invoke(main, args).output
    assert "controlled" in text and "length bias" in text and "ada" in text
    refused = CliRunner().invoke(main, ["results", "--scenario", "story-5", "--control", "length", "--db", path])
    assert refused.exit_code == 2 and "--control goes with --ratings" in refused.output


def test_a_markdown_control_where_no_reply_has_markdown_gives_no_coefficient_and_says_why(db):
    # QA #17: "headers +0.00 (-19.60 to +19.60)": the prior alone, printed as if measured.
    runs = {m: [run_of(db, m, w) for w in widths] for m, widths in (("v/a", (30, 90)), ("v/b", (40, 120)))}
    everyone = [r for rs in runs.values() for r in rs]
    queue = pairing.create_queue(db, [(x, y) for i, x in enumerate(everyone) for y in everyone[i + 1 :]], seed=1)
    for n, pair in enumerate(pairing.queue_pairs(db, queue)):
        pairing.judge(db, pair, "overall", "AB"[n % 2], "ada")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    args = ["results", "--scenario", "story-5", "--ratings", "--control", "length", "--control", "markdown"]
    invoked = CliRunner().invoke(main, [*args, "--db", path, "--format", "json"])
    assert invoked.exit_code == 0, (invoked.output, invoked.exception)
    found = json.loads(invoked.output)["coefficients"]["humans"]
    for name in ("headers", "lists", "bold"):
        assert found[name]["value"] is None and found[name]["low"] is None, name
        assert "no data" in found[name]["note"]
    assert found["length"]["value"] is not None and found["length"]["low"] < found["length"]["high"]
    text = CliRunner().invoke(main, [*args, "--db", path]).output
    line = next(line for line in text.splitlines() if "coefficients" in line)
    assert "headers: no data" in line and "headers +0.00" not in line and "length " in line


@pytest.mark.slow
async def test_the_ratings_view_shows_the_controlled_ratings_and_each_voters_length_bias_on_c(db):
    from sieve.engine.endpoints import Endpoints
    from sieve.tui.app import SieveApp
    from sieve.tui.screens.ratings import RatingsScreen
    from tests.support.tui_helpers import screen_text, wait_until

    rng = random.Random(1)
    everyone = [run_of(db, m, rng.randint(20, 200)) for m in ("v/a", "v/b", "v/c") for _ in range(3)]
    length = {r: style.of_runs(db, [r])[r]["length"] for r in everyone}
    queue = pairing.create_queue(db, [(x, y) for i, x in enumerate(everyone) for y in everyone[i + 1 :]], seed=1)
    for pair in pairing.queue_pairs(db, queue):
        pairing.judge(db, pair, "overall", "A" if length[pair["run_a"]] > length[pair["run_b"]] else "B", "ada")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: RatingsScreen("story-5"))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: "v/a" in screen_text(app), timeout=20)
        assert "controlled" not in screen_text(app) and "c: control for style" in screen_text(app)
        await pilot.press("c")
        await wait_until(pilot, lambda: "controlled for length" in screen_text(app), timeout=30)
        shown = screen_text(app)
        assert "c. 95%" in shown and "length bias, Elo for the longer reply: ada +" in shown
        assert "(within noise)" not in shown.split("ada +", 1)[1].split(";")[0]  # ada always took the longer
        board = app.screen.board
        row = board["groups"]["humans"][0]
        assert (
            f"{row['controlled']:.0f}" in shown
            and f"{row['controlled_low']:.0f} to {row['controlled_high']:.0f}" in shown
        )
        await pilot.press("c")
        await wait_until(pilot, lambda: "controlled for length, headers, lists, bold" in screen_text(app), timeout=30)
        await pilot.press("c")
        await wait_until(pilot, lambda: "c: control for style" in screen_text(app), timeout=30)
        assert "c. 95%" not in screen_text(app)
