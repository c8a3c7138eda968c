"""Review's keys for what machines propose: detectors' and judges' suggestions, and a judge's draft of the card.

A person confirms what a machine proposed, one key at a time, and nothing counts until then.

Suggestions (issue 13) are marked on the transcript (the highlight `suggestion`) and counted on
the card. `]` / `[` go to the next / previous pending one: its turn shown, its span selected, its
detector, reason and confidence on the line over the transcript. On a current suggestion `y`
accepts it (the span becomes the reviewer's quote, verified), `x` rejects it (recorded too), `e`
accepts it and opens the picker on the new annotation; `y` and `x` then go on to the next.

A judge's draft (issue 16) is drawn under each item of the card. `a` adopts the judge's score and
quote for an item (the card's highlighted row, else the one item the step being read scores);
`A` walks the draft in the order of the script: `y` adopts, a digit adopts another value (`h` ½;
for a verdict, the n-th of its values), a span selected then `enter` adopts with that quote, `n`
skips, `e` adopts and edits, `escape` ends. The walk ends on the first thing the judge left unscored.

ReviewScreen mixes this in; its check_action asks `proposal_check` first.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.store.scoring import draft, evidence, navigation, suggestions
from sieve.store.scoring.draft import Proposal
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.scorecard import Card, value_text
from sieve.tui.widgets.overlay import overlay_open
from sieve.tui.widgets.proposal_rows import with_proposals
from sieve.tui.widgets.rows import Row, RowsView
from sieve.tui.widgets.scorecard import ScoreCardView, short, styles_of, verification_mark
from sieve.tui.widgets.transcript import Highlight

# Keys whose place in ReviewScreen.BINDINGS matters: each goes just before the key it shares,
# so that it wins while it applies (x rejects on a current suggestion, else deletes).
REJECT = Binding(
    "x", "reject_suggestion", "Reject", id="review.reject_suggestion", tooltip="Reject the current suggestion"
)
SKIP = Binding("n", "draft_skip", "Skip", id="review.draft_skip", tooltip="Walking the draft: skip this item")
END_WALK = Binding("escape", "end_walk", "End walk", id="review.end_walk", tooltip="Stop walking the judge's draft")
PROPOSAL_BINDINGS = [
    Binding(
        "right_square_bracket",
        "suggestion(1)",
        "Next suggestion",
        id="review.next_suggestion",
        tooltip="The next suggestion pending: its span selected, y accepts, x rejects, e accepts and edits",
    ),
    Binding(
        "left_square_bracket",
        "suggestion(-1)",
        "Prev suggestion",
        id="review.prev_suggestion",
        tooltip="The previous suggestion pending",
    ),
    Binding(
        "y",
        "accept_suggestion",
        "Accept",
        id="review.accept_suggestion",
        tooltip="Accept the current suggestion: its span becomes your quote, verified",
    ),
    Binding("y", "draft_accept", "Adopt", id="review.draft_accept", tooltip="Walking the draft: adopt the judge's"),
    Binding(
        "enter",
        "draft_quote",
        "Adopt with quote",
        id="review.draft_quote",
        tooltip="Walking the draft: adopt with the span selected as the quote",
    ),
    Binding(
        "a",
        "adopt",
        "Adopt",
        id="review.adopt",
        tooltip="Adopt the judge's score and quote for the item highlighted on the card (or the step's one item)",
    ),
    Binding(
        "A",
        "walk_draft",
        "Walk draft",
        id="review.walk_draft",
        tooltip="Go through the judge's draft: y adopt, a digit another value, enter the selected quote, n skip",
    ),
]
WALK_ACTIONS = ("draft_accept", "draft_skip", "draft_quote", "end_walk")
WRITING = ("accept_suggestion", "reject_suggestion", "adopt", "walk_draft", *WALK_ACTIONS)


class ReviewProposals:
    """Suggestions and a judge's draft in Review (mixed into ReviewScreen, which provides the rest)."""

    suggestion: dict[str, Any] | None = None  # the current suggestion: where ] or [ went
    pending: list[dict[str, Any]] = []
    judge: str | None = None  # whose draft is shown
    judge_card: Card | None = None
    walking: bool = False
    walk_skipped: frozenset[Task] = frozenset()
    walk_proposal: Proposal | None = None
    walk_value: dict[str, Any] | None = None  # a value typed for an item whose quote must be chosen first

    # -- what the keys may do --------------------------------------------------------

    def proposal_check(self, action: str, parameters: tuple) -> bool | None:
        """check_action for these keys (None: not one of them). Hidden when there is nothing to act on."""
        if action in WRITING and self.read_only:
            return False
        if action == "suggestion":
            return bool(self.pending)
        if action == "accept_suggestion":
            return self.suggestion is not None and not self.walking
        if action == "reject_suggestion":
            return self.suggestion is not None and not self.walking and not self._list_focused()
        if action in ("adopt", "walk_draft"):
            return self.judge is not None and not self.walking
        if action in WALK_ACTIONS:
            return self.walking
        if action == "turn" and parameters == (1,) and self.walking:
            return False  # n skips while walking
        return None

    def _list_focused(self) -> bool:
        return self.query_one("#annotations", RowsView).has_focus

    # -- reading what is proposed -------------------------------------------------------

    def read_proposals(self) -> None:
        """Read the pending suggestions and the judge's draft (after every change to the card); mark the spans."""
        view = self.view
        self.pending = view.pending_suggestions(self.reviewer)
        if self.suggestion is not None and self.suggestion["id"] not in {s["id"] for s in self.pending}:
            self.suggestion = None
        self.judge = draft.judge_of(view, self.reviewer)
        self.judge_card = view.card(self.judge) if self.judge else None
        self.transcript.set_highlights(self._highlights())

    def with_proposals(self, rows: list[Row]) -> list[Row]:
        """The card's rows with the pending suggestions and the judge's draft (ScoreCardView.decorate)."""
        if self.card is None or not (self.pending or self.judge):
            return rows
        card_view = self.query_one(ScoreCardView)
        return with_proposals(
            rows,
            styles_of(card_view),
            pending=self.pending,
            mine=self.card,
            judge=self.judge,
            judge_card=self.judge_card,
            mask=self.mask,
        )

    def show_proposals(self) -> None:
        """The line over the transcript (the current suggestion or draft item) and the keys that act on it."""
        self.show_proposal_line()
        self.refresh_bindings()

    def suggestion_highlights(self) -> dict[str, list[Highlight]]:
        """The pending suggestions' spans, as marks on the transcript."""
        out: dict[str, list[Highlight]] = {}
        for s in self.pending:
            for span in s["spans"]:
                out.setdefault(span["turn_id"], []).append(Highlight(span["start"], span["end"], "suggestion"))
        return out

    def show_proposal_line(self) -> None:
        """The line over the transcript: the current suggestion, or the draft's item being walked."""
        line = self.query_one("#proposal", Static)
        text = None
        if self.walking and self.walk_proposal is not None:
            text = self._walk_text(self.walk_proposal)
        elif self.suggestion is not None:
            text = self._suggestion_text(self.suggestion)
        line.set_class(text is not None, "-shown")
        line.update(text or "")

    def _suggestion_text(self, s: dict[str, Any]) -> Text:
        where = next((i for i, p in enumerate(self.pending) if p["id"] == s["id"]), 0)
        text = Text()
        text.append(f"suggestion {where + 1} of {len(self.pending)}: ", style="bold")
        what = value_text(s) if s["score"] is not None or s["value"] else ""
        text.append(visible(f"{s['item']} {what} "), style="bold")
        text.append(visible(f"· {s['source_name']} v{s['source_version']} "))
        if s["confidence"] is not None:
            text.append(f"· confidence {s['confidence']:.2f} ")
        text.append("· " + visible(" ".join(self.mask(s["reason"]).split())), style="italic")
        text.append("\ny accept   x reject   e accept and edit   ] [ next / previous", style="dim")
        return text

    def _walk_text(self, proposal: Proposal) -> Text:
        a = proposal.annotation or {}
        text = Text()
        text.append(visible(f"draft of {proposal.judge}: {proposal.task.label} "), style="bold")
        scale = None
        try:
            scale = self.scenario.item(proposal.task.id)[1].scale
        except KeyError:
            pass
        text.append(visible(value_text(a, scale)) + " ", style="bold")
        mark, style = verification_mark(a)
        # Each gap ends a piece rather than begins one: a picture of the screen keeps it (scorecard.put).
        text.append(mark + " ", style=styles_of(self.query_one(ScoreCardView))(style))
        text.append(visible(short(self.mask(a.get("quote") or ""))) + "   ", style="italic")
        if self.walk_value:
            text.append(visible(f"your value: {next(iter(self.walk_value.values()))}"), style="bold")
        keys = draft.value_keys(self.view, proposal.task)
        text.append(
            visible(f"\ny adopt   {keys}: another value   select a quote, enter   n skip   e edit   escape ends"),
            style="dim",
        )
        return text

    # -- suggestions -------------------------------------------------------------------

    def _suggestion_place(self, s: dict[str, Any]) -> tuple[int, int, str]:
        span = s["spans"][0] if s["spans"] else {"turn": -1, "start": 0}
        return (span["turn"], span["start"], s["id"])

    def action_suggestion(self, delta: int) -> None:
        """The next (or previous) pending suggestion from here: its turn, its span selected."""
        if not self.pending:
            self.notify("No suggestion is pending.")
            return
        if self.walking:
            self._end_walk()
        if self.suggestion is not None:
            here = self._suggestion_place(self.suggestion)
        else:
            cursor = self.transcript.cursor
            offset = cursor[1] if cursor else 0
            here = (self.turns[self.position]["idx"], offset - (1 if delta > 0 else 0), "")
        places = sorted(self.pending, key=self._suggestion_place)
        if delta > 0:
            found = next((s for s in places if self._suggestion_place(s) > here), places[0])
        else:
            found = next((s for s in reversed(places) if self._suggestion_place(s) < here), places[-1])
        self.go_to_suggestion(found)

    def go_to_suggestion(self, s: dict[str, Any]) -> None:
        self.suggestion = s
        if s["spans"]:
            span = s["spans"][0]
            position = next((i for i, t in enumerate(self.turns) if t["id"] == span["turn_id"]), None)
            if position is not None:
                if position != self.position or not self.whole:
                    self.show_turn(position)
                self.transcript.select_span(span["turn_id"], span["start"], span["end"])
        self.show_proposal_line()
        self.refresh_bindings()

    def _decide(self, accept: bool, advance: bool = True) -> str | None:
        """Accept or reject the current suggestion, then (`advance`) go to the next one pending.

        Returns the annotation's id when accepted, "" when rejected, None when refused."""
        s = self.suggestion
        if s is None:
            return None
        place = self._suggestion_place(s)
        annotation_id = None
        try:
            if accept:
                blind = self.blind and not self.revealed
                annotation_id = suggestions.accept(self.db, s["id"], self.reviewer, view=self.view, blind=blind)
            else:
                suggestions.reject(self.db, s["id"], self.reviewer)
        except evidence.EvidenceRefused as exc:
            self.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return None
        self.suggestion = None
        self.refresh_card()
        if not advance:
            self.show_proposal_line()
            return annotation_id or ""
        following = [p for p in sorted(self.pending, key=self._suggestion_place) if self._suggestion_place(p) > place]
        if following or self.pending:
            self.go_to_suggestion((following or sorted(self.pending, key=self._suggestion_place))[0])
        else:
            self.show_proposal_line()
            self.notify("Every suggestion is decided.")
        return annotation_id or ""

    def action_accept_suggestion(self) -> None:
        self._decide(accept=True)

    def action_reject_suggestion(self) -> None:
        self._decide(accept=False)

    def _accept_and_edit(self) -> None:
        """Accept, then the picker on the new annotation (] goes on to the next suggestion after)."""
        annotation_id = self._decide(accept=True, advance=False)
        if annotation_id:
            self._edit_by_id(annotation_id)

    def _edit_by_id(self, annotation_id: str) -> None:
        """The edit picker on one of the reviewer's annotations (its quote stands in the turn shown)."""
        annotation = next((a for a in self.view.annotations(self.reviewer) if a["id"] == annotation_id), None)
        if annotation is None:
            return
        if annotation["quote_turn_id"] in self.transcript.keys and annotation["quote_start"] is not None:
            self.transcript.select_span(annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"])
        self.edit_annotation(annotation)

    def on_transcript_view_selection_changed(self, event) -> None:
        """Moving away from the current suggestion's span lets it go: x deletes in the list again."""
        s = self.suggestion
        if s is None or not s["spans"]:
            return
        span = s["spans"][0]
        if self.transcript.selection != (span["turn_id"], span["start"], span["end"]):
            self.suggestion = None
            self.show_proposal_line()
            self.refresh_bindings()

    # -- contextual e and x ---------------------------------------------------------------

    def proposal_edit(self) -> bool:
        """`e` on a current suggestion, in a walk, or on a card item the judge scored and you have not:
        accept or adopt, then edit. False: not one of these, e edits as it always has."""
        if self.read_only:
            return False
        if self.walking and self.walk_proposal is not None:
            proposal = self.walk_proposal
            annotation_id = self._adopt(proposal)
            if annotation_id:
                self._edit_by_id(annotation_id)
                self._walk_next()
            return True
        if self.suggestion is not None:
            self._accept_and_edit()
            return True
        card_view = self.query_one(ScoreCardView)
        if card_view.has_focus and self.judge is not None:
            proposal = self._card_proposal(card_view.highlighted_key)
            if proposal is not None and proposal.task in navigation.tasks(self.scenario, self.card):
                annotation_id = self._adopt(proposal)
                if annotation_id:
                    self._edit_by_id(annotation_id)
                return True
        return False

    # -- the judge's draft ------------------------------------------------------------------

    def _card_proposal(self, key: str | None) -> Proposal | None:
        if key is None or self.judge is None or self.judge_card is None:
            return None
        try:
            task = draft.task_for(self.view, key, self.current_step())
        except KeyError:
            return None
        return Proposal(task, self.judge, draft.given(self.judge_card, self.scenario, task))

    def _adopt_target(self) -> Proposal | None:
        """What `a` adopts: the card's highlighted item when the card has the keys; from the transcript, the one
        item the step being read scores (what the judge scored of it), else the card's highlighted item."""
        card_view = self.query_one(ScoreCardView)
        highlighted = self._card_proposal(card_view.highlighted_key)
        if card_view.has_focus:
            return highlighted
        step = self.current_step()
        here = [
            p
            for p in draft.proposals(self.view, self.reviewer, self.judge, self.card)
            if p.task.step == step and p.annotation is not None
        ]
        items = [p for p in here if p.task.picker == "score"] or here
        if len(items) == 1:
            return items[0]
        return highlighted if highlighted is not None and highlighted.annotation is not None else None

    def action_adopt(self) -> None:
        proposal = self._adopt_target()
        if proposal is None:
            self.notify("Which item? Highlight it on the card (tab to it), then a.", severity="warning")
            return
        self._adopt(proposal)

    def _adopt(self, proposal: Proposal, **how: Any) -> str | None:
        """Adopt, saying why not when refused; the annotation's id, or None."""
        started = time.monotonic()
        try:
            annotation_id = draft.adopt(
                self.db,
                self.view,
                self.reviewer,
                proposal,
                blind=self.blind and not self.revealed,
                seconds=round(time.monotonic() - started, 3),
                **how,
            )
        except (draft.AdoptRefused, evidence.EvidenceRefused) as exc:
            self.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return None
        self.refresh_card()
        return annotation_id

    def action_walk_draft(self) -> None:
        """Walk the judge's draft from the first thing left to score."""
        self.suggestion = None
        self.walking = True
        self.walk_skipped = frozenset()
        self._walk_next()

    def _walk_next(self) -> None:
        """The next thing of the draft left to score (skipped ones aside); the walk ends on one the judge left."""
        self.walk_value = None
        left = [
            p
            for p in draft.proposals(self.view, self.reviewer, self.judge, self.card)
            if p.task not in self.walk_skipped
        ]
        if not left:
            self._end_walk("The draft is walked: nothing of it is left to score.")
            return
        proposal = left[0]
        self._show_task(proposal)
        if proposal.annotation is None:
            self.offered = proposal.task
            self._end_walk(
                f"{proposal.judge} left {proposal.task.label} unscored: the walk ends here (s or l scores it)."
            )
            return
        self.walk_proposal = proposal
        self.show_proposal_line()
        self.refresh_bindings()

    def _show_task(self, proposal: Proposal) -> None:
        """The judge's quote selected in its turn; else the reply to the task's step."""
        a = proposal.annotation
        if a and a.get("quote_turn_id") and a.get("verification") in ("exact", "fuzzy"):
            position = next((i for i, t in enumerate(self.turns) if t["id"] == a["quote_turn_id"]), None)
            if position is not None:
                if position != self.position or not self.whole:
                    self.show_turn(position)
                self.transcript.select_span(a["quote_turn_id"], a["quote_start"], a["quote_end"])
                return
        if proposal.task.step is not None:
            replies = self.view.replies_to(proposal.task.step)
            position = next((i for i, t in enumerate(self.turns) if replies and t["id"] == replies[0]["id"]), None)
            if position is not None and position != self.position:
                self.show_turn(position)

    def _end_walk(self, message: str | None = None) -> None:
        self.walking = False
        self.walk_proposal = None
        self.walk_value = None
        self.show_proposal_line()
        self.show_header()
        self.refresh_bindings()
        if message:
            self.notify(visible(message), timeout=8, markup=False)

    def action_end_walk(self) -> None:
        self._end_walk()

    def action_draft_accept(self) -> None:
        if self.walk_proposal is not None and self._adopt(self.walk_proposal, changed=self.walk_value):
            self._walk_next()

    def action_draft_skip(self) -> None:
        if self.walk_proposal is not None:
            self.walk_skipped = self.walk_skipped | {self.walk_proposal.task}
            self._walk_next()

    def action_draft_quote(self) -> None:
        """Adopt with the span selected as the quote (verified like any other)."""
        quote = self.selected_quote()
        if self.walk_proposal is None:
            return
        if quote is None:
            self.notify("Select the quote first (shift+arrows or the mouse), then enter.", severity="warning")
            return
        if self._adopt(self.walk_proposal, quote=quote, changed=self.walk_value):
            self._walk_next()

    def walk_key(self, event: events.Key) -> bool:
        """A digit (or h) while walking: adopt that value with the judge's quote, or keep it until a quote is
        chosen when the judge's is no evidence. True when the key was the walk's."""
        char = event.character
        if not self.walking or self.walk_proposal is None or not char or overlay_open(self):
            return False
        if not (char.isdigit() or char == draft.HALF):
            return False
        event.stop()
        event.prevent_default()
        proposal = self.walk_proposal
        value = draft.value_for_key(self.view, proposal.task, char)
        if value is None:
            keys = draft.value_keys(self.view, proposal.task)
            self.notify(f"{char} is not a value of {proposal.task.id} ({keys}).", severity="warning")
            return True
        a = proposal.annotation or {}
        if a.get("verification") not in ("exact", "fuzzy"):
            self.walk_value = value
            self.show_proposal_line()
            self.notify("The judge's quote is no evidence: select one, then enter.", severity="warning")
            return True
        if self._adopt(proposal, changed=value):
            self._walk_next()
        return True
