"""The Compare and By-model views show what `sieve compare` and `sieve results --by model` print."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.store.scoring.comparison import compare_cells
from sieve.tui.app import SieveApp
from sieve.tui.screens.comparisons import CompareScreen, ModelsScreen, SidePicker
from sieve.tui.screens.results import ResultsScreen
from tests.support.tui_helpers import screen_is, screen_text, wait_until
from tests.test_comparisons import card, field, path_of
from tests.test_pairs import STORY, story_run


def rows_of(table: DataTable) -> list[list[str]]:
    return [[c.plain for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.slow
async def test_the_compare_view_shows_the_figures_of_sieve_compare(db):
    field(db, random.Random(1), {"good": 4.0, "plain": 2.5}, runs=4)
    printed = CliRunner().invoke(
        main,
        ["compare", "--scenario", "story-5", "--a", "good", "--b", "plain", "--format", "json", "--db", path_of(db)],
    )
    expected = [compare_cells(r) for r in json.loads(printed.output)["rows"]]
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("story-5"))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        await pilot.press("C")
        await wait_until(pilot, screen_is(app, SidePicker))
        await pilot.press("enter")  # a: good (the models in order)
        await wait_until(pilot, lambda: isinstance(app.screen, SidePicker) and "against" in screen_text(app))
        await pilot.press("enter")  # b: plain, the only other
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.result is not None)
        table = app.screen.query_one(DataTable)
        assert rows_of(table) == expected
        assert rows_of(table)[0][0] == "C" and rows_of(table)[0][6] == "a ahead"
        assert "a: good (4 runs)" in screen_text(app)


@pytest.mark.slow
async def test_the_by_model_view_and_the_cards_toggle(db):
    field(db, random.Random(2), {"m/x": 3.0, "m/y": 3.5}, runs=3)
    lone = story_run(db, "m/z")
    card(db, lone, "judge:big", [1] * 10)  # a judge's card only: the people's table has nothing of it
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("story-5"))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        table = app.screen.query_one("#table", DataTable)
        column = list(table.columns).index("C")
        assert [table.get_row_at(i)[column].plain for i in range(table.row_count)][-1] == "not scored"
        await pilot.press("v")  # the judges' cards
        await wait_until(pilot, lambda: "Model judges' cards only" in screen_text(app))
        table = app.screen.query_one("#table", DataTable)
        assert [table.get_row_at(i)[column].plain for i in range(table.row_count)][-1] == "10"
        await pilot.press("v", "m")
        await wait_until(pilot, screen_is(app, ModelsScreen))
        shown = rows_of(app.screen.query_one(DataTable))
        assert [r[:3] for r in shown] == [["m/x", "C", "3"], ["m/y", "C", "3"]]
        printed = json.loads(
            CliRunner()
            .invoke(
                main, ["results", "--scenario", "story-5", "--by", "model", "--format", "json", "--db", path_of(db)]
            )
            .output
        )
        assert [f"{r['mean']:.2f}" for r in printed if r["figure"] == "C"] == [r[3] for r in shown]


@pytest.mark.slow
async def test_the_pairs_screen_names_the_side_ahead_once_every_pair_is_judged(db):
    from sieve.store.record import pairs as pairing
    from sieve.tui.screens.pairs import PairScreen, PairSummary
    from tests.test_comparisons import unanimous_queue

    queue, sides = unanimous_queue(db, {"ada": "good"})
    last = pairing.queue_pairs(db, queue)[-1]
    db.execute("DELETE FROM judgments WHERE pair_id = ? AND criterion = 'overall'", [last["id"]])
    app = SieveApp(db, Endpoints(), "ada", first=lambda: PairScreen(queue), blind=True)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(pilot, lambda: "pair 1 of 9" in screen_text(app))
        await pilot.press("S")  # one pair is not judged overall yet: the summary would unblind it
        await wait_until(pilot, lambda: "judge the 1 pair left" in screen_text(app))
        assert not isinstance(app.screen, PairSummary)
        pairing.judge(db, last, "overall", "A" if sides[last["run_a"]] == "good" else "B", "ada")
        await pilot.press("S")
        await wait_until(pilot, screen_is(app, PairSummary))
        rows = rows_of(app.screen.query_one(DataTable))
        assert len(rows) == len(pairing.criteria(STORY))
        assert all(r[1] == "good ahead" and r[2] == "good 1.00 (0.63 to 1.00)" for r in rows)
