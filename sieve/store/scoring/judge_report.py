"""Judges judged: how steady each model judge is, how it ranks the field against the people, and what several
judges say together.

- Stability: a run judged again by the same judge (`sieve judge RUN --again`) is a catch trial of
  the judge (its annotations carry the trial, its first card stays). Per judge and item, the flip
  rate is the share of such repeats whose value differed from the first card's, with Wilson's
  interval; the flipped items are listed, run by run, with both values and both quotes.
- Field-level agreement: per judge and rubric, the rank correlation (Spearman's rho, Kendall's
  tau-b) between the judge's ranking of the models (its mean total over their runs) and the
  people's (each person's own mean first), over the runs both scored, with a bootstrap interval
  over those runs (agreement.bootstrap_interval).
- Ensembles: with two judges or more, per model and rubric the mean across judges beside each
  judge's, and the ensemble's own rank correlation with the people. Same-maker bias: per judge
  whose maker made some of the runs, on runs other judges scored too, the judge's total minus the
  other judges' mean, on its own maker's runs (its mean with statistics.spread's interval) and on
  the rest; the bias is the difference of the two (statistics.difference): a lenient judge is
  lenient everywhere, and only what it adds for its own maker is bias.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.record.annotations import trial_annotations
from sieve.store.scoring import comparison, ranks, statistics
from sieve.store.scoring.agreement import bootstrap_interval
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card

RESAMPLES = 1000


def _values(card: Card) -> dict[str, tuple[Any, str | None]]:
    """What a card says, item by item: (value, quote) of each score, verdict step, yes/no answer and probe mark."""
    out: dict[str, tuple[Any, str | None]] = {}
    for rubric in card.rubrics:
        for item in rubric.items + rubric.bonuses:
            if item.annotation is not None and item.annotation["score"] is not None:
                out[item.item.id] = ((item.low, item.high), item.annotation["quote"])
    for counter in card.counters:
        if counter.counter.kind == "verdict":
            for step, said in counter.verdicts.items():
                out[f"{counter.counter.id} {step}"] = (said, None)
        elif counter.counter.kind == "yesno" and counter.events:
            out[counter.counter.id] = (counter.value, None)
    for probe in card.probes:
        if probe.mark is not None:
            out[probe.probe.id] = (probe.mark, None)
    return out


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        low, high = value
        return f"{low:g}" if low == high else f"{low:g}-{high:g}"
    return str(value)


def stability(db: Database, scenario: str) -> dict[str, Any]:
    """Per judge: each item's flip rate across repeats (Wilson 95%), the overall rate, and the flipped items."""
    named = comparison.chooses(db, comparison.JUDGES)
    tally: dict[str, dict[str, list[int]]] = {}  # judge -> item -> [repeats compared, flipped]
    flipped: dict[str, list[dict[str, Any]]] = {}
    views: dict[str, RunView] = {}
    for (run_id, trial), given in sorted(trial_annotations(db).items()):
        who = given[0]["reviewer"]
        if not named(who):
            continue
        if run_id not in views:
            views[run_id] = RunView.open(db, run_id)
        view = views[run_id]
        if view.run["scenario"] != scenario:
            continue
        first = _values(view.card(who))
        again = _values(RunView(db, view.run, trial=trial).card(who, given))
        for item in sorted(first.keys() & again.keys()):
            counts = tally.setdefault(who, {}).setdefault(item, [0, 0])
            counts[0] += 1
            if first[item][0] != again[item][0]:
                counts[1] += 1
                flipped.setdefault(who, []).append(
                    {
                        "run": run_id,
                        "model": view.run["model"],
                        "item": item,
                        "first": _shown(first[item][0]),
                        "again": _shown(again[item][0]),
                        "first_quote": first[item][1],
                        "again_quote": again[item][1],
                    }
                )
    out: dict[str, Any] = {}
    for who, items in sorted(tally.items()):
        rows = []
        for item, (compared, flips) in sorted(items.items()):
            low, high = statistics.wilson(flips / compared, compared)
            rows.append(
                {
                    "item": item,
                    "repeats": compared,
                    "flipped": flips,
                    "rate": flips / compared,
                    "low": low,
                    "high": high,
                }
            )
        compared = sum(c for c, _ in items.values())
        flips = sum(f for _, f in items.values())
        low, high = statistics.wilson(flips / compared, compared)
        out[who] = {
            "items": rows,
            "compared": compared,
            "flipped": flips,
            "rate": flips / compared,
            "low": low,
            "high": high,
            "flipped_items": flipped.get(who, []),
        }
    return out


