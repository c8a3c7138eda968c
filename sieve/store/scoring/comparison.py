"""Is the difference real? Two sides of one scenario compared over their runs, and each model as a distribution.

A side is a model (its complete runs of the scenario) or a list of runs. A run's
figure for a rubric is its total as each chosen evaluator scored it (an undecided
range counted at its middle, a bonus apart, only complete rubrics); for an item,
its score. People and judges are never pooled: `voters` picks people (the
default), judges, or one reviewer.

Each evaluator's own mean comes first, then the mean across them. The interval of
a difference is a bootstrap over runs (statistics.difference), the p-value a
permutation test. A figure is *unresolved* when evaluators' own differences point
in opposite directions, *within noise* when its interval includes no difference,
and otherwise one side is ahead. Each side's own run-to-run spread is the noise
floor a difference must clear; `runs for 1 point` says how many runs a side would
need to tell a one-point difference at 80% power, from the variance observed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from sieve.errors import NotFound, SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.record import pairs as pairing
from sieve.store.record.runs import find_run
from sieve.store.scoring import extreme, repeats, statistics
from sieve.store.scoring.leaderboard import group_of
from sieve.store.scoring.pair_summary import head_to_head
from sieve.store.scoring.runview import RunView
from sieve.tables import counted

COMPARE_HEADERS = [
    "figure",
    "a mean",
    "b mean",
    "difference",
    "95% interval",
    "p",
    "status",
    "a sd",
    "b sd",
    "runs for 1 point",
    "head to head",
]
HUMANS, JUDGES = "humans", "judges"
A_AHEAD, B_AHEAD, NOISE, UNRESOLVED = "a ahead", "b ahead", "within noise", "unresolved"


@dataclass(frozen=True)
class Figure:
    """What is compared: a rubric's total, its bonus, or one item, with its scale's step and range."""

    key: str  # "T", "T bonus", "T3"
    kind: str  # rubric, bonus, item
    step: float
    bounds: tuple[float, float]


def _step(values: Sequence[float], undecided: bool) -> float:
    ordered = sorted(set(values))
    gaps = [b - a for a, b in zip(ordered, ordered[1:])]
    step = min(gaps) if gaps else 1.0
    return step / 2 if undecided else step  # an undecided pair counts at its middle


def figures(scenario: Scenario) -> list[Figure]:
    out = []
    for rubric in scenario.rubrics:
        steps = [_step(i.scale.values, i.scale.undecided) for i in rubric.items] or [1.0]
        lowest = sum(i.scale.minimum for i in rubric.items) - (rubric.deductions.maximum if rubric.deductions else 0.0)
        out.append(Figure(rubric.id, "rubric", min(steps), (lowest, rubric.item_maximum)))
        if rubric.bonuses:
            steps = [_step(i.scale.values, i.scale.undecided) for i in rubric.bonuses]
            lowest = sum(i.scale.minimum for i in rubric.bonuses)
            out.append(Figure(f"{rubric.id} bonus", "bonus", min(steps), (lowest, rubric.bonus_item_maximum)))
        for item in rubric.items + rubric.bonuses:
            step = _step(item.scale.values, item.scale.undecided)
            out.append(Figure(item.id, "item", step, (item.scale.minimum, item.scale.maximum)))
    return out


def chooses(db: Database, voters: str) -> Any:
    """Whose cards count: `humans` (people), `judges` (model judges), or one reviewer by name."""
    if voters in (HUMANS, JUDGES):
        group = group_of(db)
        return lambda reviewer: group(reviewer) == voters
    return lambda reviewer: reviewer == voters


def run_figures(view: RunView, chosen: Any) -> dict[str, dict[str, float]]:
    """figure key -> evaluator -> the run's value, from the chosen evaluators' cards."""
    out: dict[str, dict[str, float]] = {}
    for reviewer, card in view.cards().items():
        if not chosen(reviewer):
            continue
        for rubric in card.rubrics:
            if rubric.complete:
                out.setdefault(rubric.rubric.id, {})[reviewer] = (rubric.low + rubric.high) / 2
                if rubric.bonuses:
                    key = f"{rubric.rubric.id} bonus"
                    out.setdefault(key, {})[reviewer] = (rubric.bonus_low + rubric.bonus_high) / 2
            for item in rubric.items + rubric.bonuses:
                if item.counted and item.annotation and item.annotation["score"] is not None:
                    out.setdefault(item.item.id, {})[reviewer] = (item.low + item.high) / 2
    return out


def side_runs(db: Database, scenario: str, spec: str) -> list[RunView]:
    """A side: a model's complete runs of the scenario, or runs listed by id (comma-separated, short ids too)."""
    views = [v for v in RunView.of_scenario(db, scenario) if v.run["status"] == "complete"]
    of_model = [v for v in views if v.run["model"] == spec]
    if of_model:
        return of_model
    parts = [part.strip() for part in spec.split(",") if part.strip()]
    if not parts:
        raise SieveUsageError("a side is a model or a list of runs")
    try:
        chosen = [RunView.open(db, find_run(db, part)) for part in parts]
    except NotFound:
        models = ", ".join(sorted({v.run["model"] for v in views}))
        raise NotFound(f"{spec}: no complete run of {scenario} by that model, nor such a run (models: {models})")
    wrong = [v.id for v in chosen if v.run["scenario"] != scenario]
    if wrong:
        raise SieveUsageError(f"{', '.join(wrong)}: not runs of {scenario}")
    return chosen


