"""The Review screen: move through the turns, select a span, score it by keystroke.

The selected span becomes the quote, with its turn and character offsets in the turn's original
text; the score card beside updates at once. The screen holds the run and the card, and says
which keys apply (keys.py lists them); what a key does is a helper's, a class that asks the
screen only what its `Protocol` names: moving (navigation.py, search.py), annotating
(annotating.py), what machines propose (proposals.py, draft_walk.py) and the evidence on the
page (evidence.py). The widgets around the transcript are Review's own: the header over it
(step_header.py), the line under it (under_cursor.py), the card (card.py) and the list (annotation_list.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Header, Static

from sieve.safe_text import one_line
from sieve.store.record.annotations import Quote
from sieve.store.record.db import is_read_only
from sieve.store.record.rows import Turn
from sieve.store.scoring import field
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.review import blind, keys
from sieve.tui.screens.review.annotating import Annotating
from sieve.tui.screens.review.annotation_list import AnnotationList
from sieve.tui.screens.review.card import ReviewCard
from sieve.tui.screens.review.evidence import Evidence, merged
from sieve.tui.screens.review.excerpts import Excerpts, is_excerpt
from sieve.tui.screens.review.navigation import Navigation
from sieve.tui.screens.review.proposals import Proposals
from sieve.tui.screens.review.search import Search
from sieve.tui.screens.review.step_header import StepHeader
from sieve.tui.screens.review.under_cursor import UnderCursor
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.rows import RowsView
from sieve.tui.widgets.transcript import TranscriptView

NARROW = 128  # below this width the card gives the transcript half the screen, and shows one rubric


class ReviewScreen(SieveScreen):
    BINDINGS = keys.BINDINGS

    # Textual redraws the whole screen when the focus moves (Screen.focused repaints), though what the focus
    # changes redraws itself (its styles, the cursor); here the focus moves on every save, from the picker
    # back to the transcript, and the frame that shows the saved score had to draw every line of the screen.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self, view: RunView, reviewer: str | None = None):
        super().__init__()
        self.view = view
        self.db = view.db
        self.scenario = view.scenario
        self.run_id = view.id
        self._reviewer = reviewer
        # In a blind review, names of models and makers are masked (same length, so
        # offsets still point into the original text); revealing ends it.
        self.blind = view.blind
        self.revealed = False
        # A database that can only be read (a copy, a read-only share): read it, score nothing.
        self.read_only = is_read_only(view.db)
        self.card: Card | None = None
        self.offered: Task | None = None  # what the header names: what `i`, `s` and `l` open on
        # The widgets, made here so that the helpers hold them typed (compose places them).
        self.header = StepHeader(self.scenario, id="context")
        self.proposal_line = Static("", id="proposal")  # the current suggestion, or the draft's item being walked
        self.transcript = TranscriptView(exact=True, cursor=True, id="text")
        self.under_cursor = UnderCursor(id="under")
        self.card_view = ReviewCard(self.scenario, id="card")
        self.annotation_list = AnnotationList(id="annotations")
        self.search = Search()
        self.navigation = Navigation(self)
        self.annotating = Annotating(self)
        self.excerpts = Excerpts(self)
        self.evidence = Evidence(self)
        self.proposals = Proposals(self)

    # -- what the helpers share ------------------------------------------------------------

    @property
    def reviewer(self) -> str:
        return self._reviewer or self.app.reviewer

    @property
    def blind_now(self) -> bool:
        """A blind review not revealed yet: what is saved is marked as scored blind."""
        return self.blind and not self.revealed

    @property
    def turns(self) -> list[Turn]:
        return self.view.turns

    def mask(self, text: str) -> str:
        return self.view.mask(text)

    @property
    def position(self) -> int:
        return self.navigation.position

    @property
    def whole(self) -> bool:
        return self.navigation.whole

    def current_step(self) -> str | None:
        return self.navigation.current_step()

    def show_turn(self, position: int) -> None:
        self.navigation.show_turn(position)

    def show_header(self) -> None:
        self.navigation.show_header()

    def selected_quote(self) -> Quote | None:
        return self.navigation.selected_quote()

    def select_span(self, start: int, end: int) -> None:
        self.navigation.select_span(start, end)

    def show_under_cursor(self) -> None:
        self.evidence.show_under_cursor()

    def edit_by_id(self, annotation_id: str) -> None:
        self.annotating.edit_by_id(annotation_id)

    def e_edits_here(self) -> bool:
        """Whether `e` edits the annotation under the cursor: not while a proposal has it, nor when read-only."""
        return not (self.read_only or self.proposals.takes_e())

    # What the tests read of the helpers' state.
    search_text = property(lambda self: self.search.text)
    hits = property(lambda self: self.search.hits)
    hit_index = property(lambda self: self.search.current)
    pending = property(lambda self: self.proposals.pending)
    suggestion = property(lambda self: self.proposals.suggestion)
    walking = property(lambda self: self.proposals.draft.walking)
    walk_proposal = property(lambda self: self.proposals.draft.proposal)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="main"):
                yield self.header
                yield self.proposal_line
                yield self.transcript
                yield self.under_cursor
            with Vertical(id="side"):
                yield self.card_view
                yield self.annotation_list
        yield SieveFooter()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if not super().check_action(action, parameters):
            return False  # a picker is open over the screen: its keys are the picker's
        proposed = self.proposals.check(action, parameters)
        if proposed is not None:
            return proposed
        searching = self.search.on
        if action in keys.SEARCHING:
            return searching
        if action == "turn" and parameters == (1,) and searching:
            return False  # n is the next hit while a search is on
        if action == "reveal":
            return self.blind_now
        if action == "goto_chapter":
            return bool(self.scenario.chapters)
        if self.read_only and action in keys.WRITES:
            return False
        return True

    def ask(self, overlay: Overlay, on_done: Callable[[Any], None]) -> None:
        """A picker or a question over the screen; the transcript has the keys again when it closes."""
        self.open_dialog(overlay, on_done, focus=self.transcript)

    def _identify(self) -> None:
        self.sub_title = blind.run_title(self.view, self.reviewer, self.blind_now, self.revealed, self.read_only)

    def on_mount(self) -> None:
        self.card_view.decorate = self.proposals.decorate
        self.title = one_line(f"sieve · review · {self.scenario.title}")
        self._identify()
        self._fit_width(self.app.size.width)
        replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
        self.refresh_card()
        self.show_turn(replies[0] if replies else 0)
        self.transcript.focus()
        # The line under the transcript draws the highlights' colours: a new theme draws it again.
        self.app.theme_changed_signal.subscribe(self, lambda _: self.call_after_refresh(self.show_under_cursor))
        if self.read_only:  # once the screen is showing, so the notice lands on it
            self.call_after_refresh(
                self.notify, "The database is read-only: the run and its scores can be read, not changed.", timeout=10
            )

    def on_unmount(self) -> None:
        # The theme subscription's callback refers to this screen, and the signal keeps it until
        # told: left subscribed, a closed Review (and the run it holds) would never be freed.
        self.app.theme_changed_signal.unsubscribe(self)

    def on_resize(self, event: events.Resize) -> None:
        if self._fit_width(event.size.width):
            self.refresh_card()
        self.call_after_refresh(self.annotation_list.relist)  # the list's quotes are cut to its new width

    def _fit_width(self, width: int) -> bool:
        """Narrow screens give the transcript half the width and collapse the card; True if that changed."""
        narrow = width < NARROW
        if narrow == self.card_view.narrow:
            return False
        self.card_view.narrow = narrow
        self.set_class(narrow, "-narrow")
        return True

    # -- the card ------------------------------------------------------------------

    def refresh_card(self) -> None:
        """The card, the list and the highlights again, from the annotations in force (after every change)."""
        active = self.view.annotations(self.reviewer)
        self.card = self.view.card(self.reviewer, active)
        self.proposals.read()
        self._show_card(self.card)
        self.annotation_list.show(active, self.scenario, self.view.steps, self.mask)
        self.evidence.show(active)
        if self.is_mounted and self.turns:
            self.show_header()

    def show_highlights(self) -> None:
        """What the transcript highlights: the evidence given, the suggestions pending, the search's hits over all."""
        layers = (self.evidence.highlights, self.proposals.highlights(), self.search.highlights())
        self.transcript.set_highlights(merged(*layers))

    def _show_card(self, card: Card) -> None:
        self.card_view.show_at(card, self.current_step, self.mask)
        self.proposals.show()

    def step_changed(self) -> None:
        # Gone to another step: what was offered at the last one is no longer what `i` opens from here, so the
        # header stops naming it (an item scored from the whole run stays offered wherever the reader is).
        offered = self.offered
        if offered is not None and offered.step is not None and offered.step != self.current_step():
            self.offered = None
        # The card shows the rubric of the step being read when it is collapsed.
        if self.card_view.collapsed and self.card is not None:
            self._show_card(self.card)

    def action_card(self) -> None:
        self.card_view.toggle()
        if self.card is not None:
            self._show_card(self.card)

    # -- the run -----------------------------------------------------------------------

    def action_reveal(self) -> None:
        """Show which model this is, but only once the reviewer has scored every item."""
        refused = blind.not_yet(self.view.card(self.reviewer))
        if refused:
            self.notify(refused, severity="warning")
            return
        self.revealed = True
        self.view.reveal()
        self._identify()
        self.notify((self.sub_title or "").split(" · reviewer")[0], title="Revealed", timeout=15, markup=False)
        self.show_turn(self.position)
        self.refresh_card()
        self.refresh_bindings()

    def action_next_run(self) -> None:
        """The next run of this scenario the reviewer has not finished, in their order (field.next_run)."""
        view = field.next_view(
            self.db, self.reviewer, blind=self.blind, scenario=self.view.run["scenario"], after=self.run_id
        )
        if view is None:
            self.notify(f"Every other run of {self.scenario.name} is finished by {self.reviewer}.")
            return
        self.app.switch_screen(ReviewScreen(view, self._reviewer))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.go_home()

    # -- what the keys do: the helpers' -------------------------------------------------

    def action_turn(self, delta: int) -> None:
        self.navigation.turn(delta)

    def action_whole(self) -> None:
        self.navigation.toggle_whole()

    def action_goto_step(self) -> None:
        self.navigation.goto_step()

    def action_goto_chapter(self) -> None:
        self.navigation.goto_chapter()

    def action_next_item(self) -> None:
        task = self.navigation.next_item()
        if task is not None and not self.read_only:
            self.annotating.open_picker(task.picker, task.id)

    def action_search(self) -> None:
        self.navigation.search()

    def action_hit(self, delta: int) -> None:
        self.navigation.hit(delta)

    def action_end_search(self) -> None:
        self.navigation.end_search()

    def action_score(self) -> None:
        self.annotating.score()

    def action_count(self) -> None:
        self.annotating.count()

    def action_excerpt(self) -> None:
        self.excerpts.mark()

    def action_edit(self) -> None:
        """On a current suggestion, in a draft walk or on a card item the judge scored: accept or adopt, then edit;
        else the picker on the annotation under the cursor (else the one highlighted in the list)."""
        if self.proposals.edit():
            return
        annotation = self.evidence.to_edit()
        if annotation is not None and is_excerpt(annotation):
            self.excerpts.edit(annotation)
        else:
            self.annotating.edit(annotation)

    def action_delete(self) -> None:
        self.annotating.delete(self.evidence.to_edit())

    def action_undo(self) -> None:
        self.annotating.undo()

    def action_redo(self) -> None:
        self.annotating.redo()

    def action_suggestion(self, delta: int) -> None:
        self.proposals.go(delta)

    def action_accept_suggestion(self) -> None:
        self.proposals.decide(accept=True)

    def action_reject_suggestion(self) -> None:
        self.proposals.decide(accept=False)

    def action_adopt(self) -> None:
        self.proposals.draft.adopt()

    def action_walk_draft(self) -> None:
        self.proposals.walk_draft()

    def action_end_walk(self) -> None:
        self.proposals.draft.end()

    def action_draft_accept(self) -> None:
        self.proposals.draft.accept()

    def action_draft_skip(self) -> None:
        self.proposals.draft.skip()

    def action_draft_quote(self) -> None:
        self.proposals.draft.adopt_with_quote()

    def key_before_bindings(self, event: events.Key) -> bool:
        """A key the screen's bindings do not take, asked by the app in the keys' own order (SieveApp.on_key),
        just before it looks the key's binding up: a value typed while walking a judge's draft, else an item's
        id typed straight away, which opens the picker on it. True: taken."""
        return self.proposals.draft.key(event) or self.annotating.typed(event)

    # -- what the widgets say ------------------------------------------------------------

    @on(TranscriptView.SelectionChanged)
    def _selection_changed(self) -> None:
        self.navigation.follow_cursor()
        self.evidence.show_under_cursor()
        self.proposals.selection_changed()

    @on(TranscriptView.Pointed)
    def _pointed(self) -> None:
        self.evidence.show_under_cursor()

    @on(RowsView.Highlighted, "#annotations")
    def _listed_highlighted(self, event: RowsView.Highlighted) -> None:
        self.evidence.jump_to_quote(event.view)

    @on(RowsView.Chosen, "#card")
    def _card_row_chosen(self, event: RowsView.Chosen) -> None:
        self.evidence.choose_card_row(event.key)

    @on(RowsView.Chosen, "#annotations")
    def _listed_chosen(self, event: RowsView.Chosen) -> None:
        self.evidence.choose_listed(event.key)
