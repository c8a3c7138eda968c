"""Detectors: plain functions over a run's turns that suggest events for a person to confirm.

Each module holds one detector: NAME, VERSION and `detect(run: RunText, params) ->
list[Finding]`. Their names and parameters are defined once, in
sieve.scenarios.detectors, which the scenario loader checks against.

`suggest` runs them the way a scenario says: a detector named on a counter suggests
that counter's events (a chain counter gets the chain's length as the score: the
replies in a row it runs across; a reply looping inside itself is no chain across
replies, and is a note on the counter); on a rubric item, notes on that item; a detector the scenario does not name still runs,
and its findings are notes of their own (item = the detector's name). The
plays-player detector needs someone to look for: it runs only where the scenario
names the player's character or uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

from sieve.scenarios import Scenario
from sieve.scenarios.detectors import BY_NAME as SPECS
from sieve.scenarios.model import DetectorUse
from sieve.store.record.rows import Turn
from sieve.store.scoring.detectors import form, out_of_game, plays_player, repetition
from sieve.store.scoring.detectors.base import Finding, RunText, Span

__all__ = ["REGISTRY", "Finding", "RunText", "Span", "Suggestion", "partly_read", "run_text", "suggest", "uses"]

REGISTRY: dict[str, ModuleType] = {m.NAME: m for m in (repetition, out_of_game, plays_player, form)}


@dataclass(frozen=True)
class Suggestion:
    """A finding routed by the scenario: the annotation it would become (item, kind, score) and its evidence."""

    item: str
    kind: str  # count, note or flag: the annotation kind an acceptance stores
    score: float | None
    finding: Finding

    @property
    def detector(self) -> str:
        return self.finding.detector

    @property
    def version(self) -> int:
        return self.finding.version

    @property
    def spans(self) -> tuple[Span, ...]:
        return self.finding.spans

    def record(self) -> dict[str, Any]:
        """As sieve.store.record.suggestions stores it."""
        f = self.finding
        return {
            "item": self.item,
            "kind": self.kind,
            "score": self.score,
            "value": None,
            "step_id": None,
            "spans": [s.as_dict() for s in f.spans],
            "reason": f.reason,
            "confidence": f.confidence,
            "category": f.category,
            "source": "detector",
            "source_name": f.detector,
            "source_version": str(f.version),
        }


# Characters of a run the detectors read, shared among its turns: enough for any run as played (a long story
# is a few hundred thousand), and a bound on time and memory for a run of megabytes (a model stuck in a loop).
READ_BUDGET = 1_000_000


def shares(sizes: list[int], budget: int | None = None) -> list[int]:
    """How much of each text is read: all of it where the run fits the budget (READ_BUDGET unless given); else
    the short ones whole and the long ones an equal share of the rest (water-filling)."""
    budget = READ_BUDGET if budget is None else budget
    out = list(sizes)
    if sum(sizes) <= budget:
        return out
    left = budget
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for n, i in enumerate(order):
        out[i] = min(sizes[i], left // (len(order) - n))
        left -= out[i]
    return out


def _settled(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.get("status") != "streaming"]


def run_text(turns: list[Turn], scenario: Scenario) -> RunText:
    """What the detectors read of a run: its turns as they stand (not a reply still streaming: its text
    is not final), who the player is, the language. A run larger than READ_BUDGET is read in part: each long
    turn's text from its start (offsets stay those of the whole text), cut at a space."""
    settled = _settled(turns)
    read = []
    for turn, share in zip(settled, shares([len(t["text"] or "") for t in settled])):
        text = turn["text"] or ""
        if share < len(text):
            cut = text.rfind(" ", 0, share + 1)
            turn = {**turn, "text": text[: cut if cut > share // 2 else share]}
        read.append(turn)
    return RunText(read, scenario.player_names, scenario.language)


def partly_read(turns: list[Turn]) -> list[tuple[int, int, int]]:
    """(turn number, characters read, characters in all) of each turn the detectors read only in part."""
    settled = _settled(turns)
    sizes = [len(t["text"] or "") for t in settled]
    return [(t["idx"], share, size) for t, share, size in zip(settled, shares(sizes), sizes) if share < size]


def uses(scenario: Scenario) -> list[DetectorUse]:
    """Which detectors run on this scenario's runs, and where their findings go."""
    declared = scenario.detector_uses()
    named = {u.detector for u in declared}
    out = list(declared)
    for name in REGISTRY:
        if name in named:
            continue
        if name == plays_player.NAME and not scenario.player_names:
            continue
        out.append(DetectorUse(name, None, None, {}))
    return out


def suggest(run: RunText, scenario: Scenario, only: set[str] | None = None) -> list[Suggestion]:
    """Every suggestion for a run, in transcript order; `only` limits which detectors run."""
    out = []
    for use in uses(scenario):
        if only is not None and use.detector not in only:
            continue
        spec = SPECS[use.detector]
        findings = REGISTRY[use.detector].detect(run, spec.resolve(use.params))
        for finding in findings:
            if use.counter_kind is None or use.item is None:  # a counter kind comes with its counter
                out.append(Suggestion(use.item or use.detector, spec.note_kind, None, finding))
            elif use.counter_kind == "chain" and finding.category == "loop":
                out.append(Suggestion(use.item, "note", None, finding))
            elif use.counter_kind == "chain":
                out.append(Suggestion(use.item, "count", float(finding.length or 1), finding))
            else:
                out.append(Suggestion(use.item, "count", None, finding))
    return sorted(out, key=_order)


def _order(s: Suggestion) -> tuple[int, int, str, str]:
    first = s.spans[0] if s.spans else None
    return (first.turn_idx if first else -1, first.start if first else 0, s.detector, s.item)
