"""Is the difference real? The statistics checked on worked examples and simulations with known answers, and the
comparisons (head to head, compare, results by model, people apart from judges) on real SQLite files."""

from __future__ import annotations

import csv
import io
import json
import math
import random

import pytest
from click.testing import CliRunner

from sieve import store
from sieve.cli import main
from sieve.store.record import pairs as pairing
from sieve.store.scoring import comparison, pair_summary, ratings, results, statistics
from sieve.store.scoring.ratings import Vote
from tests.support.scores import backed, score
from tests.test_pairs import STORY, story_run

ITEMS = [i.id for i in STORY.rubrics[0].items]  # C1..C10, each 1 to 5


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def card(db, run_id: str, reviewer: str, scores: list[int]) -> None:
    for item, value in zip(ITEMS, scores):
        # A judge's score counts only on its quote; a person's counts on their say-so too.
        quote = backed(db, run_id, item) if reviewer.startswith("judge:") else None
        score(db, run_id, item, value, quote, reviewer=reviewer)


def field(db, rng: random.Random, means: dict[str, float], runs: int = 5, reviewer: str = "ada") -> dict[str, list]:
    """Runs of each model, each scored by `reviewer` around the model's mean item score (1 to 5)."""
    out: dict[str, list] = {}
    for model, centre in means.items():
        for _ in range(runs):
            run_id = story_run(db, model)
            card(db, run_id, reviewer, [max(1, min(5, round(rng.gauss(centre, 0.8)))) for _ in ITEMS])
            out.setdefault(model, []).append(run_id)
    return out


# -- the statistics, on worked examples ---------------------------------------------------------


def test_nine_of_nine_is_not_certain():
    # Wilson's 95% interval for 9 of 9: (9 + 1.92) / (9 + 3.84) -/+ ... = 0.70 to 1.0; with the continuity
    # correction sieve uses (Newcombe 1998, method 4), 0.63 to 1.0.
    assert statistics.wilson(1.0, 9, corrected=False) == pytest.approx((0.7009, 1.0), abs=1e-3)
    assert statistics.wilson(1.0, 9) == pytest.approx((0.6288, 1.0), abs=1e-3)
    assert statistics.wilson(0.0, 9) == pytest.approx((0.0, 0.3712), abs=1e-3)
    low, high = statistics.wilson(0.5, 10)
    assert low == pytest.approx(1 - high) and low == pytest.approx(0.2014, abs=1e-3)


def test_student_t_matches_its_table():
    for df, expected in [(1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042)]:
        assert statistics.t_quantile(df) == pytest.approx(expected, abs=1e-3)


def test_the_permutation_p_value_is_exact_on_a_small_case():
    # Of the 20 ways to split six runs into two threes, two are as far apart as 1,2,3 | 4,5,6.
    assert statistics.permutation_p([1, 2, 3], [4, 5, 6]) == pytest.approx(2 / 20)
    assert statistics.permutation_p([1, 2, 3], [1, 2, 3]) == 1.0


def test_the_runs_needed_follow_the_power_formula():
    # n = 2 (1.96 + 0.8416)^2 * variance / effect^2: 31.4 for a variance of 2 and one point.
    assert statistics.runs_needed(2.0, effect=1.0) == 32
    assert statistics.runs_needed(0.0, effect=1.0, step=1.0) == math.ceil(2 * (1.96 + 0.8416) ** 2 * 0.25)


def test_small_samples_never_get_zero_width_intervals():
    same = statistics.difference([5, 5, 5], [3, 3, 3], step=1, bounds=(0, 24))
    assert same.high - same.low > 1.0 and same.low > 0  # agreeing runs: a spread under a step, not zero
    lone = statistics.difference([5], [3, 3, 3], step=1, bounds=(0, 24))
    assert (lone.low, lone.high, lone.p) == (-24, 24, 1.0)  # one run says nothing of its spread
    flat = statistics.spread([4, 4, 4], step=0.5, bounds=(0, 24))
    assert flat.sd == 0 and flat.high - flat.low > 0.5
    snap = statistics.spread([4], step=1, bounds=(0, 24))
    assert snap.snapshot and (snap.low, snap.high) == (0, 24)


