"""How a run's parts are named wherever they are shown: the transcript, the Markdown, the CLI's tables.

Words only, no escaping: the caller makes what it shows safe for where it shows it (a
terminal line, Markdown), and passes outside text in already made safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sieve.scenarios import Scenario
from sieve.store.scoring.scorecard import value_text

# Who speaks in a turn, by its role.
ROLE_TITLES = {"system": "system prompt", "user": "player", "assistant": "model"}


def played_label(turn: Mapping[str, Any]) -> str:
    """Who wrote a model-played player turn, and under which brief: `played by MODEL (brief)`."""
    try:
        brief = json.loads(turn.get("played_settings") or "{}").get("brief")
    except (ValueError, AttributeError):
        brief = None
    return f"played by {turn.get('played_by') or 'a model'}" + (f" ({brief})" if brief else "")


def turn_label(turn: Mapping[str, Any], step: str | None = None) -> str:
    """The step a player turn was sent for (`step`, else its own `step_id`), and which sending of a
    repeated step it is from the second on: `turn7`, `filler #3`."""
    repeat = turn["step_repeat"] or 1
    return (step if step is not None else turn["step_id"] or "") + (f" #{repeat}" if repeat > 1 else "")


def money(cost: float | None) -> str:
    """A cost in dollars as every view shows it, `$0.0123`; `-` where none was reported."""
    return "-" if cost is None else f"${cost:.4f}"


def annotation_label(annotation: Mapping[str, Any], scenario: Scenario | None = None) -> str:
    """An annotation in a few words, as undo and a question name it: `T3 = 2`, `L1 = annulled at m3`,
    `L3 +1`, `L5 chain 3`, `key −½`, `prose (written)`."""
    item, kind = annotation["item"], annotation["kind"]
    scale = None
    if scenario is not None:
        try:
            scale = scenario.item(item)[1].scale
        except KeyError:
            pass
    value = value_text(annotation, scale)
    if kind in ("count", "deduction"):
        return f"{item} {value}"
    if kind == "judgment":
        return f"{item} (written)"
    if kind == "note" or not value:
        return str(item)
    step = annotation.get("step_id") if kind == "verdict" else None
    return f"{item} = {value}" + (f" at {step}" if step else "")
