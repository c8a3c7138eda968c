"""What a judge may be shown beside the run: other runs' verified cards (precedents), and the blind mask."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlite_utils import Database

from sieve.engine.judge.prompt import Precedent
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.store.scoring.standing import has_evidence


def precedent_cards(db: Database, view: RunView, reviewer: str, blind: bool) -> list[Precedent]:
    """Other runs of the same scenario version, each with its verified scores (the judge's own card first)."""
    out = []
    for other in RunView.of_scenario(db, view.run["scenario"]):
        if other.id == view.id or other.run["scenario_sha256"] != view.run["scenario_sha256"]:
            continue
        cards = other.cards()
        if not cards:
            continue
        owner = reviewer if reviewer in cards else max(cards, key=lambda r: _evidence_count(cards[r]))
        scores = {}
        for rubric in cards[owner].rubrics:
            for item in rubric.items + rubric.bonuses:
                if item.annotation is not None and item.annotation["quote"] and has_evidence(item.annotation):
                    scores[item.item.id] = (item.text(decimals=True), item.annotation["quote"])
        if scores:
            label = other.code if blind else f"{other.run['model']} ({other.code})"
            out.append(Precedent(other.id, label, scores))
    return out


def _evidence_count(card: Card) -> int:
    return sum(1 for r in card.rubrics for i in r.items + r.bonuses if has_evidence(i.annotation))


def masker(db: Database, view: RunView, precedents: Sequence[Precedent]) -> Callable[[str], str]:
    """The blind mask: the scored run's model, endpoint and providers, and those of every precedent run."""
    names: list[str | None] = [view.run["model"], view.run["endpoint"], *view.providers]
    for precedent in precedents:
        other = RunView.open(db, precedent.run_id)
        names += [other.run["model"], other.run["endpoint"], *other.providers]
    return blinding.masker(names)