@pytest.mark.slow
def test_a_null_is_within_noise_in_at_least_95_of_100_simulated_fields():
    rng = random.Random(2026)
    for runs in (3, 5, 10):  # a side's runs: the small samples are where an interval is tempted to lie
        quiet = 0
        for _ in range(100):
            a = [sum(rng.randint(1, 5) for _ in ITEMS) for _ in range(runs)]
            b = [sum(rng.randint(1, 5) for _ in ITEMS) for _ in range(runs)]
            quiet += statistics.difference(a, b, step=1, bounds=(10, 50)).within_noise
        assert quiet >= 95, runs


def test_a_coin_tossing_judge_leaves_the_head_to_head_within_noise_95_times_in_100():
    # Exactly, from the binomial: how often n fair coin tosses put the leader's Wilson interval above even.
    for n in range(3, 41):
        ahead = sum(math.comb(n, k) for k in range(n + 1) if statistics.wilson(max(k, n - k) / n, n)[0] > 0.5)
        assert ahead / 2**n <= 0.05, n
    # And by simulation, seeded: 1,000 queues of nine pairs.
    rng = random.Random(7)
    quiet = 0
    for _ in range(1000):
        share = sum(rng.random() < 0.5 for _ in range(9)) / 9
        quiet += statistics.wilson(max(share, 1 - share), 9)[0] <= 0.5
    assert quiet >= 950


def test_ratings_from_nine_unanimous_votes_have_a_wide_interval():
    rows = ratings.table([Vote("good", "plain", "A", f"p{n}") for n in range(9)])
    good = rows[0]
    assert good.side == "good" and good.high - good.low > 200
    # The low end still allows a win probability near the Wilson interval's low end (0.63), not certainty.
    implied = 1 / (1 + math.exp(-2 * (good.low - 1000) / ratings.ELO))
    assert implied < 0.75


# -- the head to head names the winner ----------------------------------------------------------


