"""`sieve search` reads the full-text index across runs; the commands take Home's short ids and unique prefixes."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.tui.app import SieveApp
from sieve.tui.screens.home import HomeScreen
from tests.support.tui_helpers import wait_until


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def make_run(db, scenario: str, model: str, replies: list[str]) -> str:
    loaded = scenarios.load(scenario)
    run_id = store.create_run(db, loaded, model=model, endpoint="fake", settings={})
    step = loaded.steps[0]
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text=step.text, step_id=step.id, step_repeat=1)
    for alt, text in enumerate(replies):  # regenerations: the last one is chosen
        record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text=text, alt=alt)
    record.set_run_status(db, run_id, "complete")
    return run_id


@pytest.fixture
def three(tmp_path):
    db_path = tmp_path / "ids.db"
    db = store.open_db(db_path)
    ids = [
        make_run(db, "keykeeper", "vendor/a", ["Havel sets down the porridge and says nothing."]),
        make_run(db, "train", "vendor/b", ["The porridge is cold, Viktor says.", "Viktor \x1b[31meats the porridge."]),
        make_run(db, "keykeeper", "vendor/c", ["The gate creaks."]),
    ]
    return db_path, db, ids


# -- search ---------------------------------------------------------------------------


def test_search_finds_every_turn_holding_the_words_across_runs(three):
    db_path, _, (a, b, c) = three
    result = cli("search", "porridge", "--json", "--db", db_path)
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert sorted((h["run_id"], h["idx"], h["chosen"]) for h in hits) == sorted([(a, 1, 1), (b, 1, 0), (b, 1, 1)])
    assert {h["model"] for h in hits} == {"vendor/a", "vendor/b"} and c not in {h["run_id"] for h in hits}
    assert all("[porridge]" in h["snippet"] and h["role"] == "assistant" for h in hits)
    assert any("\\u001b[31meats" in line for line in result.output.splitlines())  # JSON escapes the control

    table = cli("search", "porridge", "--db", db_path).output
    lines = table.splitlines()
    assert lines[0].split() == ["run", "turn", "who", "scenario", "model", "text"]
    assert any(line.startswith(a[-8:]) and "model" in line and "[porridge]" in line for line in lines)
    assert any(line.startswith(b[-8:]) and "1 (alt)" in line for line in lines)  # a regenerated reply, not chosen
    assert "\\x1b[31meats" in table and "\x1b" not in table  # the reply's escape shown, not obeyed

    # Every word must appear; case does not matter; words are words, never query syntax.
    assert [h["run_id"] for h in json.loads(cli("search", "HAVEL porridge", "--json", "--db", db_path).output)] == [a]
    assert json.loads(cli("search", "Havel", "PORRIDGE", "--json", "--db", db_path).output)[0]["run_id"] == a
    assert cli("search", 'porridge" OR gate NEAR(', "--db", db_path).output == "Nothing found.\n"


def test_search_narrows_to_a_scenario_or_a_run_named_by_its_short_id(three):
    db_path, _, (a, b, _) = three
    by_scenario = json.loads(cli("search", "porridge", "--scenario", "train", "--json", "--db", db_path).output)
    assert {h["run_id"] for h in by_scenario} == {b}
    by_run = json.loads(cli("search", "porridge", "--run", a[-8:], "--json", "--db", db_path).output)
    assert [h["run_id"] for h in by_run] == [a]
    # The player's words are in the index too.
    setup = json.loads(cli("search", "keykeeper Havel", "--json", "--run", a[-8:], "--db", db_path).output)
    assert [(h["idx"], h["role"]) for h in setup] == [(0, "user")]


# -- short ids --------------------------------------------------------------------------


def unique_prefix(run_id: str, others: list[str]) -> str:
    """The shortest prefix (at least 4 characters) that names only this run."""
    for n in range(4, len(run_id)):
        if not any(o.startswith(run_id[:n]) for o in others if o != run_id):
            return run_id[:n]
    return run_id


@pytest.fixture
def headless_tui(monkeypatch):
    """The TUI commands open the real app, headless; what it opens over Home is recorded, then it quits."""
    opened: list[tuple[str, str | None]] = []

    async def drive(app: SieveApp) -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_until(pilot, lambda: not isinstance(app.screen, HomeScreen) and app.screen.is_mounted)
            screen = app.screen
            opened.append((type(screen).__name__, getattr(screen, "run_id", None) or getattr(screen, "queue", None)))

    monkeypatch.setattr(SieveApp, "run", lambda app: asyncio.run(drive(app)))
    return opened


@pytest.mark.slow
def test_home_short_ids_and_unique_prefixes_name_runs_for_export_review_verify_and_pair(three, headless_tui):
    db_path, db, ids = three
    a, b, c = ids
    short = {run: run[-8:] for run in ids}  # what Home shows
    prefix = {run: unique_prefix(run, ids).lower() for run in ids}  # typed in lower case

    for given in (short[a], prefix[a]):
        bundle = json.loads(cli("export", given, "--format", "json", "--db", db_path).output)
        assert [r["id"] for r in bundle["runs"]] == [a] and {t["run_id"] for t in bundle["turns"]} == {a}
        assert cli("export", given, "--format", "md", "--db", db_path).output.startswith(
            "# The keykeeper test: vendor/a"
        )
        verified = cli("verify", "--run", given, "--db", db_path)
        assert verified.exit_code == 0 and verified.output == f"{a}: no quotes to verify\n"

    assert cli("review", short[b], "--db", db_path).exit_code == 0
    assert cli("review", prefix[c], "--db", db_path).exit_code == 0
    result = cli("pair", short[a], prefix[c], "--db", db_path)
    assert result.exit_code == 0, result.output
    queue = result.output.split()[1].rstrip(":")
    (pair,) = pairing.queue_pairs(db, queue)
    assert {pair["run_a"], pair["run_b"]} == {a, c}
    # Without a terminal, pair makes the queue and says its id without opening the screen (scripts judge it next).
    assert headless_tui == [("ReviewScreen", b), ("ReviewScreen", c)]


def test_an_ambiguous_prefix_lists_the_candidates_and_exits_2(three, headless_tui):
    db_path, _, ids = three
    common = os.path.commonprefix(ids)
    assert len(common) >= 4  # made in the same instant: ULIDs share their time
    for args in (
        ["export", common],
        ["review", common],
        ["verify", "--run", common],
        ["pair", common, ids[0][-8:]],
        ["search", "porridge", "--run", common],
    ):
        result = cli(*args, "--db", db_path)
        assert result.exit_code == 2, (args, result.output)
        assert f"'{common}' names more than one run:" in result.output
        assert all(run in result.output for run in ids), args
        assert "Traceback" not in result.output
    assert headless_tui == []  # nothing was opened

    too_short = cli("export", common[:3], "--db", db_path)
    assert too_short.exit_code == 2 and "too short to name a run" in too_short.output
    unknown = cli("export", "ZZZZZZZZ", "--db", db_path)
    assert unknown.exit_code == 2 and "no run with the id ZZZZZZZZ; the latest runs:" in unknown.output
    assert ids[-1] in unknown.output
