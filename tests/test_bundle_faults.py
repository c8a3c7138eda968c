"""Bundles from real use and from careless hands: every table travels, every row is checked, conflicts are reported."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from click.testing import CliRunner

from sieve import store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.record.bundles import TABLES
from sieve.store.record.ids import new_id
from sieve.tui.screens.pairs import JudgePicker, PairScreen
from sieve.tui.screens.pickers import Confirm, Picker
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.review import ReviewScreen
from tests.support.scores import score
from tests.support.tui_helpers import on_screen, open_overlays, overlay_is, play_app, screen_is, settle, wait_until

ITEMS = [f"T{n}" for n in range(3, 11)]


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def counts(path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        conn.close()


async def score_on_screen(pilot, app, item: str) -> None:
    """Select the first words of the turn shown and score `item` with the first value of its scale."""
    app.screen.select_span(0, 5)
    before = len(app.screen.view.annotations(app.screen.reviewer))
    await pilot.press("s")
    await wait_until(pilot, overlay_is(app, Picker))
    await pilot.press(*item, "enter", "enter", "enter")
    await pilot.pause()
    if open_overlays(app, Confirm):  # a quote off its item's steps is asked about first: kept all the same
        await pilot.press("y")
    await wait_until(pilot, lambda: len(app.screen.view.annotations(app.screen.reviewer)) == before + 1)


async def made_by_hand(db, server) -> dict[str, str]:
    """A record made the way a person makes one: steps, a regeneration, a branch, scores with undo and
    redo, a blind review, a pair queue judged head to head."""
    app, session = play_app(db, server, "roundtrip;tokens=12", scenario="train")
    async with app.run_test(size=(180, 55)) as pilot:
        for _ in range(3):
            await pilot.press("n")
            await settle(app, pilot)
        await pilot.press("r")  # a second answer to the last prompt
        await settle(app, pilot)
        await pilot.press("up", "up")
        await pilot.press("b")  # a branch from an earlier turn
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.run_id != session.run_id)
        branch = app.screen.session.run_id
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press("v")
        await wait_until(pilot, screen_is(app, ReviewScreen))
        for item in ("T3", "T4", "T5"):
            await score_on_screen(pilot, app, item)
        await pilot.press("u", "u", "U")  # T5 and T4 undone, T4 redone: history to carry
        await wait_until(pilot, lambda: sorted(a["item"] for a in notes.active(db, branch)) == ["T3", "T4"])
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, PlayScreen))
        app.blind = True
        app.open_review(session.run_id)
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.run_id == session.run_id)
        await score_on_screen(pilot, app, "T6")
        assert db.execute("SELECT COUNT(*) FROM annotations WHERE blind = 1").fetchone()[0] == 1
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, PlayScreen))
        queue = pairing.create_queue(db, [(session.run_id, branch)], seed=1)
        for run_id in (session.run_id, branch):
            for item in ITEMS:
                score(db, run_id, item, 1)
        app.push_screen(PairScreen(queue))
        await wait_until(pilot, on_screen(app, "pair 1 of 1"))
        await pilot.press("j")
        await wait_until(pilot, screen_is(app, JudgePicker))
        await pilot.press(*"overall", "enter", "down", "enter")
        await wait_until(pilot, on_screen(app, "your verdicts: overall B"))
    return {"run": session.run_id, "branch": branch}


@pytest.mark.slow
async def test_a_record_made_by_hand_round_trips_byte_identical_and_idempotent(tmp_path, fake_server):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    made = await made_by_hand(store.open_db(first), fake_server)
    held = counts(first)
    assert held["pairs"] == 1 and held["judgments"] == 1 and held["annotation_history"] >= 5
    assert sum(1 for _ in sqlite3.connect(first).execute("SELECT 1 FROM turns WHERE alt > 0")) == 1
    bundle, again = tmp_path / "all.json", tmp_path / "again.json"
    assert cli("export", "--all", "--db", first, "-o", bundle).exit_code == 0
    result = cli("import", bundle, "--db", second)
    assert result.exit_code == 0, result.output
    assert counts(second) == held
    assert cli("export", "--all", "--db", second, "-o", again).exit_code == 0
    assert again.read_bytes() == bundle.read_bytes()
    repeated = cli("import", bundle, "--db", second, "--json")
    assert repeated.exit_code == 0 and set(json.loads(repeated.output)["added"].values()) == {0}
    assert counts(second) == held
    # Exporting only the branch brings the run it grew from; the pair and its judgment come with both.
    part = tmp_path / "branch.json"
    assert cli("export", made["branch"], "--db", first, "-o", part).exit_code == 0
    data = json.loads(part.read_text())
    assert {r["id"] for r in data["runs"]} == {made["run"], made["branch"]}
    assert len(data["pairs"]) == 1 and len(data["judgments"]) == 1
    fresh = tmp_path / "c.db"
    assert cli("import", part, "--db", fresh).exit_code == 0


def bundle_of(tmp_path, db_path) -> dict:
    out = tmp_path / "bundle.json"
    assert cli("export", "--all", "--db", db_path, "-o", out).exit_code == 0
    return json.loads(out.read_text())


@pytest.fixture
def source(tmp_path, fake_server) -> tuple:
    """A small record played against the test server, and its bundle."""
    from sieve import scenarios
    from sieve.engine.gateway import Endpoint, Gateway
    from sieve.engine.session import Session, resolve_settings

    path = tmp_path / "source.db"
    db = store.open_db(path)
    train = scenarios.load("train")
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    runs = []
    for model in ("one;tokens=6", "two;tokens=6"):
        session = Session.start(db, train, gateway, resolve_settings(model, train))
        import asyncio

        asyncio.run(session.play())
        runs.append(session.run_id)
    queue = pairing.create_queue(db, [tuple(runs)], seed=2)
    pairing.judge(db, pairing.queue_pairs(db, queue)[0], "T3", "tie", "ada")
    score(db, runs[0], "T3", 1, note="fine")
    db.conn.close()
    return path, bundle_of(tmp_path, path), runs


def refused(tmp_path, data: dict, message: str, target=None) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    target = target or tmp_path / "target.db"
    store.open_db(target).conn.close()
    before = counts(target)
    result = cli("import", bad, "--db", target)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output
    assert counts(target) == before


def test_a_bundle_with_a_judged_pair_imports_whole(tmp_path, source):
    _, data, _ = source
    assert len(data["pairs"]) == 1 and data["judgments"][0]["pair_id"] == data["pairs"][0]["id"]
    target = tmp_path / "fresh.db"
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(data))
    result = cli("import", path, "--db", target)
    assert result.exit_code == 0, result.output
    assert counts(target)["judgments"] == 1 and counts(target)["pairs"] == 1


def test_a_snapshot_that_is_no_scenario_is_refused_even_when_its_sha256_matches(tmp_path, source):
    _, data, _ = source
    toml = '[scenario]\nname = "train"\ntitle = "x"\nversion = 1\n'  # valid TOML, no steps: not a scenario
    sha = hashlib.sha256(toml.encode()).hexdigest()
    data["scenarios"][0].update(toml=toml, sha256=sha)
    for run in data["runs"]:
        run["scenario_sha256"] = sha
    refused(tmp_path, data, "scenarios[0].toml: the snapshot is not a valid scenario")


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda d: d["turns"].append({**d["turns"][1], "id": new_id(), "alt": 1}), "has 2 chosen replies; one is"),
        (lambda d: d["turns"][0].update(idx=-1), "turns[0].idx: must be 0 or more, found -1"),
        (lambda d: d["runs"][0].update(parent_run=d["runs"][0]["id"], parent_turn=1), "cannot be its own parent"),
        (
            lambda d: (
                d["runs"][0].update(parent_run=d["runs"][1]["id"], parent_turn=1)
                or d["runs"][1].update(parent_run=d["runs"][0]["id"], parent_turn=1)
            ),
            "descends from itself",
        ),
        (lambda d: d["turns"].append(dict(d["turns"][0])), "the bundle holds it twice"),
        (lambda d: d["turns"][0].update(step_id="nowhere"), "is not a step of the run's scenario"),
        (lambda d: d["turns"][1].update(cost=float("nan")), "turns[1].cost: must be a finite number"),
        (lambda d: d["turns"][1].update(completion_tokens=2**64), "integers are at most 64 bits"),
        (lambda d: d["turns"][1].update(text="half \ud800 pair"), "lone surrogate"),
        (
            lambda d: d["annotations"][0].update(quote_turn_id=d["turns"][1]["id"], quote_start=0, quote_end=10**6),
            "is outside the turn's",
        ),
        (lambda d: d["judgments"][0].update(run_b=d["judgments"][0]["run_a"]), "two different runs"),
        (lambda d: d["runs"][0].update(status="paused"), "'paused' is not one of"),
    ],
    ids=[
        "two-chosen",
        "negative-idx",
        "own-parent",
        "parent-cycle",
        "twice",
        "step",
        "nan",
        "int64",
        "surrogate",
        "quote-span",
        "pair-of-one",
        "status",
    ],
)
def test_rows_the_app_would_never_write_are_refused_whole(tmp_path, source, damage, message):
    _, data, _ = source
    damage(data)
    refused(tmp_path, data, message)


def test_rows_that_say_otherwise_than_the_database_are_conflicts(tmp_path, source):
    path, data, runs = source
    changed = json.loads(json.dumps(data))
    changed["runs"][0]["model"] = "someone-else"
    changed["turns"][1]["text"] = "another text"
    target = tmp_path / "target.db"
    original = tmp_path / "original.json"
    original.write_text(json.dumps(data))
    assert cli("import", original, "--db", target).exit_code == 0
    before = counts(target)
    bad = tmp_path / "changed.json"
    bad.write_text(json.dumps(changed))
    result = cli("import", bad, "--db", target)
    assert result.exit_code == 2, result.output
    assert "2 rows say otherwise than the database" in result.output
    assert f"runs[0] ({runs[0]}): model" in result.output and "turns[1] (" in result.output
    assert counts(target) == before
    skipped = cli("import", bad, "--db", target, "--on-conflict", "skip")
    assert skipped.exit_code == 0 and "skipped 2 rows" in skipped.output
    db = store.open_db(target)
    assert record.get_run(db, runs[0])["model"] == "one;tokens=6"  # the database keeps its own
    db.conn.close()
    taken = cli("import", bad, "--db", target, "--on-conflict", "theirs")
    assert taken.exit_code == 0 and "took the bundle's side of 2 rows" in taken.output, taken.output
    db = store.open_db(target)
    assert record.get_run(db, runs[0])["model"] == "someone-else"  # the bundle's stands
    assert cli("import", bad, "--db", target).exit_code == 0  # and then nothing says otherwise
