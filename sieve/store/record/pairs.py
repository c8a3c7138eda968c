"""Blind A/B pairs: building a balanced queue, recording head-to-head verdicts, reading them back.

Sides are drawn at random and balanced across the queue, so each run is A as
often as it is B. A criterion (or `overall`) is judged A, B or tie; a tie is an
answer, never broken.

A queue may hold catch trials: pairs already in it that come back later with
their sides swapped (`catch_of` names the first showing). They measure how
consistent each reviewer is with themself, and count nowhere else.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.record.ids import new_id
from sieve.store.record.runs import now

OVERALL = "overall"


def criteria(scenario: Scenario) -> list[tuple[str, str]]:
    """What a pair is judged on, head to head: each rubric item (not the bonuses), then the runs as a whole."""
    items = [(i.id, i.title or i.text[:60]) for r in scenario.rubrics for i in r.items]
    return items + [(OVERALL, "the two runs as a whole")]


def balanced_sides(
    pairs: Sequence[tuple[str, str]], seed: int | str | None = None, tries: int = 500
) -> list[tuple[str, str]]:
    """Each pair as (A, B), drawn at random so that every run is A as often as B (within one)."""
    rng = random.Random(seed)
    best: list[tuple[str, str]] = []
    best_spread = None
    for _ in range(tries):
        order = list(pairs)
        rng.shuffle(order)
        balance: Counter[str] = Counter()
        out = []
        for x, y in order:
            # Put the run that has been A more often on the B side; a coin decides ties.
            if balance[x] > balance[y] or (balance[x] == balance[y] and rng.random() < 0.5):
                x, y = y, x
            balance[x] += 1
            balance[y] -= 1
            out.append((x, y))
        spread = max((abs(v) for v in balance.values()), default=0)
        if best_spread is None or spread < best_spread:
            best, best_spread = out, spread
        if spread <= 1:
            break
    return best


def every_pair(set_a: Sequence[str], set_b: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """Two sets: every run of one against every run of the other. One set: every two of its runs."""
    if set_b is None:
        return list(itertools.combinations(set_a, 2))
    return [(a, b) for a in set_a for b in set_b if a != b]


def create_queue(
    db: Database,
    pairs: Sequence[tuple[str, str]],
    seed: int | None = None,
    catch: int = 0,
    sides: dict[str, str] | None = None,
) -> str:
    """Store a queue of pairs with balanced random slots, and `catch` of them again later as catch trials;
    returns the queue's id. `sides` names what each run stands for (a --model, an --a or --b set): what
    the queue's summary reports its verdicts as."""
    queue = new_id()
    with db.atomic():
        add_pairs(db, queue, pairs, seed, catch)
        for run_id, side in sorted((sides or {}).items()):
            db.execute("INSERT INTO queue_sides (queue, run_id, side) VALUES (?, ?, ?)", [queue, run_id, side])
    return queue


def add_pairs(
    db: Database,
    queue: str,
    pairs: Sequence[tuple[str, str]],
    seed: int | str | None = None,
    catch: int = 0,
    round_number: int | None = None,
) -> list[str]:
    """Append pairs to a queue (after its last position) with balanced random slots, `catch` of them shown again
    later in the same batch with the sides swapped; `round_number` for an adaptive queue's round. Returns the
    new pairs' ids, catch trials included. The caller holds the transaction."""
    sided = balanced_sides(pairs, seed if seed is None or round_number is None else f"{seed}:{round_number}")
    # (A, B, which pair of `sided` it shows, whether again): each catch trial comes back a
    # while after its first showing (a quarter of the batch later, when there is room), sides swapped.
    shown: list[tuple[str, str, int, bool]] = [(a, b, n, False) for n, (a, b) in enumerate(sided)]
    rng = random.Random(None if seed is None else f"catch:{seed}" + (f":{round_number}" if round_number else ""))
    count = len(sided)
    later = []
    for first in sorted(rng.sample(range(count), min(max(catch, 0), count))):
        later.append((rng.randint(min(first + max(1, count // 4) + 1, count), count), first))
    for at, first in sorted(later, reverse=True):  # from the end, so earlier places do not move
        a, b = sided[first]
        shown.insert(at, (b, a, first, True))
    ids = [new_id() for _ in shown]
    first_id = {which: ids[position] for position, (_, _, which, again) in enumerate(shown) if not again}
    start = db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM pairs WHERE queue = ?", [queue]).fetchone()[0]
    for position, (a, b, which, again) in enumerate(shown):
        db.execute(
            "INSERT INTO pairs (id, queue, position, run_a, run_b, created, catch_of, round) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [ids[position], queue, start + position, a, b, now(), first_id[which] if again else None, round_number],
        )
    return ids


def queue_sides(db: Database, queue: str) -> dict[str, str]:
    """run -> the side it stands for in this queue: as recorded when the queue was made, else the runs' models
    when every pair is two models (a queue made before sides were recorded), else each run for itself."""
    recorded = dict(db.execute("SELECT run_id, side FROM queue_sides WHERE queue = ?", [queue]).fetchall())
    if recorded:
        return recorded
    rows = db.execute(
        "SELECT p.run_a, p.run_b, ra.model, rb.model FROM pairs p JOIN runs ra ON ra.id = p.run_a "
        "JOIN runs rb ON rb.id = p.run_b WHERE p.queue = ?",
        [queue],
    ).fetchall()
    if rows and all(model_a != model_b for _, _, model_a, model_b in rows):
        return {run: model for a, b, model_a, model_b in rows for run, model in ((a, model_a), (b, model_b))}
    return {run: run for a, b, _, _ in rows for run in (a, b)}


def queue_pairs(db: Database, queue: str, catches: bool = True) -> list[dict[str, Any]]:
    """The queue's pairs in the order they are shown (without its catch trials, if `catches` is False)."""
    where = "" if catches else " AND catch_of IS NULL"
    cursor = db.execute(f"SELECT * FROM pairs WHERE queue = ?{where} ORDER BY position", [queue])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def judge(
    db: Database, pair: dict[str, Any], criterion: str, winner: str, reviewer: str, note: str | None = None
) -> str:
    """Record a head-to-head verdict (A, B or tie) on a criterion of a pair; the latest counts."""
    if winner not in ("A", "B", "tie"):
        raise SieveUsageError("the winner is A, B or tie")
    judgment_id = new_id()
    with db.atomic():
        db.execute(
            "INSERT INTO judgments (id, run_a, run_b, criterion, winner, reviewer, a_shown_first, blind, note, created, pair_id) "
            "VALUES (?, ?, ?, ?, ?, ?, 1, 1, ?, ?, ?)",
            [judgment_id, pair["run_a"], pair["run_b"], criterion, winner, reviewer, note, now(), pair["id"]],
        )
    return judgment_id


def verdicts(db: Database, pair_id: str) -> dict[tuple[str, str], str]:
    """(reviewer, criterion) -> the latest winner for a pair."""
    rows = db.execute(
        "SELECT reviewer, criterion, winner FROM judgments WHERE pair_id = ? ORDER BY id", [pair_id]
    ).fetchall()
    return {(r, c): w for r, c, w in rows}
