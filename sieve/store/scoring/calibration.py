"""Calibration: the items where a model judge and a person scored the same run furthest apart.

Each row holds both scores and both quotes, so a person can read the two side
by side and settle the item in Review.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record import judgings
from sieve.store.scoring.runview import RunView


def differences(db: Database, scenario: str | None = None, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """Every (run, item, judge, person) where both scored the item, largest difference (on the item's scale) first."""
    views = [RunView.open(db, r) for r in run_ids] if run_ids else RunView.of_scenario(db, scenario or "")
    judges = judgings.judges(db)
    out: list[dict[str, Any]] = []
    for view in views:
        cards = view.cards()
        for judge in (r for r in cards if r in judges):
            for person in (r for r in cards if r not in judges):
                for rubric in cards[judge].rubrics:
                    for mine in rubric.items + rubric.bonuses:
                        theirs = cards[person].item(mine.item.id)
                        judged, given = mine.annotation, theirs.annotation
                        if judged is None or given is None:  # only an item both scored is compared
                            continue
                        span = (mine.item.scale.maximum - mine.item.scale.minimum) or 1.0
                        out.append(
                            {
                                "run": view.id,
                                "item": mine.item.id,
                                # As given: a judge's unsupported score is shown here, if not counted.
                                "difference": round(abs((judged["score"] or 0) - (given["score"] or 0)) / span, 3),
                                "judge": judge,
                                "judge_score": mine.text(decimals=True),
                                "judge_quote": judged["quote"],
                                "judge_verdict": judged["verification"],
                                "person": person,
                                "person_score": theirs.text(decimals=True),
                                "person_quote": given["quote"],
                                "person_verdict": given["verification"],
                            }
                        )
    out = [r for r in out if r["difference"] > 0]
    out.sort(key=lambda r: (-r["difference"], r["run"], r["item"]))
    return out
