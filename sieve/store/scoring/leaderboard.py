"""The leaderboard: ratings from the head-to-head judgments, with the card totals beside them.

People and judges are fitted apart and shown side by side, never pooled. A
judge is a reviewer whose name starts with `judge:`, or one whose judgings
`sieve judge` recorded under a name of its own. Each voter's latest
verdict on a pair and criterion counts once. The absolute scores are each
rubric's mean total over the side's runs, per rubric (the keykeeper seed keeps
rubric T and rubric R apart: they are never summed), from the cards of the same
voters as the ratings beside them, by the rule of `sieve results`: a run's total is
the mean of its chosen reviewers' own totals, an undecided range stays a range, and
a total resting on cards that leave the rubric partly unscored says so. Archived
runs are out of the votes and the totals (runs.not_archived).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import mean
from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.record.annotations import JUDGE_PREFIX
from sieve.store.record.runs import not_archived
from sieve.store.scoring import ratings, style, style_control
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import total_text

VOTERS = ("humans", "judges", "all")


def is_judge(reviewer: str) -> bool:
    return reviewer.startswith(JUDGE_PREFIX)


def group_of(db: Database) -> Callable[[str], str]:
    """reviewer -> "judges" for a model judge (named `judge:…`, or recorded as judging here), else "humans"."""
    named = judgings.judges(db)
    return lambda reviewer: "judges" if is_judge(reviewer) or reviewer in named else "humans"


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
        WHERE ra.scenario = ? AND j.criterion = ? AND {in_field_a} AND {in_field_b}
          -- a catch trial (a pair shown again) measures the reviewer, not the runs
          AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.id = j.pair_id AND p.catch_of IS NOT NULL)
        ORDER BY j.id
        """.format(in_field_a=not_archived("ra.id"), in_field_b=not_archived("rb.id")),
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
    group = group_of(db)
    for vote in latest.values():
        out[group(vote.voter)].append(vote)
    return out


@dataclass(frozen=True)
class Total:
    """A rubric's total (or its bonus) for a side: the mean over its runs of each run's total, as low and high
    ends (an undecided range stays one), and how many of those runs rest on cards that leave it partly unscored."""

    low: float
    high: float
    runs: int
    partial: int
    left_out: int = 0  # a judge's answers its quotes do not back, left out of the partial cards

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2

    def text(self) -> str:
        """As `sieve results` prints a total: `17.33`, `16.5–17`, and `(partial)` where cards leave items out."""
        said = total_text(self.low, self.high, decimals=True)
        if self.partial:
            said += " (partial" if self.runs == 1 else f" (partial in {self.partial} of {self.runs} runs"
            said += (f", {self.left_out} unsupported left out" if self.left_out else "") + ")"
        return said

    def as_dict(self) -> dict[str, Any]:
        return {
            "low": round(self.low, 2),
            "high": round(self.high, 2),
            "runs": self.runs,
            "partial_runs": self.partial,
            "unsupported_left_out": self.left_out,
        }


def absolute_scores(
    db: Database, scenario: str, by: str = "model", voters: str = "humans"
) -> tuple[list[str], dict[str, dict[str, Total]]]:
    """Each rubric's mean total per side from the `voters`' cards (humans or judges, never pooled), bonuses
    apart: columns, side -> column -> Total. A run's total is its chosen reviewers' mean, as in `sieve results`."""
    group = group_of(db)
    per_run: dict[str, dict[str, list[tuple[float, float, bool, int]]]] = {}
    rubric_ids: list[str] = []
    for view in RunView.of_scenario(db, scenario):
        side = view.run["model"] if by == "model" else view.id
        cards = [c for reviewer, c in view.cards().items() if group(reviewer) == voters]
        if not cards:
            continue
        for i, rubric in enumerate(view.scenario.rubrics):
            rubrics = [c.rubrics[i] for c in cards]
            partial = any(not r.complete for r in rubrics)
            left = sum(len(r.left_out) for r in rubrics)
            columns = [(rubric.id, mean(r.low for r in rubrics), mean(r.high for r in rubrics))]
            if rubric.bonuses:  # 21+3: the bonus stays apart, as the seeds print it
                low, high = mean(r.bonus_low for r in rubrics), mean(r.bonus_high for r in rubrics)
                columns.append((f"{rubric.id} bonus", low, high))
            for column, low, high in columns:
                if column not in rubric_ids:
                    rubric_ids.append(column)
                per_run.setdefault(side, {}).setdefault(column, []).append((low, high, partial, left))
    totals = {
        side: {
            column: Total(
                mean(r[0] for r in runs),
                mean(r[1] for r in runs),
                len(runs),
                sum(r[2] for r in runs),
                sum(r[3] for r in runs),
            )
            for column, runs in by_column.items()
        }
        for side, by_column in per_run.items()
    }
    return rubric_ids, totals


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
    absolute = {group: absolute_scores(db, scenario, by, group) for group in groups}
    rubric_ids = list(dict.fromkeys(column for columns, _ in absolute.values() for column in columns))
    out: dict[str, Any] = {"scenario": scenario, "criterion": criterion, "by": by, "rubrics": rubric_ids, "groups": {}}
    out["controls"] = list(controls)
    out["covariates"] = style.covariate_names(controls)
    out["length_bias"] = []
    for group in groups:
        rows = ratings.table(split[group], rounds=rounds)
        totals = absolute[group][1]
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
                # The card totals of the same voters, as `sieve results` prints them; `totals` holds their numbers.
                **{column: _text(totals.get(r.side, {}).get(column)) for column in rubric_ids},
                "totals": {column: t.as_dict() for column, t in totals.get(r.side, {}).items()},
            }
            for r in rows
        ]
        if controlled is not None:
            out.setdefault("coefficients", {})[group] = {
                name: _coefficient(controlled, k, split[group]) for k, name in enumerate(out["covariates"])
            }
        if "length" in controls:
            by_voter: dict[str, list[ratings.Vote]] = {}
            for vote in split[group]:
                by_voter.setdefault(vote.voter, []).append(vote)
            at = out["covariates"].index("length")
            for voter, given in sorted(by_voter.items()):
                out["length_bias"].append({"group": group, **style_control.length_bias(voter, given, at).as_dict()})
    return out


NO_DATA = "no data: no two replies compared differ in it"


def _coefficient(found: style_control.ControlledFit, k: int, given: list[ratings.Vote]) -> dict[str, Any]:
    """A covariate's coefficient with its interval; where no vote's replies differ in it (no reply has markdown
    headers), nothing is known of it but the prior: no figure, and the reason."""
    if not any(len(v.style) > k and v.style[k] != 0 for v in given):
        return {"value": None, "low": None, "high": None, "note": NO_DATA}
    low, high = found.coefficient_interval(k)
    return {"value": round(found.coefficients[k], 3), "low": round(low, 3), "high": round(high, 3)}


def _controlled(found: style_control.ControlledFit | None, side: str) -> dict[str, Any]:
    if found is None or side not in found.strengths:
        return {}
    low, high = found.interval(side)
    return {
        "controlled": round(found.rating(side), 1),
        "controlled_low": round(low, 1),
        "controlled_high": round(high, 1),
    }


def _text(total: Total | None) -> str | None:
    return None if total is None else total.text()
