"""One view of a run: the one place every screen and command learns what a run holds and adds up to.

A RunView holds the run's row, its scenario as snapshotted (parsed once per
version, however many runs share it), its chosen turns, the one map from a turn
to the step it belongs to, the masker for blind mode, and each reviewer's card.
Screens, the CLI and the exports all ask it, so a live run's verdicts cannot be
counted one way on the card and another in the Markdown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import Any

from sqlite_utils import Database

from sieve.errors import NotFound
from sieve.scenarios import Scenario
from sieve.store.record import annotations as notes
from sieve.store.record import suggestions as suggested
from sieve.store.record import turns as record
from sieve.store.record.rows import Annotation, Run, Turn
from sieve.store.record.runs import NOT_ARCHIVED, read_runs, snapshot
from sieve.store.scoring import addressed as addressing
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.scorecard import Card, build_card


def step_key(turn: Mapping[str, Any]) -> str:
    """What a player turn answers to: its scripted step, or `live@IDX` for a message of its own."""
    return turn["step_id"] or f"{turn['origin']}@{turn['idx']}"


def turn_steps(turns: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Every turn id -> its step: a player turn's own, a reply the step of the prompt it answers."""
    out: dict[str, str] = {}
    step = None
    for turn in turns:
        if turn["role"] == "user":
            step = step_key(turn)
            out[turn["id"]] = step
        elif turn["role"] == "assistant" and step is not None:
            out[turn["id"]] = step
    return out