def units_of(views: Sequence[RunView], chosen: Any) -> dict[str, list[dict[str, float]]]:
    """figure key -> one unit per draw: each evaluator's value. Runs whose replies are copies of each other
    (repeats.identical_groups) are one draw, not several: they make one unit, each evaluator's values averaged."""
    first_of = {run: group[0] for group in repeats.identical_groups(list(views)) for run in group}
    merged: dict[str, dict[str, dict[str, list[float]]]] = {}  # key -> unit -> evaluator -> values
    for view in views:
        unit = first_of.get(view.id, view.id)
        for key, by_evaluator in run_figures(view, chosen).items():
            for evaluator, value in by_evaluator.items():
                merged.setdefault(key, {}).setdefault(unit, {}).setdefault(evaluator, []).append(value)
    return {
        key: [{e: sum(v) / len(v) for e, v in by_evaluator.items()} for by_evaluator in units.values()]
        for key, units in merged.items()
    }


def left_out(name: str, views: Sequence[RunView], chosen: Any, whose: str) -> list[str]:
    """Why a side's figures rest on fewer runs than it has, or a rubric's total is missing: runs without a card of
    the chosen evaluators, and cards that leave a rubric partly unscored (a total is compared only whole, while
    its items are compared as scored). `whose` names the evaluators (people's, judges', ada's)."""
    if not views:
        return []
    notes = []
    carded = []
    for view in views:
        cards = [c for reviewer, c in view.cards().items() if chosen(reviewer)]
        if cards:
            carded.append(cards)
    if len(carded) < len(views):
        notes.append(f"{name}: {len(views) - len(carded)} of {len(views)} runs have no card ({whose})")
    for i, rubric in enumerate(views[-1].scenario.rubrics):
        partial = sum(
            1 for cards in carded if i < len(cards[0].rubrics) and not any(c.rubrics[i].complete for c in cards)
        )
        if partial:
            notes.append(
                f"{name}: {rubric.id} total left out of {partial} of {len(views)} runs: their cards ({whose}) leave "
                "it unscored or partly scored (a total is compared whole; sieve results shows partial ones)"
            )
    return notes


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def distribution(key: str, figure: Figure, units: list[dict[str, float]]) -> dict[str, Any]:
    """A figure over one side's runs: runs, mean, sd, 95% interval, min and max, each evaluator's own mean."""
    found = statistics.spread(units, figure.step, figure.bounds)
    return {
        "figure": key,
        "kind": figure.kind,
        "runs": found.n,
        "mean": _round(found.mean),
        "sd": _round(found.sd),
        "low": _round(found.low),
        "high": _round(found.high),
        "min": _round(found.minimum),
        "max": _round(found.maximum),
        "evaluators": {e: _round(v) for e, v in statistics.evaluator_means(units).items()},
        "note": "1 run: a snapshot" if found.snapshot else "",
    }


def whose(voters: str) -> str:
    """The evaluators `voters` names, as a note says it: people's, judges', ada's."""
    return {HUMANS: "people's", JUDGES: "judges'"}.get(voters, f"{voters}'s")


def model_runs(db: Database, scenario: str) -> dict[str, list[RunView]]:
    """model -> its complete runs of the scenario, oldest first."""
    models: dict[str, list[RunView]] = {}
    for view in RunView.of_scenario(db, scenario):
        if view.run["status"] == "complete":
            models.setdefault(view.run["model"], []).append(view)
    return models


