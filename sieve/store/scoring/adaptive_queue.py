"""An adaptive pair queue in the record: its anchors made, then each next round from the verdicts so far.

The sides are the models of a scenario with complete runs; a pair of sides is played
as a pair of their runs, a combination not yet in the queue, the runs used least so
far (so two models with three runs each can meet nine times, never twice over the same
two transcripts: a judge at temperature 0 would only say the same again). Which pairs
(store.scoring.adaptive) follows the verdicts on `overall` of the voters who drive the
queue: the judges judging it (`sieve judge --pairs Q --adaptive`), or the people (the
Pairs screen). A round is added once every pair of the last one has their verdict.
Catch trials are spread over the rounds in proportion to their size; they count for
self-consistency only, as in any queue.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.store.record import judgings, queue_plans
from sieve.store.record import pairs as pairing
from sieve.store.record.ids import new_id
from sieve.store.record.runs import NOT_ARCHIVED
from sieve.store.scoring import adaptive, comparison, leaderboard
from sieve.store.scoring.ratings import Vote

DEFAULT_SHARE = 0.3  # the default budget: this share of the round robin's pairs (and never less than the anchors)


@dataclass
class Round:
    """What a call to `extend` did: the round added (its number and pairs), or why the queue ends."""

    number: int
    added: list[str] = field(default_factory=list)
    reason: str | None = None  # the queue has ended: why
    waiting: int = 0  # pairs of the last round still without a verdict from the voters


def _runs_by_model(db: Database, scenario: str) -> dict[str, list[str]]:
    rows = db.execute(
        f"SELECT id, model FROM runs WHERE scenario = ? AND status = 'complete' AND {NOT_ARCHIVED} ORDER BY id",
        [scenario],
    ).fetchall()
    out: dict[str, list[str]] = {}
    for run_id, model in rows:
        out.setdefault(model, []).append(run_id)
    return out


def default_budget(sides: int) -> int:
    robin = sides * (sides - 1) // 2
    return max(len(adaptive.anchors([str(k) for k in range(sides)])), math.ceil(DEFAULT_SHARE * robin))


def _first_order(db: Database, scenario: str, models: list[str], seed: int | None) -> tuple[list[str], str]:
    """The order the anchors spread across: the people's mean total of the first rubric where every model has one
    (else the judges'; never the two pooled), else a seeded shuffle."""
    for voters in ("humans", "judges"):
        columns, scores = leaderboard.absolute_scores(db, scenario, voters=voters)
        if columns and all(columns[0] in scores.get(m, {}) for m in models):
            order = sorted(models, key=lambda m: (-scores[m][columns[0]].middle, m))
            return order, f"{comparison.whose(voters)} cards ({columns[0]})"
    return adaptive.shuffled(models, seed), "shuffled"


def create(
    db: Database, scenario: str, budget: int | None = None, catch: int = 0, seed: int | None = None
) -> tuple[str, dict[str, object]]:
    """A new adaptive queue over the scenario's models with its first round (the anchors); returns its id and
    what was made: sides, budget, the first round's pairs, the order the anchors spread over."""
    by_model = _runs_by_model(db, scenario)
    models = sorted(by_model)
    if len(models) < 2:
        raise SieveUsageError(f"an adaptive queue needs complete runs of at least two models of {scenario}")
    room_total = sum(len(by_model[a]) * len(by_model[b]) for i, a in enumerate(models) for b in models[i + 1 :])
    budget = min(budget or default_budget(len(models)), room_total)
    order, how = _first_order(db, scenario, models, seed)
    room = {
        adaptive.key(a, b): len(by_model[a]) * len(by_model[b]) for i, a in enumerate(models) for b in models[i + 1 :]
    }
    chosen = adaptive.propose([], models, room, {}, 0, budget, order)
    queue = new_id()
    with db.atomic():
        run_pairs = _run_pairs(chosen, by_model, [])
        pairing.add_pairs(db, queue, run_pairs, seed, _catch_share(catch, 0, len(run_pairs), budget), 1)
        for model, runs in by_model.items():
            for run_id in runs:
                db.execute("INSERT INTO queue_sides (queue, run_id, side) VALUES (?, ?, ?)", [queue, run_id, model])
        queue_plans.create(db, queue, scenario, budget, catch, seed, how)
    return queue, {"sides": len(models), "budget": budget, "round": 1, "pairs": len(run_pairs), "order": how}


def _catch_share(catch: int, used: int, size: int, budget: int) -> int:
    """The catch trials of a round: its share of those asked for, by its size against the budget."""
    return max(0, min(catch - used, math.ceil(catch * size / budget))) if catch else 0


def _run_pairs(
    chosen: list[tuple[str, str]], by_model: dict[str, list[str]], existing: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """A pair of runs for each pair of sides: a combination not in the queue yet, its runs used least so far."""
    used: Counter[str] = Counter(r for pair in existing for r in pair)
    taken = {frozenset(p) for p in existing}
    out = []
    for a, b in chosen:
        options = [(x, y) for x in by_model[a] for y in by_model[b] if frozenset((x, y)) not in taken]
        if not options:
            continue
        x, y = min(options, key=lambda p: (used[p[0]] + used[p[1]], p))
        used[x] += 1
        used[y] += 1
        taken.add(frozenset((x, y)))
        out.append((x, y))
    return out


def voters_named(db: Database, voters: str | set[str]) -> Callable[[str], bool]:
    """Whose verdicts drive the queue: "humans", "judges", or reviewers by name."""
    if isinstance(voters, set):
        return lambda reviewer: reviewer in voters
    named = judgings.judges(db)

    def judge(reviewer: str) -> bool:
        return leaderboard.is_judge(reviewer) or reviewer in named

    return judge if voters == "judges" else (lambda reviewer: not judge(reviewer))


def state(db: Database, queue: str, voters: str | set[str]) -> dict[str, object]:
    """The queue as the planner sees it: sides, votes (side-named, latest per pair and voter), pairs per round,
    what has been played, and the pairs of the last round still waiting for a verdict."""
    chosen = voters_named(db, voters)
    side_of = pairing.queue_sides(db, queue)
    pairs = pairing.queue_pairs(db, queue, catches=False)
    votes: list[Vote] = []
    rounds: dict[int, list[str]] = {}
    played: Counter[adaptive.Pair] = Counter()
    judged: set[str] = set()
    for pair in pairs:
        a, b = side_of.get(pair["run_a"], pair["run_a"]), side_of.get(pair["run_b"], pair["run_b"])
        rounds.setdefault(pair["round"] or 1, []).append(pair["id"])
        played[adaptive.key(a, b)] += 1
        for (reviewer, criterion), winner in pairing.verdicts(db, pair["id"]).items():
            if criterion == pairing.OVERALL and chosen(reviewer):
                votes.append(Vote(a, b, winner, pair["id"], reviewer))
                judged.add(pair["id"])
    last = max(rounds) if rounds else 0
    return {
        "sides": sorted(set(side_of.values())),
        "votes": votes,
        "rounds": rounds,
        "played": played,
        "last": last,
        "waiting": [p for p in rounds.get(last, []) if p not in judged],
        "existing": [(p["run_a"], p["run_b"]) for p in pairs],
    }


def orders_by_round(found: dict[str, object]) -> list[list[str]]:
    """The fitted order after each round so far (the votes on its pairs and every earlier round's)."""
    votes: list[Vote] = found["votes"]  # type: ignore[assignment]
    rounds: dict[int, list[str]] = found["rounds"]  # type: ignore[assignment]
    sides: list[str] = found["sides"]  # type: ignore[assignment]
    out, seen = [], set()
    for number in sorted(rounds):
        seen |= set(rounds[number])
        out.append(adaptive.standing([v for v in votes if v.pair in seen], sides).order)
    return out


def extend(db: Database, queue: str, voters: str | set[str]) -> Round:
    """Add the next round to an adaptive queue, from the voters' verdicts so far; or say why it ends (the stopping
    rule, store.scoring.adaptive), or that the last round still waits for verdicts."""
    plan = queue_plans.get(db, queue)
    if plan is None:
        raise SieveUsageError(f"queue {queue} is not adaptive: make one with sieve pair --scenario S --adaptive")
    found = state(db, queue, voters)
    last: int = found["last"]  # type: ignore[assignment]
    if plan["stopped"]:
        return Round(last, reason=plan["stopped"])
    waiting: list[str] = found["waiting"]  # type: ignore[assignment]
    if waiting:
        return Round(last, waiting=len(waiting))
    by_model = _runs_by_model(db, plan["scenario"])
    sides = [s for s in found["sides"] if s in by_model]  # type: ignore[attr-defined]
    existing: list[tuple[str, str]] = found["existing"]  # type: ignore[assignment]
    played: Counter[adaptive.Pair] = found["played"]  # type: ignore[assignment]
    room = {
        adaptive.key(a, b): len(by_model[a]) * len(by_model[b]) - played[adaptive.key(a, b)]
        for i, a in enumerate(sides)
        for b in sides[i + 1 :]
    }
    spent = len(existing)
    votes: list[Vote] = found["votes"]  # type: ignore[assignment]
    chosen = adaptive.propose(votes, sides, room, played, spent, plan["budget"])
    reason = adaptive.stop_reason(orders_by_round(found), spent, plan["budget"], len(chosen))
    if reason is not None:
        with db.atomic():
            queue_plans.stop(db, queue, reason)
        return Round(last, reason=reason)
    with db.atomic():
        run_pairs = _run_pairs(chosen, by_model, existing)
        caught = db.execute("SELECT COUNT(*) FROM pairs WHERE queue = ? AND catch_of IS NOT NULL", [queue]).fetchone()[
            0
        ]
        catch = _catch_share(plan["catch"], caught, len(run_pairs), plan["budget"])
        added = pairing.add_pairs(db, queue, run_pairs, plan["seed"], catch, last + 1)
    return Round(last + 1, added=added)
