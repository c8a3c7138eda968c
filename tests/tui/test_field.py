"""Scoring a field in the TUI: Home's progress and filter at 100×30, blind lists that tell nothing, blind-only
reviewers, `review --next` going from run to run, Results sorted by progress, codes in Pairs."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import field
from sieve.store.scoring.results import DONE
from sieve.tui.app import SieveApp
from sieve.tui.screens.field import FieldScreen
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.new_run import NewRunDialog
from sieve.tui.screens.pairs import PairScreen
from sieve.tui.screens.results import ResultsScreen, StepAlignedScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.line_table import LineTable
from tests.support.field_helpers import TRAIN_ITEMS, played_run, score_all, unlike_runs
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, screen_is, screen_text, wait_until

SMALL = (100, 30)


def home_rows(app) -> list[list[str]]:
    table = app.screen.query_one("#runs", LineTable)
    return [table.cell_texts(i) for i in range(table.row_count)]


@pytest.mark.slow
async def test_home_shows_progress_and_whole_totals_at_100_by_30_and_u_leaves_the_unfinished(db):
    keykeeper = scenarios.load("keykeeper")
    partial = played_run(db, keykeeper, model="vendor/keykeeper-model")
    score(db, partial, "T1", 2)
    score(db, partial, "R2", 1)
    finished = played_run(db, model="vendor/finished")
    score_all(db, finished, "ada")
    untouched = played_run(db, model="vendor/untouched")
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=SMALL) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        shown = screen_text(app)
        assert "T 2+0 / 24+4 (partial)  R 1 / 12 (partial)" in shown  # whole, and visibly partial
        assert "scored 2/22 · 13 steps unjudged · L2 unanswered" in shown
        assert "key 8 / 8" in shown and "scored 8/8" in shown and "scored 0/8" in shown
        assert "Runs: 3, 2 not finished by you" in shown
        await pilot.press("u")
        await wait_until(pilot, lambda: len(app.screen.run_ids) == 2)
        assert set(app.screen.run_ids) == {partial, untouched}
        assert "vendor/finished" not in screen_text(app)
        await pilot.press("u")
        await wait_until(pilot, lambda: len(app.screen.run_ids) == 3)
        assert app.screen.run_ids == [untouched, finished, partial]  # newest first when not blind


@pytest.mark.slow
async def test_two_blind_home_screens_differ_in_nothing_but_the_code_and_the_totals(tmp_path):
    """Two runs as unlike as runs get (model, maker, endpoint, provider, day, hour, tokens, cost), each alone in
    a database: at 100×30 the blind Home screens differ only where the code and the totals stand."""
    runs = [
        (
            "a.db",
            dict(
                model="anthropic/claude-x",
                endpoint="openrouter",
                provider="Anthropic",
                started="2025-01-02T03:04:05.000+00:00",
                cost=0.5123,
                tokens=9,
            ),
            1.0,
        ),
        (
            "b.db",
            dict(
                model="openai/gpt-y",
                endpoint="http://127.0.0.1:8000/v1",
                provider="Chutes",
                started="2026-11-12T22:33:44.000+00:00",
                cost=0.0007,
                tokens=98765,
            ),
            0.5,
        ),
    ]
    screens = []
    for name, made, value in runs:
        db = store.open_db(tmp_path / name)
        run = played_run(db, **made)
        score_all(db, run, "ada", value, items=TRAIN_ITEMS[:3])
        app = SieveApp(db, Endpoints(), "ada", blind=True)
        async with app.run_test(size=SMALL) as pilot:
            await wait_until(pilot, screen_is(app, HomeScreen))
            totals = field.standings(db, "ada", [app.run_view(run)])[run].totals
            screens.append((screen_text(app), blinding.code(db, run, "ada"), totals))
            lowered = screens[-1][0].lower()
            for leak in (
                "claude",
                "anthropic",
                "gpt",
                "openai",
                "openrouter",
                "127.0.0.1",
                "chutes",
                "2025",
                "2026",
                "03:04",
                "22:33",
                "$",
                "0.51",
                "98765",
                "98,765",
            ):
                assert leak not in lowered, leak
    (first, code_a, totals_a), (second, code_b, totals_b) = screens
    assert code_a in first and code_b in second and totals_a != totals_b and totals_a in first and totals_b in second
    lines_a, lines_b = first.splitlines(), second.splitlines()
    assert len(lines_a) == len(lines_b)
    differ = [(a, b) for a, b in zip(lines_a, lines_b) if a != b]
    assert differ  # the line of the code and the totals (at 100 columns, the first line of the run's row)
    for a, b in differ:  # the same once both stand in for them (the padding after a total is no difference)
        assert (
            a.replace(code_a, "CODE").replace(totals_a, "TOTALS").rstrip()
            == b.replace(code_b, "CODE").replace(totals_b, "TOTALS").rstrip()
        )


@pytest.mark.slow
async def test_blind_home_shows_no_reply_count_status_branch_or_flag_that_singles_a_run_out(db):
    """A live run with a reply more, an interrupted branch of it with one fewer, and a complete run: blind, each
    row holds its code, its scenario and the reviewer's own totals and progress, and nothing else."""
    complete = played_run(db)
    longer = played_run(db)
    record.add_turn(db, longer, idx=100, role="user", origin="live", text="One more thing.")
    turn = record.add_turn(db, longer, idx=101, role="assistant", origin="reply", status="streaming")
    record.finish_turn(db, turn, "complete", "Viktor shrugs.", {})
    branch = played_run(db)
    db.execute("UPDATE runs SET parent_run = ?, parent_turn = 3, status = 'interrupted' WHERE id = ?", [longer, branch])
    db.execute("DELETE FROM turns WHERE run_id = ? AND idx >= ?", [branch, 18])
    score_all(db, complete, "ada", 1.0, items=TRAIN_ITEMS[:2])
    app = SieveApp(db, Endpoints(), "ada", blind=True)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        shown = screen_text(app)
        for leak in ("interrupted", "complete", "replies", "reply", "↳", "⚑", longer[-8:]):
            assert leak not in shown, leak
        rows = {row[0].split("\n")[0]: row for row in home_rows(app)}
        assert len(rows) == 3 and all(len(row) == 2 for row in rows.values())  # code · scenario, then your totals
        views = {v: app.run_view(v) for v in (complete, longer, branch)}
        standing = field.standings(db, "ada", list(views.values()))
        for run in views:
            row = rows[blinding.code(db, run, "ada")]
            assert row == [
                f"{blinding.code(db, run, 'ada')}\ntrain",
                f"{standing[run].totals}\n{standing[run].progress}",
            ]
        await pilot.press("b")  # not blind: the status and the replies are back
        await wait_until(pilot, on_screen(app, "interrupted"))
        assert "replies" in screen_text(app)


