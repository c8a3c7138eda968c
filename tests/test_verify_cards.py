"""`sieve verify`: score cards made elsewhere (JSON, a Markdown table) checked against a run, and imported."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence

REPLY_1 = "Havel sets the bowl down. \u201cThree days more,\u201d he says, and pockets the coin without a word."
REPLY_2 = "The keykeeper looks at the grate. \u201cThat is the first one,\u201d he says, and writes it in the ledger."


@pytest.fixture
def run(tmp_path):
    return make_run(tmp_path, steps=False)


@pytest.fixture
def run_with_steps(tmp_path):
    """The same run with its player turns sent as the script's steps m0 and m1 (the replies to them known)."""
    return make_run(tmp_path, steps=True)


def make_run(tmp_path, steps: bool):
    db_path = tmp_path / "cards.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="m", endpoint="e", settings={})
    texts = [
        ("user", keykeeper.steps[0].text),
        ("assistant", REPLY_1),
        ("user", keykeeper.steps[1].text),
        ("assistant", REPLY_2),
    ]
    for idx, (role, text) in enumerate(texts):
        step = {"step_id": keykeeper.steps[idx // 2].id, "step_repeat": 1} if steps and role == "user" else {}
        origin = "reply" if role == "assistant" else "script"
        record.add_turn(db, run_id, idx=idx, role=role, origin=origin, text=text, **step)
    record.set_run_status(db, run_id, "complete")
    return db, db_path, run_id


def verify(db_path, card, run_id, *extra):
    return CliRunner().invoke(main, ["verify", str(card), "--run", run_id, "--db", str(db_path), *extra])


def test_a_json_card_is_checked_quote_by_quote(run, tmp_path):
    db, db_path, run_id = run
    card = tmp_path / "card.json"
    card.write_text(
        json.dumps(
            [
                {"id": "T1", "score": 2, "quote": "pockets the coin without a word"},
                {
                    "id": "T2",
                    "score": "1",
                    "quote": "That is the frist one, he says, and writes it in the ledger",
                    "turn": 3,
                },
                {"id": "R1", "score": 0, "quote": "I hand him one silver coin."},
                {"id": "T3", "score": 0, "quote": "Havel burns the letter in front of her eyes."},
                {"id": "T4", "score": 1},
            ]
        ),
        encoding="utf-8",
    )
    result = verify(db_path, card, run_id, "--json")
    assert result.exit_code == 1  # one quote is absent
    data = json.loads(result.output)
    verdicts = {r["item"]: (r["verdict"], r["turn"]) for r in data["items"]}
    assert verdicts == {
        "T1": ("exact", 1),
        "T2": ("fuzzy", 3),
        "R1": ("player", 2),
        "T3": ("absent", None),
        "T4": ("no quote", None),
    }
    assert data["summary"] == {
        "exact": 1,
        "fuzzy": 1,
        "absent": 1,
        "player": 1,
        "altered": 0,
        "short": 0,
        "ambiguous": 0,
        "no quote": 1,
        "error": 0,
        "off its step": 0,
    }
    assert not any(r["off_step"] for r in data["items"])
    assert 0.88 < next(r for r in data["items"] if r["item"] == "T2")["similarity"] < 1
    assert notes.active(db, run_id) == []  # checking stores nothing


def test_a_markdown_table_like_the_seeds_and_its_import(run, tmp_path):
    db, db_path, run_id = run
    card = tmp_path / "card.md"
    card.write_text(
        "Scores for the run\n\n| item | score | quote |\n|---|---|---|\n"
        "| T1 | 2 | \u201cThree days more,\u201d he says |\n"
        '| T2 | ½ | "writes it in the ledger" |\n'
        "| L3 | | the keykeeper looks at the grate |\n\nThe end.\n",
        encoding="utf-8",
    )
    result = verify(db_path, card, run_id)
    assert result.exit_code == 2 and "line 6: T2: ½ is not on its scale (0/1/2)" in result.output
    card.write_text(card.read_text(encoding="utf-8").replace("| T2 | ½ |", "| T2 | 1 |"), encoding="utf-8")
    result = verify(db_path, card, run_id, "--import", "--reviewer", "opus-judge")
    assert result.exit_code == 0, result.output
    assert "3 exact; imported 3 as opus-judge" in result.output
    active = {a["item"]: a for a in notes.active(db, run_id, "opus-judge")}
    assert (active["T1"]["score"], active["T1"]["verification"]) == (2, "exact")
    assert active["T1"]["quote_start"] == REPLY_1.index("\u201cThree") and active["L3"]["kind"] == "count"
    assert active["T2"]["quote"] == "writes it in the ledger"


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("truncated.json", '[{"id": "T1", "score": 2, "quote": "pockets the', "truncated.json:1:"),
        ("types.json", '[{"id": "T1", "score": [2]}]', "items[0].score: a score must be a number"),
        (
            "quote.json",
            '[{"id": "T1", "score": 2, "quote": 42}]',
            "items[0].quote: the quote must be a string, found int",
        ),
        ("unknown-item.json", '[{"id": "T99", "score": 2, "quote": "x"}]', "'T99' is no item of keykeeper"),
        ("bool.json", '[{"id": "T1", "score": true}]', "a score is a number, not true/false"),
        ("notalist.json", '{"scores": 3}', "expected a list of items"),
        ("badrow.md", "| item | score | quote |\n|---|---|---|\n| T1 | two | x |\n", "badrow.md:3:"),
        ("empty.md", "no table here\n", "neither JSON nor a Markdown table"),
    ],
)
def test_a_malformed_card_is_a_clear_error_and_stores_nothing(run, tmp_path, name, content, message):
    db, db_path, run_id = run
    card = tmp_path / name
    # A valid item first: nothing half-written when a later one is bad.
    card.write_text(content, encoding="utf-8")
    result = verify(db_path, card, run_id, "--import", "--reviewer", "x")
    assert result.exit_code == 2 and message in result.output, result.output
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


