"""What machines propose, in Review: detectors' and judges' suggestions, and a judge's draft of the card.

A person confirms what a machine proposed, one key at a time, and nothing counts until then.

Suggestions (issue 13) are marked on the transcript (the highlight `suggestion`) and counted on
the card. `]` / `[` go to the next / previous pending one: its turn shown, its span selected, its
detector, reason and confidence on the line over the transcript. On a current suggestion `y`
accepts it (the span becomes the reviewer's quote, verified), `x` rejects it (recorded too), `e`
accepts it and opens the picker on the new annotation; `y` and `x` then go on to the next.

A judge's draft (issue 16) is drawn under each item of the card; adopting from it and walking it
is draft_walk.py's. The screen's check_action asks `Proposals.check` first.
"""

from __future__ import annotations

from typing import Any, Protocol

from rich.text import Text
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.store.scoring import evidence, suggestions
from sieve.store.scoring.scorecard import value_text
from sieve.tui.screens.review.annotation_list import AnnotationList
from sieve.tui.screens.review.draft_walk import DraftHost, DraftWalk
from sieve.tui.screens.review.keys import PROPOSING, WALK_ACTIONS
from sieve.tui.widgets.proposal_rows import with_proposals
from sieve.tui.widgets.rows import Row
from sieve.tui.widgets.scorecard import styles_of
from sieve.tui.widgets.transcript import Highlight

Suggestion = dict[str, Any]


class ProposalsHost(DraftHost, Protocol):
    """What the proposals need of their screen: the draft's needs, and these."""

    read_only: bool

    @property
    def annotation_list(self) -> AnnotationList: ...
    @property
    def proposal_line(self) -> Static: ...


