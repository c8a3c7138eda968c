"""One hostile string through every field and every output: nothing in it is ever interpreted.

The string holds an OSC title sequence, SGR colour, BEL, NUL, the 8-bit CSI
(U+009B), a right-to-left override, Rich markup (an unmatched closing tag, which
crashes a markup parser) and Markdown's own characters. It goes in as the model,
the provider, the endpoint's name, the scenario's titles, the reviewer, a note,
the reply and a server's error text; it must come out of every CLI command (text,
JSON, Markdown, CSV, the progress bar) and every screen (header, panels, lists,
pickers, notifications) as visible escapes, and the record must hold it exactly.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import RetryPolicy, Session, resolve_settings
from sieve.store.record import pairs as pairing
from sieve.tui.app import SieveApp
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.new_run import NewRunDialog
from sieve.tui.screens.pairs import JudgePicker, PairScreen
from sieve.tui.screens.pickers import Picker
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.result_views import ChartScreen
from sieve.tui.screens.results import ResultsScreen, StepAlignedScreen
from sieve.tui.screens.review import ReviewScreen
from tests.support.tui_helpers import no_overlay, on_screen, overlay_is, screen_is, screen_text, settle, wait_until

HOSTILE = "\x1b]0;pwned\x07\x1b[31m[/bold]\u202e\x9b2J[red]x[/red]\x00|`*_<b>#"
# What no output may hold raw: C0 controls but tab and newline, DEL, C1, bidi controls.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SHOWN = "\\x1b]0;pwned\\x07"  # the head of the hostile string, as every output shows it
# A provider and an error text cannot hold ';' (the test server's option separator).
PROVIDER = "\x1b[31m[/bold]\u202e\x9b2J\x07prov"
MODEL = f"{HOSTILE};provider={PROVIDER};markup=1"  # the reply: markup, escapes, controls
FAILING = f"{HOSTILE}-fails;status=500;error_text={PROVIDER}err"
ENDPOINT = "evil\x1b]2;t\x07[/b]\u202e"
FAST = RetryPolicy(attempts=2, base=0.01, cap=0.02)


def inert(text: str, where: str) -> None:
    found = UNSAFE.search(text)
    assert found is None, (
        f"{where}: a raw {found.group()!r} at {found.start()}: {text[max(0, found.start() - 40) : found.start() + 40]!r}"
    )


def holds(data: Any, needle: str) -> bool:
    """Whether some string inside parsed JSON contains `needle` exactly (the record round-trips)."""
    if isinstance(data, str):
        return needle in data
    if isinstance(data, dict):
        return any(holds(v, needle) for v in data.values())
    if isinstance(data, list):
        return any(holds(v, needle) for v in data)
    return False


def toml_string(text: str) -> str:
    return (
        '"'
        + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in '"\\' else c for c in text)
        + '"'
    )


class World:
    """A database holding the hostile string in every field, made the way a person would make it."""

    def __init__(self, tmp_path: Path, server, home: Path):
        self.db_path = str(tmp_path / "hostile.db")
        config = home / "config" / "sieve" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f"[endpoints.{toml_string(ENDPOINT)}]\nbase_url = {toml_string(server.base_url)}\n")
        source = scenarios.load("train").source
        self.scenario_path = tmp_path / "evil.toml"
        self.scenario_path.write_text(
            re.sub(r'^title = ".*"$', lambda _: f"title = {toml_string(HOSTILE)}", source, flags=re.M), encoding="utf-8"
        )
        self.runner = CliRunner()
        self.outputs: dict[str, str] = {}
        self.jsons: dict[str, str] = {}
        self.cli("run", "run", str(self.scenario_path), "-m", MODEL, "--endpoint", ENDPOINT, code=0)
        self.cli(
            "run --json",
            "run",
            str(self.scenario_path),
            "-m",
            FAILING,
            "--endpoint",
            ENDPOINT,
            "--retry-base",
            "0.01",
            "--json",
            code=1,
            as_json=True,
        )  # the failing run: the server's error text is hostile
        self.db = store.open_db(self.db_path)
        runs = store.list_runs(self.db)
        self.good = next(r["id"] for r in runs if r["status"] == "complete")
        self.bad = next(r["id"] for r in runs if r["status"] == "failed")
        card = tmp_path / "card.json"
        items = [f"T{n}" for n in range(3, 11)]
        card.write_text(json.dumps([{"id": i, "score": 1, "quote": "not bold", "note": HOSTILE} for i in items]))
        for run_id in (self.good, self.bad):
            self.cli(
                "verify --import", "verify", str(card), "--run", run_id, "--import", "--reviewer", HOSTILE, code=None
            )
        self.queue = pairing.create_queue(self.db, [(self.good, self.bad)], seed=1)
        pairing.judge(self.db, pairing.queue_pairs(self.db, self.queue)[0], "T3", "A", HOSTILE)

    def cli(self, name: str, *args: str, code: int | None = 0, as_json: bool = False) -> str:
        result = self.runner.invoke(main, list(args), env={"SIEVE_DB": self.db_path}, catch_exceptions=False)
        if code is not None:
            assert result.exit_code == code, (name, result.output, result.stderr)
        (self.jsons if as_json else self.outputs)[name] = result.stdout
        self.outputs[name + " (stderr)"] = result.stderr
        return result.stdout


@pytest.fixture
def world(tmp_path, fake_server, isolated_user_dirs) -> World:
    return World(tmp_path, fake_server, isolated_user_dirs)


def test_every_cli_output_shows_the_hostile_string_literally(world):
    good, bad = world.good, world.bad
    run = world.cli
    run("runs", "runs")
    run("runs --json", "runs", "--json", as_json=True)
    for fmt in ("table", "md", "csv"):
        run(f"results {fmt}", "results", "--scenario", "train", "--format", fmt)
    run("results json", "results", "--scenario", "train", "--format", "json", as_json=True)
    run("export md", "export", good, bad, "--format", "md")
    run("export json", "export", good, bad, as_json=True)
    run("search", "search", "bold")
    run("search --json", "search", "bold", "--json", as_json=True)
    run("verify --run", "verify", "--run", good, code=0)
    run("verify --run --json", "verify", "--run", good, "--json", code=0, as_json=True)
    run("scenarios show", "scenarios", "show", str(world.scenario_path))
    run("scenarios show --json", "scenarios", "show", str(world.scenario_path), "--json", as_json=True)
    run("scenarios validate", "scenarios", "validate", str(world.scenario_path))
    run("pair --summary", "pair", "--queue", world.queue, "--summary")
    run("pair --summary --json", "pair", "--queue", world.queue, "--summary", "--json", as_json=True)
    run("results --reviewers", "results", "--reviewers")
    run("results --reviewers --json", "results", "--reviewers", "--format", "json", as_json=True)
    run("unknown run", "review", HOSTILE, code=2)

    for name, text in world.outputs.items():
        inert(text, name)
    for name, text in world.jsons.items():
        inert(text, name)
        json.loads(text)  # still JSON: the escapes are JSON's own
    # Each field reached the outputs that show it, escaped, not dropped:
    shows = {
        "run": [SHOWN, "\\x1b[31m[/bold]"],  # the summary's model and error text
        "run (stderr)": [SHOWN],  # the progress bar's label
        "runs": [SHOWN],
        "results table": [SHOWN, "\\x1b[31m[/bold]\\u202e\\x9b2J\\x07prov"],  # model, provider
        "results csv": [SHOWN],
        "results md": ["\\[/bold\\]", "\\|"],  # Markdown's characters escaped in cells
        "export md": [
            "\\\\x1b\\]0;pwned\\\\x07",  # the title, model, endpoint and reviewer in running Markdown
            "evil\\\\x1b\\]2;t\\\\x07\\[/b\\]\\\\u202e",  # the endpoint
            "[bold red]not bold[/bold red] [link=https://example.com]click[/link] \\x1b[31mred",  # the reply, fenced
        ],
        "search": [SHOWN],
        "scenarios show": [SHOWN],
        "pair --summary": [SHOWN],  # the reviewer
        "results --reviewers": [SHOWN],  # the reviewer
        "unknown run (stderr)": [SHOWN],
    }
    for name, needles in shows.items():
        for needle in needles:
            assert needle in world.outputs[name], (name, needle, world.outputs[name][:2000])
    for name in ("runs --json", "results json", "export json", "search --json", "scenarios show --json"):
        assert holds(json.loads(world.jsons[name]), HOSTILE.replace("\x00", "")[:10]), name
    assert holds(json.loads(world.jsons["run --json"]), PROVIDER + "err")  # the error text, exact
    assert holds(json.loads(world.jsons["export json"]), HOSTILE)  # the bundle holds the note exactly
    # And the record holds every string exactly as it came.
    db = world.db
    assert db["runs"].get(good)["model"] == MODEL and db["runs"].get(good)["endpoint"] == ENDPOINT
    assert any(t["provider"] == PROVIDER for t in db["turns"].rows_where("run_id = ?", [good]))
    assert {a["reviewer"] for a in db["annotations"].rows} == {HOSTILE}
    assert {a["note"] for a in db["annotations"].rows} == {HOSTILE}


@pytest.mark.slow
async def test_every_screen_shows_the_hostile_string_literally(world, fake_server):
    db = world.db
    app = SieveApp(db, Endpoints(), HOSTILE, retry=FAST)
    seen: dict[str, str] = {}

    def look(name: str) -> str:
        text = screen_text(app)
        inert(text, name)
        seen[name] = text
        return text

    async with app.run_test(size=(200, 60), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        assert SHOWN in look("home")  # the runs' model; the reviewer in the sub-title

        # 7. the header: whatever a screen puts in its title is shown literally.
        app.screen.title = HOSTILE
        app.screen.sub_title = PROVIDER
        await wait_until(pilot, on_screen(app, "\\x1b]0;pwned\\x07\\x1b[31m[/bold]\\u202e\\x9b2J[red]x[/red]\\x00"))
        look("header")

        # Review: title (scenario), sub-title (model, reviewer), the card, the list with notes.
        app.open_review(world.good)
        await wait_until(pilot, screen_is(app, ReviewScreen))
        shown = look("review")
        assert shown.count(SHOWN) >= 3
        await pilot.press("s")  # the picker: item titles from the scenario
        await wait_until(pilot, overlay_is(app, Picker))
        assert SHOWN in look("rubric picker")
        await pilot.press("escape")
        await wait_until(pilot, no_overlay(app))
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))

        # A blind review revealed: the notification names the model.
        app.blind = True
        app.open_review(world.good)
        await wait_until(pilot, screen_is(app, ReviewScreen))
        look("blind review")
        await pilot.press("R")
        await wait_until(pilot, on_screen(app, "Revealed"))
        revealed = look("revealed")
        assert "\\x1b[31m[/bold]" in revealed  # the notification, literally
        await pilot.press("escape")
        app.blind = False
        await wait_until(pilot, screen_is(app, HomeScreen))

        # Results, the step view and the charts: model, provider, scenario titles.
        app.push_screen(ResultsScreen("train"))
        await wait_until(pilot, screen_is(app, ResultsScreen))
        table = app.screen.query_one(DataTable)
        assert table.row_count == 2
        assert "\\x1b[31m[/bold]\\u202e\\x9b2J\\x07prov" in look("results")
        await pilot.press("a")
        await wait_until(pilot, screen_is(app, StepAlignedScreen))
        assert SHOWN in look("step view")
        await pilot.press("escape", "c")
        await wait_until(pilot, screen_is(app, ChartScreen))
        assert SHOWN in look("charts")
        await pilot.press("escape", "escape")
        await wait_until(pilot, screen_is(app, HomeScreen))

        # Pairs: the judge's criteria are the scenario's item titles.
        app.push_screen(PairScreen(world.queue))
        await wait_until(pilot, on_screen(app, "pair 1 of"))
        look("pairs")
        await pilot.press("j")
        await wait_until(pilot, screen_is(app, JudgePicker))
        assert SHOWN in look("judge picker")
        await pilot.press("escape", "escape")
        await wait_until(pilot, screen_is(app, HomeScreen))

        # The new-run dialog: what a person typed, in an error.
        await pilot.press("n")
        await wait_until(pilot, screen_is(app, NewRunDialog))
        await pilot.press("tab", "tab", "tab", *"[/x]", "enter")  # into max tokens
        await wait_until(pilot, on_screen(app, "max tokens: '[/x]' is not a whole number"))
        look("new run error")
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))

        # Play: the title, the figures (model, provider, endpoint), the reply as it streams, and a
        # server's error text in the retry notification.
        scenario = scenarios.load(str(world.scenario_path))
        gateway = Gateway(Endpoint(fake_server.base_url, name=ENDPOINT))
        ends = {MODEL: "\\x1b[31m[/bold]\\u202e\\x9b2J\\x07prov", FAILING: "Trying again in"}
        for model, end in ends.items():
            session = Session.start(db, scenario, gateway, resolve_settings(model, scenario), retry=FAST)
            app.push_screen(PlayScreen(session))
            await wait_until(pilot, lambda s=session: isinstance(app.screen, PlayScreen) and app.screen.session is s)
            await pilot.press("n")
            await settle(app, pilot)
            await wait_until(pilot, on_screen(app, end))  # the provider, or the retry's notification
            shown = look(f"play {model[-20:]}")
            assert SHOWN in shown and "evil\\x1b]2;t\\x07[/b]\\u202e" in shown
            await pilot.press("escape")
            await wait_until(pilot, screen_is(app, HomeScreen))
        assert "\\x1b[31m[/bold]\\u202e\\x9b2J\\x07prov" in seen[f"play {MODEL[-20:]}"]  # the provider
        failing = seen[f"play {FAILING[-20:]}"]
        assert "\\x1b[31m[/bold]\\u202e\\x9b2J\\x07proverr" in failing  # the error text, in the transcript
        assert "Trying again in" in failing  # and in the retry notification, which went through the same sink


def test_a_model_named_like_markup_runs_and_its_progress_bar_shows_the_name(tmp_path, fake_server):
    # 8. `-m "[/bold]"` once crashed the progress bar (a MarkupError) and left a run with no turns.
    db_path = tmp_path / "markup.db"
    result = CliRunner().invoke(
        main,
        ["run", "train", "-m", "[/bold]\x1b[31m", "--endpoint", fake_server.base_url, "--db", str(db_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "[/bold]\\x1b[31m" in result.stderr and "\x1b" not in result.stderr  # the bar's label, literally
    (run,) = store.list_runs(store.open_db(db_path))
    assert run["model"] == "[/bold]\x1b[31m" and run["replies"] == len(scenarios.load("train").script())


def test_click_own_errors_quote_what_was_typed_literally():
    """A usage error repeats the user's argument: escapes in it are shown, never sent to the terminal."""
    hostile = "ru\x1b]0;pwned\x07n"
    for args in ([hostile], ["run", f"--{hostile}"]):
        result = subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True)
        assert result.returncode == 2
        assert "\x1b" not in result.stderr and "\x07" not in result.stderr and "\\x1b]0;pwned\\x07" in result.stderr
