"""The leaderboard: ratings from the head-to-head judgments, with the card totals beside them.

People and judges are fitted apart and shown side by side, never pooled. A
judge is a reviewer whose name starts with `judge:`, or one whose judgings
`sieve judge` recorded under a name of its own. Each voter's latest
verdict on a pair and criterion counts once. The absolute scores are each
rubric's mean total over the side's runs, per rubric (the keykeeper seed keeps
rubric T and rubric R apart: they are never summed).
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.record.annotations import JUDGE_PREFIX
from sieve.store.scoring import ratings, style, style_control
from sieve.store.scoring.runview import RunView

VOTERS = ("humans", "judges", "all")


def is_judge(reviewer: str) -> bool:
    return reviewer.startswith(JUDGE_PREFIX)


def votes(
    db: Database, scenario: str, criterion: str = "overall", by: str = "model", controls: tuple[str, ...] = ()
) -> dict[str, list[ratings.Vote]]:
    """The votes on a criterion, split into people's and judges', each side named by its model or its run; with
    `controls` (length, markdown), each vote carries its runs' style difference (store.scoring.style)."""
    rows = db.execute(
        """
        SELECT j.id, j.run_a, j.run_b, j.winner, j.reviewer, COALESCE(j.pair_id, j.run_a || '|' || j.run_b),
               ra.model, rb.model
        FROM judgments j JOIN runs ra ON ra.id = j.run_a JOIN runs rb ON rb.id = j.run_b
        WHERE ra.scenario = ? AND j.criterion = ?
          -- a catch trial (a pair shown again) measures the reviewer, not the runs
          AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.id = j.pair_id AND p.catch_of IS NOT NULL)
        ORDER BY j.id
        """,
        [scenario, criterion],
    ).fetchall()
    names = style.covariate_names(controls)
    looks = style.of_runs(db, [r for row in rows for r in row[1:3]]) if names else {}
    latest: dict[tuple[str, str], ratings.Vote] = {}
    for _, run_a, run_b, winner, reviewer, pair, model_a, model_b in rows:
        a, b = (model_a, model_b) if by == "model" else (run_a, run_b)
        if a == b:
            continue  # two runs of the same model: no information about models
        x = style.difference(looks[run_a], looks[run_b], names) if names else ()
        latest[(pair, reviewer)] = ratings.Vote(a, b, winner, pair, reviewer, x)
    out: dict[str, list[ratings.Vote]] = {"humans": [], "judges": []}
    named = judgings.judges(db)
    for vote in latest.values():
        out["judges" if is_judge(vote.voter) or vote.voter in named else "humans"].append(vote)
    return out


def absolute_scores(db: Database, scenario: str, by: str = "model") -> tuple[list[str], dict[str, dict[str, float]]]:
    """Each rubric's mean total per side (each run: its reviewers' mean), bonuses apart: columns, side -> column -> mean."""
    totals: dict[str, dict[str, list[float]]] = {}
    rubric_ids: list[str] = []
    for view in RunView.of_scenario(db, scenario):
        side = view.run["model"] if by == "model" else view.id
        cards = list(view.cards().values())
        if not cards:
            continue
        for i, rubric in enumerate(view.scenario.rubrics):
            columns = [(rubric.id, [c.rubrics[i].low for c in cards])]
            if rubric.bonuses:  # 21+3: the bonus stays apart, as the seeds print it
                columns.append((f"{rubric.id} bonus", [c.rubrics[i].bonus_low for c in cards]))
            for column, values in columns:
                if column not in rubric_ids:
                    rubric_ids.append(column)
                totals.setdefault(side, {}).setdefault(column, []).append(mean(values))
    return rubric_ids, {s: {r: mean(v) for r, v in by_rubric.items()} for s, by_rubric in totals.items()}


def leaderboard(
    db: Database,
    scenario: str,
    criterion: str = "overall",
    by: str = "model",
    voters: str = "all",
    rounds: int = 200,
    controls: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The ratings of each group of voters asked for, and the absolute scores, as rows ready to print. With
    `controls`, each row has its controlled rating beside the raw one (store.scoring.style_control), and
    `length_bias` each voter's length bias when length is controlled."""
    groups = ["humans", "judges"] if voters == "all" else [voters]
    split = votes(db, scenario, criterion, by, controls)
    rubric_ids, absolute = absolute_scores(db, scenario, by)
    out: dict[str, Any] = {"scenario": scenario, "criterion": criterion, "by": by, "rubrics": rubric_ids, "groups": {}}
    out["controls"] = list(controls)
    out["covariates"] = style.covariate_names(controls)
    out["length_bias"] = []
    for group in groups:
        rows = ratings.table(split[group], rounds=rounds)
        controlled = style_control.fit(split[group]) if controls and split[group] else None
        out["groups"][group] = [
            {
                "side": r.side,
                "rating": round(r.rating, 1),
                "low": round(r.low, 1),
                "high": round(r.high, 1),
                "votes": r.votes,
                "wins": r.wins,
                "ties": r.ties,
                "losses": r.losses,
                "stability": r.stability,
                "flips_at": r.flips_at,
                **_controlled(controlled, r.side),
                **{column: _round(absolute.get(r.side, {}).get(column)) for column in rubric_ids},
            }
            for r in rows
        ]
        if controlled is not None:
            out.setdefault("coefficients", {})[group] = {
                name: {
                    "value": round(controlled.coefficients[k], 3),
                    "low": round(controlled.coefficient_interval(k)[0], 3),
                    "high": round(controlled.coefficient_interval(k)[1], 3),
                }
                for k, name in enumerate(out["covariates"])
            }
        if "length" in controls:
            by_voter: dict[str, list[ratings.Vote]] = {}
            for vote in split[group]:
                by_voter.setdefault(vote.voter, []).append(vote)
            at = out["covariates"].index("length")
            for voter, given in sorted(by_voter.items()):
                out["length_bias"].append({"group": group, **style_control.length_bias(voter, given, at).as_dict()})
    return out


def _controlled(found: style_control.ControlledFit | None, side: str) -> dict[str, Any]:
    if found is None or side not in found.strengths:
        return {}
    low, high = found.interval(side)
    return {
        "controlled": round(found.rating(side), 1),
        "controlled_low": round(low, 1),
        "controlled_high": round(high, 1),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
