"""Scores as a reviewer writes them, the whole range: halves and quarters on both sides of zero, undecided ranges,
totals that a deduction takes below zero. And the same number wherever a run's total is shown: the Review card,
Home, the Markdown export and `sieve results` (QA: a negative half point was shown one point too low)."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.scenarios import format_value
from sieve.store.record import annotations as notes
from sieve.store.scoring.scorecard import number_text, range_text, total_text
from sieve.tui.app import SieveApp
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.review import ReviewScreen
from tests.support.field_helpers import played_run
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, screen_is, screen_text, wait_until


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (0, "0"),
        (0.25, "¼"),
        (0.5, "½"),
        (0.75, "¾"),
        (1, "1"),
        (1.5, "1½"),
        (2.25, "2¼"),
        (7.5, "7½"),
        (-0.25, "-¼"),
        (-0.5, "-½"),
        (-0.75, "-¾"),
        (-1, "-1"),
        (-1.25, "-1¼"),
        (-1.5, "-1½"),
        (-1.75, "-1¾"),
        (-2.5, "-2½"),
        (0.3, "0.3"),  # not a half or a quarter: as it is
    ],
)
def test_a_value_is_written_with_its_sign_before_its_whole_magnitude(value, written):
    assert format_value(value) == written
    assert number_text(value) == written
    # As data writes it: decimals, the same number.
    assert float(number_text(value, decimals=True)) == value


@pytest.mark.parametrize(
    ("low", "high", "written", "as_data"),
    [
        (-0.5, 0, "-½–0", "-0.5–0"),
        (-1.5, -0.5, "-1½–-½", "-1.5–-0.5"),
        (-0.25, 0.25, "-¼–¼", "-0.25–0.25"),
        (7.5, 8, "7½–8", "7.5–8"),
        (-1, -1, "-1", "-1"),
    ],
)
def test_a_range_is_its_two_ends_each_written_whole(low, high, written, as_data):
    assert range_text(low, high) == written
    assert range_text(low, high, decimals=True) == as_data
    assert total_text(low, high, maximum=(8, None)) == f"{written} / 8"


def cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _scored_below_zero(db) -> str:
    """The QA's train run: T3 = ½, T4 = ½–1, and a deduction of 1½: −½ to 0 in all."""
    run = played_run(db, model="vendor/negative")
    score(db, run, "T3", 0.5, "Viktor nods")
    score(db, run, "T4", 0.5, "Viktor nods", score_high=1.0)
    notes.add(db, run, reviewer="ada", item="key", rubric="key", kind="deduction", score=1.5)
    return run


@pytest.mark.slow
async def test_a_total_below_zero_is_the_same_number_on_the_card_home_the_export_and_results(db, tmp_path):
    run = _scored_below_zero(db)
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    total = "key -½–0 / 8 (partial)"

    exported = cli("export", run, "--format", "md", "--db", path).replace("\\", "")
    assert "Scoring key: -½–0 / 8 (partial)" in exported and "-1½–0" not in exported
    rows = list(csv.DictReader(io.StringIO(cli("results", "--scenario", "train", "--format", "csv", "--db", path))))
    assert [r["key"] for r in rows] == ["-0.5–0 (partial)"]

    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        await wait_until(pilot, on_screen(app, total))
        await pilot.press("enter")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await wait_until(pilot, on_screen(app, "-½–0 / 8 (partial)"))
        shown = screen_text(app)
        assert "-1½–0" not in shown and "−1½" in shown  # the deduction itself is 1½, written as taken off