Units = list[tuple[str, dict[str, float]]]  # (model, evaluator -> the run's total), one per run


def _means(units: Units, chosen: Callable[[dict[str, float]], float | None]) -> dict[str, float]:
    """model -> its mean over the runs of the chosen value (per run: a judge's total, or the people's mean)."""
    by_model: dict[str, list[float]] = {}
    for model, values in units:
        value = chosen(values)
        if value is not None:
            by_model.setdefault(model, []).append(value)
    return {m: fmean(v) for m, v in by_model.items()}


def _correlations(
    units: Units, judge: Callable[[dict[str, float]], float | None], people: Sequence[str]
) -> dict[str, Any]:
    def people_mean(values: dict[str, float]) -> float | None:
        own = [values[p] for p in people if p in values]
        return fmean(own) if own else None

    def figure(sample: Units, how: Callable[..., float | None]) -> float | None:
        return how(_means(sample, judge), _means(sample, people_mean))

    out: dict[str, Any] = {"runs": len(units), "models": len({m for m, _ in units})}
    out["undefined"] = _undefined(_means(units, judge), _means(units, people_mean))
    for name, how in (("spearman", ranks.spearman), ("kendall", ranks.kendall)):
        value = figure(units, how)

        def statistic(sample: Units, how: Callable[..., float | None] = how) -> float | None:
            return figure(sample, how)

        # Undefined on the runs as they are: no interval either (resamples could order what the field ties).
        interval = None if out["undefined"] else bootstrap_interval(units, statistic, resamples=RESAMPLES)
        out[name] = None if value is None or out["undefined"] else round(value, 3)
        out[f"{name}_low"], out[f"{name}_high"] = (
            (None, None) if interval is None else (round(interval[0], 3), round(interval[1], 3))
        )
    return out


def _undefined(judge: dict[str, float], people: dict[str, float]) -> str | None:
    """Why a rank correlation of the judge's order with the people's cannot be had, or None: too few models, or
    one side giving every model the same total (a constant has no order to agree with)."""
    common = judge.keys() & people.keys()
    if len(common) < 2:
        return "undefined: fewer than two models scored by the judge and the people"
    if len({judge[m] for m in common}) == 1:
        return "undefined: the judge gives every model the same total"
    if len({people[m] for m in common}) == 1:
        return "undefined: the people give every model the same total"
    return None