def test_every_item_is_checked_a_bad_turn_is_an_error_of_its_own_and_a_quote_elsewhere_is_noted(
    run_with_steps, tmp_path
):
    db, db_path, run_id = run_with_steps
    card = tmp_path / "turns.json"
    items = [
        {"id": "T1", "score": 2, "quote": "pockets the coin without a word", "turn": 1},  # where claimed
        {"id": "T2", "score": 1, "quote": "writes it in the ledger", "turn": 1},  # it stands at turn 3
        {"id": "T3", "score": 0, "quote": "Three days more", "turn": 9},  # the run has turns 0 to 3
        {"id": "T4", "score": 1, "quote": "That is the first one", "step": "m1"},  # a step: the reply to it
        {"id": "T5", "score": 1, "quote": "the bowl down", "turn": "m0"},  # a step where a turn would be
        {"id": "T99", "score": 1, "quote": "x"},
    ]
    card.write_text(json.dumps(items), encoding="utf-8")
    result = verify(db_path, card, run_id, "--json")
    assert result.exit_code == 2, result.output  # errors in the card: not a clean one
    rows = {r["item"]: r for r in json.loads(result.output)["items"]}
    assert (rows["T1"]["verdict"], rows["T1"]["turn"], rows["T1"]["note"]) == ("exact", 1, None)
    assert (rows["T2"]["verdict"], rows["T2"]["turn"]) == ("exact", 3)
    assert rows["T2"]["note"] == "found at turn 3, not at turn 1 as claimed"
    assert rows["T3"]["verdict"] == "error"
    assert rows["T3"]["error"] == "T3: the run has no turn 9 (turns count from 0: 0 to 3)"
    assert (rows["T4"]["verdict"], rows["T4"]["claimed_turn"], rows["T4"]["note"]) == ("exact", 3, None)
    assert (rows["T5"]["verdict"], rows["T5"]["claimed_turn"]) == ("exact", 1)
    assert rows["T99"]["error"] == "'T99' is no item of keykeeper"
    table = verify(db_path, card, run_id, "--import", "--reviewer", "x")
    assert table.exit_code == 2
    assert "items[2]: T3: the run has no turn 9" in table.output and "items[5]: 'T99' is no item" in table.output
    assert "found at turn 3, not at turn 1 as claimed" in table.output
    assert "nothing imported: the card has errors" in table.output
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0
    markdown = tmp_path / "turns.md"
    markdown.write_text(
        "| item | score | quote | turn |\n|---|---|---|---|\n| T4 | 1 | That is the first one | m1 |\n",
        encoding="utf-8",
    )
    result = verify(db_path, markdown, run_id, "--json")
    assert result.exit_code == 0 and json.loads(result.output)["items"][0]["claimed_turn"] == 3


