"""A quote must be long enough to point at a passage: a word or two is `short`, found but no evidence."""

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
from sieve.store.scoring.quotes import MIN_QUOTE_CHARS, MIN_QUOTE_WORDS, too_short, verify
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence
from sieve.tui.widgets.scorecard import verification_mark

REPLY = "Havel sets the bowl down and pockets the coin. Sighs. The grate holds; the rain keeps on."
TURNS = [{"id": "a1", "idx": 1, "role": "assistant", "text": REPLY}]


@pytest.mark.parametrize(
    ("quote", "short"),
    [
        ("the", True),
        ("the coin", True),
        ("… the coin …", True),  # ellipses are no words
        ("he is on", True),  # three words, under twelve characters
        ("pockets the coin", False),
        ("Havel sets … the coin", False),
        ("Nikdy jsem nevzal", False),
    ],
)
def test_the_minimum_is_three_words_and_twelve_characters(quote, short):
    assert (MIN_QUOTE_WORDS, MIN_QUOTE_CHARS) == (3, 12)
    assert too_short(quote) is short


def test_a_short_quote_is_found_but_marked_short():
    found = verify(TURNS, "the")
    assert found.verdict == "short" and found.turn_id == "a1" and found.start is not None
    assert verify(TURNS, "pockets the coin").verdict == "exact"
    assert verify(TURNS, "sighs", repeats=True).verdict == "exact"
    assert verify(TURNS, "the rain kept").verdict == "absent"  # not found stays absent, whatever its length


@pytest.fixture
def run(tmp_path):
    db_path = tmp_path / "short.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="script", text=keykeeper.steps[0].text, step_id="m0")
    reply = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text=REPLY)
    record.set_run_status(db, run_id, "complete")
    return db, db_path, run_id, reply


def test_a_person_quoting_one_word_gets_no_evidence_but_a_repetition_chain_does(run):
    db, _, run_id, reply = run
    # A second reply that says the same: a chain of 2 runs across two replies.
    record.add_turn(db, run_id, idx=2, role="user", origin="script", text="And?", step_id="m5")
    record.add_turn(db, run_id, idx=3, role="assistant", origin="reply", text=REPLY)
    at = REPLY.index("Sighs")
    sighs = Quote(reply, at, at + 5, "Sighs")  # the place claimed, as a selection gives it
    evidence.annotate(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2, quote=sighs)
    chain = next(c.id for c in scenarios.load("keykeeper").counters if c.kind == "chain")
    evidence.annotate(db, run_id, reviewer="ada", item=chain, kind="count", score=2, quote=sighs)
    by_item = {a["item"]: a for a in notes.active(db, run_id)}
    assert by_item["T1"]["verification"] == "short" and not has_evidence(by_item["T1"])
    assert verification_mark(by_item["T1"]) == ("✗ too short", "absent")
    assert by_item[chain]["verification"] == "exact" and has_evidence(by_item[chain])
    # Verified again, each keeps its verdict.
    assert evidence.reverify(db, run_id) == {"short": 1, "exact": 1}
    assert "without evidence" in RunView.open(db, run_id).card("ada").progress.text()


def test_a_judge_quoting_the_for_every_item_gets_a_card_of_short_quotes(run, tmp_path):
    _, db_path, run_id, _ = run
    card = tmp_path / "card.json"
    card.write_text(json.dumps([{"id": i, "score": 1, "quote": "the"} for i in ("T1", "T2", "T3", "R1")]))
    result = CliRunner().invoke(main, ["verify", str(card), "--run", run_id, "--db", str(db_path), "--json"])
    data = json.loads(result.output)
    assert {r["verdict"] for r in data["items"]} == {"short"} and data["summary"]["short"] == 4
    assert result.exit_code == 0  # the words are there: only absent or altered quotes fail verify


def test_the_judge_is_told_to_quote_more_in_the_repair_round():
    from sieve.engine.judge.exchange import Checked
    from sieve.engine.judge.reply import Evidence
    from sieve.store.record.annotations import Verified

    checked = Checked(Evidence("the", 1), Verified(Quote("a1", 6, 9, "the"), "short", 1.0))
    assert not checked.is_evidence and "too short" in (checked.problem() or "")
