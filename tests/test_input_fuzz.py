"""Bundles, score cards and chats mutated at random (seeded, a few seconds each): a clear error or a usable record.

Each mutated file is either refused with a SieveInputError (and the database is
left as it was) or accepted, and then what it added can be read, scored and
exported like anything sieve wrote itself. Any other exception is the defect.
"""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sieve import scenarios, store
from sieve.errors import SieveInputError
from sieve.store.record import bundles, sillytavern
from sieve.store.record.bundles import TABLES
from sieve.store.scoring import bundle_evidence, cards, markdown, results
from sieve.store.scoring.runview import RunView

# Every case runs, on any machine, so that a failure seen in CI is seen here too; the time is
# a guard against a case that hangs, not a budget (the 250 take about 3 s on a slow machine).
SECONDS = 60.0
CASES = 250

ODD: list[Any] = [
    None,
    0,
    -1,
    2**63,
    2**64,
    -(2**70),
    1.5,
    math.inf,
    -math.inf,
    math.nan,
    1e300,
    "",
    "x",
    "T3",
    "½–1",
    "inf",
    "nan",
    "1e400",
    "\ud800",
    "a\udfffb",
    "\x1b]0;t\x07[/b]\u202e",
    "2026-13-45",
    "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    True,
    False,
    [],
    [1, [2, [3]]],
    {},
    {"a": {"b": None}},
]


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, (*prefix, i))
    return out


