"""The Review screen: move through the turns, select a span, score it by keystroke.

The selected span becomes the quote, with its turn and character offsets in the
turn's original text; the score card beside updates at once.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from sieve.safe_text import one_line, visible
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.record.db import is_read_only
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import value_text
from sieve.tui.app.screens.base import SieveScreen
from sieve.tui.app.screens.pickers import Choice, Confirm, counter_picker, rubric_picker
from sieve.tui.app.widgets.footer import SieveFooter
from sieve.tui.app.widgets.rows import Row, RowsView
from sieve.tui.app.widgets.scorecard import VERDICT_CLASSES, ScoreCardView, short, styles_of, verification_mark
from sieve.tui.app.widgets.transcript import TranscriptView, turn_title

WRITES = ("score", "count", "undo", "redo", "edit", "delete")


class ReviewScreen(SieveScreen):
    COMPONENT_CLASSES = VERDICT_CLASSES
    BINDINGS = [
        Binding("n", "turn(1)", "Next turn", id="review.next_turn", tooltip="The next turn"),
        Binding("p", "turn(-1)", "Prev turn", id="review.prev_turn", tooltip="The previous turn"),
        Binding(
            "s", "score", "Score", id="review.score", tooltip="Score a rubric item with the selected span as its quote"
        ),
        Binding("l", "count", "L event", id="review.count", tooltip="Record an L-axis event or a probe's mark"),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last annotation"),
        Binding("U,ctrl+y", "redo", "Redo", id="review.redo", tooltip="Redo what was undone"),
        Binding("e", "edit", "Edit", id="review.edit", tooltip="Change the annotation highlighted in the list"),
        Binding(
            "x,delete", "delete", "Delete", id="review.delete", tooltip="Delete the annotation highlighted in the list"
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
                yield TranscriptView(exact=True, cursor=True, id="text")
            with Vertical(id="side"):
                yield ScoreCardView(id="card")
                yield RowsView(id="annotations")
        yield SieveFooter()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if not super().check_action(action, parameters):
            return False  # a picker is open over the screen: its keys are the picker's
        if action == "reveal":
            return self.blind and not self.revealed
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
        self.title = one_line(f"sieve · review · {self.scenario.title}")
        self._identify()
        self.query_one("#annotations", RowsView).border_title = "annotations (e edit, x delete)"
        replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
        self.show_turn(replies[0] if replies else 0)
        self.refresh_card()
        self.query_one(TranscriptView).focus()
        if self.read_only:  # once the screen is showing, so the notice lands on it
            self.call_after_refresh(
                self.notify, "The database is read-only: the run and its scores can be read, not changed.", timeout=10
            )

    # -- moving ------------------------------------------------------------------

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def _shown_turns(self, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Masking keeps every length, so offsets in what is shown are offsets in the original.
        return [dict(t, text=self.mask(t["text"]), error=None) for t in turns]

    def show_turn(self, position: int) -> None:
        if not self.turns:
            self.query_one("#context", Static).update("This run has no turns yet.")
            return
        self.position = max(0, min(len(self.turns) - 1, position))
        turn = self.turns[self.position]
        transcript = self.transcript
        context = self.query_one("#context", Static)
        context.display = not self.whole
        if self.whole:
            if transcript.keys != [t["id"] for t in self.turns]:
                transcript.set_turns(self._shown_turns(self.turns))
            transcript.place_cursor(turn["id"], 0)
            top = transcript.text_layout.top(turn["id"])
            transcript.call_after_refresh(transcript.scroll_to, y=top, animate=False)
            return
        before = self.turns[self.position - 1] if self.position > 0 else None
        text = Text()
        if before is not None:
            text.append(turn_title(before) + "\n", style="bold")
            text.append(visible(self.mask(before["text"])[-600:]))
        # A fixed height (review.tcss): new text needs no layout, only a redraw of these lines.
        context.update(text, layout=False)
        (shown,) = self._shown_turns([turn])
        shown["title"] = f"{turn_title(turn)}   ({self.position + 1} of {len(self.turns)})"
        transcript.set_turns([shown])
        transcript.place_cursor(turn["id"], 0)
        transcript.scroll_home(animate=False)

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
            self.position = next((i for i, t in enumerate(self.turns) if t["id"] == cursor[0]), self.position)

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

    def action_score(self) -> None:
        quote = self.selected_quote()
        shown = self.mask(quote.text) if quote else None
        self._open(rubric_picker(self.scenario, shown), lambda c: self._save(c, quote))

    def action_count(self) -> None:
        quote = self.selected_quote()
        replies = sum(1 for t in self.turns if t["role"] == "assistant")
        if not self.scenario.counters and not self.scenario.probes:
            self.notify("This scenario has no L axis and no probes.")
            return
        picker = counter_picker(self.scenario, self.mask(quote.text) if quote else None, max(2, replies))
        self._open(picker, lambda c: self._save(c, quote))

    def _save(self, choice: Choice | None, quote: Quote | None, replaces: str | None = None) -> None:
        if choice is None:
            return
        rubric = next((r for r in self.scenario.rubrics if r.id == choice.rubric), None)
        if quote is None and choice.kind == "score" and rubric is not None and rubric.quote_required:
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
                replaces=replaces,
                confidence=confidence,
                blind=self.blind and not self.revealed,
            )
        except evidence.EvidenceRefused as exc:
            self.notify(str(exc), severity="warning", timeout=8)
            return
        self.refresh_card()

    def _highlighted_annotation(self) -> dict[str, Any] | None:
        key = self.query_one("#annotations", RowsView).highlighted_key
        if key is None:
            return None
        return next((a for a in self.view.annotations(self.reviewer) if a["id"] == key), None)

    def action_edit(self) -> None:
        annotation = self._highlighted_annotation()
        if annotation is None:
            self.notify("Highlight an annotation in the list first (tab to reach it).")
            return
        quote = self.selected_quote() or (
            Quote(annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"], annotation["quote"])
            if annotation["quote"] is not None
            else None
        )
        shown = self.mask(quote.text) if quote else None
        if annotation["kind"] == "score":
            picker = rubric_picker(self.scenario, shown, preselect=annotation["item"])
        else:
            replies = sum(1 for t in self.turns if t["role"] == "assistant")
            picker = counter_picker(self.scenario, shown, max(2, replies), preselect=annotation["item"])
        self._open(picker, lambda c: self._save(c, quote, replaces=annotation["id"]))

    def action_delete(self) -> None:
        annotation = self._highlighted_annotation()
        if annotation is None:
            self.notify("Highlight an annotation in the list first (tab to reach it).")
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
        self.notify(self.sub_title.split(" · reviewer")[0], title="Revealed", timeout=15)
        self.show_turn(self.position)
        self.refresh_card()
        self.refresh_bindings()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.go_home()

    # -- the card ------------------------------------------------------------------

    def refresh_card(self) -> None:
        active = self.view.annotations(self.reviewer)
        self.query_one(ScoreCardView).show(self.view.card(self.reviewer), self.mask)
        self.query_one("#annotations", RowsView).set_rows(
            [Row(self._annotation_line(a), a["id"]) for a in reversed(active)]
        )

    def _annotation_line(self, a: dict[str, Any]) -> Text:
        line = Text()
        line.append(f"{a['item']:<6}", style="bold")
        try:
            scale = self.scenario.item(a["item"])[1].scale
        except KeyError:
            scale = None
        shown = value_text(a, scale)
        line.append(f"{visible(shown):<9}")
        mark, style = verification_mark(a)
        line.append(mark + " ", style=styles_of(self)(style))
        line.append(visible(short(self.mask(a["quote"] or ""))), style="italic")
        if a["note"]:
            line.append("  ✎ " + one_line(self.mask(a["note"])), style="dim")
        return line

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
