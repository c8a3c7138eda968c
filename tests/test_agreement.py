"""Agreement figures against textbook worked examples; a model judge beside the people, with intervals."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import turns as record
from sieve.store.scoring import results
from sieve.store.scoring.agreement import (
    among_people,
    bootstrap_interval,
    cohen_kappa,
    judge_against_people,
    krippendorff_alpha,
    weighted_kappa,
)
from tests.support.scores import backed, score

# SAS/STAT PROC FREQ, the agreement example: two raters, three ordered categories, 19 subjects.
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
# R's irr package, data set `anxiety` (20 subjects, 3 raters, ratings 1-6), raters 2 and 3.
ANXIETY_2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
ANXIETY_3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units, values missing.
KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def sas_pairs() -> list[tuple[int, int]]:
    return [(i, j) for i in range(3) for j in range(3) for _ in range(SAS_TABLE[i][j])]


def test_kappa_and_weighted_kappa_match_the_sas_agreement_example():
    assert cohen_kappa(sas_pairs()) == pytest.approx(0.4842, abs=1e-4)
    assert weighted_kappa(sas_pairs(), [0, 1, 2]) == pytest.approx(0.4701, abs=1e-4)


def test_weighted_kappa_matches_the_irr_package_on_its_anxiety_data():
    pairs = list(zip(ANXIETY_2, ANXIETY_3))
    # irr's kappa2 orders the categories seen (1, 2, 3, 4, 6): "equal" weights are linear, "squared" quadratic.
    assert cohen_kappa(pairs) == pytest.approx(-0.006289308, abs=1e-8)
    assert weighted_kappa(pairs) == pytest.approx(0.1459075, abs=1e-7)
    assert weighted_kappa(pairs, weights="quadratic") == pytest.approx(0.2520325, abs=1e-7)
    # On the full scale 1-6 the unseen 5 counts as a step: a different (wider) scale, a different figure.
    assert weighted_kappa(pairs, [1, 2, 3, 4, 5, 6]) != pytest.approx(0.1459075, abs=1e-4)


def test_interval_alpha_matches_krippendorffs_worked_example():
    units = [[v for v in column if v is not None] for column in zip(*KRIPPENDORFF)]
    assert krippendorff_alpha(units) == pytest.approx(0.849, abs=1e-3)


def test_the_bootstrap_interval_is_repeatable_and_holds_the_estimate():
    units = [[pair] for pair in sas_pairs()]

    def kappa(sample):
        return weighted_kappa([p for unit in sample for p in unit], [0, 1, 2])

    low, high = bootstrap_interval(units, kappa)
    assert bootstrap_interval(units, kappa) == (low, high)
    assert low < 0.4701 < high and -1 <= low and high <= 1
    assert bootstrap_interval(units[:1], kappa) is None


def test_a_judge_beside_the_people_rests_on_the_runs_both_scored():
    scores = {
        "r1": {"judge:x": 2, "ada": 2, "bob": 2},
        "r2": {"judge:x": 0, "ada": 1, "bob": 0},
        "r3": {"judge:x": 1, "ada": 1},
        "r4": {"ada": 2, "bob": 1},
        "r5": {"judge:x": 2},
    }
    figure = judge_against_people(scores, "judge:x", ["ada", "bob"], [0, 1, 2])
    # Pairs pooled over the people: (2,2) (2,2) (0,1) (0,0) (1,1) on runs r1-r3.
    assert (figure.runs, figure.raters) == (3, 3)
    assert figure.value == pytest.approx(weighted_kappa([(2, 2), (2, 2), (0, 1), (0, 0), (1, 1)], [0, 1, 2]))
    people = among_people(scores, ["ada", "bob"], [0, 1, 2])
    assert people.measure == "weighted kappa" and people.runs == 3  # r1, r2, r4
    three = among_people({"a": {"p": 1, "q": 1, "s": 2}, "b": {"p": 0, "q": 0, "s": 0}}, ["p", "q", "s"], [0, 1, 2])
    assert three.measure == "alpha" and three.raters == 3


@pytest.fixture
def scored(tmp_path):
    db_path = tmp_path / "agree.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    runs = [store.create_run(db, keykeeper, model=f"m{i}", endpoint="e", settings={}) for i in range(6)]
    judge_scores, ada, bob = [2, 1, 0, 2, 1, 0], [2, 1, 1, 2, 0, 0], [2, 0, 1, 2, 1, 0]
    for run, j, a, b in zip(runs, judge_scores, ada, bob):
        record.add_turn(db, run, idx=0, role="user", origin="script", text="The coin.", step_id="m1", step_repeat=1)
        record.add_turn(db, run, idx=1, role="assistant", origin="reply", text=f"Havel takes the coin, run {run}.")
        score(db, run, "T1", j, reviewer="judge:m", quote=backed(db, run, "T1"))  # a judge's score needs its quote
        score(db, run, "T1", a)
        score(db, run, "T1", b, reviewer="bob")
    return db, str(db_path), judge_scores, ada, bob


def test_results_agreement_shows_the_judge_beside_the_people(scored):
    db, path, judge_scores, ada, bob = scored
    (row,) = results.agreement(db, "keykeeper")
    pooled = [(j, a) for j, a in zip(judge_scores, ada)] + [(j, b) for j, b in zip(judge_scores, bob)]
    assert row["judge"] == "judge:m" and row["judge_runs"] == 6 and row["people"] == 2
    assert row["judge_value"] == round(weighted_kappa(pooled, [0, 1, 2]), 3)
    assert row["people_value"] == round(weighted_kappa(list(zip(ada, bob)), [0, 1, 2]), 3)
    assert row["judge_low"] <= row["judge_value"] <= row["judge_high"]
    out = CliRunner().invoke(main, ["results", "--scenario", "keykeeper", "--agreement", "--db", path])
    header = out.output.splitlines()[0].split()
    assert header[:4] == ["item", "judge", "judge", "vs"] and "people" in header and "raters" in header
    line = out.output.splitlines()[2]
    assert line.startswith("T1") and "judge:m" in line and f"{row['judge_value']:.2f} (κw)" in line
    data = json.loads(
        CliRunner()
        .invoke(main, ["results", "--scenario", "keykeeper", "--agreement", "--format", "json", "--db", path])
        .output
    )
    assert data == [row]


def test_a_judge_giving_every_run_one_score_has_no_figure_and_says_why_not_zero_to_zero(tmp_path):
    # QA #17: a constant judge's kappa is 0 by construction and every resample repeats it: "0.00 to 0.00".
    db_path = tmp_path / "flat.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    for i, (a, b) in enumerate([(2, 2), (1, 0), (0, 1), (2, 1), (1, 1), (0, 0)]):
        run = store.create_run(db, keykeeper, model=f"m{i}", endpoint="e", settings={})
        record.add_turn(db, run, idx=0, role="user", origin="script", text="The coin.", step_id="m1", step_repeat=1)
        record.add_turn(db, run, idx=1, role="assistant", origin="reply", text=f"Havel takes the coin, run {run}.")
        score(db, run, "T1", 1, reviewer="judge:flat", quote=backed(db, run, "T1"))
        score(db, run, "T1", a)
        score(db, run, "T1", b, reviewer="bob")
    (row,) = results.agreement(db, "keykeeper")
    assert row["judge"] == "judge:flat" and row["judge_runs"] == 6
    assert row["judge_value"] is None and row["judge_low"] is None and row["judge_high"] is None
    assert "the judge gives every run one score" in row["judge_note"]
    assert row["people_value"] is not None and row["people_low"] is not None  # the people vary: theirs stands
    out = CliRunner().invoke(main, ["results", "--scenario", "keykeeper", "--agreement", "--db", str(db_path)])
    line = next(line for line in out.output.splitlines() if line.startswith("T1"))
    assert "the judge gives every run one score" in line and "0.00 to 0.00" not in line