def by_model_left_out(db: Database, scenario: str, voters: str = HUMANS) -> list[str]:
    """What by_model's rows leave out, per model: runs without the voters' cards, totals of partial cards."""
    chosen = chooses(db, voters)
    return [
        note
        for model, runs in model_runs(db, scenario).items()
        for note in left_out(model, runs, chosen, whose(voters))
    ]


def by_model(db: Database, scenario: str, voters: str = HUMANS, items: bool = True) -> list[dict[str, Any]]:
    """One row per model and figure (each rubric, its bonus, and with `items` each item): the distribution over
    the model's complete runs."""
    chosen = chooses(db, voters)
    models = model_runs(db, scenario)
    views = [v for runs in models.values() for v in runs]
    if not views:
        return []
    twins = repeats.not_independent(views)
    out = []
    for model, runs in models.items():
        units = units_of(runs, chosen)
        flagged = [v.id for v in runs if extreme.flags(v)]
        notes = [repeats.note(twins, [v.id for v in runs])]
        if flagged and len(flagged) == len(runs):
            notes.append("extreme in its only run: play it again" if len(runs) == 1 else "extreme in every run")
        elif flagged:
            notes.append(f"extreme in {len(flagged)} of {len(runs)} runs")
        for figure in figures(runs[-1].scenario):
            if figure.kind == "item" and not items:
                continue
            if figure.key in units:
                row = {"model": model, **distribution(figure.key, figure, units[figure.key])}
                row["note"] = "; ".join(n for n in [row["note"], *notes] if n)
                row["extreme_runs"] = flagged
                out.append(row)
    return out


def _status(difference: statistics.Difference, a: list[dict[str, float]], b: list[dict[str, float]]) -> str:
    own_a, own_b = statistics.evaluator_means(a), statistics.evaluator_means(b)
    directions = {(own_a[e] > own_b[e]) - (own_a[e] < own_b[e]) for e in own_a.keys() & own_b.keys()}
    if {1, -1} <= directions:
        return UNRESOLVED
    if difference.within_noise:
        return NOISE
    return A_AHEAD if difference.difference > 0 else B_AHEAD


def compare(db: Database, scenario: str, a: str, b: str, voters: str = HUMANS) -> dict[str, Any]:
    """Side a against side b on every figure both have: means, the difference with its interval and p, the
    status, each side's spread (the noise floor) and the runs a side needs for a 1-point difference."""
    a_views, b_views = side_runs(db, scenario, a), side_runs(db, scenario, b)
    overlap = {v.id for v in a_views} & {v.id for v in b_views}
    if overlap:
        raise SieveUsageError(f"the sides share runs: {', '.join(sorted(overlap))}")
    chosen = chooses(db, voters)
    a_units, b_units = units_of(a_views, chosen), units_of(b_views, chosen)
    h2h = _head_to_head(db, a_views, b_views, a, b)
    rows = []
    for figure in figures(a_views[-1].scenario):
        if figure.key not in a_units or figure.key not in b_units:
            continue
        criterion = h2h.get(figure.key) if figure.kind == "item" else None
        rows.append(figure_row(figure, a_units[figure.key], b_units[figure.key], criterion))
    return {
        "scenario": scenario,
        "a": a,
        "b": b,
        "voters": voters,
        "notes": side_notes("a", a_views)
        + side_notes("b", b_views)
        + left_out("a", a_views, chosen, whose(voters))
        + left_out("b", b_views, chosen, whose(voters))
        + too_few_runs(rows),
        "a_runs": [v.id for v in a_views],
        "b_runs": [v.id for v in b_views],
        "rows": rows,
        "head_to_head": h2h,
    }


def figure_row(
    figure: Figure,
    x: list[dict[str, float]],
    y: list[dict[str, float]],
    criterion: dict[str, Any] | None = None,
    *,
    spreads: bool = True,
) -> dict[str, Any]:
    """One figure compared, a's units against b's: the means, the difference with its interval and p, the status,
    each side's spread and the runs for a 1-point difference (compare's row; the report's neighbours too, which
    show no spread: without `spreads`, the sds and the runs needed are None and their bootstraps not drawn)."""
    found = statistics.difference(x, y, figure.step, figure.bounds)
    spread_a, spread_b = (
        (statistics.spread(x, figure.step, figure.bounds), statistics.spread(y, figure.step, figure.bounds))
        if spreads
        else (None, None)
    )
    variance = statistics.pooled_variance(x, y) if spreads else None
    return {
        "rubric" if figure.kind != "item" else "item": figure.key,
        "figure": figure.key,
        "kind": figure.kind,
        "a_runs": len(x),
        "b_runs": len(y),
        "a_mean": _round(found.a_mean),
        "b_mean": _round(found.b_mean),
        "difference": _round(found.difference),
        "low": _round(found.low),
        "high": _round(found.high),
        "p": _round(found.p, 4),
        "status": _status(found, x, y),
        "a_sd": None if spread_a is None else _round(spread_a.sd),
        "b_sd": None if spread_b is None else _round(spread_b.sd),
        "runs_for_1_point": None if variance is None else statistics.runs_needed(variance, 1.0, 0.8, figure.step),
        "a_evaluators": {e: _round(v) for e, v in statistics.evaluator_means(x).items()},
        "b_evaluators": {e: _round(v) for e, v in statistics.evaluator_means(y).items()},
        "head_to_head": criterion,
    }