def test_a_huge_card_and_an_unknown_run_are_refused(run, tmp_path):
    db, db_path, run_id = run
    huge = tmp_path / "huge.json"
    huge.write_bytes(b"[" + b'{"id": "T1", "score": 2, "quote": "x"},' * 200_000 + b"]")
    result = verify(db_path, huge, run_id)
    assert result.exit_code == 2 and "a card is at most" in result.output
    small = tmp_path / "ok.json"
    small.write_text('[{"id": "T1", "score": 2, "quote": "pockets the coin"}]', encoding="utf-8")
    result = verify(db_path, small, "NO-SUCH-RUN")
    assert result.exit_code == 2 and "no run with the id NO-SUCH-RUN" in result.output
    result = verify(db_path, small, run_id, "--import")
    assert result.exit_code == 2 and "--import needs --reviewer" in result.output


def test_a_half_bad_card_imports_nothing(run, tmp_path):
    db, db_path, run_id = run
    card = tmp_path / "half.json"
    card.write_text(
        '[{"id": "T1", "score": 2, "quote": "pockets the coin"}, {"id": "T2", "score": 7, "quote": "x"}]',
        encoding="utf-8",
    )
    result = verify(db_path, card, run_id, "--import", "--reviewer", "x")
    assert result.exit_code == 2
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


def test_reverify_finds_a_moved_quote_again(run):
    db, _, run_id = run
    turns = record.chosen_turns(db, run_id)
    wrong = Quote(turns[3]["id"], 0, 5, "pockets the coin")  # claims the wrong place
    annotation_id = evidence.annotate(
        db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2, quote=wrong
    )
    row = db["annotations"].get(annotation_id)
    assert (row["verification"], row["quote_turn_id"]) == ("exact", turns[1]["id"])
    assert REPLY_1[row["quote_start"] : row["quote_end"]] == "pockets the coin"
    assert evidence.reverify(db, run_id) == {"exact": 1}


def test_verify_without_a_card_checks_the_stored_quotes_again(run):
    db, db_path, run_id = run
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=2,
        quote=Quote(None, None, None, "pockets the coin"),
    )
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T2",
        rubric="T",
        kind="score",
        score=0,
        quote=Quote(None, None, None, "an invented line about the letter"),
    )
    result = CliRunner().invoke(main, ["verify", "--run", run_id, "--db", str(db_path), "--json"])
    assert result.exit_code == 1 and json.loads(result.output)["summary"] == {"exact": 1, "absent": 1}


def test_a_card_holds_one_value_an_item_and_one_quote_an_event_as_the_judge_does(run_with_steps, tmp_path):
    db, db_path, run_id = run_with_steps
    card = tmp_path / "twice.json"
    items = [
        {"id": "T1", "score": 0, "quote": "pockets the coin without a word"},
        {"id": "T1", "score": 2, "quote": "Three days more"},  # the same item again, another value
        {"id": "L3", "score": 1, "quote": "writes it in the ledger", "turn": 3},
        {"id": "L3", "score": 1, "quote": "writes it in the ledger", "turn": 3},  # the same event counted twice
        {"id": "L3", "score": 1, "quote": "looks at the grate", "turn": 3},  # another event, on its own quote
    ]
    card.write_text(json.dumps(items), encoding="utf-8")
    result = verify(db_path, card, run_id, "--import", "--reviewer", "carl")
    assert result.exit_code == 2, result.output
    assert "T1 is given twice on one card (items[0]: 0; items[1]: 2)" in result.output
    assert "L3: 1 of its 3 events rest on a quote another event rests on" in result.output
    assert "(items[2] and items[3])" in result.output
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0
    rows = json.loads(verify(db_path, card, run_id, "--json").output)["items"]
    assert [r["verdict"] == "error" for r in rows] == [False, True, False, True, False]
    card.write_text(json.dumps([items[0], items[2], items[4]]), encoding="utf-8")
    assert verify(db_path, card, run_id, "--import", "--reviewer", "carl").exit_code == 0
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 3
