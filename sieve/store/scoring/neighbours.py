"""Each model against the next in the ranking: per rubric total, neighbouring models compared as `sieve compare`
compares two sides, with the runs each figure rests on.

The models are ordered by their mean over their complete runs (the distribution's mean); each neighbouring pair is
compared by comparison.figure_row: the difference with its bootstrap interval, the permutation p, ahead or within
noise or unresolved. Each side's runs come with each run's value by each evaluator, so a page can link every number
to its cards.

People and judges are never pooled: `voters` picks people, judges or one reviewer, as everywhere.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.scoring import comparison, statistics


def neighbours(db: Database, scenario: str, voters: str = comparison.HUMANS) -> list[dict[str, Any]]:
    """Per rubric total, in the scenario's order: {"figure", "ranking": [(model, mean)], "pairs": [row],
    "unranked": [models with no whole total on the voters' cards]}. The ranking is by mean, ties by name; each row
    is compare's row for the upper model (a) against the next (b), plus `a`, `b` and `evidence`: per side, each
    run with its value by each evaluator (run id -> evaluator -> value)."""
    chosen = comparison.chooses(db, voters)
    models = comparison.model_runs(db, scenario)
    if not models:
        return []
    units = {model: comparison.units_of(runs, chosen) for model, runs in models.items()}
    values = {
        model: {v.id: comparison.run_figures(v, chosen) for v in runs} for model, runs in models.items()
    }  # model -> run -> figure key -> evaluator -> value
    latest = max((runs[-1] for runs in models.values()), key=lambda v: v.run["started"])
    out = []
    for figure in comparison.figures(latest.scenario):
        if figure.kind != "rubric":
            continue
        # The mean the distribution table shows (statistics.spread's centre): the mean of the evaluators' means.
        means = {m: statistics.evaluators_mean(u[figure.key]) for m, u in units.items() if u.get(figure.key)}
        ranked = sorted(means.items(), key=lambda mm: (-mm[1], mm[0]))
        pairs = []
        for (a, _), (b, _) in zip(ranked, ranked[1:]):
            row = comparison.figure_row(figure, units[a][figure.key], units[b][figure.key], spreads=False)
            evidence = {
                side: {run: by[figure.key] for run, by in values[model].items() if figure.key in by}
                for side, model in (("a", a), ("b", b))
            }
            pairs.append({**row, "a": a, "b": b, "evidence": evidence})
        # A model with runs but no whole total is not ranked on it: said, not silently dropped.
        unranked = [m for m in models if m not in means]
        if ranked:
            out.append({"figure": figure.key, "ranking": ranked, "pairs": pairs, "unranked": unranked})
    return out


def verdict(row: dict[str, Any]) -> str:
    """A neighbouring pair's status in the models' names: 'acme/a ahead', 'within noise', 'unresolved'."""
    status = row["status"]
    if status == comparison.A_AHEAD:
        return f"{row['a']} ahead"
    if status == comparison.B_AHEAD:
        return f"{row['b']} ahead"
    return str(status)
