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
from textual.widgets import Footer, Header, OptionList, Static, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Selection

from sieve.safe_text import one_line, visible
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.record.db import is_read_only
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import value_text
from sieve.tui.app.screens.base import SieveScreen
from sieve.tui.app.screens.pickers import Choice, Confirm, counter_picker, rubric_picker
from sieve.tui.app.widgets.scorecard import VERDICT_CLASSES, ScoreCardView, short, styles_of, verification_mark
from sieve.tui.app.widgets.transcript import turn_title

# Same-length stand-ins, so an offset in the shown text is an offset in the original.
_STAND_INS = {i: "�" for i in [*range(0, 9), *range(11, 32), 127, *range(128, 160)]}
_STAND_INS[13] = "␍"
_STAND_INS[27] = "␛"


def shown_text(text: str) -> str:
    """The turn's text as the TextArea shows it: controls replaced one for one."""
    return text.translate(_STAND_INS)


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
                yield Static("", id="turn-title")
                yield TextArea("", id="text", read_only=True, soft_wrap=True, show_line_numbers=False)
            with Vertical(id="side"):
                yield ScoreCardView(id="card")
                yield OptionList(id="annotations")
        yield Footer()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "reveal":
            return self.blind and not self.revealed
        if self.read_only and action in WRITES:
            return False
        return True

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
        self.query_one("#annotations", OptionList).border_title = "annotations (e edit, x delete)"
        replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
        self.show_turn(replies[0] if replies else 0)
        self.refresh_card()
        self.query_one("#text", TextArea).focus()
        if self.read_only:  # once the screen is showing, so the notice lands on it
            self.call_after_refresh(
                self.notify, "The database is read-only: the run and its scores can be read, not changed.", timeout=10
            )

    # -- moving ------------------------------------------------------------------

    def show_turn(self, position: int) -> None:
        if not self.turns:
            self.query_one("#turn-title", Static).update("This run has no turns yet.")
            return
        self.position = max(0, min(len(self.turns) - 1, position))
        turn = self.turns[self.position]
        before = self.turns[self.position - 1] if self.position > 0 else None
        context = Text()
        if before is not None:
            context.append(turn_title(before) + "\n", style="bold")
            context.append(visible(self.mask(before["text"])[-600:]))
        self.query_one("#context", Static).update(context)
        self.query_one("#turn-title", Static).update(
            Text(visible(f"{turn_title(turn)}   ({self.position + 1} of {len(self.turns)})"))
        )
        area = self.query_one("#text", TextArea)
        area.load_text(shown_text(self.mask(turn["text"])))
        area.move_cursor((0, 0))

    def action_turn(self, delta: int) -> None:
        self.show_turn(self.position + delta)

    # -- the selection -------------------------------------------------------------

    def selected_quote(self) -> Quote | None:
        """The selected span of the current turn, in the turn's original text."""
        if not self.turns:
            return None
        area = self.query_one("#text", TextArea)
        start, end = sorted(area.document.get_index_from_location(loc) for loc in area.selection)
        if start == end:
            return None
        turn = self.turns[self.position]
        return Quote(turn["id"], start, end, turn["text"][start:end])

    def select_span(self, start: int, end: int) -> None:
        """Select characters [start, end) of the current turn (what shift+arrows or the mouse do)."""
        area = self.query_one("#text", TextArea)
        area.selection = Selection(
            area.document.get_location_from_index(start), area.document.get_location_from_index(end)
        )

    # -- annotating ----------------------------------------------------------------

    def action_score(self) -> None:
        quote = self.selected_quote()
        shown = self.mask(quote.text) if quote else None
        self.app.push_screen(rubric_picker(self.scenario, shown), lambda c: self._save(c, quote))

    def action_count(self) -> None:
        quote = self.selected_quote()
        replies = sum(1 for t in self.turns if t["role"] == "assistant")
        if not self.scenario.counters and not self.scenario.probes:
            self.notify("This scenario has no L axis and no probes.")
            return
        picker = counter_picker(self.scenario, self.mask(quote.text) if quote else None, max(2, replies))
        self.app.push_screen(picker, lambda c: self._save(c, quote))

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
            self.app.push_screen(
                Confirm(message), lambda yes: self._store(choice, None, replaces, "low") if yes else None
            )
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
        listing = self.query_one("#annotations", OptionList)
        if listing.highlighted is None or not listing.option_count:
            return None
        annotation_id = listing.get_option_at_index(listing.highlighted).id
        return next((a for a in notes.active(self.db, self.run_id, self.reviewer) if a["id"] == annotation_id), None)

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
        self.app.push_screen(picker, lambda c: self._save(c, quote, replaces=annotation["id"]))

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
        listing = self.query_one("#annotations", OptionList)
        highlighted = listing.highlighted
        listing.clear_options()
        for a in reversed(active):
            listing.add_option(Option(self._annotation_line(a), id=a["id"]))
        if listing.option_count:
            listing.highlighted = min(highlighted or 0, listing.option_count - 1)

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
            line.append("\n      ✎ " + visible(self.mask(a["note"])), style="dim")
        return line

    @on(OptionList.OptionHighlighted, "#annotations")
    def jump_to_quote(self, event: OptionList.OptionHighlighted) -> None:
        """Highlighting an annotation in the list shows its quote in its turn."""
        if not event.option_list.has_focus:
            return  # a refresh of the list, not the reviewer browsing it
        annotation = next(
            (a for a in notes.active(self.db, self.run_id, self.reviewer) if a["id"] == event.option.id), None
        )
        if not annotation or annotation["quote_turn_id"] is None:
            return
        for i, turn in enumerate(self.turns):
            if turn["id"] == annotation["quote_turn_id"]:
                if i != self.position:
                    self.show_turn(i)
                self.select_span(annotation["quote_start"], annotation["quote_end"])
                break
