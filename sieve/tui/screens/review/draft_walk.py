"""A judge's draft of the card in Review (issue 16): adopting the judge's score for an item, and walking the draft.

`a` adopts the judge's score and quote for an item (the card's highlighted row, else the one item
the step being read scores); `A` walks the draft in the order of the script: `y` adopts, a digit
adopts another value (`h` ½; for a verdict, the n-th of its values), a span selected then `enter`
adopts with that quote, `n` skips, `e` adopts and edits, `escape` ends. The walk ends on the first
thing the judge left unscored. Nothing the judge gave counts until a person adopts it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from rich.text import Text
from sqlite_utils import Database
from textual import events

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.store.record.annotations import Quote
from sieve.store.record.rows import Turn
from sieve.store.scoring import draft, evidence, navigation
from sieve.store.scoring.draft import Proposal
from sieve.store.scoring.labels import annotation_label
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, value_text
from sieve.store.scoring.standing import has_evidence
from sieve.tui.screens.dialogs import Confirm
from sieve.tui.screens.review.host import Notifies
from sieve.tui.widgets.overlay import Overlay, overlay_open
from sieve.tui.widgets.scorecard import ScoreCardView, short, styles_of, verification_mark
from sieve.tui.widgets.transcript import TranscriptView


class DraftHost(Notifies, Protocol):
    """What the judge's draft needs of its screen."""

    view: RunView
    db: Database
    scenario: Scenario
    card: Card | None
    offered: Task | None

    @property
    def reviewer(self) -> str: ...
    @property
    def blind_now(self) -> bool: ...
    @property
    def turns(self) -> list[Turn]: ...
    @property
    def position(self) -> int: ...
    @property
    def whole(self) -> bool: ...
    @property
    def transcript(self) -> TranscriptView: ...
    @property
    def card_view(self) -> ScoreCardView: ...
    def mask(self, text: str) -> str: ...
    def current_step(self) -> str | None: ...
    def show_turn(self, position: int) -> None: ...
    def show_header(self) -> None: ...
    def selected_quote(self) -> Quote | None: ...
    def edit_by_id(self, annotation_id: str) -> None: ...
    def refresh_card(self) -> None: ...
    def refresh_bindings(self) -> None: ...
    def ask(self, overlay: Overlay, on_done: Callable[[Any], None]) -> None: ...


