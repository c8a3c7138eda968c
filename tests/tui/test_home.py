"""The Home screen: runs with their totals so far, a new run from the dialog, Enter to review."""

from __future__ import annotations

import pytest

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.app import SieveApp
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.new_run import NewRunDialog
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.line_table import LineTable
from tests.support.review_runs import scripted_run
from tests.support.scores import score
from tests.support.tui_helpers import FAST_RETRY, screen_is, screen_text, settle, wait_until


@pytest.mark.slow
async def test_a_new_run_from_the_dialog_plays_against_the_endpoint_typed(db, fake_server):
    app = SieveApp(db, Endpoints(), "ada", retry=FAST_RETRY)
    async with app.run_test(size=(160, 45)) as pilot:
        assert isinstance(app.screen, HomeScreen)
        assert "No runs yet: press n to start one" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, screen_is(app, NewRunDialog))
        await pilot.press(*fake_server.base_url)  # the endpoint field has the focus
        await pilot.press("tab", *"dialog;tokens=5")  # the model
        await pilot.press("tab", *"0.5")  # temperature
        await pilot.press("enter")
        await wait_until(pilot, screen_is(app, PlayScreen))
        run = record.get_run(db, app.screen.run_id)
        assert (run["scenario"], run["model"], run["settings"]["temperature"]) == ("keykeeper", "dialog;tokens=5", 0.5)
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        table = app.screen.query_one("#runs", LineTable)
        assert table.row_count == 1
        assert "dialog;tokens=5" in screen_text(app) and "not scored" in screen_text(app)


@pytest.mark.slow
async def test_the_runs_show_their_totals_and_enter_opens_the_review(db, fake_server):
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="listed-model", endpoint="fake", settings={})
    record.set_run_status(db, run_id, "complete")
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text="Begin.", step_id="m0", step_repeat=1)
    record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="Havel nods.")
    score(db, run_id, "T1", 2)
    score(db, run_id, "R2", 1)
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(160, 45)) as pilot:
        shown = screen_text(app)
        assert "listed-model" in shown and "complete" in shown
        assert "T 2+0 / 24+4 (partial)  R 1 / 12 (partial)" in shown
        await pilot.press("enter")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        assert app.screen.run_id == run_id
        assert "Havel nods." in app.screen.query_one("#text").text
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))


@pytest.mark.slow
async def test_the_scenarios_list_shows_each_ones_player_briefs_by_id_and_title(db):
    keykeeper, story = scenarios.load("keykeeper"), scenarios.load("story-5")
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(160, 45)) as pilot:
        table = app.screen.query_one("#scenarios")
        assert "player briefs" in screen_text(app)
        row = table.get_row_at(table.get_row_index("keykeeper"))
        assert str(row[-1]) == " ".join(p.id for p in keykeeper.players)
        table.focus()
        table.move_cursor(row=table.get_row_index("keykeeper"))
        await wait_until(pilot, lambda: "player briefs of keykeeper" in screen_text(app))
        shown = " ".join(screen_text(app).split())
        for brief in keykeeper.players:
            assert f"{brief.id} {brief.title}" in shown
        table.move_cursor(row=table.get_row_index("story-5"))
        await wait_until(pilot, lambda: "player briefs of story-5" in screen_text(app))
        assert all(f"{b.id} {b.title}" in " ".join(screen_text(app).split()) for b in story.players)


async def test_a_disqualified_run_says_so_beside_its_totals_as_the_card_does(db):
    """QA: the card said DISQUALIFIED by L1, results `disqualified by L1`, Home only the totals."""
    out, kept = (scripted_run(db, "keykeeper", model=m) for m in ("vendor/out", "vendor/kept"))
    for run, verdict in ((out, "annulled"), (kept, "played out")):
        view = RunView.open(db, run)
        reply = view.replies_to("m1")[0]
        quote = Quote(reply["id"], 0, 28, reply["text"][:28])
        evidence.annotate(db, run, quote=quote, view=view, reviewer="ada", item="L1", kind="verdict", value=verdict)
    score(db, out, "T1", 2)
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        table = app.screen.query_one("#runs", LineTable)
        rows = {table.rows[i].key: table.cell_texts(i) for i in range(table.row_count)}
        assert rows[out][-1].split("\n")[0] == "T 2+0 / 24+4 (partial)  R 0 / 12 (partial)  DISQUALIFIED by L1"
        assert "DISQUALIFIED" not in rows[kept][-1]
        assert table.rows[app.screen.run_ids.index(out)].styles[-1] == "bad"  # in the colour of a failure
        assert "DISQUALIFIED by L1" in screen_text(app)
        await pilot.press("b")  # blind: the reviewer's own card, so still said
        await wait_until(pilot, lambda: app.screen.query_one("#runs", LineTable).row_count == 2 and app.blind)
        assert "DISQUALIFIED by L1" in screen_text(app)
