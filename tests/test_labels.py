"""The words every view uses for a run's parts: its cost, a player turn's step, who speaks."""

from __future__ import annotations

from sieve.store.scoring.labels import ROLE_TITLES, money, turn_label


def test_a_cost_is_dollars_to_four_places_and_a_missing_one_a_dash():
    assert money(0.01234) == "$0.0123"
    assert money(0.0) == "$0.0000"
    assert money(None) == "-"


def test_a_repeated_step_is_labelled_from_its_second_sending_on():
    assert turn_label({"step_id": "filler", "step_repeat": None}) == "filler"
    assert turn_label({"step_id": "filler", "step_repeat": 1}) == "filler"
    assert turn_label({"step_id": "filler", "step_repeat": 3}) == "filler #3"


def test_a_label_takes_the_step_it_is_given_over_the_turns_own():
    assert turn_label({"step_id": None, "step_repeat": 2}, "live@4") == "live@4 #2"


def test_every_role_has_a_title():
    assert set(ROLE_TITLES) == {"system", "user", "assistant"}