class DraftWalk:
    """The judge whose draft is shown, and the walk through it (`show_line` draws the line over the transcript)."""

    def __init__(self, host: DraftHost, show_line: Callable[[], None]) -> None:
        self.host = host
        self._show_line = show_line
        self.judge: str | None = None  # whose draft is shown
        self.judge_card: Card | None = None
        self.walking = False
        self.skipped: frozenset[Task] = frozenset()
        self.proposal: Proposal | None = None  # the item being walked
        self.value: dict[str, Any] | None = None  # a value typed for an item whose quote must be chosen first

    def read(self) -> None:
        """The judge of this run for this reviewer (the latest to score it), and the judge's card."""
        host = self.host
        self.judge = draft.judge_of(host.view, host.reviewer)
        self.judge_card = host.view.card(self.judge) if self.judge else None

    def line(self) -> Text | None:
        """What the line over the transcript says while walking: the judge's value, mark and quote, and the keys."""
        proposal = self.proposal
        if not self.walking or proposal is None:
            return None
        host = self.host
        a: Mapping[str, Any] = proposal.annotation or {}
        text = Text()
        text.append(visible(f"draft of {proposal.judge}: {proposal.task.label} "), style="bold")
        scale = None
        try:
            scale = host.scenario.item(proposal.task.id)[1].scale
        except KeyError:
            pass
        text.append(visible(value_text(a, scale)) + " ", style="bold")
        mark, style = verification_mark(a)
        # Each gap ends a piece rather than begins one: a picture of the screen keeps it (scorecard.put).
        text.append(mark + " ", style=styles_of(host.card_view)(style))
        text.append(visible(short(host.mask(a.get("quote") or ""))) + "   ", style="italic")
        if self.value:
            yours = {**a, "score_high": None, **self.value}  # a value typed is one value, never a range
            text.append(visible(f"your value: {value_text(yours, scale)}"), style="bold")
        keys = draft.value_keys(host.view, proposal.task)
        text.append(
            visible(f"\ny adopt   {keys}: another value   select a quote, enter   n skip   e edit   escape ends"),
            style="dim",
        )
        return text

    # -- adopting ---------------------------------------------------------------------

    def card_proposal(self, key: str | None) -> Proposal | None:
        """What the judge gave for the card's row `key`, as a proposal (None: no judge, or not an item's row)."""
        if key is None or self.judge is None or self.judge_card is None:
            return None
        try:
            task = draft.task_for(self.host.view, key, self.host.current_step())
        except KeyError:
            return None
        return Proposal(task, self.judge, draft.given(self.judge_card, self.host.scenario, task))

    def _adopt_target(self) -> Proposal | None:
        """What `a` adopts: the card's highlighted item when the card has the keys; from the transcript, the one
        item the step being read scores (what the judge scored of it), else the card's highlighted item."""
        host = self.host
        card_view = host.card_view
        highlighted = self.card_proposal(card_view.highlighted_key)
        if card_view.has_focus or self.judge is None:
            return highlighted
        step = host.current_step()
        here = [
            p
            for p in draft.proposals(host.view, host.reviewer, self.judge, host.card)
            if p.task.step == step and p.annotation is not None
        ]
        items = [p for p in here if p.task.picker == "score"] or here
        if len(items) == 1:
            return items[0]
        return highlighted if highlighted is not None and highlighted.annotation is not None else None

    def adopt(self) -> None:
        """`a`: the judge's score with the judge's quote; where that quote is no evidence, with the span selected."""
        proposal = self._adopt_target()
        if proposal is None:
            self.host.notify("Which item? Highlight it on the card (tab to it), then a.", severity="warning")
            return
        judged: Mapping[str, Any] = proposal.annotation or {}
        quote = None if has_evidence(judged) else self.host.selected_quote()

        def then(_: str) -> None:
            if quote is not None:  # the span selected is spent, as after a save from a picker
                self.host.transcript.clear_selection()

        self._adopt(proposal, then, "a", quote=quote)

    def _adopt(
        self, proposal: Proposal, after: Callable[[str], Any] = lambda _: None, then: str = "enter", **how: Any
    ) -> None:
        """Adopt, then `after(the annotation's id)`; what would disqualify the run is asked about first, as in
        the picker (one key never disqualifies a run unasked)."""
        danger = self._disqualifying(proposal, how.get("changed"))

        def go(yes: bool = True) -> None:
            annotation_id = self._store(proposal, then, **how) if yes else None
            if annotation_id:
                after(annotation_id)

        if danger:
            self.host.ask(Confirm(f"{danger} disqualifies the run.\nAdopt it anyway?"), go)
        else:
            go()

    def _disqualifying(self, proposal: Proposal, changed: dict[str, Any] | None) -> str | None:
        """What adopting the proposal (with `changed`) would give, when that disqualifies the run; else None."""
        scenario = self.host.scenario
        given: dict[str, Any] = {**(proposal.annotation or {}), **(changed or {})}
        if changed and "score" in changed:
            given["score_high"] = None
        counter = next((c for c in scenario.counters if c.id == proposal.task.id), None)
        if counter is not None:
            out = (
                counter.disqualifying
                and counter.disqualify_on is not None
                and given.get("value") == counter.disqualify_on
            )
        else:
            try:
                item = scenario.item(proposal.task.id)[1]
            except KeyError:
                return None
            out = item.disqualifying and given.get("score") == item.scale.minimum
        return annotation_label(given, scenario) if out else None

    def _store(self, proposal: Proposal, then: str = "enter", **how: Any) -> str | None:
        """Adopt, saying why not when refused (and `then`, the key that adopts with a span selected); the
        annotation's id, or None."""
        host = self.host
        started = time.monotonic()
        try:
            annotation_id = draft.adopt(
                host.db,
                host.view,
                host.reviewer,
                proposal,
                blind=host.blind_now,
                seconds=round(time.monotonic() - started, 3),
                **how,
            )
        except draft.AdoptRefused as exc:
            message = f"{exc}: {then} adopts it with the span selected"
            host.notify(visible(message), severity="warning", timeout=8, markup=False)
            return None
        except evidence.EvidenceRefused as exc:
            host.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return None
        host.refresh_card()
        return annotation_id

    def edit_walked(self) -> bool:
        """`e` while walking: adopt the item walked, the picker on it, and the walk goes on. False: not walking."""
        if not self.walking or self.proposal is None:
            return False

        def then(annotation_id: str) -> None:
            self.host.edit_by_id(annotation_id)
            self._next()

        self._adopt(self.proposal, then)
        return True

    def edit_card_row(self) -> bool:
        """`e` on a card item the judge scored and the reviewer has not: adopt, then edit. False: not such a row."""
        card_view, card = self.host.card_view, self.host.card
        if not (card_view.has_focus and self.judge is not None) or card is None:
            return False
        proposal = self.card_proposal(card_view.highlighted_key)
        if proposal is None or proposal.task not in navigation.tasks(self.host.scenario, card):
            return False
        self._adopt(proposal, self.host.edit_by_id)
        return True

    # -- walking ----------------------------------------------------------------------

    def start(self) -> None:
        """Walk the judge's draft from the first thing left to score."""
        self.walking = True
        self.skipped = frozenset()
        self._next()

    def _next(self) -> None:
        """The next thing of the draft left to score (skipped ones aside); the walk ends on one the judge left."""
        host = self.host
        self.value = None
        judge = self.judge
        proposals = draft.proposals(host.view, host.reviewer, judge, host.card) if judge is not None else []
        left = [p for p in proposals if p.task not in self.skipped]
        if not left:
            self.end("The draft is walked: nothing of it is left to score.")
            return
        proposal = left[0]
        self._show_task(proposal)
        if proposal.annotation is None:
            host.offered = proposal.task
            self.end(f"{proposal.judge} left {proposal.task.label} unscored: the walk ends here (s or l scores it).")
            return
        self.proposal = proposal
        self._show_line()
        host.refresh_bindings()

    def _show_task(self, proposal: Proposal) -> None:
        """The judge's quote selected in its turn; else the reply to the task's step."""
        host = self.host
        a = proposal.annotation
        turn_id = a.get("quote_turn_id") if a else None
        if a and turn_id and has_evidence(a):
            start, end = a.get("quote_start"), a.get("quote_end")
            position = next((i for i, t in enumerate(host.turns) if t["id"] == turn_id), None)
            if position is not None and start is not None and end is not None:
                if position != host.position or not host.whole:
                    host.show_turn(position)
                host.transcript.select_span(turn_id, start, end)
                return
        if proposal.task.step is not None:
            replies = host.view.replies_to(proposal.task.step)
            position = next((i for i, t in enumerate(host.turns) if replies and t["id"] == replies[0]["id"]), None)
            if position is not None and position != host.position:
                host.show_turn(position)

    def end(self, message: str | None = None) -> None:
        self.walking = False
        self.proposal = None
        self.value = None
        self._show_line()
        self.host.show_header()
        self.host.refresh_bindings()
        if message:
            self.host.notify(visible(message), timeout=8, markup=False)

    def accept(self) -> None:
        if self.proposal is not None:
            self._adopt(self.proposal, lambda _: self._next(), changed=self.value)

    def skip(self) -> None:
        if self.proposal is not None:
            self.skipped = self.skipped | {self.proposal.task}
            self._next()

    def adopt_with_quote(self) -> None:
        """Adopt with the span selected as the quote (verified like any other)."""
        quote = self.host.selected_quote()
        if self.proposal is None:
            return
        if quote is None:
            self.host.notify("Select the quote first (shift+arrows or the mouse), then enter.", severity="warning")
            return
        self._adopt(self.proposal, lambda _: self._next(), quote=quote, changed=self.value)

    def key(self, event: events.Key) -> bool:
        """A digit (or h) while walking: adopt that value with the judge's quote, or keep it until a quote is
        chosen when the judge's is no evidence. True when the key was the walk's."""
        char = event.character
        if not self.walking or self.proposal is None or not char or overlay_open(self.host):
            return False
        if not (char.isdigit() or char == draft.HALF):
            return False
        event.stop()
        event.prevent_default()
        proposal = self.proposal
        value = draft.value_for_key(self.host.view, proposal.task, char)
        if value is None:
            keys = draft.value_keys(self.host.view, proposal.task)
            self.host.notify(f"{char} is not a value of {proposal.task.id} ({keys}).", severity="warning")
            return True
        a: Mapping[str, Any] = proposal.annotation or {}
        if not has_evidence(a):  # not found, or off its step: the person selects one
            self.value = value
            self._show_line()
            self.host.notify("The judge's quote is no evidence: select one, then enter.", severity="warning")
            return True
        self._adopt(proposal, lambda _: self._next(), changed=value)
        return True
