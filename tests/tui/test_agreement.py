"""The Results screen shows model judges beside people: `g` opens the agreement per item."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import turns as record
from sieve.store.scoring import results
from sieve.tui.app import SieveApp
from sieve.tui.screens.result_views import AgreementScreen
from sieve.tui.screens.results import ResultsScreen
from tests.support.scores import backed, score
from tests.support.tui_helpers import screen_text, wait_until


@pytest.mark.slow
async def test_the_agreement_screen_puts_each_judge_beside_the_people(db):
    keykeeper = scenarios.load("keykeeper")
    runs = [store.create_run(db, keykeeper, model=f"m{i}", endpoint="e", settings={}) for i in range(6)]
    for run, j, a, b in zip(runs, [2, 1, 0, 2, 1, 0], [2, 1, 1, 2, 0, 0], [2, 0, 1, 2, 1, 0]):
        record.add_turn(db, run, idx=0, role="user", origin="script", text="The coin.", step_id="m1", step_repeat=1)
        record.add_turn(db, run, idx=1, role="assistant", origin="reply", text=f"Havel takes the coin, run {run}.")
        # The judge's score counts only on its quote (a person's on their say-so too).
        score(db, run, "T1", j, backed(db, run, "T1"), reviewer="judge:opus")
        for reviewer, value in (("ada", a), ("bob", b)):
            score(db, run, "T1", value, reviewer=reviewer)
        score(db, run, "R1", a)
        score(db, run, "R1", b, reviewer="bob")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("keykeeper"))
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen.rows)
        assert "g: agreement" in screen_text(app)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, AgreementScreen))
        table = app.screen.query_one(DataTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        expected = results.agreement_table(results.agreement(db, "keykeeper"))
        assert shown == [[row[h] for h in results.AGREEMENT_HEADERS] for row in expected]
        # R1: people only; T1: the judge's figure beside the people's, each with its interval and runs.
        r1, t1 = shown
        assert r1[0] == "R1" and r1[1] == "" and r1[5].endswith("(κw)")
        assert t1[:2] == ["T1", "judge:opus"] and t1[2].endswith("(κw)") and t1[4] == "6" and t1[7] == "6"
        text = screen_text(app)
        assert "judge vs people" in text and "bootstrap over runs" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultsScreen))