def mutate(data: Any, rng: random.Random, pool: list[Any]) -> Any:
    """1 to 3 changes: a value replaced (by an odd one, or by another value of the same data), a key
    or row dropped, a row duplicated, a key added."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        every = paths(data)
        if not every:
            break
        path = rng.choice(every)
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        key = path[-1]
        action = rng.random()
        if action < 0.45:
            parent[key] = copy.deepcopy(rng.choice(ODD))
        elif action < 0.65:
            parent[key] = copy.deepcopy(rng.choice(pool))  # an id or value from elsewhere: a wrong reference
        elif action < 0.8:
            del parent[key]
        elif action < 0.9 and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        elif isinstance(parent, dict):
            parent[f"extra{rng.randrange(5)}"] = rng.choice(ODD)
    return data


def leaves(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in leaves(v)]
    if isinstance(node, list):
        return [x for v in node for x in leaves(v)]
    return [node]


def as_text(data: Any, rng: random.Random) -> str:
    """JSON as a careless tool writes it: mostly whole, sometimes cut short or nested past reason."""
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5)
    roll = rng.random()
    if roll < 0.08:
        return text[: rng.randrange(len(text))]
    if roll < 0.14:
        depth = rng.choice([2000, 100_000])
        return "[" * depth + text + "]" * depth
    return text


def row_counts(db) -> dict[str, int]:
    return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def assert_usable(db) -> None:
    """What a database must be after an accepted import: consistent, and every run readable end to end."""
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    doubled = db.execute("SELECT run_id, idx FROM turns GROUP BY run_id, idx HAVING SUM(chosen) != 1").fetchall()
    assert doubled == []
    for run in store.list_runs(db):
        view = RunView.open(db, run["id"])
        markdown.run_document(view)
        results.run_row(view)
    for name in {r["scenario"] for r in store.list_runs(db)}:
        results.table(db, name)


# -- bundles ---------------------------------------------------------------------------


@pytest.fixture
def bundle_world(tmp_path):
    from tests.test_bundles import populate

    source = tmp_path / "source.db"
    db = store.open_db(source)
    run_ids = populate(db)
    from sieve.store.record import pairs as pairing

    queue = pairing.create_queue(db, [(run_ids[0], run_ids[1])], seed=1)
    pairing.judge(db, pairing.queue_pairs(db, queue)[0], "T1", "A", "ada")
    data = bundles.export_bundle(db, run_ids)
    db.conn.close()
    empty = tmp_path / "empty.db"
    store.open_db(empty).conn.close()
    loaded = tmp_path / "loaded.db"
    shutil.copy(source, loaded)
    return data, empty, loaded


@pytest.mark.slow
def test_fuzzed_bundles_are_refused_whole_or_imported_usable(tmp_path, bundle_world):
    data, empty, loaded = bundle_world
    rng = random.Random(1789)
    pool = [v for v in leaves(data) if v is not None][:400]
    started, outcome = time.monotonic(), {"refused": 0, "imported": 0}
    for case in range(CASES):
        if time.monotonic() - started > SECONDS:
            break
        target = tmp_path / "target.db"
        shutil.copy(rng.choice([empty, loaded]), target)
        for suffix in ("-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)
        bundle = tmp_path / "case.json"
        bundle.write_text(as_text(mutate(data, rng, pool), rng), encoding="utf-8", errors="surrogatepass")
        db = store.open_db(target)
        before = row_counts(db)
        try:
            # The way `sieve import` takes a bundle: every annotation through the evidence rule.
            bundle_evidence.import_bundle(db, str(bundle), bundles.read_bundle(bundle), rng.choice(["fail", "skip"]))
        except SieveInputError:
            assert row_counts(db) == before, case
            outcome["refused"] += 1
        except Exception as exc:
            pytest.fail(f"case {case}: {type(exc).__name__}: {exc}")
        else:
            assert_usable(db)
            outcome["imported"] += 1
        db.conn.close()
    print(f"fuzzed bundles: {outcome}")
    assert outcome["refused"] > 30 and outcome["imported"] > 3, outcome


# -- score cards -----------------------------------------------------------------------

KEYKEEPER = scenarios.load("keykeeper")


@pytest.fixture
def card_run(db):
    from sieve.store.record import turns as record

    run_id = store.create_run(db, KEYKEEPER, model="m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text=KEYKEEPER.steps[0].text, step_id="m0")
    record.add_turn(
        db, run_id, idx=1, role="assistant", origin="reply", text="Havel sets the bowl down. “Three days,” he says."
    )
    return run_id


CARD = [
    {"id": "T1", "score": 2, "quote": "Havel sets the bowl down", "turn": 1, "note": "plain"},
    {"id": "T2", "score": "1", "quote": "Three days … he says"},
    {"id": "R1", "score": 1, "quote": "“Three days,” he says"},
    {"id": "L3", "score": 1, "quote": "sets the bowl"},
    {"id": "L4", "score": None, "quote": None},  # a counted event, given without its quote
]
MARKDOWN_CARD = """| item | score | quote | turn | note |
|---|---|---|---|---|
| T1 | 2 | "Havel sets the bowl down" | 1 | plain |
| T2 | 1 | Three days … he says |  |  |
| R1 | 1 | “Three days,” |  | a \\| pipe |
"""


def mutate_markdown(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    n = rng.randrange(len(lines))
    cells = lines[n].split("|")
    c = rng.randrange(len(cells))
    cells[c] = rng.choice(["", " ", "²", "٣", "1e400", "nan", "-", "\\|", "||", "\ud800", "T99", "½–½", "3 to 1"])
    lines[n] = "|".join(cells)
    if rng.random() < 0.2:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["| a |", "text", "|---|", "| item |"]))
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_fuzzed_cards_are_refused_with_a_place_or_checked_and_imported(tmp_path, db, card_run):
    rng = random.Random(451)
    pool = [v for v in leaves(CARD) if v is not None]
    started, outcome = time.monotonic(), {"refused": 0, "imported": 0}
    view = RunView.open(db, card_run)
    for case in range(CASES):
        if time.monotonic() - started > SECONDS:
            break
        path = tmp_path / ("case.md" if case % 3 == 0 else "case.json")
        text = mutate_markdown(MARKDOWN_CARD, rng) if case % 3 == 0 else as_text(mutate(CARD, rng, pool), rng)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        before = db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
        try:
            checked = cards.check_card(str(path), cards.read_card(path), view)
            cards.import_card(db, view, checked, "fuzz")
        except SieveInputError:
            assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == before
            outcome["refused"] += 1
            continue
        except Exception as exc:
            pytest.fail(f"case {case}: {type(exc).__name__}: {exc}\n{text[:2000]}")
        outcome["imported"] += 1
        for score, high in db.execute("SELECT score, score_high FROM annotations").fetchall():
            assert all(v is None or math.isfinite(v) for v in (score, high))
    assert_usable(db)
    print(f"fuzzed cards: {outcome}")
    assert outcome["refused"] > 30 and outcome["imported"] > 10, outcome


# -- chats -------------------------------------------------------------------------------

CHAT = [
    {"user_name": "You", "character_name": "Havel", "create_date": "2024-08-07@18h47m12s", "chat_metadata": {}},
    {"name": "Havel", "is_user": False, "is_system": False, "send_date": "August 7, 2024 6:47pm", "mes": "The bowl."},
    {"name": "You", "is_user": True, "send_date": 1691430000000, "mes": "Let me out."},
    {
        "name": "Havel",
        "is_user": False,
        "send_date": "2023-4-20 @10h 26m 30s 175ms",
        "mes": "No.",
        "swipes": ["No.", "Never."],
        "swipe_id": 0,
        "extra": {"model": "vendor/model"},
    },
]


@pytest.mark.slow
def test_fuzzed_chats_are_refused_with_a_line_or_imported_usable(tmp_path, db):
    rng = random.Random(1984)
    pool = [v for v in leaves(CHAT) if v is not None]
    started, outcome = time.monotonic(), {"refused": 0, "imported": 0}
    for case in range(CASES):
        if time.monotonic() - started > SECONDS:
            break
        lines = [json.dumps(m, ensure_ascii=rng.random() < 0.5) for m in mutate(CHAT, rng, pool)]
        if rng.random() < 0.15:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(["{", "[" * 50_000, '"text"', "[]", "{}", "null"]))
        path = tmp_path / "case.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        before = row_counts(db)
        try:
            sillytavern.import_chat(db, path, KEYKEEPER, strict=rng.random() < 0.5, again=True)
        except SieveInputError:
            assert row_counts(db) == before, case
            outcome["refused"] += 1
            continue
        except Exception as exc:
            pytest.fail(f"case {case}: {type(exc).__name__}: {exc}\n" + "\n".join(lines)[:2000])
        outcome["imported"] += 1
    assert_usable(db)
    print(f"fuzzed chats: {outcome}")
    assert outcome["refused"] > 10 and outcome["imported"] > 10, outcome


def test_the_fuzzers_bases_are_accepted(tmp_path, db, card_run, bundle_world):
    """The unmutated inputs import: the fuzzers start from valid data."""
    data, empty, _ = bundle_world
    target = tmp_path / "t.db"
    shutil.copy(empty, target)
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(data))
    tdb = store.open_db(target)
    bundles.import_bundle(tdb, str(bundle), bundles.read_bundle(bundle))
    assert_usable(tdb)
    card = tmp_path / "c.json"
    card.write_text(json.dumps(CARD))
    view = RunView.open(db, card_run)
    assert [c.found.verdict for c in cards.check_card(str(card), cards.read_card(card), view) if c.found] == [
        "exact",
        "exact",
        "exact",
        "exact",
    ]
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(m) for m in CHAT))
    sillytavern.import_chat(db, chat, KEYKEEPER)
    assert sqlite3.connect(":memory:")  # nothing else to close
