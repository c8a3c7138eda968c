"""A SillyTavern chat as a run; a run as a Markdown appendix; the results table of a scenario."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from tests.support.scores import score

CHAT = [
    {"user_name": "Ada", "character_name": "Havel", "create_date": "2026-11-29@10h00m00s", "chat_metadata": {}},
    {"name": "Havel", "is_user": False, "mes": "The keykeeper sets down the bowl.", "send_date": "x"},
    {"name": "Ada", "is_user": True, "mes": "Good morning, Havel. Can I pay a coin extra?", "send_date": "x"},
    {
        "name": "Havel",
        "is_user": False,
        "mes": "He takes the coin and says nothing.",
        "swipes": ["He refuses the coin.", "He takes the coin and says nothing."],
        "swipe_id": 1,
        "extra": {"api": "openai", "model": "gpt-6-astra"},
    },
]


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_chat(path, entries):
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")


def test_a_sillytavern_chat_becomes_a_live_run_to_review(tmp_path):
    chat = tmp_path / "havel.jsonl"
    write_chat(chat, CHAT)
    db_path = tmp_path / "chat.db"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.output)["run"]
    db = store.open_db(db_path)
    run = record.get_run(db, run_id)
    assert (run["origin"], run["model"], run["endpoint"], run["status"]) == (
        "live",
        "gpt-6-astra",
        "sillytavern",
        "complete",
    )
    turns = record.chosen_turns(db, run_id)
    assert [(t["role"], t["text"]) for t in turns] == [
        ("assistant", CHAT[1]["mes"]),
        ("user", CHAT[2]["mes"]),
        ("assistant", CHAT[3]["mes"]),
    ]
    alternatives = record.alternatives(db, run_id, 2)
    assert [(a["text"], a["chosen"]) for a in alternatives] == [
        ("He refuses the coin.", 0),
        ("He takes the coin and says nothing.", 1),
    ]
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=1,
        quote=Quote(None, None, None, "takes the coin"),
    )
    (annotation,) = notes.active(db, run_id)
    assert annotation["verification"] == "exact" and annotation["quote_turn_id"] == turns[2]["id"]


@pytest.mark.parametrize(
    "lines,message,kept",
    [
        (
            ['{"user_name": "Ada"}', '{"is_user": true, "mes": "hi"}', '{"is_user": false, "mes": '],
            "bad.jsonl:3:",
            1,
        ),
        (['{"is_user": true}'], "bad.jsonl:1:1: a message needs 'mes'", 0),
        (['{"mes": "hi", "is_user": true}', '{"mes": "there"}'], "bad.jsonl:2:1: a message needs 'is_user'", 1),
        (
            ['{"is_user": false, "mes": "a", "swipes": ["a"], "swipe_id": 4}'],
            "'swipe_id' 4 is not one of the 1 swipes",
            0,
        ),
        (["[1, 2]"], "bad.jsonl:1:1: expected an object", 0),
    ],
)
def test_a_malformed_chat_line_is_refused_with_strict_and_skipped_naming_it_without(tmp_path, lines, message, kept):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db_path = tmp_path / "c.db"
    result = cli("import", bad, "--scenario", "keykeeper", "--db", db_path, "--strict")
    assert result.exit_code == 2 and message in result.output, result.output
    assert store.list_runs(store.open_db(db_path)) == []
    # Without --strict: the good lines are kept, the bad one named (line, what is wrong) and skipped.
    result = cli("import", bad, "--scenario", "keykeeper", "--db", db_path)
    place = message.split(": ", 1)[0].rsplit(":", 1)[0] if message.startswith("bad") else "bad.jsonl:1"
    assert place in result.stderr and "skipped" in result.stderr, result.stderr
    if kept:
        assert result.exit_code == 0, result.output
        (run,) = store.list_runs(store.open_db(db_path))
        assert len(record.chosen_turns(store.open_db(db_path), run["id"])) == kept
    else:
        assert result.exit_code == 2 and "the chat has no messages" in result.output
        assert store.list_runs(store.open_db(db_path)) == []
    assert "needs --scenario" in cli("import", bad, "--db", db_path).output


def test_a_huge_chat_is_refused(tmp_path):
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(100 * 1024 * 1024)
    result = cli("import", huge, "--scenario", "keykeeper", "--db", tmp_path / "h.db")
    assert result.exit_code == 2 and "a chat is at most" in result.output


@pytest.fixture
def scored(tmp_path):
    db_path = tmp_path / "r.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    runs = []
    for model, t1, r1 in (("vendor/a", 2, 1), ("vendor/b", 0, 2)):
        run_id = store.create_run(db, keykeeper, model=model, endpoint="fake", settings={"temperature": 1.0})
        record.add_turn(db, run_id, idx=0, role="user", origin="setup", text="Begin.", step_id="m0", step_repeat=1)
        reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", status="streaming")
        record.finish_turn(
            db, reply, "complete", "Havel nods slowly. ```not code``` | a pipe", {"provider": "Chutes", "cost": 0.002}
        )
        record.set_run_status(db, run_id, "complete")
        evidence.annotate(
            db,
            run_id,
            reviewer="ada",
            item="T1",
            rubric="T",
            kind="score",
            score=t1,
            quote=Quote(reply, 0, 18, "Havel nods slowly."),
        )
        score(db, run_id, "R1", r1)
        notes.add(db, run_id, reviewer="ada", item="L3", kind="count")
        runs.append(run_id)
    evidence.annotate(
        db,
        runs[1],
        reviewer="bob",
        item="T1",
        rubric="T",
        kind="score",
        score=1,
        quote=Quote(None, None, None, "Havel burns it"),
    )
    reply = record.chosen_turns(db, runs[1])[1]["id"]
    evidence.annotate(  # a disqualifying verdict disqualifies on a verified quote
        db,
        runs[1],
        reviewer="ada",
        item="L1",
        kind="verdict",
        value="annulled",
        turn_id=reply,
        quote=Quote(reply, 0, 18, "Havel nods slowly."),
    )
    return db_path, runs


def test_results_one_row_per_run_in_every_format(scored):
    db_path, runs = scored
    rows = list(
        csv.DictReader(
            io.StringIO(cli("results", "--scenario", "keykeeper", "--format", "csv", "--db", db_path).output)
        )
    )
    assert [r["run"] for r in rows] == runs
    a, b = rows
    assert (a["model"], a["provider"], a["status"], a["T"], a["R"], a["L3"], a["reviewers"]) == (
        "vendor/a",
        "Chutes",
        "complete",
        "2+0 (partial)",
        "1 (partial)",
        "1",
        "1",
    )
    # Two reviewers on b: each reviewer's total first, then their mean; L1 is ada's alone (bob judged no step of it:
    # his card says nothing of L1, and is no 0 in its mean).
    assert (b["T"], b["reviewers"], b["L1 annulled"], b["disqualified by"]) == ("0.5+0 (partial)", "2", "1", "L1")
    data = json.loads(cli("results", "--scenario", "keykeeper", "--format", "json", "--db", db_path).output)
    assert data[0]["cost"] == 0.002 and data[1]["T"] == "0.5+0 (partial)"
    only_bob = list(
        csv.DictReader(
            io.StringIO(
                cli(
                    "results", "--scenario", "keykeeper", "--format", "csv", "--reviewer", "bob", "--db", db_path
                ).output
            )
        )
    )
    assert only_bob[1]["T"] == "1+0 (partial)" and only_bob[0]["T"] == ""
    md = cli("results", "--scenario", "keykeeper", "--format", "md", "--db", db_path).output
    assert md.startswith("| run | model | provider |") and "vendor/b" in md
    table = cli("results", "--scenario", "keykeeper", "--db", db_path).output
    assert "vendor/a" in table and "2+0" in table


def test_the_markdown_appendix_holds_the_transcript_and_every_quotes_verdict(scored):
    db_path, runs = scored
    text = cli("export", runs[1], "--format", "md", "--db", db_path).output
    assert text.startswith("# The keykeeper test: vendor/b")
    assert "### 1 · model" in text and "````text\nHavel nods slowly. ```not code``` | a pipe\n````" in text
    assert "## Score card: ada" in text and "## Score card: bob" in text
    assert "| T1 | 0 | exact | 1 | Havel nods slowly. |" in text
    assert "| T1 | 1 | ABSENT |  | Havel burns it |" in text
    assert "**disqualified by L1**" in text


def test_results_show_agreement_between_reviewers(scored):
    db_path, runs = scored
    db = store.open_db(db_path)
    score(db, runs[0], "T1", 2, reviewer="bob")
    data = json.loads(
        cli("results", "--scenario", "keykeeper", "--agreement", "--format", "json", "--db", db_path).output
    )
    (t1,) = [row for row in data if row["item"] == "T1"]
    # ada 2 and 0, bob 2 and 1 on the same two runs: weighted kappa on the scale 0, 1, 2 over those two runs.
    assert (t1["judge"], t1["people_measure"], t1["people_runs"], t1["people"]) == (None, "weighted kappa", 2, 2)
    assert t1["people_value"] == 0.5  # disagreement observed 1/4 (half a step on one run), by chance 1/2