@pytest.mark.slow
async def test_blind_home_lists_the_runs_in_each_reviewers_own_order_under_their_own_codes(db):
    ids = [played_run(db, model=f"vendor/m{n}", started=f"2025-01-{n + 1:02d}T10:00:00.000+00:00") for n in range(8)]
    seen = {}
    for reviewer in ("ada", "bob"):
        app = SieveApp(db, Endpoints(), reviewer, blind=True)
        async with app.run_test(size=SMALL) as pilot:
            await wait_until(pilot, screen_is(app, HomeScreen))
            order = app.screen.run_ids
            assert order == blinding.shuffled(db, ids, reviewer) == field.ordered(db, ids, reviewer, True)
            assert order not in (ids, ids[::-1])  # not when they were played
            rows = home_rows(app)
            assert [r[0].split("\n")[0] for r in rows] == [blinding.code(db, i, reviewer) for i in order]
            assert all(r[1:] == rows[0][1:] for r in rows)  # nothing else tells them apart
            seen[reviewer] = (order, rows[0][0])
            await pilot.press("enter")
            await wait_until(pilot, screen_is(app, ReviewScreen))
            assert app.screen.view.code == blinding.code(db, order[0], reviewer)  # the code Home showed
    assert seen["ada"][0] != seen["bob"][0]


