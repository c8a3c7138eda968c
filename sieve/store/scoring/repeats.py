"""Repeats that are not independent: runs of one configuration whose replies are the same, word for word.

A model's figure over its runs is only a distribution if the runs are separate draws.
Four runs of the embedded model at temperature 1.0 once opened with the same reply
(its server started each from the same state); such runs are flagged, not averaged
as if they were evidence of a small spread.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sieve.store.scoring.runview import RunView

# What may differ between repeats of one configuration: the repeat's own seed and its bookkeeping.
NOT_CONFIGURATION = ("seed", "repeat")


def configuration(view: RunView) -> str:
    settings = {k: v for k, v in (view.run["settings"] or {}).items() if k not in NOT_CONFIGURATION}
    return json.dumps([view.run["model"], view.run["endpoint"], settings], sort_keys=True, default=str)


def identical_groups(views: list[RunView]) -> list[list[str]]:
    """Groups of two or more runs of one configuration whose replies are identical, each group oldest first."""
    groups: dict[tuple[str, str], list[str]] = {}
    for view in views:
        replies = [t["text"] for t in view.replies() if t["status"] in ("complete", "length")]
        if not replies:
            continue
        digest = hashlib.sha256("\x00".join(replies).encode("utf-8")).hexdigest()
        groups.setdefault((configuration(view), digest), []).append(view.id)
    return [sorted(ids) for ids in groups.values() if len(ids) > 1]


def not_independent(views: list[RunView]) -> dict[str, list[str]]:
    """run -> the other runs of its configuration with the same replies (only runs that have such twins)."""
    out: dict[str, list[str]] = {}
    for group in identical_groups(views):
        for run_id in group:
            out[run_id] = [other for other in group if other != run_id]
    return out


def note(twins: dict[str, list[str]], run_ids: list[str]) -> str:
    """What a model's row says when some of its runs are copies of each other."""
    copies = [r for r in run_ids if r in twins]
    if not copies:
        return ""
    draws = len({frozenset([r, *twins[r]]) for r in copies})
    return f"{len(copies)} runs with identical replies: not independent repeats, counted as {draws}"


def summary(views: list[RunView]) -> list[dict[str, Any]]:
    return [{"runs": group, "what": "identical replies: not independent repeats"} for group in identical_groups(views)]