def too_few_runs(rows: list[dict[str, Any]]) -> list[str]:
    """Where the runs compared are too few for any difference to be told from noise: no relabelling of them gives
    a permutation p at or below the 5% level, so those rows are within noise however far apart the means."""
    out = []
    for a_runs, b_runs in dict.fromkeys((r["a_runs"], r["b_runs"]) for r in rows):
        best = statistics.smallest_p(a_runs, b_runs)
        if best > statistics.ALPHA and min(a_runs, b_runs) >= 2:
            out.append(
                f"{a_runs} runs against {b_runs}: no permutation of so few runs gives p below {best:.3f}, so no "
                "figure on them can be ahead: play more runs"
            )
    return out


def side_notes(name: str, views: list[RunView]) -> list[str]:
    """What makes a side's figures less than a distribution: one run, copies, extreme runs."""
    notes = []
    if len(views) == 1:
        notes.append(f"{name}: 1 run, a snapshot: its spread is unknown")
    copies = repeats.note(repeats.not_independent(views), [v.id for v in views])
    if copies:
        notes.append(f"{name}: {copies}")
    flagged = [v for v in views if extreme.flags(v)]
    if flagged:
        notes.append(f"{name}: extreme in {len(flagged)} of {len(views)} runs")
    return notes


def _head_to_head(db: Database, a_views: list[RunView], b_views: list[RunView], a: str, b: str) -> dict[str, Any]:
    """The verdicts of the pair queues between the two sides, per criterion, in a/b words ('a ahead')."""
    a_ids, b_ids = {v.id for v in a_views}, {v.id for v in b_views}
    queues = [
        q
        for (q,) in db.execute("SELECT DISTINCT queue FROM pairs WHERE catch_of IS NULL ORDER BY queue").fetchall()
        if all(
            {p["run_a"], p["run_b"]} & a_ids and {p["run_a"], p["run_b"]} & b_ids
            for p in pairing.queue_pairs(db, q, catches=False)
        )
    ]
    out: dict[str, Any] = {}
    for queue in queues:
        side_of = pairing.queue_sides(db, queue)
        name_a = {side_of.get(r, r) for r in a_ids if r in side_of}
        for criterion, row in head_to_head(db, queue).items():
            status = row["status"]
            if status == "ahead":
                status = A_AHEAD if row["winner"] in name_a else B_AHEAD
            share = row["share"]
            if share is not None and row["side"] not in name_a:
                share, low, high = 1 - share, 1 - row["high"], 1 - row["low"]
            else:
                low, high = row["low"], row["high"]
            out[criterion] = {
                "queue": queue,
                "status": status,
                "a_share": _round(share),
                "low": _round(low),
                "high": _round(high),
                "pairs": row.get("pairs") or 0,
                "split_pairs": row["split_pairs"],
            }
    return out


def _number(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def head_to_head_text(row: dict[str, Any] | None) -> str:
    if not row:
        return ""
    share = "" if row["a_share"] is None else f" (a {row['a_share']:.2f}, {row['low']:.2f} to {row['high']:.2f})"
    return f"{row['status']}{share}, {counted(row['pairs'], 'pair')}"


def compare_cells(row: dict[str, Any]) -> list[str]:
    """A comparison row as the text table, csv, md and the Compare view show it."""
    return [
        row["figure"],
        _number(row["a_mean"]),
        _number(row["b_mean"]),
        _number(row["difference"]),
        f"{_number(row['low'])} to {_number(row['high'])}",
        _number(row["p"], 3),
        row["status"],
        _number(row["a_sd"]),
        _number(row["b_sd"]),
        "" if row["runs_for_1_point"] is None else str(row["runs_for_1_point"]),
        head_to_head_text(row["head_to_head"]),
    ]
