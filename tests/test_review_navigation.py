"""Where Review goes and how typed keys pick a value: steps and chapters by number, values by their keys."""

from __future__ import annotations

import pytest

from sieve import scenarios
from sieve.errors import SieveUsageError
from sieve.scenarios import ScenarioError
from sieve.store.scoring import navigation
from sieve.tui.screens.picker_entries import Value, filter_hint, score_entries, type_ahead

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


def test_a_typed_value_is_final_when_nothing_else_begins_with_it():
    one_to_ten = tuple(Value(f"{v}", str(v), str(v)) for v in range(1, 11))
    assert type_ahead(one_to_ten, "", "1") == ("1", 0, False)  # 1 or 10: wait
    assert type_ahead(one_to_ten, "1", "0") == ("10", 9, True)
    assert type_ahead(one_to_ten, "", "5") == ("5", 4, True)
    halves = (Value("1", "1", "1"), Value("½", "½", "½"), Value("0", "0", "0"))
    assert type_ahead(halves, "", "h") == ("½", 1, True)  # h stands for ½
    verdicts = (Value("p", "played out", "played out"), Value("a", "annulled", "annulled"))
    assert type_ahead(verdicts, "", "a") == ("a", 1, True)
    marks = (
        Value("c", "correct", "correct"),
        Value("o", "omitted", "omitted"),
        Value("x", "contradicted", "contradicted"),
    )
    assert type_ahead(marks, "", "c")[2] is False and type_ahead(marks, "c", "o")[2] is False
    assert type_ahead(marks, "co", "n") == ("con", 2, True)
    assert type_ahead(marks, "", "z") == ("", None, False)


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