@pytest.mark.slow
async def test_a_blind_only_reviewer_cannot_leave_blind_mode(db):
    played_run(db, model="vendor/secret-model")
    app = SieveApp(db, Endpoints(), "ada", blind_only=True)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        assert app.blind and "(blind only)" in app.screen.sub_title
        await pilot.press("b")
        await wait_until(pilot, on_screen(app, "You review blind only"))
        assert app.blind and "vendor/secret-model" not in screen_text(app)
        # Playing shows the model: going on with a run, a new run, a new run of a scenario; none is sent to b.
        for keys, what in ((["p"], "Playing"), (["n"], "A new run"), (["tab", "enter"], "A new run")):
            app.clear_notifications()
            await pilot.press(*keys)
            await wait_until(pilot, lambda w=what: any(n.message.startswith(w) for n in app._notifications))
            (said,) = [n.message for n in app._notifications]
            assert "you review blind only" in said and "(b)" not in said, said
            assert isinstance(app.screen, HomeScreen) and not app.screen.query(NewRunDialog)
        app.screen.query_one("#runs", LineTable).focus()
        await pilot.press("r")
        await wait_until(pilot, screen_is(app, ResultsScreen))
        shown = screen_text(app)
        assert "vendor/secret-model" not in shown and "model" not in app.screen.headers


@pytest.mark.slow
async def test_blind_mode_refuses_a_new_run_and_says_b_leaves_it(db):
    played_run(db, model="vendor/secret-model")
    app = SieveApp(db, Endpoints(), "ada", blind=True)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        await pilot.press("n")
        said = "A new run shows the model: leave blind mode (b) first."
        await wait_until(pilot, lambda: any(n.message == said for n in app._notifications))
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("b", "n")  # not blind: the dialog
        await wait_until(pilot, screen_is(app, NewRunDialog))


@pytest.mark.slow
async def test_review_next_goes_from_run_to_run_and_waits_on_an_unfinished_one(db):
    runs = [played_run(db, model=f"vendor/m{n}") for n in range(3)]
    app = SieveApp(db, Endpoints(), "ada", first=lambda: FieldScreen())
    async with app.run_test(size=(120, 36)) as pilot:

        def reviewing(run_id):
            return lambda: isinstance(app.screen, ReviewScreen) and app.screen.run_id == run_id

        await wait_until(pilot, reviewing(runs[0]))
        score_all(db, runs[0], "ada")
        await pilot.press("escape")
        await wait_until(pilot, reviewing(runs[1]))  # finished: the next opens by itself
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, FieldScreen))
        await wait_until(pilot, on_screen(app, f"{runs[1][-8:]} is not finished"))
        assert "You have finished 1 of 3 complete runs" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, reviewing(runs[2]))
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, FieldScreen))
        await pilot.press("enter")
        await wait_until(pilot, reviewing(runs[2]))
        for run in runs[1:]:
            score_all(db, run, "ada")
        await pilot.press("escape")
        await wait_until(pilot, on_screen(app, "Nothing left to score"))
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))


@pytest.mark.slow
async def test_blind_review_next_brings_a_catch_trial_under_a_new_code(db):
    runs = [played_run(db, model=f"vendor/m{n}") for n in range(2)]
    order = blinding.shuffled(db, runs, "ada")
    app = SieveApp(db, Endpoints(), "ada", blind=True, first=lambda: FieldScreen(catch=1))
    async with app.run_test(size=(120, 36)) as pilot:

        def reviewing(run_id, trial: bool):
            return lambda: (
                isinstance(app.screen, ReviewScreen)
                and app.screen.run_id == run_id
                and (app.screen.view.trial is not None) == trial
            )

        await wait_until(pilot, reviewing(order[0], False))
        score_all(db, order[0], "ada", 1.0)
        await pilot.press("escape")
        await wait_until(pilot, reviewing(order[1], False))  # nothing else finished yet to come back
        score_all(db, order[1], "ada", 1.0)
        await pilot.press("escape")
        await wait_until(pilot, reviewing(order[0], True))  # the first run again
        view = app.screen.view
        assert view.code != blinding.code(db, order[0], "ada") and view.code in screen_text(app)
        assert view.card("ada").progress.items_scored == 0
        score_all(db, order[0], "ada", 0.5, trial=view.trial)
        await pilot.press("escape")
        await wait_until(pilot, on_screen(app, "Nothing left to score"))


