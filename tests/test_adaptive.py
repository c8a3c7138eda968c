"""Adaptive pairs (store.scoring.adaptive) and rank correlation (store.scoring.ranks), on cases with a known answer:
worked examples, the anchors' graph, the stopping rule, and simulated fields with known strengths."""

from __future__ import annotations

import pytest

from sieve.store.scoring import adaptive, ranks
from sieve.store.scoring.ratings import Vote
from tests.support import simulated_field as sim


def test_spearman_and_kendall_match_worked_examples():
    x = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    y = {"a": 2, "b": 1, "c": 4, "d": 3, "e": 5}
    # rho = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 6 * 4 / 120; tau: 8 concordant, 2 discordant of 10.
    assert ranks.spearman(x, y) == pytest.approx(0.8)
    assert ranks.kendall(x, y) == pytest.approx(0.6)
    # Ties: tau-b = 4 / sqrt(5 * 5) (one pair tied in each); rho on midranks = 3.75 / 4.5.
    tied_x, tied_y = {"a": 1, "b": 2, "c": 2, "d": 3}, {"a": 1, "b": 2, "c": 3, "d": 3}
    assert ranks.kendall(tied_x, tied_y) == pytest.approx(0.8)
    assert ranks.spearman(tied_x, tied_y) == pytest.approx(3.75 / 4.5)
    # The same order, the reverse, and the edges where nothing can be said.
    assert ranks.kendall(x, x) == 1 and ranks.spearman(x, {k: -v for k, v in x.items()}) == pytest.approx(-1)
    assert ranks.kendall({"a": 1}, {"a": 2}) is None
    assert ranks.spearman({"a": 1, "b": 1}, {"a": 1, "b": 2}) is None  # one side gives no order at all
    assert ranks.of_orders(["a", "b", "c"], ["c", "b", "a"]) == -1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 12, 38])
def test_the_anchors_connect_every_side_with_few_pairs(n):
    order = [f"m{k}" for k in range(n)]
    pairs = adaptive.anchors(order)
    assert len({adaptive.key(*p) for p in pairs}) == len(pairs)  # no pair twice
    reached, frontier = {order[0]}, [order[0]]
    while frontier:
        side = frontier.pop()
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                if x == side and y not in reached:
                    reached.add(y)
                    frontier.append(y)
    assert reached == set(order)
    if n <= 4:
        assert len(pairs) == n * (n - 1) // 2
    else:
        assert len(pairs) <= 2 * n
    if n == 38:  # a cycle and a half-turn: three opponents each, 57 of the 703 pairs
        assert len(pairs) == 57
        degree = {s: sum(s in p for p in pairs) for s in order}
        assert set(degree.values()) == {3}


def test_the_next_round_plays_the_pairs_whose_order_is_least_certain():
    # a far above b, b far above c and d; c and d split their meetings: only c against d is in doubt.
    votes = []
    for n in range(6):
        votes += [Vote("a", "b", "A", f"ab{n}"), Vote("b", "c", "A", f"bc{n}"), Vote("b", "d", "A", f"bd{n}")]
    votes += [Vote("c", "d", "A", "cd0"), Vote("c", "d", "B", "cd1")]
    sides = ["a", "b", "c", "d"]
    room = {adaptive.key(x, y): 5 for i, x in enumerate(sides) for y in sides[i + 1 :]}
    played = {("a", "b"): 6, ("b", "c"): 6, ("b", "d"): 6, ("c", "d"): 2}
    chosen = adaptive.next_round(votes, sides, room, 1, played)
    assert [adaptive.key(*p) for p in chosen] == [("c", "d")]
    # No room left for c against d (every pair of their runs met): the next most uncertain is played instead.
    room[("c", "d")] = 0
    assert adaptive.key(*adaptive.next_round(votes, sides, room, 1, played)[0]) != ("c", "d")


def test_a_side_plays_at_most_twice_in_a_round():
    field = sim.make_field(12, seed=3)
    votes, _ = sim.play_adaptive(field, 30, seed=3)
    sides = sorted(field.strengths)
    room = {adaptive.key(x, y): 9 for i, x in enumerate(sides) for y in sides[i + 1 :]}
    chosen = adaptive.next_round(votes, sides, room, 12, {adaptive.key(v.a, v.b): 1 for v in votes})
    assert max(sum(s in p for p in chosen) for s in sides) <= adaptive.PER_SIDE
    assert len(chosen) == 12


def test_the_stopping_rule():
    assert adaptive.stop_reason([], 10, 10) == "the budget is spent (10 of 10 pairs)"
    assert adaptive.stop_reason([["a", "b"]], 3, 10, proposed=0) == "no pair is left to play"
    changing = [["a", "b", "c"], ["b", "a", "c"], ["a", "b", "c"], ["a", "c", "b"]]
    assert adaptive.stop_reason(changing, 5, 10) is None
    settled = [["b", "a", "c"], ["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c"]]
    assert adaptive.stop_reason(settled, 5, 10).startswith("the ranking stopped changing")
    # Two orders alike are one unchanged round, not two.
    assert adaptive.stop_reason(settled[:3], 5, 10) is None
    # In a field of 38, neighbours swapping within noise is the order settled: 38 sides, 703 pairs of them, one
    # swap of neighbours is tau 1 - 2/703; ten such swaps a round (tau 0.972) still settled, eleven not.
    field = [f"m{k:02}" for k in range(38)]

    def swapped(order, n):
        out = list(order)
        for k in range(n):
            out[3 * k], out[3 * k + 1] = out[3 * k + 1], out[3 * k]
        return out

    assert ranks.of_orders(swapped(field, 10), field) == pytest.approx(1 - 2 * 10 / 703)
    jittering = [field, swapped(field, 10), field, swapped(field, 10)]
    assert adaptive.stop_reason(jittering, 50, 703).startswith("the ranking stopped changing")
    restless = [field, swapped(field, 11), field, swapped(field, 11)]
    assert adaptive.stop_reason(restless, 50, 703) is None
    assert adaptive.stop_reason([["a", "b", "c"], ["a", "b", "c"], ["a", "c", "b"]], 5, 10) is None  # small: exact


def test_the_round_never_spends_past_the_budget():
    sides = [f"m{k}" for k in range(38)]
    room = {adaptive.key(x, y): 1 for i, x in enumerate(sides) for y in sides[i + 1 :]}
    assert len(adaptive.propose([], sides, room, {}, 0, 20, sides)) == 20
    assert adaptive.propose([], sides, room, {}, 20, 20, sides) == []


@pytest.mark.parametrize("seed", range(5))
def test_with_a_small_budget_the_adaptive_queue_finds_the_top_model_of_a_known_field(seed):
    # 12 models of known strengths, 26 of the 66 pairs (39%): the anchors and two rounds. The judge is
    # decisive but not perfect (ties, a position bias, each pair judged twice with the sides swapped).
    field = sim.make_field(12, seed, spread=14)
    votes, reason = sim.play_adaptive(field, 26, seed)
    assert len(votes) == 26 and reason == "the budget is spent (26 of 26 pairs)"
    assert sim.measures(field, votes)["top1"] == 1.0
    assert field.judgments == 52  # two a pair


def test_the_simulation_is_the_same_for_the_same_seed():
    first = sim.play_adaptive(sim.make_field(12, 9), 30, 9)[0]
    again = sim.play_adaptive(sim.make_field(12, 9), 30, 9)[0]
    assert first == again
    other = sim.play_adaptive(sim.make_field(12, 10), 30, 10)[0]
    assert first != other
