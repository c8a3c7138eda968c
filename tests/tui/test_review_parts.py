"""Review's parts that need no running screen: the search's state, when the card collapses, a blind run's reveal."""

from __future__ import annotations

from sieve import scenarios
from sieve.store.scoring.navigation import Hit
from sieve.store.scoring.scorecard import build_card
from sieve.tui.screens.review import blind
from sieve.tui.screens.review.card import ReviewCard
from sieve.tui.screens.review.search import Search
from sieve.tui.widgets.transcript import Highlight

KEYKEEPER = scenarios.load("keykeeper")


def test_a_search_starts_at_the_turn_being_read_and_goes_round_both_ends():
    hits = [Hit("t0", 0, 4), Hit("t2", 5, 9), Hit("t2", 20, 24), Hit("t4", 1, 5)]
    order = {"t0": 0, "t1": 1, "t2": 2, "t3": 3, "t4": 4}
    search = Search()
    assert not search.on and search.step(1) is None  # no search: n and N have nothing to go to
    search.start("coin", hits, order, position=0)
    assert search.on and search.status() == "search “coin”: 4 hits (n N, escape ends)"  # none shown yet
    assert search.step(1) == hits[0]
    assert search.status() == "search “coin”: 1 of 4 (n N, escape ends)"
    search.start("coin", hits, order, position=1)
    assert search.step(1) == hits[1]  # the first hit from the turn being read on
    assert [search.step(1), search.step(1), search.step(1)] == [hits[2], hits[3], hits[0]]  # past the last: the first
    assert search.step(-1) == hits[3]  # before the first: the last
    assert search.highlights() == {
        "t0": [Highlight(0, 4, "search")],
        "t2": [Highlight(5, 9, "search"), Highlight(20, 24, "search")],
        "t4": [Highlight(1, 5, "search")],
    }
    search.start("coin", hits, order, position=4)
    assert search.step(1) == hits[3]
    search.start("coin", hits, order, position=5)  # past every hit: round to the first
    assert search.step(1) == hits[0]
    search.end()
    assert (search.on, search.hits, search.current, search.highlights()) == (False, [], -1, {})


def test_the_card_collapses_on_a_narrow_screen_until_f_says_otherwise():
    card = ReviewCard(KEYKEEPER)
    assert not card.collapsed
    card.narrow = True
    assert card.collapsed
    card.toggle()  # f: the whole card, however narrow the screen
    assert not card.collapsed
    card.narrow = False
    assert not card.collapsed
    card.toggle()  # f again: one rubric, however wide
    assert card.collapsed
    card.narrow = True
    assert card.collapsed


def test_the_collapsed_card_shows_the_rubric_the_step_being_read_scores_else_the_first():
    card = ReviewCard(KEYKEEPER)
    assert [card.rubric_of(step) for step in ("m1", "m12", "m13")] == ["T", "R", "T"]
    assert card.rubric_of("m0") == card.rubric_of(None) == "T"  # the setup scores nothing: the first rubric


def test_a_blind_run_is_not_revealed_while_items_are_unscored_and_the_refusal_names_them():
    card = build_card(KEYKEEPER, [])
    missing = [i for r in card.rubrics for i in r.unscored]
    assert len(missing) > 8
    assert blind.not_yet(card) == (
        f"Finish scoring first: {len(missing)} items not scored ({' '.join(missing[:8])} …)."
    )