@pytest.mark.slow
async def test_results_sorts_by_progress_with_p_and_blind_shows_codes_in_the_reviewers_order(db):
    runs = [played_run(db, model=f"vendor/m{n}") for n in range(4)]
    for n, run in enumerate(runs):
        score_all(db, run, "ada", items=TRAIN_ITEMS[: 7 - 2 * n])
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ResultsScreen("train"))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        await pilot.press("P")
        await wait_until(pilot, lambda: app.screen.sorted_by == ("progress", False))
        assert [r["run"] for r in app.screen.rows] == runs[::-1]
        shares = [r[DONE] for r in app.screen.rows]
        assert shares == sorted(shares) and shares[0] == 1 / 8
        await pilot.press("P")
        await wait_until(pilot, lambda: app.screen.sorted_by == ("progress", True))
        assert [r["run"] for r in app.screen.rows] == runs
    app = SieveApp(db, Endpoints(), "ada", blind=True, first=lambda: ResultsScreen("train"))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        assert not {"model", "provider", "date", "cost"} & set(app.screen.headers)
        table = app.screen.query_one(DataTable)
        shown = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert shown == [blinding.code(db, r, "ada") for r in blinding.shuffled(db, runs, "ada")]
        assert "vendor/m" not in screen_text(app)


@pytest.mark.slow
async def test_a_run_opened_from_a_pair_has_a_code_of_that_pair_alone(db):
    runs = [played_run(db, model=f"vendor/m{n}") for n in range(3)]
    queue = pairing.create_queue(db, [(runs[0], runs[1]), (runs[0], runs[2])], seed=1)
    pairs = pairing.queue_pairs(db, queue)
    app = SieveApp(db, Endpoints(), "ada", blind=True, first=lambda: PairScreen(queue))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, screen_is(app, PairScreen))
        codes = []
        for position, pair in enumerate(pairs):
            side = "1" if pair["run_a"] == runs[0] else "2"
            await pilot.press(side)
            await wait_until(pilot, screen_is(app, ReviewScreen))
            assert app.screen.run_id == runs[0]
            codes.append(app.screen.view.code)
            assert codes[-1] == blinding.code(db, runs[0], "ada", f"pair {pair['id']}")
            await pilot.press("escape")
            await wait_until(pilot, screen_is(app, PairScreen))
            if position == 0:
                await pilot.press("n")
                await wait_until(pilot, lambda: app.screen.position == 1)
        assert len({*codes, blinding.code(db, runs[0], "ada"), blinding.code(db, runs[0], "bob")}) == 4


@pytest.mark.slow
async def test_blind_results_and_its_step_view_tell_runs_apart_by_nothing_but_the_code(db):
    """QA: the Results screen showed a blind reviewer status, kind, replies and the extreme flag; its step view
    `run-… · open` and other reviewers' scores (`T1 2 (root)`). Three unlike runs, scored alike by ada."""
    runs = unlike_runs(db)
    codes = [blinding.code(db, r, "ada") for r in runs]
    app = SieveApp(db, Endpoints(), "ada", blind=True, first=lambda: ResultsScreen("train"))
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ResultsScreen))
        results = app.screen
        hidden = {"model", "status", "kind", "replies", "filtered", "reviewers", "cards", "extreme", "cost", "date"}
        assert not hidden & set(results.headers)
        table = results.query_one(DataTable)
        cells = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert sorted(row[0] for row in cells) == sorted(codes)
        assert len({tuple(row[1:]) for row in cells}) == 1  # the code apart, every row the same
        assert dict(zip(results.headers, cells[0]))["key"] == "3 (partial)"  # ada's own card: not bob's T3 = 0
        shown = screen_text(app)
        for told in ("interrupted", "complete", "live", "filtered", "⚑", "bob", "wise-owl"):
            assert told not in shown, told
        await pilot.press("v")  # another's cards: refused
        await wait_until(pilot, on_screen(app, "blind: the table shows your own cards only"))
        assert results.voters == "humans"

        await pilot.press("a")
        await wait_until(pilot, screen_is(app, StepAlignedScreen))
        await pilot.press("n", "n")  # turn3: T3 is scored here, by ada on every run and by bob on one
        await wait_until(pilot, on_screen(app, "T3"))
        titles = [b["title"] for b in app.screen.blocks("turn3", ["T3"])]
        heads = {title.split("   ")[0].split(" · ")[0]: title for title in titles}
        assert set(heads) == set(codes)
        uncoded = {title.replace(code, "CODE") for code, title in heads.items()}
        assert len(uncoded) == 1, uncoded  # the code apart, each reply's title the same
        assert "your scores: T3 1" in titles[0] and "(ada)" not in titles[0]
        shown = screen_text(app)
        for told in (" · interrupted", " · complete", " · open", " · idle", "bob", "(ada)", "T3 0"):
            assert told not in shown, told
