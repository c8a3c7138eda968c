"""A run with extreme behaviour: the keykeeper seed's sign that one run is not enough.

"With a model that shows extreme behavior in a single run, that is, a refusal, an
empty reply or an ended scene, one run is not enough." Each flag says what happened
and at which step, as far as the detectors can tell: a refusal, a filtered or empty
reply, a switch of language, a reply cut at the output ceiling, and a scene the
model left (its last reply steps out of the fiction). A flag is a reason to play
the model again (`sieve run --again-extreme`), not a score.
"""

from __future__ import annotations

from typing import Any

from sieve.store.scoring.detectors import form, out_of_game, run_text
from sieve.store.scoring.runview import RunView

REFUSAL, FILTERED, EMPTY = "a refusal", "a filtered reply", "an empty reply"
LANGUAGE, CEILING, LEFT = "a switch of language", "a reply cut at the output ceiling", "the scene left"


_SEEN: dict[tuple[str, tuple[tuple[str, str], ...]], list[dict[str, Any]]] = {}
_SEEN_LIMIT = 4096


def flags(view: RunView) -> list[dict[str, Any]]:
    """What was extreme in the run, in transcript order: [{what, step}], one per kind and step.

    Home asks for every run at each visit and the detectors read every reply, so the flags of a
    transcript are worked out once per process: a finished turn's text never changes, and another
    reply chosen, or a turn more, is another transcript."""
    if view.run["status"] == "running":
        return _flags(view)
    key = (view.id, tuple((t["id"], t["status"]) for t in view.turns))
    found = _SEEN.get(key)
    if found is None:
        if len(_SEEN) >= _SEEN_LIMIT:
            _SEEN.clear()
        found = _SEEN[key] = _flags(view)
    return [dict(f) for f in found]


def _flags(view: RunView) -> list[dict[str, Any]]:
    text = run_text(view.turns, view.scenario)
    replies = text.replies
    if not replies:
        return []
    step_of = view.steps
    order = {t["id"]: n for n, t in enumerate(text.turns)}
    found: list[tuple[int, str, str | None]] = []
    by_id = {t["id"]: t for t in replies}
    for finding in form.detect(text, {"checks": ["empty", "language", "length"]}):
        for turn_id in finding.turn_ids:
            turn = by_id.get(turn_id)
            if turn is None:
                continue
            if finding.category == "empty":
                what = FILTERED if turn.get("status") == "filtered" else EMPTY
            elif finding.category == "length":
                what = CEILING
            elif finding.category == "language":
                what = LANGUAGE
            else:
                continue
            found.append((order[turn_id], what, step_of.get(turn_id)))
    last = replies[-1]["id"]
    for finding in out_of_game.detect(text, {"refusals": True, "threshold": 1.0}):
        for turn_id in finding.turn_ids:
            if "a refusal" in finding.reason:
                found.append((order[turn_id], REFUSAL, step_of.get(turn_id)))
            elif turn_id == last:
                found.append((order[turn_id], LEFT, step_of.get(turn_id)))
    seen, out = set(), []
    for _, what, step in sorted(found, key=lambda f: f[0]):
        if (what, step) not in seen:
            seen.add((what, step))
            out.append({"what": what, "step": step})
    return out


def flag_text(found: list[dict[str, Any]], limit: int = 3) -> str:
    """'a refusal at m4, an empty reply at m7': what a table cell shows (the rest counted)."""
    parts = [f["what"] + (f" at {f['step']}" if f["step"] else "") for f in found]
    shown = ", ".join(parts[:limit])
    return shown + (f" (+{len(parts) - limit} more)" if len(parts) > limit else "")