def unanimous_queue(db, evaluators: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Three runs each of good and plain, every pair judged on every criterion by each evaluator for the side named."""
    for model in ("good", "plain"):
        for _ in range(3):
            story_run(db, model)
    made = cli("pair", "--scenario", "story-5", "--model", "good", "--model", "plain", "--db", path_of(db), "--summary")
    assert made.exit_code == 0, made.output
    (queue,) = [q for (q,) in db.execute("SELECT DISTINCT queue FROM pairs").fetchall()]
    sides = pairing.queue_sides(db, queue)
    for pair in pairing.queue_pairs(db, queue):
        for evaluator, favourite in evaluators.items():
            slot = "A" if sides[pair["run_a"]] == favourite else "B"
            for criterion, _ in pairing.criteria(STORY):
                pairing.judge(db, pair, criterion, slot, evaluator)
    return queue, sides


def test_a_queue_every_pair_of_which_went_to_one_model_names_it_ahead(db):
    queue, sides = unanimous_queue(db, {"ada": "good", "judge:x": "good"})
    assert set(sides.values()) == {"good", "plain"}
    summary = json.loads(cli("pair", "--queue", queue, "--summary", "--json", "--db", path_of(db)).output)
    for criterion, row in summary["criteria"].items():
        assert (row["winner"], row["status"], row["share"]) == ("good", "ahead", 1.0), criterion
        assert row["low"] == pytest.approx(0.6288, abs=1e-3) and row["high"] == 1.0
        assert row["evaluators"] == {"ada": 1.0, "judge:x": 1.0} and row["split_pairs"] == 0
    text = cli("pair", "--queue", queue, "--summary", "--db", path_of(db)).output
    assert "good ahead" in text and "good 1.00 (0.63 to 1.00)" in text and "A's share" not in text
    for fmt in ("csv", "md"):  # the exports say the same thing
        exported = cli("pair", "--queue", queue, "--summary", "--format", fmt, "--db", path_of(db)).output
        assert exported.count("good ahead") == len(summary["criteria"]) and "0.63 to 1.00" in exported


def test_evaluators_who_agree_in_direction_but_split_on_a_pair_are_not_unresolved(db):
    queue, sides = unanimous_queue(db, {"ada": "good", "bob": "good"})
    first = pairing.queue_pairs(db, queue)[0]
    pairing.judge(db, first, "overall", "A" if sides[first["run_a"]] == "plain" else "B", "bob")  # bob: 8 of 9
    row = pair_summary.head_to_head(db, queue)["overall"]
    assert row["status"] == "ahead" and row["winner"] == "good"
    assert row["evaluators"] == {"ada": 1.0, "bob": pytest.approx(8 / 9)} and row["split_pairs"] == 1


def test_evaluators_who_disagree_in_direction_leave_it_unresolved(db):
    queue, _ = unanimous_queue(db, {"ada": "good", "bob": "plain"})
    row = pair_summary.head_to_head(db, queue)["overall"]
    assert row["status"] == "unresolved" and row["winner"] is None and row["split_pairs"] == 9


# -- compare: two sides over their runs ---------------------------------------------------------


@pytest.mark.slow
def test_compare_finds_a_built_in_effect_with_the_right_sign(db):
    runs = field(db, random.Random(1), {"good": 4.0, "plain": 2.5})
    result = comparison.compare(db, "story-5", "good", "plain")
    total = next(r for r in result["rows"] if r["figure"] == "C")
    assert total["status"] == "a ahead" and total["difference"] > 0 and total["low"] > 0
    assert total["a_runs"] == total["b_runs"] == 5 and total["p"] < 0.05
    assert total["runs_for_1_point"] >= 2 and total["a_sd"] is not None
    assert {"rubric", "a_mean", "b_mean", "difference", "low", "high", "p", "status"} <= set(total)
    item = next(r for r in result["rows"] if r["figure"] == "C1")
    assert item["item"] == "C1" and item["status"] in ("a ahead", "within noise")
    turned = comparison.compare(db, "story-5", "plain", ",".join(runs["good"]))
    assert next(r for r in turned["rows"] if r["figure"] == "C")["status"] == "b ahead"
    out = cli(
        "compare", "--scenario", "story-5", "--a", "good", "--b", "plain", "--format", "json", "--db", path_of(db)
    )
    assert out.exit_code == 0 and json.loads(out.output)["rows"] == json.loads(json.dumps(result["rows"]))
    text = cli("compare", "--scenario", "story-5", "--a", "good", "--b", "plain", "--db", path_of(db)).output
    assert "a ahead" in text and "runs for 1 point" in text and "cards: people's" in text


@pytest.mark.slow
def test_compare_reports_the_head_to_head_between_the_sides_beside_the_absolute_figures(db):
    runs = field(db, random.Random(8), {"good": 4.0, "plain": 2.5}, runs=3)
    made = cli("pair", "--scenario", "story-5", "--model", "good", "--model", "plain", "--summary", "--db", path_of(db))
    assert made.exit_code == 0
    (queue,) = [q for (q,) in db.execute("SELECT DISTINCT queue FROM pairs").fetchall()]
    for pair in pairing.queue_pairs(db, queue):
        for criterion in ("C1", "overall"):
            pairing.judge(db, pair, criterion, "A" if pair["run_a"] in runs["good"] else "B", "ada")
    turned = comparison.compare(db, "story-5", "plain", "good")  # b is the side that won every pair
    assert turned["head_to_head"]["overall"]["status"] == "b ahead"
    assert turned["head_to_head"]["overall"]["a_share"] == 0.0 and turned["head_to_head"]["overall"]["pairs"] == 9
    c1 = next(r for r in turned["rows"] if r["figure"] == "C1")
    assert c1["head_to_head"]["status"] == "b ahead" and c1["head_to_head"]["high"] < 0.5
    text = cli("compare", "--scenario", "story-5", "--a", "plain", "--b", "good", "--db", path_of(db)).output
    assert "head to head overall: b ahead (a 0.00, 0.00 to 0.37), 9 pairs" in text


@pytest.mark.slow
def test_compare_says_within_noise_on_a_null_and_unresolved_when_reviewers_point_opposite_ways(db):
    field(db, random.Random(3), {"one": 3.0, "two": 3.0}, runs=4)
    total = next(r for r in comparison.compare(db, "story-5", "one", "two")["rows"] if r["figure"] == "C")
    assert total["status"] == "within noise" and total["low"] <= 0 <= total["high"]
    # bob scores the other way round on the same runs: their directions differ.
    for view in store.list_runs(db, "story-5"):
        card(db, view["id"], "bob", [5 if view["model"] == "two" else 1] * len(ITEMS))
        card(db, view["id"], "ada", [5 if view["model"] == "one" else 2] * len(ITEMS))
    total = next(r for r in comparison.compare(db, "story-5", "one", "two")["rows"] if r["figure"] == "C")
    assert total["status"] == "unresolved" and total["a_evaluators"] == {"ada": 50.0, "bob": 10.0}


def test_a_side_with_one_run_is_a_snapshot(db):
    field(db, random.Random(4), {"once": 4.0}, runs=1)
    field(db, random.Random(5), {"often": 2.0}, runs=3)
    result = comparison.compare(db, "story-5", "once", "often")
    total = next(r for r in result["rows"] if r["figure"] == "C")
    assert total["status"] == "within noise" and (total["low"], total["high"]) == (-40, 40)
    assert any("a snapshot" in n for n in result["notes"])
    rows = comparison.by_model(db, "story-5", items=False)
    once = next(r for r in rows if r["model"] == "once")
    assert once["runs"] == 1 and "1 run: a snapshot" in once["note"] and once["sd"] is None


def test_results_by_model_give_each_model_a_distribution(db):
    field(db, random.Random(6), {"m/x": 4.0, "m/y": 2.0}, runs=4)
    out = cli("results", "--scenario", "story-5", "--by", "model", "--format", "json", "--db", path_of(db))
    rows = json.loads(out.output)
    total = {r["model"]: r for r in rows if r["figure"] == "C"}
    assert total["m/x"]["runs"] == 4 and total["m/x"]["low"] <= total["m/x"]["mean"] <= total["m/x"]["high"]
    assert total["m/x"]["min"] <= total["m/x"]["mean"] <= total["m/x"]["max"] and total["m/x"]["sd"] > 0
    with_items = cli("results", "--scenario", "story-5", "--by", "model", "--items", "--db", path_of(db)).output
    assert "C7" in with_items and "cards: people's" in with_items


# -- people and judges are never pooled ---------------------------------------------------------


def test_results_show_people_by_default_and_judges_on_request(db):
    run_id = story_run(db, "m/x")
    card(db, run_id, "ada", [5] * len(ITEMS))
    card(db, run_id, "judge:big", [1] * len(ITEMS))
    people = json.loads(cli("results", "--scenario", "story-5", "--format", "json", "--db", path_of(db)).output)
    assert (people[0]["C"], people[0]["reviewers"], people[0]["cards"]) == ("50", 1, "people")
    judged = cli("results", "--scenario", "story-5", "--format", "json", "--judges", "--db", path_of(db)).output
    assert (json.loads(judged)[0]["C"], json.loads(judged)[0]["cards"]) == ("10", "judges")
    both = json.loads(cli("results", "--scenario", "story-5", "--format", "json", "--all", "--db", path_of(db)).output)
    assert [(r["cards"], r["C"]) for r in both] == [("people", "50"), ("judges", "10")]
    text = cli("results", "--scenario", "story-5", "--db", path_of(db)).output
    assert "1 judges' cards left out: --judges, --all" in text
    headers, rows = results.table(db, "story-5")
    assert rows[0]["cards"] == "people"


# -- one run is not enough: extreme runs, and repeats that are independent -------------------------


@pytest.mark.slow
def test_extreme_runs_are_flagged_everywhere_and_played_again(db, fake_server):
    path = path_of(db)
    played = cli(
        "run",
        "keykeeper",
        "-m",
        "bad;empty=1",
        "-m",
        "cut;finish=length;tokens=5",
        "-m",
        "fine;tokens=5",
        "--endpoint",
        fake_server.base_url,
        "--db",
        path,
        "--retry-base",
        "0",
    )
    assert played.exit_code == 0, played.output
    runs = {r["model"]: r for r in json.loads(cli("runs", "--json", "--db", path).output)}
    # An empty reply with no cost is recorded as filtered, as the seeds record it.
    assert {f["what"] for f in runs["bad;empty=1"]["extreme"]} == {"a filtered reply"}
    assert runs["bad;empty=1"]["extreme"][0]["step"] == "m0"  # the first reply answers message 0, the setup
    assert {f["what"] for f in runs["cut;finish=length;tokens=5"]["extreme"]} == {"a reply cut at the output ceiling"}
    assert runs["fine;tokens=5"]["extreme"] == []
    assert "a filtered reply at m0" in cli("runs", "--db", path).output
    table = json.loads(cli("results", "--scenario", "keykeeper", "--format", "json", "--db", path).output)
    assert [r["extreme"] != [] for r in table] == [r["extreme"] != [] for r in runs.values()]
    by_model = json.loads(
        cli("results", "--scenario", "keykeeper", "--by", "model", "--format", "json", "--db", path).output
    )
    assert by_model == []  # nobody scored them yet: no figures to spread
    seeds = {r["settings"]["seed"] for r in runs.values()}
    assert len(seeds) == 3 and all(isinstance(s, int) for s in seeds)  # each run a seed of its own, recorded

    again = cli("run", "--again-extreme", "--scenario", "keykeeper", "--repeat", "2", "--db", path, "--retry-base", "0")
    assert again.exit_code == 0, again.output
    after = json.loads(cli("runs", "--json", "--db", path).output)
    replayed = sorted((r["model"], r["repeat"]) for r in after if r["id"] not in {x["id"] for x in runs.values()})
    assert replayed == [
        ("bad;empty=1", 1),
        ("bad;empty=1", 2),
        ("cut;finish=length;tokens=5", 1),
        ("cut;finish=length;tokens=5", 2),
    ]
    assert len({r["settings"]["seed"] for r in after}) == len(after)
    quiet = cli("run", "--again-extreme", "--scenario", "keykeeper", "--db", path, "--retry-base", "0")
    assert quiet.exit_code == 0  # they are still extreme: played again; fine never is
    assert "fine" not in quiet.stderr if hasattr(quiet, "stderr") else True


def test_repeats_with_identical_replies_are_not_independent(db, fake_server):
    path = path_of(db)
    played = cli(
        "run",
        "keykeeper",
        "-m",
        "same;text=The+keeper+nods.",
        "-m",
        "varied;tokens=6;seeded=1",
        "--repeat",
        "2",
        "--endpoint",
        fake_server.base_url,
        "--db",
        path,
        "--retry-base",
        "0",
    )
    assert played.exit_code == 0, played.output
    views = [comparison.RunView.open(db, r["id"]) for r in store.list_runs(db, "keykeeper")]
    from sieve.store.scoring import repeats

    groups = repeats.identical_groups(views)
    same = sorted(r["id"] for r in store.list_runs(db, "keykeeper") if r["model"].startswith("same"))
    assert groups == [same]
    assert "not independent" in repeats.note(repeats.not_independent(views), same)


@pytest.mark.slow
def test_compare_in_md_and_csv_keeps_the_sides_and_the_notes_and_three_runs_a_side_cannot_be_ahead(db):
    field(db, random.Random(2), {"good": 4.6, "plain": 1.4}, runs=3)
    args = ["compare", "--scenario", "story-5", "--a", "good", "--b", "plain", "--db", path_of(db)]
    result = comparison.compare(db, "story-5", "good", "plain")
    total = next(r for r in result["rows"] if r["figure"] == "C")
    assert total["low"] > 0 and total["p"] == pytest.approx(0.1)  # 3 against 3: no split is rarer than 2 in 20
    assert total["status"] == "within noise"
    assert any("3 runs against 3: no permutation of so few runs gives p below 0.100" in n for n in result["notes"])
    md = cli(*args, "--format", "md").output
    assert md.startswith("a: good (3 runs)   b: plain (3 runs)") and "cards: people's" in md
    assert "- 3 runs against 3" in md
    cells = [line.split(" | ") for line in md.splitlines() if line.startswith("| C |")]
    assert cells and cells[0][4] == f"{total['low']:.2f} to {total['high']:.2f}"  # no number escaped
    assert "\\-" not in md and "\\." not in md
    csv_out = CliRunner().invoke(main, [*args, "--format", "csv"])
    rows = list(csv.reader(io.StringIO(csv_out.stdout)))
    assert rows[0] == comparison.COMPARE_HEADERS and len(rows) == len(result["rows"]) + 1
    assert "a: good (3 runs)" in csv_out.stderr and "3 runs against 3" in csv_out.stderr
    assert json.loads(cli(*args, "--json").output) == json.loads(cli(*args, "--format", "json").output)


@pytest.mark.slow
def test_runs_with_identical_replies_count_as_one_draw_and_a_partly_scored_total_is_said_to_be_left_out(db):
    copies = [story_run(db, "maker/copy") for _ in range(3)]
    for run_id in copies:  # three runs of one configuration, word for word the same: one draw
        db.execute("UPDATE turns SET text = 'The same reply.' WHERE run_id = ? AND role = 'assistant'", [run_id])
        card(db, run_id, "ada", [4] * len(ITEMS))
    field(db, random.Random(7), {"maker/other": 2.0}, runs=3)
    result = comparison.compare(db, "story-5", "maker/copy", "maker/other")
    total = next(r for r in result["rows"] if r["figure"] == "C")
    assert total["a_runs"] == 1 and total["status"] == "within noise"
    assert "a: 3 runs with identical replies: not independent repeats, counted as 1" in result["notes"]
    partial = field(db, random.Random(8), {"maker/partial": 3.0}, runs=2)
    for run_id in partial["maker/partial"]:
        db.execute("UPDATE annotations SET removed = created WHERE run_id = ? AND item = 'C10'", [run_id])
    result = comparison.compare(db, "story-5", "maker/partial", "maker/other")
    assert "C" not in [r["figure"] for r in result["rows"]]  # a total is compared whole
    assert (
        "a: C total left out of 2 of 2 runs: their cards (people's) leave it unscored or partly scored "
        "(a total is compared whole; sieve results shows partial ones)"
    ) in result["notes"]
    text = cli("results", "--scenario", "story-5", "--by", "model", "--db", path_of(db)).output
    assert "maker/partial: C total left out of 2 of 2 runs" in text


def test_results_by_model_with_all_shows_people_and_judges_apart(db):
    runs = field(db, random.Random(9), {"m/x": 4.0, "m/y": 2.0}, runs=2)
    for run_id in runs["m/x"] + runs["m/y"]:
        card(db, run_id, "judge:j", [3] * len(ITEMS))
    out = cli("results", "--scenario", "story-5", "--by", "model", "--all", "--json", "--db", path_of(db))
    rows = [r for r in json.loads(out.output) if r["figure"] == "C"]
    assert sorted((r["model"], r["cards"]) for r in rows) == [
        ("m/x", "judges'"),
        ("m/x", "people's"),
        ("m/y", "judges'"),
        ("m/y", "people's"),
    ]
    assert {r["mean"] for r in rows if r["cards"] == "judges'"} == {30.0}
    plain = ["results", "--scenario", "story-5", "--db", path_of(db)]
    assert json.loads(cli(*plain, "--json").output) == json.loads(cli(*plain, "--format", "json").output)
    text = cli("results", "--scenario", "story-5", "--by", "model", "--all", "--db", path_of(db)).output
    assert "judges'" in text and "people's" in text
    empty = cli("results", "--scenario", "story-5", "--by", "model", "--reviewer", "nobody", "--db", path_of(db))
    assert "no figure: no complete run of story-5 has a card (nobody's)" in empty.output


def test_a_reply_that_never_came_is_no_empty_reply_of_the_model_a_complete_empty_one_is(db):
    # QA #5: a turn failed, stopped or interrupted before any text came is the record's event, not the model's.
    from sieve.store.scoring import extreme
    from sieve.store.scoring.runview import RunView
    from tests.support.report_field import keykeeper_run

    run = keykeeper_run(db, "a/one", 0)
    view = RunView.open(db, run)
    first, second, third = view.replies()[2:5]
    for turn, status in ((first, "interrupted"), (second, "failed"), (third, "cancelled")):
        db.execute("UPDATE turns SET status = ?, text = '' WHERE id = ?", [status, turn["id"]])
    assert extreme.flags(RunView.open(db, run)) == []
    db.execute("UPDATE turns SET status = 'complete' WHERE id = ?", [first["id"]])
    assert extreme.flags(RunView.open(db, run)) == [{"what": extreme.EMPTY, "step": view.steps[first["id"]]}]
