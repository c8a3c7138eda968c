"""A quote that matches its passage but for an added or removed negation is `altered`: found, and no evidence."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.scoring import negation
from sieve.store.scoring.markdown import run_document
from sieve.store.scoring.quotes import verify
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence
from sieve.tui.widgets.scorecard import verification_mark

ENGLISH = "Havel sets the bowl down. \u201cI will open the gate at dawn,\u201d he says, and he doesn't take the coin."
CZECH = (
    "Havel se na minci ani nepodívá. \u201eKlíč od brány se neprodává. Nikdy jsem nevzal žádný úplatek "
    "a v\u00a0mém věku s\u00a0tím nezačnu,\u201c řekne a otevře okno do dvora."
)


def turns(text: str) -> list[dict]:
    return [{"id": "a1", "idx": 1, "role": "assistant", "text": text}]


@pytest.mark.parametrize(
    "quote",
    [
        "I will not open the gate at dawn, he says",  # not added
        "I won't open the gate at dawn, he says",  # n't added
        "I will never open the gate at dawn, he says",
        "he says, and he does take the coin",  # n't removed
        "he says, and he doesn't take no coin",  # no added
    ],
)
def test_an_english_quote_with_a_negation_flipped_is_altered(quote):
    found = verify(turns(ENGLISH), quote)
    assert found.verdict == "altered" and found.turn_id == "a1" and found.start is not None, found


@pytest.mark.parametrize(
    "quote",
    [
        "Klíč od brány se prodává. Nikdy jsem nevzal",  # ne- removed from a verb
        "Nikdy jsem vzal žádný úplatek a v mém věku",  # ne- removed, nikdy kept
        "Klíč od brány se neprodává. Jsem nevzal žádný úplatek",  # nikdy removed
        "Nikdy jsem nevzal úplatek a v mém věku s tím nezačnu",  # žádný removed
        "řekne a neotevře okno do dvora",  # ne- added
        "Klic od brany se prodava. Nikdy jsem nevzal",  # without diacritics too
        "řekne a nic neotevře okno do dvora",
    ],
)
def test_a_czech_quote_with_a_negation_flipped_is_altered(quote):
    found = verify(turns(CZECH), quote)
    assert found.verdict == "altered", (quote, found)


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (ENGLISH, "I will open the gate at dwan, he says"),  # a typo elsewhere
        (ENGLISH, "he says, and he doesn't tkae the coin"),
        (ENGLISH, "he says, and he doesnt take the coin"),  # the apostrophe left out
        (CZECH, "Nokdy jsem nevzal žádný úplatek a v mém věku"),  # a typo in the negation itself
        (CZECH, "Klíč od brány se neprodavá. Nikdy jsem nevzal"),
    ],
)
def test_a_typo_that_keeps_the_negation_stays_fuzzy(text, quote):
    assert verify(turns(text), quote).verdict == "fuzzy", quote


def test_ne_must_prefix_a_word_to_negate_it():
    assert negation.flips("a on nese", "a on nenese")
    assert not negation.flips("nebo ne", "nebo ne")
    assert not negation.flips("a ne", "a ned")  # too short to be a verb with a prefix


def test_an_altered_quote_is_stored_as_no_evidence_and_shown_as_such(tmp_path):
    db_path = tmp_path / "altered.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="script", text=keykeeper.steps[0].text)
    record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text=ENGLISH)
    record.set_run_status(db, run_id, "complete")
    card = tmp_path / "card.json"
    card.write_text(json.dumps([{"id": "T1", "score": 2, "quote": "I will not open the gate at dawn, he says"}]))
    result = CliRunner().invoke(
        main, ["verify", str(card), "--run", run_id, "--db", str(db_path), "--json", "--import", "--reviewer", "j"]
    )
    assert result.exit_code == 1, result.output  # like an absent quote
    data = json.loads(result.output)
    assert data["items"][0]["verdict"] == "altered" and data["summary"]["altered"] == 1
    [stored] = notes.active(db, run_id)
    assert stored["verification"] == "altered" and stored["confidence"] == "low"
    assert not has_evidence(stored)
    assert verification_mark(stored) == ("✗ altered", "absent")
    assert "| T1 | 2 | ALTERED, a negation flipped, low confidence | 1 |" in run_document(RunView.open(db, run_id))
    # Verified again (sieve verify without a card), it stays altered.
    again = CliRunner().invoke(main, ["verify", "--run", run_id, "--db", str(db_path), "--json"])
    assert again.exit_code == 1 and json.loads(again.output)["summary"] == {"altered": 1}
    # Undone, it is no longer in force: not counted, and no reason to fail.
    notes.undo(db, run_id, "j")
    undone = CliRunner().invoke(main, ["verify", "--run", run_id, "--db", str(db_path), "--json"])
    assert undone.exit_code == 0 and json.loads(undone.output)["summary"] == {}, undone.output


def test_the_judge_is_told_in_the_repair_round_that_its_quote_flips_a_negation():
    from sieve.engine.judge.exchange import Checked
    from sieve.engine.judge.reply import Evidence
    from sieve.store.record.annotations import Quote, Verified

    quote = "I will not open the gate at dawn, he says"
    checked = Checked(Evidence(quote, 1), Verified(Quote("a1", 0, 10, quote), "altered", 0.95))
    assert not checked.is_evidence
    assert "adds or removes a negation" in (checked.problem() or "")