class RunView:
    """A run as every screen and command sees it. Cheap to make: turns and cards load when asked for."""

    def __init__(
        self,
        db: Database,
        run: Run,
        *,
        blind: bool = False,
        viewer: str = "",
        trial: str | None = None,
        context: str = "",
    ):
        """`viewer`: the reviewer looking (codes are theirs); `trial`: a catch trial, whose annotations are the
        ones read and written; `context`: where the run is shown (a pair queue), which changes its code too."""
        self.db = db
        self.run = run
        self.id: str = run["id"]
        self.blind = blind
        self.viewer = viewer
        self.trial = trial
        self.context = context or trial or ""

    @classmethod
    def open(
        cls,
        db: Database,
        run_id: str,
        *,
        blind: bool = False,
        viewer: str = "",
        trial: str | None = None,
        context: str = "",
    ) -> RunView:
        try:
            run = record.get_run(db, run_id)
        except KeyError:
            raise NotFound(f"no run with the id {run_id}") from None
        return cls(db, run, blind=blind, viewer=viewer, trial=trial, context=context)

    @classmethod
    def of_scenario(cls, db: Database, scenario_name: str, *, blind: bool = False, viewer: str = "") -> list[RunView]:
        """Every run of a scenario (but those archived), oldest first, from one query."""
        runs = read_runs(db, f"scenario = ? AND {NOT_ARCHIVED}", [scenario_name])
        return [cls(db, run, blind=blind, viewer=viewer) for run in runs]

    # -- what was played ---------------------------------------------------------

    @cached_property
    def scenario(self) -> Scenario:
        return snapshot(self.db, self.run["scenario_sha256"], self.run["scenario"])

    @cached_property
    def turns(self) -> list[Turn]:
        """The conversation as it stands: the chosen turn at each position."""
        return record.chosen_turns(self.db, self.id)

    @cached_property
    def steps(self) -> dict[str, str]:
        """Turn id -> step (see `turn_steps`); alternatives of a position share its step."""
        steps = turn_steps(self.turns)
        for turn in record.all_turns(self.db, self.id):
            if turn["id"] not in steps:
                chosen = next((t for t in self.turns if t["idx"] == turn["idx"]), None)
                if chosen is not None and chosen["id"] in steps:
                    steps[turn["id"]] = steps[chosen["id"]]
        return steps

    @cached_property
    def index_of(self) -> dict[str, int]:
        """Turn id -> position, for every turn of the run, alternatives included."""
        return {t["id"]: t["idx"] for t in record.all_turns(self.db, self.id)}

    def replies(self) -> list[Turn]:
        return [t for t in self.turns if t["role"] == "assistant"]

    def replies_to(self, step_id: str) -> list[Turn]:
        """The replies to every sending of a step (a filler step is sent more than once)."""
        return [t for t in self.replies() if self.steps.get(t["id"]) == step_id]

    @property
    def providers(self) -> Counter[str]:
        return Counter(t["provider"] for t in self.replies() if t["provider"])

    @property
    def provider(self) -> str | None:
        common = self.providers.most_common(1)
        return common[0][0] if common else None

    @property
    def kind(self) -> str:
        """scripted (the script alone), explored (a model played the player) or live (a person typed)."""
        origins = {t["origin"] for t in self.turns}
        if "player" in origins:
            return "explored"
        return "live" if "live" in origins else "scripted"

    def count_replies(self, status: str) -> int:
        return sum(1 for t in self.replies() if t["status"] == status)

    # -- blind -------------------------------------------------------------------

    @cached_property
    def code(self) -> str:
        """The run's neutral code, as its viewer sees it here (see blind.code)."""
        return blinding.code(self.db, self.id, self.viewer, self.context)

    @cached_property
    def mask(self) -> Callable[[str], str]:
        """Hides model and maker names in what is shown (identity when not blind)."""
        if not self.blind:
            return _same
        players = {t["played_by"] for t in self.turns if t.get("played_by")}
        return blinding.masker([self.run["model"], self.run["endpoint"], *self.providers, *players])

    @property
    def name(self) -> str:
        """How the run is called on screen: its model, or its neutral code when blind."""
        return self.code if self.blind else self.run["model"]

    def reveal(self) -> None:
        self.blind = False
        self.__dict__.pop("mask", None)

    # -- what reviewers said ---------------------------------------------------------

    def annotations(self, reviewer: str | None = None) -> list[Annotation]:
        """The annotations in force (a reviewer's, if named): the first cards', or this catch trial's."""
        return notes.active(self.db, self.id, reviewer, self.trial)

    def reviewers(self) -> list[str]:
        return sorted({a["reviewer"] for a in self.annotations()})

    def card(self, reviewer: str, given: list[Annotation] | None = None) -> Card:
        """The reviewer's score card of this run (from `given`, the reviewer's annotations, if already read)."""
        card = build_card(self.scenario, self.annotations(reviewer) if given is None else given, self.steps)
        card.warnings = self.warnings()
        return card

    def cards(self, reviewer: str | None = None) -> dict[str, Card]:
        """Each reviewer's card (only `reviewer`'s, if named), by reviewer."""
        by_reviewer: dict[str, list[Annotation]] = {}
        for a in self.annotations(reviewer):
            by_reviewer.setdefault(a["reviewer"], []).append(a)
        return {r: self.card(r, given) for r, given in sorted(by_reviewer.items())}

    @cached_property
    def addressed(self) -> list[addressing.Passage]:
        """Where the model's replies speak to whoever scores them (store.scoring.addressed)."""
        return addressing.in_replies(self.turns)

    def warnings(self) -> list[str]:
        """What every card of the run carries for a person to look at: the replies that speak to their judge."""
        return [p.warning(self.mask) for p in self.addressed]

    # -- what detectors and judges suggest (nothing of it counts until accepted) -------------

    def suggestions(self) -> list[dict[str, Any]]:
        """Every stored suggestion of the run, in transcript order."""
        return suggested.for_run(self.db, self.id)

    def pending_suggestions(self, reviewer: str) -> list[dict[str, Any]]:
        """The suggestions this reviewer has yet to accept or reject (the card's "3 suggestions pending").

        One about a reply that is no longer the chosen one (regenerated since) is left out.
        """
        chosen = {t["id"] for t in self.turns}
        return [
            s
            for s in suggested.pending(self.db, self.id, reviewer)
            if all(span["turn_id"] in chosen for span in s["spans"])
        ]

    def refresh(self) -> None:
        """Forget the turns read so far (after a reply streamed in or an alternative was chosen)."""
        for name in ("turns", "steps", "index_of", "mask", "addressed"):
            self.__dict__.pop(name, None)
        self.run = record.get_run(self.db, self.id)


def _same(text: str) -> str:
    return text
