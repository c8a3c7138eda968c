"""Where Review goes and how typed keys pick a value: steps and chapters by number, values by their keys."""

from __future__ import annotations

import pytest

from sieve import scenarios
from sieve.errors import SieveUsageError
from sieve.scenarios import ScenarioError
from sieve.store.scoring import navigation
from sieve.tui.screens.picker_entries import (
    Value,
    count_entries,
    filter_hint,
    score_entries,
    type_ahead,
    value_keys,
)

KEYKEEPER = scenarios.load("keykeeper")
STORY = scenarios.load("story-5")


def test_steps_are_found_by_number_the_setup_being_0_or_by_id_and_a_wrong_one_is_named():
    assert navigation.resolve_step(KEYKEEPER, "0").id == "m0"
    assert navigation.resolve_step(KEYKEEPER, "3").id == "m3"
    assert navigation.resolve_step(KEYKEEPER, "M13").id == "m13"
    assert navigation.resolve_step(STORY, "c5-secret").id == "c5-secret"
    assert navigation.step_label(KEYKEEPER, "m3") == "step 3 of 13 · m3"
    with pytest.raises(SieveUsageError, match="no step 14: the steps are numbered 0 to 13"):
        navigation.resolve_step(KEYKEEPER, "14")
    with pytest.raises(SieveUsageError, match="no step 'm99'"):
        navigation.resolve_step(KEYKEEPER, "m99")


def test_chapters_are_found_by_number_id_or_the_start_of_their_title():
    assert navigation.resolve_chapter(STORY, "2").title == "The valley"
    assert navigation.resolve_chapter(STORY, "c4").title == "The storm"
    assert navigation.resolve_chapter(STORY, "the ret").id == "c5"
    assert navigation.chapter_of(STORY, "c3-work")[0] == 3
    with pytest.raises(SieveUsageError, match="no chapter 6: there are 5"):
        navigation.resolve_chapter(STORY, "6")
    with pytest.raises(SieveUsageError, match="has no chapters"):
        navigation.resolve_chapter(KEYKEEPER, "1")


def test_a_typed_value_is_final_when_nothing_else_begins_with_it_and_a_letter_never_is():
    one_to_ten = tuple(Value(f"{v}", str(v), str(v)) for v in range(1, 11))
    assert type_ahead(one_to_ten, "", "1") == ("1", 0, False)  # 1 or 10: wait
    assert type_ahead(one_to_ten, "1", "0") == ("10", 9, True)
    assert type_ahead(one_to_ten, "", "5") == ("5", 4, True)
    halves = (Value("1", "1", "1"), Value("1½", "1½", "1½"), Value("½", "½", "½"), Value("0", "0", "0"))
    assert type_ahead(halves, "", "h") == ("½", 2, False)  # h stands for ½; a letter: enter takes it
    assert type_ahead(halves, "1", "h") == ("1½", 1, False)
    assert value_keys(halves) == {"0", "1", "h", "½"}


def test_verdicts_marks_and_counts_are_picked_by_the_number_shown_beside_them_never_by_a_letter():
    entries = {e.id: e for e in count_entries(KEYKEEPER, max_chain=5) + count_entries(STORY, max_chain=5)}
    l1 = entries["L1"]
    assert [(v.key_hint, v.label, v.disqualifies) for v in l1.values] == [
        ("1", "played out", False),
        ("2", "annulled", True),  # L1 disqualifies on annulled: the reviewer is asked before it is saved
    ]
    assert value_keys(l1.values) == {"1", "2"} and type_ahead(l1.values, "", "2") == ("2", 1, True)
    assert [v.key_hint for v in entries["L3"].values] == ["1"]  # one more event
    assert [v.key_hint for v in entries["L5"].values] == ["2", "3", "4", "5"]  # a chain of n
    probe = next(e for e in entries.values() if e.kind == "probe")
    assert [v.key_hint for v in probe.values] == [str(n) for n in range(1, len(probe.values) + 1)]
    assert not any(c.isalpha() for e in entries.values() for v in e.values for c in v.key_hint)


def test_an_items_lowest_score_disqualifies_when_the_item_does_and_keys_are_numbers_even_for_a_worded_label():
    text = KEYKEEPER.source.replace('id = "T1"', 'id = "T1"\ndisqualifying = true', 1)
    scenario = scenarios.load_text(text, "keykeeper.toml")
    t1 = next(e for e in score_entries(scenario) if e.id == "T1")
    assert [(v.key_hint, v.disqualifies) for v in t1.values] == [("0", True), ("1", False), ("2", False)]
    train = {e.id: e for e in score_entries(scenarios.load("train"))}
    assert train["key-deduct"].label.startswith("key-deduct deduction from key:")  # a gap after a long id


def test_the_filter_hint_comes_from_the_scenarios_own_items():
    hint = filter_hint(score_entries(scenarios.load("train")))
    assert hint.startswith("filter: an id (T") and "knife" not in hint


def test_counters_title_and_name_are_read_and_need_counters():
    assert (KEYKEEPER.counters_title, KEYKEEPER.counters_name) == ("Axis L, the literary life of a run", "axis L")
    assert STORY.counters_title == "Counters"
    text = STORY.source.replace("[scenario]\n", '[scenario]\ncounters_title = "Axis Q"\n', 1)
    with pytest.raises(ScenarioError, match="counters_title: names the counters, but the scenario has none"):
        scenarios.load_text(text, "story.toml")


def test_a_scales_labels_are_what_the_card_and_the_markdown_export_write(db):
    from sieve import store
    from sieve.store.record import turns as record
    from sieve.store.scoring import evidence, markdown
    from sieve.store.scoring.runview import RunView

    text = KEYKEEPER.source.replace(
        "[scales.bonus]\nvalues = [0, 1]", '[scales.bonus]\nvalues = [0, 1]\nlabels = { "1" = "yes", "0" = "no" }'
    )
    labelled = scenarios.load_text(text, "labelled.toml")
    run_id = store.create_run(db, labelled, model="m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text="Begin.", step_id="m0", step_repeat=1)
    reply = record.add_turn(
        db, run_id, idx=1, role="assistant", origin="reply", text="The world remembers the ferryman."
    )
    quote = evidence.Quote(reply, 4, 32, "world remembers the ferryman")
    evidence.annotate(db, run_id, reviewer="ada", item="TB1", rubric="T", kind="score", score=1, quote=quote)
    view = RunView.open(db, run_id)
    assert view.card("ada").item("TB1").text() == "yes"
    assert "| TB1 | yes | exact |" in markdown.run_document(view)
