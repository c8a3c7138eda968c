"""SillyTavern and TavernAI chats of every vintage import, each message with its speaker and its time.

The fixtures in tests/data/chats are written in each vintage's shape: TavernAI's
epoch milliseconds and `is_name`, a TavernAI group chat whose header lists
`character_names`, SillyTavern's "2023-4-20 @10h 26m 30s 175ms" and
"August 7, 2024 6:47pm" dates, a hand-added non-message line, ISO dates with
reasoning in `extra`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import sillytavern
from sieve.store.record import turns as record
from sieve.store.scoring import markdown
from sieve.store.scoring.runview import RunView

CHATS = Path(__file__).parent / "data" / "chats"
KEYKEEPER = scenarios.load("keykeeper")


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# (file, model, [(role, speaker, created)], chosen text of the last turn)
VINTAGES = [
    (
        "tavernai-2023.jsonl",
        "sillytavern:Havel",
        [
            ("assistant", "Havel", "2023-04-20T10:06:30.175+00:00"),
            ("user", "You", "2023-04-20T10:07:33.412+00:00"),
            ("assistant", "Havel", "2023-04-20T10:08:21.998+00:00"),
        ],
        "Keep your coin.",
    ),
    (
        "tavernai-group.jsonl",
        "sillytavern:Havel, Marta, Old Jonas",
        [
            ("assistant", "Havel", "2023-04-27T12:53:21.000+00:00"),
            ("assistant", "Marta", "2023-04-27T12:53:22.000+00:00"),
            ("user", "You", "2023-04-27T12:53:23.000+00:00"),
            ("assistant", "Old Jonas", "2023-04-27T12:53:24.000+00:00"),
        ],
        "grateful for it.",
    ),
    (
        "sillytavern-2023.jsonl",
        "sillytavern:Havel",
        [
            ("assistant", "Havel", "2023-04-20T10:26:30.175"),
            ("user", "Ada", "2023-04-20T10:27:02.009"),
            ("assistant", "Havel", "2023-04-20T10:27:41.552"),
        ],
        "The wind. Only the wind.",
    ),
    (
        "sillytavern-2024.jsonl",
        "anthropic/claude-3.5-sonnet",
        [
            ("assistant", "Havel", "2024-08-07T18:47:00.000"),
            ("user", "Ada", "2024-08-07T18:48:00.000"),
            ("system", "Narrator", "2024-08-07T18:48:00.000"),
            ("assistant", "Havel", "2024-08-07T18:49:00.000"),
        ],
        "The ledger knows.",
    ),
    (
        "sillytavern-2025.jsonl",
        "deepseek/deepseek-r1",
        [
            ("assistant", "Havel", "2025-03-01T12:00:00.000+00:00"),
            ("user", "Ada", "2025-03-01T12:00:31.250+00:00"),
            ("assistant", "Havel", "2025-03-01T12:00:40.500+00:00"),
        ],
        "*He turns the key.*",
    ),
]


@pytest.mark.parametrize("name,model,turns,last", VINTAGES, ids=[v[0] for v in VINTAGES])
def test_every_vintage_imports_with_its_speakers_and_times(tmp_path, name, model, turns, last):
    db_path = tmp_path / "chat.db"
    result = cli("import", CHATS / name, "--scenario", "keykeeper", "--db", db_path, "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run"]
    db = store.open_db(db_path)
    run = record.get_run(db, run_id)
    assert run["model"] == model and run["status"] == "complete"
    chosen = record.chosen_turns(db, run_id)
    assert [(t["role"], t["speaker"], t["created"]) for t in chosen] == turns
    assert chosen[-1]["text"].endswith(last)
    document = markdown.run_document(RunView.open(db, run_id))  # the speakers show in the appendix
    assert all(f"({speaker})" in document for _, speaker, _ in turns)


def test_a_group_chat_keeps_each_speaker_not_one_name_for_all(tmp_path, db):
    run_id = sillytavern.import_chat(db, CHATS / "tavernai-group.jsonl", KEYKEEPER)
    replies = [t for t in record.chosen_turns(db, run_id) if t["role"] == "assistant"]
    assert [t["speaker"] for t in replies] == ["Havel", "Marta", "Old Jonas"]
    assert record.get_run(db, run_id)["settings"]["characters"] == ["Havel", "Marta", "Old Jonas"]


def test_a_line_that_is_no_message_is_skipped_with_a_warning_naming_it(tmp_path):
    db_path = tmp_path / "chat.db"
    chat = CHATS / "sillytavern-2024.jsonl"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert f"{chat}:5: not a message (no 'mes', no 'is_user'): skipped" in result.stderr
    strict = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "strict.db", "--strict")
    assert strict.exit_code == 2 and f"{chat}:5:1: not a message" in strict.output
    assert store.list_runs(store.open_db(tmp_path / "strict.db")) == []


@pytest.mark.parametrize(
    "value,expected",
    [
        (1681985190175, "2023-04-20T10:06:30.175+00:00"),
        (1681985190, "2023-04-20T10:06:30.000+00:00"),
        ("2023-4-20 @10h 26m 30s 175ms", "2023-04-20T10:26:30.175"),
        ("2024-08-07@18h47m12s", "2024-08-07T18:47:12.000"),
        ("August 7, 2024 6:47pm", "2024-08-07T18:47:00.000"),
        ("August 7, 2024 6:47 AM", "2024-08-07T06:47:00.000"),
        ("2025-03-01T12:00:00.000Z", "2025-03-01T12:00:00.000+00:00"),
        ("yesterday", None),
        (10**30, None),
        (True, None),
    ],
)
def test_send_dates_of_every_vintage_are_read(value, expected):
    assert sillytavern.sent_at(value) == expected