def field_agreement(db: Database, scenario: str) -> dict[str, Any]:
    """Per rubric: each judge's (and, with several, the judges' mean's) rank correlation with the people, and per
    model each judge's mean total beside the mean across judges."""
    is_judge = comparison.chooses(db, comparison.JUDGES)
    views = [v for v in RunView.of_scenario(db, scenario) if v.run["status"] == "complete"]
    rubrics = [r.id for r in views[-1].scenario.rubrics] if views else []
    out: dict[str, Any] = {}
    for rubric in rubrics:
        rows: list[tuple[str, dict[str, float]]] = []
        for view in views:
            values = comparison.run_figures(view, lambda reviewer: True).get(rubric, {})
            if values:
                rows.append((view.run["model"], values))
        judges = sorted({e for _, values in rows for e in values if is_judge(e)})
        people = sorted({e for _, values in rows for e in values if not is_judge(e)})
        if not judges:
            continue
        per_judge = {}
        for judge in judges:
            both = [(m, v) for m, v in rows if judge in v and any(p in v for p in people)]
            per_judge[judge] = _correlations(both, _one(judge), people)

        def ensemble(values: dict[str, float], judges: list[str] = judges) -> float | None:
            given = [values[j] for j in judges if j in values]
            return fmean(given) if given else None

        entry: dict[str, Any] = {"judges": per_judge, "people": people}
        if len(judges) > 1:
            both = [(m, v) for m, v in rows if any(j in v for j in judges) and any(p in v for p in people)]
            entry["ensemble"] = _correlations(both, ensemble, people)
            models = sorted({m for m, _ in rows})
            entry["means"] = {
                m: {
                    **{j: _round(_means(rows, _one(j)).get(m)) for j in judges},
                    "judges' mean": _round(_means(rows, ensemble).get(m)),
                }
                for m in models
            }
        out[rubric] = entry
    return out


def _one(evaluator: str) -> Callable[[dict[str, float]], float | None]:
    """A run's value by one evaluator (None where they did not score it)."""
    return lambda values: values.get(evaluator)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def same_maker(db: Database, scenario: str) -> list[dict[str, Any]]:
    """Per judge and rubric where the judge's maker made some runs that other judges scored too: the judge's total
    minus the other judges' mean, on its own maker's runs and elsewhere, and the difference (the bias), each with
    its 95% interval."""
    is_judge = comparison.chooses(db, comparison.JUDGES)
    model_of = {r: m for r, m in db.execute("SELECT DISTINCT reviewer, model FROM judgings").fetchall()}
    views = [v for v in RunView.of_scenario(db, scenario) if v.run["status"] == "complete"]
    if not views:
        return []
    out = []
    for figure in comparison.figures(views[-1].scenario):
        if figure.kind != "rubric":
            continue
        runs = [(v.run["model"], comparison.run_figures(v, is_judge).get(figure.key, {})) for v in views]
        for judge in sorted({j for _, values in runs for j in values}):
            maker = judgings.maker(model_of.get(judge) or judge.removeprefix("judge:"))
            if maker is None:
                continue
            own: list[float] = []
            elsewhere: list[float] = []
            for model, values in runs:
                others = [v for j, v in values.items() if j != judge]
                if judge not in values or not others:
                    continue
                gap = values[judge] - fmean(others)
                (own if judgings.maker(model) == maker else elsewhere).append(gap)
            if not own:
                continue
            width = figure.bounds[1] - figure.bounds[0]
            spread = statistics.spread(own, figure.step, (-width, width))
            row: dict[str, Any] = {
                "judge": judge,
                "maker": maker,
                "rubric": figure.key,
                "own_runs": len(own),
                "own_gap": round(spread.mean, 3),
                "own_low": round(spread.low, 3),
                "own_high": round(spread.high, 3),
                "other_runs": len(elsewhere),
                "other_gap": _round(fmean(elsewhere)) if elsewhere else None,
                "bias": None,
                "low": None,
                "high": None,
                "status": "no runs of other makers to compare with",
            }
            if len(elsewhere) >= 1:
                found = statistics.difference(own, elsewhere, figure.step, (-width, width))
                row.update(bias=round(found.difference, 3), low=round(found.low, 3), high=round(found.high, 3))
                row["status"] = (
                    "within noise"
                    if found.within_noise
                    else ("favours its maker" if found.difference > 0 else "harsher on its maker")
                )
            out.append(row)
    return out


def report(db: Database, scenario: str) -> dict[str, Any]:
    """Everything `sieve results --judge-report` shows."""
    return {
        "scenario": scenario,
        "stability": stability(db, scenario),
        "field": field_agreement(db, scenario),
        "same_maker": same_maker(db, scenario),
    }
