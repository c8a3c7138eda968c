"""The Results screen: 38 runs of the keykeeper test, sorted by each column, the step view across all 38."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner
from rich.console import Console
from textual.widgets import DataTable

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import resolve_settings
from sieve.store.record import annotations as notes
from sieve.store.scoring.results import DONE, sort_key
from sieve.tui.app import SieveApp
from sieve.tui.screens.result_views import ChartScreen
from sieve.tui.screens.results import ResultsScreen, StepAlignedScreen
from sieve.tui.widgets.transcript import TranscriptView
from tests.support.scores import score
from tests.support.tui_helpers import FAST_RETRY, screen_is, screen_text, wait_until

# 38 runs played for each test, and long Pilot flows over them (test_views_agree covers the screen quickly).
pytestmark = pytest.mark.slow


@pytest.fixture
async def field(tmp_path, fake_server):
    """38 runs of the keykeeper test from the test server, two filtered, one failed, scored by two reviewers."""
    db_path = tmp_path / "field.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    models = [f"vendor{i:02d}/model;tokens=4" for i in range(35)] + [
        "filtered-a;empty=1",
        "filtered-b;empty=1",
        "refused;status=401",
    ]
    specs = [RunSpec(resolve_settings(m, keykeeper, {"max_tokens": 64}), gateway) for m in models]
    await run_batch(db, keykeeper, specs, concurrency=38, retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    for n, run in enumerate(store.list_runs(db)[:35]):
        score(db, run["id"], "T1", n % 3)
        score(db, run["id"], "R1", (n * 7) % 3)
        for _ in range(n % 4):
            notes.add(db, run["id"], reviewer="ada", item="L3", kind="count")
    return db, db_path


def blocks(screen: StepAlignedScreen) -> list[dict]:
    """What the step view's transcript shows: one block per reply (or per run without one)."""
    replies = screen.query_one("#replies", TranscriptView)
    return [replies.turns[key] for key in replies.keys]


def table_rows(table: DataTable) -> list[list[str]]:
    return [[str(c.plain if hasattr(c, "plain") else c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_results_screen_shows_38_runs_sorts_by_each_column_and_agrees_with_csv(field):
    db, db_path = field
    exported = list(
        csv.reader(
            io.StringIO(
                CliRunner()
                .invoke(main, ["results", "--scenario", "keykeeper", "--format", "csv", "--db", str(db_path)])
                .output
            )
        )
    )
    headers, csv_rows = exported[0], exported[1:]
    assert len(csv_rows) == 38
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("keykeeper"))
    async with app.run_test(size=(220, 60)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, ResultsScreen) and app.screen.query_one(DataTable).row_count
        )
        screen = app.screen
        table = screen.query_one(DataTable)
        assert table.row_count == 38 and screen.headers == headers
        # The screen and the CSV agree, cell by cell (empty cells read "not scored" on screen).
        shown = table_rows(table)
        for got, want in zip(shown, csv_rows):
            assert [g if g != "not scored" else "" for g in got] == want
        assert "3 stopped, failed or filtered" in screen_text(app)
        # Sort by every column, both ways, with the keys.
        for column, header in enumerate(headers):
            table.move_cursor(row=0, column=column)
            await pilot.press("s")
            await wait_until(pilot, lambda h=header: screen.sorted_by == (h, False))
            keys = shown_keys(screen, column, header)
            assert keys == sorted(keys), header
            await pilot.press("s")
            await wait_until(pilot, lambda h=header: screen.sorted_by == (h, True))
            keys = shown_keys(screen, column, header)
            assert keys == sorted(keys, reverse=True), header


def shown_keys(screen: ResultsScreen, column: int, header: str) -> list:
    """What the rows on screen are sorted by: the column's values; for progress, the share of the cards scored."""
    rows = table_rows(screen.query_one(DataTable))
    if header == "progress":
        shares = {r["run"]: r[DONE] for r in screen.rows}
        return [shares[row[0]] for row in rows]
    return [sort_key(row[column] if row[column] not in ("", "not scored") else None) for row in rows]


async def test_the_step_view_walks_one_step_across_all_38_runs(field):
    db, _ = field
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("keykeeper"))
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        await pilot.press("a")
        await wait_until(pilot, screen_is(app, StepAlignedScreen))
        screen = app.screen
        assert screen.steps[screen.index] == "m1"
        assert len(blocks(screen)) == 38  # one per run: its reply, or that it has none
        for _ in range(8):
            await pilot.press("n")
        assert screen.steps[screen.index] == "m9"
        await wait_until(pilot, lambda: "scored here: T9" in str(screen.query_one("#step").render()))
        shown = blocks(screen)
        assert len(shown) == 38 and all(t["title"].startswith(v.name) for t, v in zip(shown, screen.views))
        assert sum(t["role"] == "assistant" for t in shown) == 37  # all but the failed run, which never got there
        refused = next(r for r in store.list_runs(db) if r["model"].startswith("refused"))
        views = {v.id: v for v in screen.views}
        assert views[refused["id"]].replies_to("m9") == []  # the failed run never got there
        first = store.list_runs(db)[0]
        (reply,) = views[first["id"]].replies_to("m9")
        assert reply["text"].startswith("Reply 10 from vendor00/model")


async def test_the_charts_put_rubric_t_against_r_and_items_by_runs(field):
    db, _ = field
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("keykeeper"))
    async with app.run_test(size=(200, 70)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        await pilot.press("c")
        await wait_until(pilot, screen_is(app, ChartScreen))
        scatter = str(app.screen.query_one("#scatter").render())
        heat = str(app.screen.query_one("#heat").render())
        assert "T the sieve against R is there someone inside" in scatter
        # 35 scored runs appear in the legend with their (T, R); the unscored three do not.
        assert scatter.count("vendor") == 35 and "filtered-a" not in scatter
        first = store.list_runs(db)[0]
        assert f"{first['model']} (0, 0)" in scatter  # run 0: T1 = 0, R1 = 0
        assert heat.count("vendor") == 35 and "filtered-a" in heat and "  T1  T2" in heat