class Proposals:
    """The suggestions pending and the current one (where `]` or `[` went); the judge's draft (`draft`)."""

    def __init__(self, host: ProposalsHost) -> None:
        self.host = host
        self.pending: list[Suggestion] = []
        self.suggestion: Suggestion | None = None
        self.draft = DraftWalk(host, self.show_line)
        self._line: Text | str | None = None  # what the line over the transcript shows

    # -- what the keys may do --------------------------------------------------------

    def check(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """check_action for these keys (None: not one of them). Hidden when there is nothing to act on."""
        walking = self.draft.walking
        if action in PROPOSING and self.host.read_only:
            return False
        if action == "suggestion":
            return bool(self.pending)
        if action == "accept_suggestion":
            return self.suggestion is not None and not walking
        if action == "reject_suggestion":
            return self.suggestion is not None and not walking and not self.host.annotation_list.has_focus
        if action in ("adopt", "walk_draft"):
            return self.draft.judge is not None and not walking
        if action in WALK_ACTIONS:
            return walking
        if action == "turn" and parameters == (1,) and walking:
            return False  # n skips while walking
        return None

    def takes_e(self) -> bool:
        """Whether `e` acts on what is proposed here: a suggestion, the walk, a card item the judge scored."""
        if self.draft.walking or self.suggestion is not None:
            return True
        return self.host.card_view.has_focus and self.draft.judge is not None

    # -- reading what is proposed -------------------------------------------------------

    def read(self) -> None:
        """Read the pending suggestions and the judge's draft (after every change to the card)."""
        self.pending = self.host.view.pending_suggestions(self.host.reviewer)
        if self.suggestion is not None and self.suggestion["id"] not in {s["id"] for s in self.pending}:
            self.suggestion = None
        self.draft.read()

    def decorate(self, rows: list[Row]) -> list[Row]:
        """The card's rows with the pending suggestions and the judge's draft (ScoreCardView.decorate)."""
        host, draft = self.host, self.draft
        if host.card is None or not (self.pending or draft.judge):
            return rows
        return with_proposals(
            rows,
            styles_of(host.card_view),
            pending=self.pending,
            mine=host.card,
            judge=draft.judge,
            judge_card=draft.judge_card,
            mask=host.mask,
        )

    def show(self) -> None:
        """The line over the transcript (the current suggestion or draft item) and the keys that act on it."""
        self.show_line()
        self.host.refresh_bindings()

    def highlights(self) -> dict[str, list[Highlight]]:
        """The pending suggestions' spans, as marks on the transcript."""
        out: dict[str, list[Highlight]] = {}
        for s in self.pending:
            for span in s["spans"]:
                out.setdefault(span["turn_id"], []).append(Highlight(span["start"], span["end"], "suggestion"))
        return out

    def show_line(self) -> None:
        """The line over the transcript: the current suggestion, or the draft's item being walked."""
        line = self.host.proposal_line
        text = self.draft.line()
        if text is None and self.suggestion is not None:
            text = self._suggestion_text(self.suggestion)
        line.set_class(text is not None, "-shown")
        shown = text or ""
        if shown != self._line:  # a Static's update lays the screen out again: only when it says something new
            self._line = shown
            line.update(shown)

    def _suggestion_text(self, s: Suggestion) -> Text:
        where = next((i for i, p in enumerate(self.pending) if p["id"] == s["id"]), 0)
        text = Text()
        text.append(f"suggestion {where + 1} of {len(self.pending)}: ", style="bold")
        what = value_text(s) if s["score"] is not None or s["value"] else ""
        text.append(visible(f"{s['item']} {what} "), style="bold")
        text.append(visible(f"· {source_label(s['source_name'], s['source_version'])} "))
        if s["confidence"] is not None:
            text.append(f"· confidence {s['confidence']:.2f} ")
        text.append("· " + visible(" ".join(self.host.mask(s["reason"]).split())), style="italic")
        text.append("\ny accept   x reject   e accept and edit   ] [ next / previous", style="dim")
        return text

    # -- suggestions -------------------------------------------------------------------

    @staticmethod
    def _place(s: Suggestion) -> tuple[int, int, str]:
        span = s["spans"][0] if s["spans"] else {"turn": -1, "start": 0}
        return (span["turn"], span["start"], s["id"])

    def go(self, delta: int) -> None:
        """The next (or previous) pending suggestion from here: its turn, its span selected."""
        host = self.host
        if not self.pending:
            host.notify("No suggestion is pending.")
            return
        if self.draft.walking:
            self.draft.end()
        if self.suggestion is not None:
            here = self._place(self.suggestion)
        else:
            cursor = host.transcript.cursor
            offset = cursor[1] if cursor else 0
            here = (host.turns[host.position]["idx"], offset - (1 if delta > 0 else 0), "")
        places = sorted(self.pending, key=self._place)
        if delta > 0:
            found = next((s for s in places if self._place(s) > here), places[0])
        else:
            found = next((s for s in reversed(places) if self._place(s) < here), places[-1])
        self.go_to(found)

    def go_to(self, s: Suggestion) -> None:
        host = self.host
        self.suggestion = s
        if s["spans"]:
            span = s["spans"][0]
            position = next((i for i, t in enumerate(host.turns) if t["id"] == span["turn_id"]), None)
            if position is not None:
                if position != host.position or not host.whole:
                    host.show_turn(position)
                host.transcript.select_span(span["turn_id"], span["start"], span["end"])
        self.show_line()
        host.refresh_bindings()

    def decide(self, accept: bool, advance: bool = True) -> str | None:
        """Accept or reject the current suggestion, then (`advance`) go to the next one pending.

        Returns the annotation's id when accepted, "" when rejected, None when refused."""
        host, s = self.host, self.suggestion
        if s is None:
            return None
        place = self._place(s)
        annotation_id = None
        try:
            if accept:
                annotation_id = suggestions.accept(
                    host.db, s["id"], host.reviewer, view=host.view, blind=host.blind_now
                )
            else:
                suggestions.reject(host.db, s["id"], host.reviewer)
        except evidence.EvidenceRefused as exc:
            host.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return None
        self.suggestion = None
        host.refresh_card()
        if not advance:
            self.show_line()
            return annotation_id or ""
        following = [p for p in sorted(self.pending, key=self._place) if self._place(p) > place]
        if following or self.pending:
            self.go_to((following or sorted(self.pending, key=self._place))[0])
        else:
            self.show_line()
            host.notify("Every suggestion is decided.")
        return annotation_id or ""

    def selection_changed(self) -> None:
        """Moving away from the current suggestion's span lets it go: x deletes in the list again."""
        s = self.suggestion
        if s is None or not s["spans"]:
            return
        span = s["spans"][0]
        if self.host.transcript.selection != (span["turn_id"], span["start"], span["end"]):
            self.suggestion = None
            self.show_line()
            self.host.refresh_bindings()

    # -- contextual e, and the walk ---------------------------------------------------------

    def edit(self) -> bool:
        """`e` on a current suggestion, in a walk, or on a card item the judge scored and you have not:
        accept or adopt, then edit. False: not one of these, e edits as it always has."""
        if self.host.read_only:
            return False
        if self.draft.edit_walked():
            return True
        if self.suggestion is not None:
            annotation_id = self.decide(accept=True, advance=False)  # ] goes on to the next suggestion after
            if annotation_id:
                self.host.edit_by_id(annotation_id)
            return True
        return self.draft.edit_card_row()

    def walk_draft(self) -> None:
        """Walk the judge's draft from the first thing left to score (the current suggestion let go)."""
        self.suggestion = None
        self.draft.start()


def source_label(name: str, version: str) -> str:
    """Who suggests, as a person reads it: `rules v3`; a judge's model, which is its version, once
    (`judge:m;reply=x`, not `judge:m;reply=x vm;reply=x`)."""
    if not version or version in name:
        return name
    return f"{name} v{version}" if version[0].isdigit() else f"{name} ({version})"
