"""The Review screen: move through the turns, select a span, score it by keystroke.

The selected span becomes the quote, with its turn and character offsets in the
turn's original text; the score card beside updates at once. The header over the
transcript says which step is being read, what it tests and what is scored from it;
keys go to a step, a chapter, the next thing left to score and the next run left
to finish, and search the transcript. Every quote given is highlighted where it
stands (review_evidence.py), the line under the transcript says what is under the
cursor, and `enter` on a row of the card selects its quote.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from sieve.errors import SieveUsageError
from sieve.safe_text import one_line, visible
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.record.db import is_read_only
from sieve.store.scoring import evidence, field, navigation
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, value_text
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.picker_entries import Choice, deduction_entry_id, score_entries, value_id_of
from sieve.tui.screens.pickers import Confirm, Prompt, counter_picker, every_picker, rubric_picker
from sieve.tui.screens.review import evidence as review_evidence
from sieve.tui.screens.review.proposals import END_WALK, PROPOSAL_BINDINGS, REJECT, SKIP, ReviewProposals
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.overlay import overlay_open
from sieve.tui.widgets.rows import Row, RowsView
from sieve.tui.widgets.scorecard import (
    QUOTE_CHARS,
    VERDICT_CLASSES,
    ScoreCardView,
    put,
    short,
    styles_of,
    verification_mark,
)
from sieve.tui.widgets.transcript import Highlight, TranscriptView, turn_title

WRITES = ("score", "count", "undo", "redo", "edit", "delete")
SEARCHING = ("hit", "end_search")  # keys that mean something only while a search is on
NARROW = 128  # below this width the card gives the transcript half the screen, and shows one rubric
PROMPT_CHARS = 360  # how much of the message before the current turn the header shows


class ReviewScreen(ReviewProposals, SieveScreen):
    COMPONENT_CLASSES = VERDICT_CLASSES
    BINDINGS = [
        SKIP,  # while walking a judge's draft (proposals.py)
        Binding("n", "turn(1)", "Next turn", id="review.next_turn", tooltip="The next turn"),
        Binding("n", "hit(1)", "Next hit", id="review.next_hit", tooltip="The next place the search found"),
        Binding("p", "turn(-1)", "Prev turn", id="review.prev_turn", tooltip="The previous turn"),
        Binding("N", "hit(-1)", "Prev hit", id="review.prev_hit", tooltip="The previous place the search found"),
        Binding("g", "goto_step", "Step…", id="review.goto_step", tooltip="Go to step N (its number or its id)"),
        Binding("c", "goto_chapter", "Chapter…", id="review.goto_chapter", tooltip="Go to chapter N"),
        Binding(
            "i",
            "next_item",
            "Next unscored",
            id="review.next_item",
            tooltip="Go to the next thing left to score, with the picker open on it",
        ),
        Binding(
            "r",
            "next_run",
            "Next run",
            id="review.next_run",
            tooltip="Open the next run of this scenario that you have not finished",
        ),
        Binding("slash", "search", "Search", id="review.search", tooltip="Search the transcript; n / N move"),
        Binding(
            "s", "score", "Score", id="review.score", tooltip="Score a rubric item with the selected span as its quote"
        ),
        Binding("l", "count", "Count", id="review.count", tooltip="Record a counted event or a probe's mark"),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last annotation"),
        Binding("U,ctrl+y", "redo", "Redo", id="review.redo", tooltip="Redo what was undone"),
        Binding(
            "e",
            "edit",
            "Edit",
            id="review.edit",
            tooltip="Change the annotation under the cursor (else the one highlighted in the list)",
        ),
        REJECT,  # on a current suggestion
        Binding(
            "x,delete",
            "delete",
            "Delete",
            id="review.delete",
            tooltip="Delete the annotation under the cursor (else the one highlighted in the list)",
        ),
        Binding(
            "R",
            "reveal",
            "Reveal",
            id="review.reveal",
            tooltip="Blind review: show which model this is (once every item is scored)",
        ),
        Binding(
            "w",
            "whole",
            "Whole transcript",
            id="review.whole",
            tooltip="All turns in one scrolling view, or one turn at a time",
        ),
        Binding("f", "card", "Card", id="review.card", tooltip="The whole score card, or only the rubric of this step"),
        *PROPOSAL_BINDINGS,
        END_WALK,
        Binding("escape", "end_search", "End search", id="review.end_search", tooltip="Stop searching; n is next turn"),
        Binding("escape", "back", "Back", id="review.back", tooltip="Back to where you came from"),
    ]

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
        self.position = 0
        self.whole = False  # all turns in one view, or one at a time
        # A database that can only be read (a copy, a read-only share): read it, score nothing.
        self.read_only = is_read_only(view.db)
        self.card: Card | None = None
        self.full_card: bool | None = None  # None: as the width decides (collapsed when narrow)
        self.narrow = False
        self.offered: navigation.Task | None = None  # what `i` went to last; `s` / `l` open on it
        self.search_text: str | None = None
        self._under_shown: Text | None = None  # what the line under the transcript shows
        self.hits: list[navigation.Hit] = []
        self.hit_index = -1
        # The evidence drawn in the transcript: each quoted annotation's span, by turn (review_evidence.py).
        self.evidence: dict[str, list[Highlight]] = {}
        self._active: dict[str, dict[str, Any]] = {}  # the annotations in force, by id
        self._chosen: str | None = None  # the annotation enter went to last (from the card or the list)
        self._visit: tuple[str, int] | None = None  # the card's row enter was pressed on, and which of its quotes
        self._step_ids = {s.id for s in self.scenario.steps}
        self._first_chars = {e.id[0] for e in score_entries(self.scenario)} | {
            x.id[0] for x in (*self.scenario.counters, *self.scenario.probes)
        }

    @property
    def reviewer(self) -> str:
        return self._reviewer or self.app.reviewer

    @property
    def turns(self) -> list[dict[str, Any]]:
        return self.view.turns

    def mask(self, text: str) -> str:
        return self.view.mask(text)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="main"):
                yield Static("", id="context")
                yield Static("", id="proposal")  # the current suggestion, or the draft's item being walked
                yield TranscriptView(exact=True, cursor=True, id="text")
                yield Static("", id="under")
            with Vertical(id="side"):
                yield ScoreCardView(id="card")
                yield RowsView(id="annotations")
        yield SieveFooter()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if not super().check_action(action, parameters):
            return False  # a picker is open over the screen: its keys are the picker's
        proposed = self.proposal_check(action, parameters)
        if proposed is not None:
            return proposed
        searching = self.search_text is not None
        if action in SEARCHING:
            return searching
        if action == "turn" and parameters == (1,) and searching:
            return False  # n is the next hit while a search is on
        if action == "reveal":
            return self.blind and not self.revealed
        if action == "goto_chapter":
            return bool(self.scenario.chapters)
        if self.read_only and action in WRITES:
            return False
        return True

    def _open(self, overlay, on_done) -> None:
        """A picker or a question over the screen; the transcript has the keys again when it closes."""
        self.open_dialog(overlay, on_done, focus=self.query_one(TranscriptView))

    def _identify(self) -> None:
        self._name_run()
        if self.read_only:
            self.sub_title += " · READ-ONLY: nothing can be scored here"

    def _name_run(self) -> None:
        view, run = self.view, self.view.run
        if self.blind and not self.revealed:
            self.sub_title = one_line(f"blind review · {view.code} · reviewer {self.reviewer}")
            return
        if self.revealed:
            cost = "-" if run["cost"] is None else f"${run['cost']:.4f}"
            self.sub_title = one_line(
                f"{view.code} is {run['model']} via {run['endpoint']} "
                f"({', '.join(sorted(view.providers)) or 'no provider'}), cost {cost} · reviewer {self.reviewer}"
            )
            return
        self.sub_title = one_line(f"{run['model']} · run {self.run_id} · reviewer {self.reviewer}")

    def on_mount(self) -> None:
        self.query_one(ScoreCardView).decorate = self.with_proposals
        self.title = one_line(f"sieve · review · {self.scenario.title}")
        self._identify()
        self.query_one("#annotations", RowsView).border_title = "annotations (tab here: e edit, x delete)"
        self._fit_width(self.app.size.width)
        replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
        self.refresh_card()
        self.show_turn(replies[0] if replies else 0)
        self.query_one(TranscriptView).focus()
        # The line under the transcript draws the highlights' colours: a new theme draws it again.
        self.app.theme_changed_signal.subscribe(self, lambda _: self.call_after_refresh(self._show_under_cursor))
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
        self.call_after_refresh(self._relist)  # the list's quotes are cut to its new width

    def _relist(self) -> None:
        self.query_one("#annotations", RowsView).set_rows(self._annotation_rows(list(self._active.values())))

    def _fit_width(self, width: int) -> bool:
        """Narrow screens give the transcript half the width and collapse the card; True if that changed."""
        narrow = width < NARROW
        if narrow == self.narrow:
            return False
        self.narrow = narrow
        self.set_class(narrow, "-narrow")
        return True

    # -- moving ------------------------------------------------------------------

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def _shown_turns(self, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Masking keeps every length, so offsets in what is shown are offsets in the original.
        return [dict(t, text=self.mask(t["text"]), error=None) for t in turns]

    def current_step(self) -> str | None:
        if not self.turns:
            return None
        return self.view.steps.get(self.turns[self.position]["id"])

    def show_turn(self, position: int) -> None:
        if not self.turns:
            self.query_one("#context", Static).update("This run has no turns yet.")
            return
        before_step = self.current_step()
        self.position = max(0, min(len(self.turns) - 1, position))
        turn = self.turns[self.position]
        transcript = self.transcript
        if self.whole:
            if transcript.keys != [t["id"] for t in self.turns]:
                transcript.set_turns(self._shown_turns(self.turns))
            transcript.place_cursor(turn["id"], 0)
            top = transcript.text_layout.top(turn["id"])
            transcript.call_after_refresh(transcript.scroll_to, y=top, animate=False)
        else:
            (shown,) = self._shown_turns([turn])
            shown["title"] = f"{turn_title(turn)}   ({self.position + 1} of {len(self.turns)})"
            transcript.set_turns([shown])
            transcript.place_cursor(turn["id"], 0)
            transcript.scroll_home(animate=False)
        if self.current_step() != before_step:
            self._step_changed()
        self.show_header()
        self._show_under_cursor()  # in the same frame as the turn

    def _step_changed(self) -> None:
        # The card shows the rubric of the step being read when it is collapsed.
        if self._collapsed() and self.card is not None:
            self._show_card(self.card)

    def show_header(self) -> None:
        """The step being read: its number, chapter and hidden note, what is scored from it and whether it is
        done; then, one turn at a time, the message before."""
        context = self.query_one("#context", Static)
        text = Text()
        step = self.current_step()
        scenario = self.scenario
        if step is None:
            text.append("before the script", style="bold")
        elif step in self._step_ids:
            scripted = scenario.step(step)
            head = navigation.step_label(scenario, step)  # one run of text: see widgets/scorecard.put
            if scripted.kind != "player":
                head += f" ({scripted.kind})"
            chapter = navigation.chapter_of(scenario, step)
            if chapter:
                head += visible(f" · chapter {chapter[0]}: {chapter[1].title}")
            text.append(head, style="bold")
        else:
            text.append("a message of its own, off the script", style="bold")
        if self.search_text is not None:
            where = f"{self.hit_index + 1} of {len(self.hits)}" if self.hit_index >= 0 else f"{len(self.hits)} hits"
            text.append("   ")
            text.append(visible(f"search “{self.search_text}”: {where} (n N, escape ends)"), style="reverse")
        if step in self._step_ids and scenario.step(step).note:
            text.append("\nnote: ", style="bold italic")
            text.append(visible(" ".join(scenario.step(step).note.split())), style="italic")
        here = self.card.at_step(scenario, step) if self.card is not None else []
        if here:
            text.append("\nscored here: ", style="bold")
            for task in here:
                put(text, task.id, "bold" if task.done else "", 1)
                shown = (visible(task.value) + " ✓" if task.value else "✓") if task.done else "–"
                put(text, shown, styles_of(self)("exact" if task.done else "none"), 3)
        if self.offered is not None:
            text.append(visible(f"\nnext to score: {self.offered.label} (s or l opens on it)"), style="dim")
        if not self.whole and self.position > 0:
            before = self.turns[self.position - 1]
            text.append("\n" + turn_title(before) + ": ", style="bold dim")
            said = " ".join(self.mask(before["text"]).split())
            text.append(visible(said if len(said) <= PROMPT_CHARS else "…" + said[-PROMPT_CHARS:]), style="dim")
        # A fixed height (review.tcss): new text needs no layout, only a redraw of these lines.
        context.update(text, layout=False)

    def action_turn(self, delta: int) -> None:
        self.show_turn(self.position + delta)

    def action_whole(self) -> None:
        self.whole = not self.whole
        self.show_turn(self.position)

    @on(TranscriptView.SelectionChanged)
    def _cursor_moved(self) -> None:
        # In the whole transcript, the turn under the cursor is the current one.
        cursor = self.transcript.cursor
        if self.whole and cursor:
            position = next((i for i, t in enumerate(self.turns) if t["id"] == cursor[0]), self.position)
            if position != self.position:
                step = self.current_step()
                self.position = position
                if self.current_step() != step:
                    self._step_changed()
                self.show_header()

    def _go(self, position: int | None, what: str) -> bool:
        if position is None:
            self.notify(f"{what} was not played in this run.", severity="warning")
            return False
        self.show_turn(position)
        return True

    def action_goto_step(self) -> None:
        numbers = navigation.step_numbers(self.scenario)
        hint = f"a number ({min(numbers.values())} to {max(numbers.values())}) or an id ({self.scenario.steps[-1].id})"
        self._open(Prompt("Go to step", hint), self._goto_step)

    def _goto_step(self, answer: str | None) -> None:
        if answer is None:
            return
        try:
            step = navigation.resolve_step(self.scenario, answer)
        except SieveUsageError as exc:
            self.notify(str(exc), severity="warning")
            return
        self._go(navigation.position_of_step(self.view, step.id), f"Step {step.id}")

    def action_goto_chapter(self) -> None:
        chapters = self.scenario.chapters
        self._open(
            Prompt("Go to chapter", f"a number (1 to {len(chapters)}) or an id ({chapters[0].id})"), self._chapter
        )

    def _chapter(self, answer: str | None) -> None:
        if answer is None:
            return
        try:
            chapter = navigation.resolve_chapter(self.scenario, answer)
        except SieveUsageError as exc:
            self.notify(str(exc), severity="warning")
            return
        steps = [s.id for s in self.scenario.steps if s.chapter == chapter.id]
        found = [p for p in (navigation.position_of_step(self.view, s) for s in steps) if p is not None]
        self._go(min(found) if found else None, f"Chapter {chapter.id} ({chapter.title})")

    # -- what is left ----------------------------------------------------------------

    def action_next_item(self) -> None:
        """Go to the next thing left to score, on its step, and open the picker on it."""
        todo = navigation.tasks(self.scenario, self.card or self.view.card(self.reviewer))
        task = navigation.next_task(todo, self.current_step(), self.offered, self.scenario)
        if task is None:
            self.offered = None
            self.show_header()
            self.notify("Everything is scored on this run: r opens the next run that needs you.")
            return
        if task.step is not None:
            position = navigation.position_of_step(self.view, task.step)
            if position is not None and self.current_step() != task.step:
                self.show_turn(position)
        self.offered = task
        self.show_header()
        if not self.read_only:
            self._open_picker(task.picker, task.id)

    def action_next_run(self) -> None:
        """The next run of this scenario the reviewer has not finished, in their order (field.next_run)."""
        view = field.next_view(
            self.db, self.reviewer, blind=self.blind, scenario=self.view.run["scenario"], after=self.run_id
        )
        if view is None:
            self.notify(f"Every other run of {self.scenario.name} is finished by {self.reviewer}.")
            return
        self.app.switch_screen(ReviewScreen(view, self._reviewer))

    # -- searching -------------------------------------------------------------------

    def action_search(self) -> None:
        self._open(Prompt("Search the transcript", "words as they stand in it", self.search_text or ""), self._search)

    def _search(self, answer: str | None) -> None:
        if answer is None:
            return
        hits = navigation.find(self.view, answer, self.mask)
        if not hits:
            self.notify(f"Not found: {answer}", severity="warning")
            return
        self.search_text, self.hits = answer, hits
        self.transcript.set_highlights(self._highlights())
        order = {t["id"]: i for i, t in enumerate(self.turns)}
        # The first hit from the turn being read on.
        self.hit_index = next((i for i, h in enumerate(hits) if order[h.turn_id] >= self.position), 0) - 1
        self.refresh_bindings()
        self.action_hit(1)

    def _highlights(self) -> dict[str, list[Highlight]]:
        """What the transcript highlights: the evidence given, the suggestions pending, the search's hits over all."""
        hits: dict[str, list[Highlight]] = {}
        for hit in self.hits:
            hits.setdefault(hit.turn_id, []).append(Highlight(hit.start, hit.end, "search"))
        return review_evidence.merged(self.evidence, self.suggestion_highlights(), hits)

    def action_hit(self, delta: int) -> None:
        """The next (or previous) hit: its turn shown and the hit selected, ready to be a quote."""
        if not self.hits:
            return
        self.hit_index = (self.hit_index + delta) % len(self.hits)
        hit = self.hits[self.hit_index]
        position = next(i for i, t in enumerate(self.turns) if t["id"] == hit.turn_id)
        if position != self.position or not self.whole:
            self.show_turn(position)
        self.transcript.select_span(hit.turn_id, hit.start, hit.end)
        self.show_header()

    def action_end_search(self) -> None:
        self.search_text, self.hits, self.hit_index = None, [], -1
        self.transcript.set_highlights(self._highlights())
        self.refresh_bindings()
        self.show_header()

    # -- the selection -------------------------------------------------------------

    def selected_quote(self) -> Quote | None:
        """The selected span, in its turn's original text."""
        selection = self.transcript.selection
        if selection is None:
            return None
        key, start, end = selection
        turn = next(t for t in self.turns if t["id"] == key)
        return Quote(key, start, end, turn["text"][start:end])

    def select_span(self, start: int, end: int) -> None:
        """Select characters [start, end) of the current turn (what shift+arrows or the mouse do)."""
        self.transcript.select_span(self.turns[self.position]["id"], start, end)

    # -- annotating ----------------------------------------------------------------

    def _max_chain(self) -> int:
        return max(2, sum(1 for t in self.turns if t["role"] == "assistant"))

    def _shown_quote(self) -> tuple[Quote | None, str | None]:
        quote = self.selected_quote()
        return quote, (self.mask(quote.text) if quote else None)

    def _open_picker(self, which: str, preselect: str) -> None:
        """The picker on one entry (what `i` found left to score); escaping it keeps the entry offered."""
        quote, shown = self._shown_quote()
        if which == "score":
            picker = rubric_picker(self.scenario, shown, preselect)
        else:
            picker = counter_picker(self.scenario, shown, self._max_chain(), preselect)
        self._open(picker, lambda c: self._save(c, quote))

    def _offered_for(self, picker: str) -> str | None:
        offered = self.offered
        return offered.id if offered is not None and offered.picker == picker else None

    def action_score(self) -> None:
        preselect = self._offered_for("score")
        quote, shown = self._shown_quote()
        self._open(rubric_picker(self.scenario, shown, preselect), lambda c: self._picked(c, quote, preselect))

    def action_count(self) -> None:
        if not self.scenario.counters and not self.scenario.probes:
            self.notify("This scenario has no counters and no probes.")
            return
        preselect = self._offered_for("count")
        quote, shown = self._shown_quote()
        picker = counter_picker(self.scenario, shown, self._max_chain(), preselect)
        self._open(picker, lambda c: self._picked(c, quote, preselect))

    def _picked(self, choice: Choice | None, quote: Quote | None, preselect: str | None) -> None:
        if choice is None and preselect is not None:
            self.offered = None  # escaped from it: s and l offer everything again
            self.show_header()
        self._save(choice, quote)

    def on_key(self, event: events.Key) -> None:
        """An item's id typed straight away (`T7`) opens the picker on it, with the selected span as the quote.

        Only a character that begins some id and is none of the screen's own keys (R
        in a blind review, U, N while searching keep their meaning).
        """
        if self.walk_key(event):
            return  # a value typed while walking a judge's draft
        char = event.character
        if (
            not char
            or char not in self._first_chars
            or self.read_only
            or overlay_open(self)
            or not self.transcript.has_focus
            or event.key in self.active_bindings
        ):
            return
        event.stop()
        event.prevent_default()
        quote, shown = self._shown_quote()
        self._open(every_picker(self.scenario, shown, self._max_chain(), char), lambda c: self._save(c, quote))

    def _save(self, choice: Choice | None, quote: Quote | None, replaces: str | None = None) -> None:
        if choice is None:
            return
        rubric = next((r for r in self.scenario.rubrics if r.id == choice.rubric), None)
        needs_quote = choice.kind in ("score", "deduction", "judgment")
        if quote is None and needs_quote and rubric is not None and rubric.quote_required:
            # The rubric asks for a verbatim quote: a score without one is saved only
            # when the reviewer says so, and then it is marked low confidence.
            message = (
                f"{choice.target} has no quote, and rubric {rubric.id} asks for a verbatim one.\n"
                "Save it anyway, marked low confidence?"
            )
            self._open(Confirm(message), lambda yes: self._store(choice, None, replaces, "low") if yes else None)
            return
        self._store(choice, quote, replaces, None)

    def _store(self, choice: Choice, quote: Quote | None, replaces: str | None, confidence: str | None) -> None:
        turn_id = quote.turn_id if quote else (self.turns[self.position]["id"] if self.turns else None)
        try:
            evidence.annotate(
                self.db,
                self.run_id,
                quote=quote,
                view=self.view,
                reviewer=self.reviewer,
                item=choice.target,
                rubric=choice.rubric,
                kind=choice.kind,
                score=choice.score,
                score_high=choice.score_high,
                value=choice.value,
                note=choice.note,
                turn_id=turn_id,
                step_id=None if choice.kind == "verdict" else self.view.steps.get(turn_id or ""),
                replaces=replaces,
                confidence=confidence,
                seconds=round(time.monotonic() - choice.started, 3),
                source="review",
                blind=self.blind and not self.revealed,
            )
        except evidence.EvidenceRefused as exc:
            self.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return
        if self.offered is not None and self.offered.id == choice.target:
            self.offered = None
        self.refresh_card()

    def _highlighted_annotation(self) -> dict[str, Any] | None:
        key = self.query_one("#annotations", RowsView).highlighted_key
        if key is None:
            return None
        return next((a for a in self.view.annotations(self.reviewer) if a["id"] == key), None)

    def action_edit(self) -> None:
        """The picker on the annotation's own item, its value and note; the quote stays unless a span is selected.

        The annotation is the one under the cursor (the line under the transcript names it first), else the
        one highlighted in the list; in the list, always the list's. On a current suggestion, in a draft walk or
        on a card item the judge scored: accept or adopt, then edit.
        """
        if self.proposal_edit():
            return
        annotation = self._annotation_to_edit()
        if annotation is None:
            self.notify("Put the cursor on a highlighted quote, or highlight an annotation in the list (tab).")
            return
        self.edit_annotation(annotation)

    def edit_annotation(self, annotation: dict[str, Any]) -> None:
        """The picker on this annotation's item, value and note; saving replaces it."""
        quote = self.selected_quote() or (
            Quote(annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"], annotation["quote"])
            if annotation["quote"] is not None
            else None
        )
        shown = self.mask(quote.text) if quote else None
        given = {"value": value_id_of(annotation), "note": annotation["note"]}
        kind = annotation["kind"]
        if kind in ("score", "deduction", "judgment"):
            entry = annotation["item"]
            if kind == "deduction":
                entry = deduction_entry_id(next(r for r in self.scenario.rubrics if r.id == annotation["rubric"]))
            picker = rubric_picker(self.scenario, shown, entry, **given)
        else:
            picker = counter_picker(self.scenario, shown, self._max_chain(), annotation["item"], **given)
        self._open(picker, lambda c: self._save(c, quote, replaces=annotation["id"]))

    def action_delete(self) -> None:
        """Delete the annotation under the cursor, else the one highlighted in the list (in the list, its own)."""
        annotation = self._annotation_to_edit()
        if annotation is None:
            self.notify("Put the cursor on a highlighted quote, or highlight an annotation in the list (tab).")
            return
        notes.remove(self.db, annotation["id"], self.reviewer)
        self.refresh_card()

    def action_undo(self) -> None:
        if not notes.undo(self.db, self.run_id, self.reviewer):
            self.notify("Nothing to undo.")
        self.refresh_card()

    def action_redo(self) -> None:
        if not notes.redo(self.db, self.run_id, self.reviewer):
            self.notify("Nothing to redo.")
        self.refresh_card()

    def action_reveal(self) -> None:
        """Show which model this is, but only once the reviewer has scored every item."""
        card = self.view.card(self.reviewer)
        missing = [] if card.rubrics_scored else [i for r in card.rubrics for i in r.unscored]
        if missing:
            self.notify(
                f"Finish scoring first: {len(missing)} items not scored ({' '.join(missing[:8])}{' …' if len(missing) > 8 else ''}).",
                severity="warning",
            )
            return
        self.revealed = True
        self.view.reveal()
        self._identify()
        self.notify(self.sub_title.split(" · reviewer")[0], title="Revealed", timeout=15, markup=False)
        self.show_turn(self.position)
        self.refresh_card()
        self.refresh_bindings()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.go_home()

    # -- the card ------------------------------------------------------------------

    def action_card(self) -> None:
        self.full_card = self._collapsed()
        if self.card is not None:
            self._show_card(self.card)

    def _collapsed(self) -> bool:
        return not self.full_card if self.full_card is not None else self.narrow

    def _current_rubric(self) -> str | None:
        """The rubric whose items the step being read scores, else the first."""
        step = self.current_step()
        for rubric in self.scenario.rubrics:
            if any(step in item.steps for item in rubric.all_items()):
                return rubric.id
        return self.scenario.rubrics[0].id if self.scenario.rubrics else None

    def _show_card(self, card: Card) -> None:
        only = self._current_rubric() if self._collapsed() else None
        self.query_one(ScoreCardView).show(card, self.mask, self.scenario.counters_title, only)
        self.show_proposals()

    def refresh_card(self) -> None:
        active = self.view.annotations(self.reviewer)
        self.card = self.view.card(self.reviewer, active)
        self.read_proposals()
        self._show_card(self.card)
        self.query_one("#annotations", RowsView).set_rows(self._annotation_rows(active))
        self._show_evidence(active)
        if self.is_mounted and self.turns:
            self.show_header()

    def _annotation_rows(self, active: list[dict[str, Any]]) -> list[Row]:
        """One row per annotation, newest first, in columns: item │ value │ step │ verdict │ quote ✎ note."""
        cells = []
        for a in reversed(active):
            try:
                scale = self.scenario.item(a["item"])[1].scale
            except KeyError:
                scale = None
            step = a["step_id"] or self.view.steps.get(a["quote_turn_id"] or a["turn_id"] or "") or ""
            cells.append((a, a["item"], value_text(a, scale), step))
        widths = [min(cap, max([len(c[i]) for c in cells], default=1)) for i, cap in ((1, 8), (2, 12), (3, 10))]
        styles = styles_of(self)
        list_width = self.query_one("#annotations", RowsView).scrollable_content_region.width
        rows = []
        marks = max((len(verification_mark(a)[0]) for a, *_ in cells), default=0)
        for a, item, value, step in cells:
            line = Text()
            put(line, visible(item)[: widths[0]].ljust(widths[0]), "bold", 1)
            for text, width in ((value, widths[1]), (step, widths[2])):
                put(line, "│", "dim", 1)
                put(line, visible(text)[:width].ljust(width), "", 1)
            put(line, "│", "dim", 1)
            mark, style = verification_mark(a)
            put(line, mark, styles(style))
            if a.get("confidence") == "low":
                line.append(" ")
                put(line, "low", styles("low"))
            line.append(" " * (1 + max(0, marks - len(mark))))
            room = (list_width - line.cell_len) if list_width else QUOTE_CHARS  # no width before the first layout
            if a["quote"]:
                put(line, visible(short(self.mask(a["quote"]), max(12, room))), "italic", 2 if a["note"] else 0)
            if a["note"]:
                put(line, "✎ " + one_line(self.mask(a["note"])), "dim")
            rows.append(Row(line, a["id"]))
        return rows

    @on(RowsView.Highlighted, "#annotations")
    def jump_to_quote(self, event: RowsView.Highlighted) -> None:
        """Highlighting an annotation in the list shows its quote in its turn."""
        if not event.view.has_focus:
            return  # a refresh of the list, not the reviewer browsing it
        annotation = self._highlighted_annotation()
        if not annotation or annotation["quote_turn_id"] is None:
            return
        for i, turn in enumerate(self.turns):
            if turn["id"] == annotation["quote_turn_id"]:
                if i != self.position:
                    self.show_turn(i)
                self.select_span(annotation["quote_start"], annotation["quote_end"])
                break

    # -- the evidence on the page ------------------------------------------------------

    def _show_evidence(self, active: list[dict[str, Any]]) -> None:
        """Highlight every quote in force where it stands, and say again what is under the cursor."""
        self._active = {a["id"]: a for a in active}
        self.evidence = review_evidence.highlights(active)
        self.transcript.set_highlights(self._highlights())
        self._show_under_cursor()

    def _cursor_place(self) -> tuple[str, int] | None:
        """Where the keyboard's cursor points: the start of the selection, else the cursor."""
        transcript = self.transcript
        selection = transcript.selection
        if selection is not None:
            return selection[0], selection[1]
        return transcript.cursor

    def annotations_at(self, place: tuple[str, int] | None) -> list[dict[str, Any]]:
        """The annotations whose quotes cover a character, the one drawn on top (or chosen last) first."""
        if place is None:
            return []
        spans = [h for h in self.evidence.get(place[0], ()) if h.start <= place[1] < h.end]
        return review_evidence.under(spans, self._active, self._chosen)

    @on(TranscriptView.SelectionChanged)
    @on(TranscriptView.Pointed)
    def _show_under_cursor(self) -> None:
        """The line under the transcript: the annotations under the mouse, else under the cursor, else a legend."""
        if not self.is_mounted:
            return
        transcript = self.transcript
        line = self.query_one("#under", Static)
        pointed = self.annotations_at(transcript.pointer)
        here = pointed or self.annotations_at(self._cursor_place())
        if not here:
            kinds = {h.style for spans in self.evidence.values() for h in spans}
            self._set_under(line, review_evidence.legend(kinds, transcript.get_component_rich_style))
            return
        text = Text()
        if len(here) > 1:
            put(text, f"{len(here)} here:", "bold", 1)
        styles = styles_of(self)
        for i, annotation in enumerate(here):
            if i:
                text.append("  ")
                put(text, "│", "dim", 2)
            of = self._quote_number(annotation)
            text.append_text(review_evidence.describe(annotation, self.scenario, self.mask, styles, of))
        if not pointed and self._e_edits_what_is_here():
            text.append("   ")
            put(text, "e edits " + visible(here[0]["item"]), "dim")
        self._set_under(line, text)

    def _set_under(self, line: Static, text: Text) -> None:
        # Drawn only when it changes: moving to a turn shows the line at once (show_turn), and the
        # cursor's message arriving after that frame would otherwise cost a second frame for nothing.
        if text != self._under_shown:
            self._under_shown = text
            line.update(text, layout=False)

    def _e_edits_what_is_here(self) -> bool:
        """Whether `e` edits the annotation under the cursor: not while a suggestion or the judge's draft has it
        (proposals.proposal_edit), nor in a read-only database."""
        if self.read_only or self.walking or self.suggestion is not None:
            return False
        return not (self.query_one(ScoreCardView).has_focus and self.judge is not None)

    def _quote_number(self, annotation: dict[str, Any]) -> tuple[int, int] | None:
        """Which of its item's quotes this is (an item given on several passages rests on each)."""
        if annotation["kind"] != "score" or self.card is None:
            return None
        try:
            quoted = self.card.item(annotation["item"]).quoted
        except KeyError:
            return None
        ids = [a["id"] for a in quoted]
        return (ids.index(annotation["id"]) + 1, len(ids)) if annotation["id"] in ids else None

    def _annotation_to_edit(self) -> dict[str, Any] | None:
        listed = self.query_one("#annotations", RowsView)
        if listed.has_focus:
            return self._highlighted_annotation()
        here = self.annotations_at(self._cursor_place())
        return here[0] if here else self._highlighted_annotation()

    def go_to_annotation(self, annotation: dict[str, Any]) -> bool:
        """Show the turn an annotation's quote stands in, with the quote selected (what `s` would score with);
        without a quote, the turn it was given on. False when neither is in this run's transcript."""
        span = review_evidence.span_of(annotation)
        turn_id = span[0] if span else annotation.get("turn_id")
        position = next((i for i, t in enumerate(self.turns) if t["id"] == turn_id), None)
        if position is None:
            return False
        self._chosen = annotation["id"]
        if not self.whole and position != self.position:
            self.show_turn(position)  # the whole transcript holds it already: the selection scrolls to it
        if span is not None:
            self.transcript.select_span(*span)
        else:
            self.transcript.place_cursor(turn_id, 0)
        if self.whole:
            self._show_with_its_turn(turn_id, span[1] if span else 0)
        return True

    def _show_with_its_turn(self, turn_id: str, offset: int) -> None:
        """In the whole transcript, scroll so a place shows below its turn's title, or a third down the view."""
        transcript = self.transcript
        layout = transcript.text_layout
        y, top = layout.y_of(turn_id, offset), layout.top(turn_id)
        height = transcript.scrollable_content_region.height or 1
        transcript.scroll_to(y=top if y - top < height * 2 // 3 else y - height // 3, animate=False)

    @on(RowsView.Chosen, "#card")
    def choose_card_row(self, event: RowsView.Chosen) -> None:
        """`enter` on an item of the card: its quote, selected in its turn; again, its next quote (or event)."""
        key = event.key
        if key is None:
            return
        order = {t["id"]: i for i, t in enumerate(self.turns)}
        found = review_evidence.row_annotations(key, list(self._active.values()), order)
        if not found:
            self.notify(f"{key} has nothing given yet: select a quote and score it (s or l).")
            return
        index = (self._visit[1] + 1) % len(found) if self._visit and self._visit[0] == key else 0
        self._visit = (key, index)
        annotation = found[index]
        if not self.go_to_annotation(annotation):
            self.notify(f"{visible(annotation['item'])}: its quote is not in this run's transcript.")
            return
        if review_evidence.span_of(annotation) is None:
            self.notify(f"{visible(annotation['item'])} has no quote: its turn is shown.")
        self._show_under_cursor()

    @on(RowsView.Chosen, "#annotations")
    def choose_listed_annotation(self, event: RowsView.Chosen) -> None:
        """`enter` on an annotation in the list: its quote, selected in its turn, and the keys back on the text."""
        annotation = self._active.get(event.key or "")
        if annotation is None:
            return
        self._visit = None
        if self.go_to_annotation(annotation):
            self.transcript.focus()
