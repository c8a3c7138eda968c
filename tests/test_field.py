"""Scoring a field: each reviewer's own codes and order, the next run to score, catch trials and self-consistency,
the reviewers' table, blind-only reviewers, on the record and through the real commands."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import store
from sieve.cli import main
from sieve.engine.config import ConfigError, config_path, load_config
from sieve.store.record import annotations as notes
from sieve.store.record import bundles, catches
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import consistency, evidence, field, leaderboard, pair_summary, reviewers
from sieve.store.scoring.runview import RunView
from tests.support.field_helpers import TRAIN_ITEMS, played_run, score_all
from tests.support.scores import backed, score


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def runs(db) -> list[str]:
    """Six complete runs of the train test, oldest first."""
    return [played_run(db, model=f"vendor/model-{n}") for n in range(6)]


# -- codes and orders -----------------------------------------------------------------------


def test_a_code_belongs_to_its_reviewer_and_its_context(db, runs):
    run = runs[0]
    assert blinding.code(db, run, "ada") == blinding.code(db, run, "ada")  # stable
    seen = {
        blinding.code(db, run),
        blinding.code(db, run, "ada"),
        blinding.code(db, run, "bob"),
        blinding.code(db, run, "ada", "pair 1"),
        blinding.code(db, run, "ada", "pair 2"),
    }
    assert len(seen) == 5
    assert blinding.codes(db, runs, "ada")[run] == blinding.code(db, run, "ada")
    view = RunView.open(db, run, blind=True, viewer="ada")
    assert view.name == blinding.code(db, run, "ada")
    assert RunView.open(db, run, blind=True, viewer="ada", trial="T").code == blinding.code(db, run, "ada", "T")


def test_each_reviewer_has_an_order_of_their_own_that_new_runs_do_not_disturb(db):
    ids = [played_run(db, model=f"vendor/m{n}") for n in range(12)]
    ada, bob = blinding.shuffled(db, ids, "ada"), blinding.shuffled(db, ids, "bob")
    assert sorted(ada) == sorted(ids) and ada != ids and ada != ids[::-1] and ada != bob
    assert blinding.shuffled(db, reversed(ids), "ada") == ada  # fixed for the reviewer, whatever order it is asked in
    later = played_run(db, model="vendor/late")
    grown = blinding.shuffled(db, [*ids, later], "ada")
    assert [r for r in grown if r != later] == ada


# -- the next run -----------------------------------------------------------------------------


def test_the_next_run_is_the_first_unfinished_one_and_after_a_run_the_one_after_it(db, runs):
    assert field.next_run(db, "ada") == field.Next(runs[0])
    score_all(db, runs[0], "ada")
    score_all(db, runs[1], "ada", items=TRAIN_ITEMS[:3])  # begun, not finished
    assert field.next_run(db, "ada") == field.Next(runs[1])
    assert field.next_run(db, "ada", after=runs[1]) == field.Next(runs[2])
    assert field.next_run(db, "ada", after=runs[5]) == field.Next(runs[1])  # round to the start
    assert field.next_run(db, "bob") == field.Next(runs[0])  # bob's own progress
    for run in runs[1:]:
        score_all(db, run, "ada")
    assert field.next_run(db, "ada") is None


def test_blind_the_next_run_follows_the_reviewers_own_order(db, runs):
    order = blinding.shuffled(db, runs, "ada")
    assert field.next_run(db, "ada", blind=True).run_id == order[0]
    score_all(db, order[0], "ada")
    assert field.next_run(db, "ada", blind=True).run_id == order[1]
    assert field.next_run(db, "bob", blind=True).run_id == blinding.shuffled(db, runs, "bob")[0]


def test_only_complete_runs_of_the_scenario_asked_for_are_in_the_field(db, runs):
    from sieve import scenarios

    other = played_run(db, scenarios.load("story-5"))
    record.set_run_status(db, runs[0], "interrupted")
    assert field.next_run(db, "ada").run_id == runs[1]
    assert field.next_run(db, "ada", scenario="story-5").run_id == other
    assert field.next_run(db, "ada", scenario="keykeeper") is None


# -- catch trials of runs -----------------------------------------------------------------------


def test_a_catch_trial_brings_a_finished_run_back_under_a_new_code_with_a_card_of_its_own(db):
    runs = [played_run(db, model=f"vendor/m{n}") for n in range(4)]
    order = blinding.shuffled(db, runs, "ada")

    def next_one(after=None):
        return field.next_run(db, "ada", blind=True, catch=1, after=after)

    score_all(db, order[0], "ada", 1.0)
    assert next_one(order[0]) == field.Next(order[1])  # one of four finished: no catch trial due yet
    score_all(db, order[1], "ada", 1.0)
    found = next_one(order[1])  # half the field finished: the catch trial is due
    assert found.trial is not None and found.run_id == order[0]  # a finished run, not the one just left
    assert catches.of_reviewer(db, "ada")[0]["id"] == found.trial
    assert next_one(order[1]) == found  # begun and not finished: it comes first until it is
    view = found.view(db, "ada", blind=False)
    assert view.blind and view.trial == found.trial
    assert view.code not in (blinding.code(db, found.run_id, "ada"), blinding.code(db, found.run_id))
    assert view.card("ada").progress.items_scored == 0  # scored again from nothing

    # Scored again through the evidence path, as Review stores it: into the trial, the first card untouched.
    evidence.annotate(
        db, found.run_id, view=view, reviewer="ada", item="prose", rubric="key", kind="judgment", note="Fine."
    )
    for item in TRAIN_ITEMS:
        evidence.annotate(db, found.run_id, view=view, reviewer="ada", item=item, rubric="key", kind="score", score=0.5)
    evidence.annotate(db, found.run_id, view=view, reviewer="ada", item="T3", rubric="key", kind="score", score=1.0)
    notes.undo(db, found.run_id, "ada")  # Review's undo: the trial's last gesture, never the first card's
    assert RunView.open(db, found.run_id).card("ada").item("T3").low == 1.0
    assert view.card("ada").item("T3").low == 0.5 and view.card("ada").complete
    assert all(a["trial"] is None for a in notes.active(db, found.run_id, "ada"))
    assert field.standings(db, "ada", [RunView.open(db, found.run_id)])[found.run_id].totals.startswith("key 8 / 8")
    notes.undo(db, found.run_id, "ada", trial=found.trial)
    assert not view.card("ada").complete
    notes.redo(db, found.run_id, "ada", trial=found.trial)

    assert next_one(found.run_id) == field.Next(order[2])  # done: back to the field, no second trial
    (figure,) = consistency.of_runs(db).values()
    assert (figure.reviewer, figure.trials, figure.compared, figure.same) == ("ada", 1, 8, 0)
    assert figure.text().startswith("same 0 of 8 (0.00)")
    assert not field.next_run(db, "ada", blind=False, catch=1).trial  # catch trials are for blind reviews only


def test_catch_trials_travel_in_bundles_and_a_trial_from_nowhere_is_refused(db, tmp_path):
    run = played_run(db)
    score_all(db, run, "ada")
    trial = catches.create(db, "ada", run)
    score_all(db, run, "ada", 0.0, trial=trial)
    data = json.loads(bundles.dumps(bundles.export_bundle(db, [run])))
    other = store.open_db(tmp_path / "other.db")
    bundles.import_bundle(other, "b.json", json.loads(json.dumps(data)))
    assert consistency.of_runs(other)["ada"].compared == 8
    assert RunView.open(other, run).card("ada").item("T3").low == 1.0
    data["catch_trials"] = []
    fresh = store.open_db(tmp_path / "fresh.db")
    with pytest.raises(bundles.BundleError, match=r"annotations\[\d+\]\.trial: names no catch trial"):
        bundles.import_bundle(fresh, "b.json", data)


# -- catch trials of pairs ----------------------------------------------------------------------


def test_a_pair_queue_shows_its_catch_trials_later_with_the_sides_swapped(db, runs):
    chosen = pairing.every_pair(runs[:2], runs[2:5])  # six pairs
    queue = pairing.create_queue(db, chosen, seed=3, catch=2)
    shown = pairing.queue_pairs(db, queue)
    assert len(shown) == 8 and len(pairing.queue_pairs(db, queue, catches=False)) == 6
    by_id = {p["id"]: p for p in shown}
    again = [p for p in shown if p["catch_of"]]
    assert len(again) == 2
    for pair in again:
        first = by_id[pair["catch_of"]]
        assert (pair["run_a"], pair["run_b"]) == (first["run_b"], first["run_a"])
        assert pair["position"] > first["position"] + 1  # later, with another pair between
    counts = {}
    for pair in shown:
        counts[pair["run_a"]] = counts.get(pair["run_a"], 0) + 1
        counts[pair["run_b"]] = counts.get(pair["run_b"], 0) - 1
    assert max(abs(v) for v in counts.values()) <= 1  # still balanced

    # ada: the same verdict both times on one, the other flipped; bob judges only first showings.
    first_a, first_b = (by_id[p["catch_of"]] for p in again)
    pairing.judge(db, first_a, "overall", "A", "ada")
    pairing.judge(db, again[0], "overall", "B", "ada")  # sides swapped: B is the run that was A
    pairing.judge(db, first_b, "overall", "tie", "ada")
    pairing.judge(db, again[1], "overall", "A", "ada")
    pairing.judge(db, first_a, "overall", "B", "bob")
    summary = pair_summary.summary(db, queue)
    (ada,) = [r for r in summary["self_consistency"] if r["reviewer"] == "ada"]
    assert (ada["trials"], ada["compared"], ada["same"], ada["share"]) == (2, 2, 1, 0.5)
    assert [r["reviewer"] for r in summary["self_consistency"]] == ["ada"]
    # First showings only: ada gave first_a's A side a win and first_b a tie; bob gave it a loss.
    side_of = pairing.queue_sides(db, queue)
    side = side_of[first_a["run_a"]]
    shares = summary["criteria"]["overall"]["sides"][side]["evaluators"]
    also_in_the_tie = side in (side_of[first_b["run_a"]], side_of[first_b["run_b"]])
    assert shares == {"ada": (1.0 + 0.5) / 2 if also_in_the_tie else 1.0, "bob": 0.0}
    assert len(summary["pairs"]) == 6
    votes = leaderboard.votes(db, "train", by="run")["humans"]
    assert len(votes) == 3  # the catch trials' verdicts are no votes

    printed = cli("pair", "--queue", queue, "--summary", "--db", db.conn.execute("PRAGMA database_list").fetchone()[2])
    assert printed.exit_code == 0 and "catch trials against their first verdicts" in printed.output
    assert "ada       2      2         1     0.50" in printed.output


def test_pair_catch_is_given_when_the_queue_is_made(db, runs, tmp_path):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    made = CliRunner().invoke(main, ["pair", runs[0], runs[1], "--catch", "1", "--summary", "--db", path])
    assert made.exit_code == 0, made.output
    assert "1 pair and 1 shown again later (catch trials)" in made.output
    queue = db.execute("SELECT queue FROM pairs").fetchone()[0]
    assert [p["catch_of"] is not None for p in pairing.queue_pairs(db, queue)] == [False, True]
    refused = cli("pair", "--queue", queue, "--catch", "2", "--db", path)
    assert refused.exit_code == 2 and "catch trials are drawn when a queue is made" in refused.output


# -- the reviewers' table -----------------------------------------------------------------------


def test_results_reviewers_reports_items_time_self_consistency_and_agreement(db, runs, tmp_path):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    scales = {"ada": [1.0, 0.5, 0.0, 1.0], "bob": [1.0, 0.5, 0.5, 1.0]}
    for reviewer, values in scales.items():
        for run, value in zip(runs, values):
            score_all(db, run, reviewer, value, seconds=4.0 if reviewer == "ada" else 10.0)
    score(db, runs[4], "T3", 1.0, seconds=30.0)
    trial = catches.create(db, "ada", runs[0])
    score_all(db, runs[0], "ada", 1.0, trial=trial, items=TRAIN_ITEMS[:4], seconds=4.0)
    score(db, runs[0], "T3", 0.0, backed(db, runs[0], "T3"), reviewer="judge:m")

    rows = {r["reviewer"]: r for r in reviewers.reviewers(db, "train")}
    assert list(rows) == ["ada", "bob", "judge:m"]  # people first, then judges
    ada, bob, judge = rows["ada"], rows["bob"], rows["judge:m"]
    assert (ada["kind"], ada["runs"], ada["finished"], ada["items scored"]) == ("person", 5, 4, 33)
    assert (ada["median seconds"], ada["timed"]) == (4.0, 37)  # 32 + 1 + the 4 of the catch trial
    assert bob["median seconds"] == 10.0 and judge["median seconds"] is None and judge["kind"] == "judge"
    assert ada["self-consistency (runs)"]["same"] == 4 and ada["self-consistency (runs)"]["compared"] == 4
    assert bob["self-consistency (runs)"] is None
    # Item by item, ada against bob: the same on every item (one scale, values 1, ½, 0 vs 1, ½, ½, 1).
    from sieve.store.scoring.agreement import weighted_kappa

    want = weighted_kappa(list(zip(scales["ada"], scales["bob"])), (1.0, 0.5, 0.0))
    # The key's deductions stand as a ninth item, and neither took anything off: agreement 1 there.
    assert ada["agreement"] == bob["agreement"] == round((8 * want + 1) / 9, 3) and ada["items compared"] == 9
    assert judge["items compared"] == 2  # T3 against both people, and the deductions (none, by scoring at all)

    printed = cli("results", "--reviewers", "--scenario", "train", "--db", path)
    assert printed.exit_code == 0, printed.output
    lines = printed.output.splitlines()
    assert lines[0].split()[:4] == ["reviewer", "kind", "runs", "finished"]
    assert "same 4 of 4 (1.00)" in printed.output and f"{(8 * want + 1) / 9:.2f} (κw)" in printed.output
    data = json.loads(cli("results", "--reviewers", "--format", "json", "--db", path).output)
    assert [r["reviewer"] for r in data] == ["ada", "bob", "judge:m"] and data[0]["median seconds"] == 4.0

    agreement = cli("results", "--agreement", "--scenario", "train", "--db", path)
    assert "self-consistency: each reviewer's catch trials" in agreement.output
    assert "ada       runs  1       4         4     1.0" in agreement.output


def test_results_sort_by_progress_puts_the_least_scored_first(db, runs):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    for n, run in enumerate(runs[:4]):
        score_all(db, run, "ada", items=TRAIN_ITEMS[: 2 * n + 1])
    data = json.loads(
        cli("results", "--scenario", "train", "--sort", "progress", "--format", "json", "--db", path).output
    )
    assert [r["run"] for r in data] == [runs[4], runs[5], runs[0], runs[1], runs[2], runs[3]]
    assert data[2]["progress"].startswith("scored 1/8")
    reverse = json.loads(
        cli(
            "results", "--scenario", "train", "--sort", "progress", "--reverse", "--format", "json", "--db", path
        ).output
    )
    assert [r["run"] for r in reverse][:2] == [runs[3], runs[2]]
    wrong = cli("results", "--scenario", "train", "--sort", "nope", "--db", path)
    assert wrong.exit_code == 2 and "no column 'nope' to sort by" in wrong.output


# -- blind only ---------------------------------------------------------------------------------


def test_the_config_names_a_blind_only_reviewer_and_the_old_form_still_works(isolated_user_dirs):
    write_config('reviewer = "ada"\n')
    assert (load_config().reviewer, load_config().blind_only) == ("ada", False)
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    config = load_config()
    assert (config.reviewer, config.blind_only, config.blind_for("ada"), config.blind_for("bob")) == (
        "ada",
        True,
        True,
        False,
    )
    write_config("[reviewer]\nblind = true\n")
    assert load_config().blind_for("anyone")
    write_config('[reviewer]\nname = "ada"\nblind = "yes"\n')
    with pytest.raises(ConfigError, match=r"reviewer\.blind: must be true or false"):
        load_config()
    write_config('[reviewer]\nname = "ada"\nblnd = true\n')
    with pytest.raises(ConfigError, match=r"reviewer\.blnd: unknown key"):
        load_config()


def test_a_blind_only_reviewer_is_refused_what_is_not_blind(db, runs):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    refused = cli("review", runs[0][-8:], "--db", path)
    assert refused.exit_code == 2
    assert "ada reviews blind only (blind = true under [reviewer] in" in refused.output
    assert "open the run with --blind" in refused.output
    shown = cli("results", "--scenario", "train", "--db", path)
    assert shown.exit_code == 0 and "vendor/model" not in shown.output and runs[0] not in shown.output
    assert blinding.code(db, runs[0], "ada") in shown.output and "reviews blind only" in shown.output
    header = shown.output.splitlines()[1].split()
    assert "model" not in header and "date" not in header and "cost" not in header
    ratings = cli("results", "--scenario", "train", "--ratings", "--db", path)
    assert ratings.exit_code == 2 and "ratings name the models" in ratings.output
    other = cli("results", "--scenario", "train", "--db", path, "--format", "csv")
    assert "vendor/model" not in other.output


def test_runs_and_search_show_a_blind_only_reviewer_codes_and_no_model(db):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    runs = [played_run(db, model=f"acme/sekrit-{n}", reply="I am sekrit, made by Acme; Viktor nods.") for n in range(3)]
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    listed = cli("runs", "--db", path)
    assert listed.exit_code == 0 and "sekrit" not in listed.output and runs[0] not in listed.output
    codes = [line.split()[0] for line in listed.output.splitlines()[2:] if line.startswith("run-")]
    assert codes == [blinding.code(db, r, "ada") for r in blinding.shuffled(db, runs, "ada")]
    found = json.loads(cli("search", "Viktor", "--json", "--db", path).output)
    assert all("model" not in hit and "sekrit" not in hit["snippet"].lower() for hit in found)
    replies = [hit for hit in found if hit["role"] == "assistant"]
    assert len(replies) == 33 and all("I am ▒▒▒▒▒▒, made by ▒▒▒▒" in hit["snippet"] for hit in replies)
    assert {hit["run_id"] for hit in found} <= set(codes)


def test_review_next_says_when_nothing_is_left_and_catch_needs_a_blind_review(db, runs):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    for run in runs:
        score_all(db, run, "ada")
    done = cli("review", "--next", "--reviewer", "ada", "--db", path)
    assert done.exit_code == 0 and "Nothing left to score: ada has finished every complete run." in done.output
    catch = cli("review", "--next", "--catch", "2", "--reviewer", "ada", "--db", path)
    assert catch.exit_code == 2 and "catch trials (--catch) are for --next --blind" in catch.output
    both = cli("review", runs[0], "--next", "--db", path)
    assert both.exit_code == 2 and "give a RUN or --next, not both" in both.output
    unknown = cli("review", "--next", "--scenario", "nope", "--db", path)
    assert unknown.exit_code == 2 and "no run of the scenario nope" in unknown.output
