"""Screens that look finished: the header, the footer, what a run is doing, branches, themes, the mouse."""

from __future__ import annotations

import subprocess
import sys

import pytest
from textual.color import Color
from textual.widgets._footer import FooterKey

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import turns as record
from sieve.store.record.runs import owner_tag
from sieve.tui.app import LIGHT_THEME_VARIABLES, THEME_VARIABLES, SieveApp
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.new_run import NewRunDialog
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.result_views import AgreementScreen, ChartScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.line_table import LineTable
from sieve.tui.widgets.transcript import TranscriptView
from tests.support import scenes
from tests.support.tui_helpers import FAST_RETRY, screen_is, screen_text, wait_until


@pytest.fixture
def scene(tmp_path):
    return scenes.build(tmp_path / "scenes.db")


@pytest.fixture
def sleeper():
    """A live process of this host, to stand for another sieve playing a run."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield f"{owner_tag().rpartition(':')[0]}:{process.pid}"
    process.kill()
    process.wait()


def footer_keys(app) -> list[tuple[str, str]]:
    return [(key.key, key.description) for key in app.screen.query(FooterKey)]


def home_row(app, run_id: str) -> list[str]:
    table = app.screen.query_one("#runs", LineTable)
    return table.cell_texts(app.screen.run_ids.index(run_id))


async def test_home_says_what_each_run_is_doing_and_where_a_branch_grew_from(scene, sleeper):
    db, runs = scene
    keykeeper = scenarios.load("keykeeper")
    waiting = store.create_run(db, keykeeper, model="other/waiting", endpoint="lab", settings={"model": "x"})
    playing = store.create_run(db, keykeeper, model="other/playing", endpoint="lab", settings={"model": "x"})
    record.add_turn(db, playing, idx=0, role="user", origin="setup", text="Begin.", step_id="m0", step_repeat=1)
    record.add_turn(db, playing, idx=1, role="assistant", origin="reply", status="streaming")
    db.execute("UPDATE runs SET owner = ? WHERE id IN (?, ?)", [sleeper, waiting, playing])
    db.conn.commit()
    app = scenes.app(db)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        shown = screen_text(app)
        assert "sieve   │   reviewer ada" in shown  # the header's parts apart
        assert home_row(app, runs.keykeeper)[2].split("\n")[0] == "complete"
        assert home_row(app, waiting)[2].split("\n")[0] == "open"  # another live process has it open
        assert home_row(app, playing)[2].split("\n")[0] == "playing"  # ... and a reply streams
        # The branch was left by a process that is gone (the file opened again marked it interrupted); nobody
        # plays the run this process owned either, since no Play screen of this app has it open.
        assert home_row(app, runs.branch)[2].split("\n")[0] == "interrupted"
        assert home_row(app, runs.streaming)[2].split("\n")[0] == "idle"
        assert record.get_run(db, runs.streaming)["owner"] is None  # released: anyone may go on with it
        assert home_row(app, runs.branch)[0] == f"{runs.branch[-8:]}\n↳ {runs.keykeeper[-8:]}"
        assert "running" not in shown


@pytest.mark.slow
async def test_leaving_play_releases_the_run_and_home_shows_it_idle(db, fake_server):
    keykeeper = scenarios.load("keykeeper")
    settings = {"model": "quiet;tokens=3", "endpoint_url": fake_server.base_url}
    run_id = store.create_run(db, keykeeper, model="quiet;tokens=3", endpoint=fake_server.base_url, settings=settings)
    # Played once: a run nothing was sent in is removed when Play is left (test_tidy_records), not released.
    record.add_turn(db, run_id, idx=0, role="user", origin="script", text="Hello.", step_id="m0", step_repeat=1)
    record.release_runs(db)
    app = SieveApp(db, Endpoints(), "ada", retry=FAST_RETRY)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.run_ids == [run_id])
        assert home_row(app, run_id)[2].startswith("idle")
        await pilot.press("p")
        await wait_until(pilot, screen_is(app, PlayScreen))
        assert record.get_run(db, run_id)["owner"] == owner_tag()
        assert "status      open" in screen_text(app)  # the figures: Play has it, nothing streams
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        await wait_until(pilot, lambda: home_row(app, run_id)[2].startswith("idle"))
        assert record.get_run(db, run_id)["owner"] is None


@pytest.mark.slow
async def test_quitting_from_play_lets_go_of_the_run_so_it_is_idle_not_interrupted_next_time(tmp_path, fake_server):
    path = tmp_path / "quit.db"
    db = store.open_db(path)
    keykeeper = scenarios.load("keykeeper")
    settings = {"model": "quiet;tokens=3", "endpoint_url": fake_server.base_url}
    run_id = store.create_run(db, keykeeper, model="quiet;tokens=3", endpoint=fake_server.base_url, settings=settings)
    record.add_turn(db, run_id, idx=0, role="user", origin="script", text="Hello.", step_id="m0", step_repeat=1)
    record.release_runs(db)
    app = SieveApp(db, Endpoints(), "ada", retry=FAST_RETRY)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.run_ids == [run_id])
        await pilot.press("p")
        await wait_until(pilot, screen_is(app, PlayScreen))
        assert record.get_run(db, run_id)["owner"] == owner_tag()
        await pilot.press("ctrl+q")  # straight out of Play, between turns
    db.conn.close()
    again = store.open_db(path)  # as the next sieve opens it: a run whose process is gone is recovered
    run = record.get_run(again, run_id)
    assert (run["status"], run["owner"]) == ("running", None)
    assert [r["activity"] for r in store.list_runs(again)] == ["idle"]


@pytest.mark.slow
async def test_the_footer_shows_each_key_once_on_every_screen(scene):
    db, runs = scene
    opened = []
    for name in ("home", "play", "results", "step-view", "pairs", "ratings"):
        app = scenes.SCENES[name].make(db, runs)
        async with app.run_test(size=(200, 40)) as pilot:
            await scenes.settled(pilot)
            await pilot.press(*scenes.SCENES[name].press)
            await scenes.settled(pilot)
            for extra in [None, *(("c", "g") if name == "results" else ())]:
                if extra:  # the charts and the agreement screens, from Results
                    await pilot.press(extra)
                    await wait_until(pilot, screen_is(app, ChartScreen if extra == "c" else AgreementScreen))
                keys = footer_keys(app)
                descriptions = [d for _, d in keys]
                assert keys and len(set(descriptions)) == len(descriptions), (name, extra, keys)
                assert len({k for k, _ in keys}) == len(keys), (name, extra, keys)
                opened.append(type(app.screen).__name__)
                if extra:
                    await pilot.press("escape")
    app = scenes.review(db, runs)
    async with app.run_test(size=(200, 40)) as pilot:
        await scenes.settled(pilot)
        descriptions = [d for _, d in footer_keys(app)]
        assert len(set(descriptions)) == len(descriptions), descriptions
    assert {"HomeScreen", "PlayScreen", "ResultsScreen", "StepAlignedScreen", "ChartScreen"} <= set(opened)


@pytest.mark.slow
async def test_the_home_list_and_a_footer_key_answer_the_mouse(scene):
    db, runs = scene
    app = scenes.app(db)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        table = app.screen.query_one("#runs", LineTable)
        row = app.screen.run_ids.index(runs.keykeeper)
        # A click on the second line of the run's row (its first is the heading's height down).
        await pilot.click(table, offset=(5, table.header_height + row * table.row_height + 1))
        await wait_until(pilot, screen_is(app, ReviewScreen))
        assert app.screen.run_id == runs.keykeeper
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        new_run = next(key for key in app.screen.query(FooterKey) if key.description == "New run")
        await pilot.click(new_run)
        await wait_until(pilot, screen_is(app, NewRunDialog))
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        unfinished = next(key for key in app.screen.query(FooterKey) if key.description == "Unfinished")
        await pilot.click(unfinished)
        await wait_until(pilot, lambda: app.screen.unfinished_only)


@pytest.mark.slow
async def test_a_click_on_a_turn_in_play_selects_it(scene):
    db, runs = scene
    app = scenes.play(db, runs)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, PlayScreen))
        transcript = app.screen.query_one(TranscriptView)
        second = transcript.keys[1]
        top = transcript.text_layout.top(second) - transcript.scroll_offset.y
        await pilot.click(transcript, offset=(10, top + 1))
        await wait_until(pilot, lambda: app.screen.selected == second)
        assert transcript.selected == second
        await pilot.press("down")  # the keys go on from the clicked turn
        await wait_until(pilot, lambda: app.screen.selected == transcript.keys[2])


def contrast(a: str, b: str) -> float:
    def luminance(hex_colour: str) -> float:
        r, g, b = (c / 255 for c in Color.parse(hex_colour).rgb)
        channels = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.slow
async def test_verdict_colours_follow_the_theme_and_read_on_its_surface(db):
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(100, 30)) as pilot:
        for theme, ours in (("textual-dark", THEME_VARIABLES), ("textual-light", LIGHT_THEME_VARIABLES)):
            app.theme = theme
            await pilot.pause()
            surface = app.theme_variables["surface"]
            for name, value in ours.items():
                assert app.theme_variables[name] == value
                assert contrast(value, surface) >= 4.5, (theme, name, value, surface)


@pytest.mark.slow
async def test_the_palette_switches_the_theme_and_the_line_drawn_widgets_take_its_colours(scene):
    db, runs = scene
    app = scenes.play(db, runs)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, PlayScreen))
        transcript = app.screen.query_one(TranscriptView)
        transcript.scroll_home(animate=False)
        await pilot.pause()

        def title_colour() -> str:
            # The first line is the first turn's title (the player's), in the theme's colour for the player.
            segments = list(transcript.render_line(0))
            return segments[2].style.color.triplet.hex  # after the gutter: the bar and the mark

        assert title_colour() == app.theme_variables["text-secondary"].lower()
        dark = title_colour()
        await pilot.press("ctrl+p")
        await pilot.press(*"theme")
        await wait_until(pilot, lambda: "Change the current theme" in screen_text(app))
        await pilot.press("enter")
        await pilot.press(*"textual-light")
        await wait_until(pilot, lambda: "textual-light" in screen_text(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "textual-light")
        await wait_until(pilot, lambda: title_colour() != dark)
        assert title_colour() == app.theme_variables["text-secondary"].lower()
        # Home's list, drawn line by line too: its cursor in the light theme's colours.
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))
        table = app.screen.query_one("#runs", LineTable)
        cursor = list(table.render_line(table.header_height))[0].style.bgcolor.triplet.hex
        assert cursor == app.theme_variables["block-cursor-background"].lower()


@pytest.mark.slow
async def test_results_take_a_new_themes_colours_and_a_closed_results_is_freed(scene):
    import weakref

    from rich.style import Style
    from textual.widgets import DataTable

    from sieve.tui.memory import settle_memory
    from sieve.tui.screens.results import ResultsScreen

    db, runs = scene
    app = scenes.app(db)
    async with app.run_test(size=(160, 50)) as pilot:
        app.push_screen(ResultsScreen("keykeeper"))
        await wait_until(pilot, screen_is(app, ResultsScreen))
        table = app.screen.query_one(DataTable)
        column = list(table.columns).index("status")

        def warning_colours() -> set[str]:
            cells = [table.get_row_at(i)[column] for i in range(table.row_count)]
            return {span.style.color.triplet.hex for c in cells for span in c.spans if isinstance(span.style, Style)}

        assert warning_colours() == {Style.parse(app.theme_variables["text-warning"]).color.triplet.hex}
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await wait_until(
            pilot, lambda: warning_colours() == {Style.parse(app.theme_variables["text-warning"]).color.triplet.hex}
        )
        results = weakref.ref(app.screen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ResultsScreen))
        await wait_until(pilot, lambda: (settle_memory(), results() is None)[1])
