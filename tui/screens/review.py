"""The Review screen: move through the turns, select a span, score it by keystroke.

The selected span becomes the quote, with its turn and character offsets in the
turn's original text; the score card beside updates at once.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from sqlite_utils import Database
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Selection

from scenarios import Scenario
from store import annotations as notes
from store import turns as record
from store.annotations import Quote
from store.blind import code as blind_code
from store.blind import run_masker as blind_run_masker
from store.scorecard import build_card

from ..safe_text import visible
from ..widgets.scorecard import ScoreCardView, short, verification_mark
from ..widgets.transcript import turn_title
from .pickers import Choice, counter_picker, rubric_picker

# Same-length stand-ins, so an offset in the shown text is an offset in the original.
_STAND_INS = {i: "�" for i in [*range(0, 9), *range(11, 32), 127, *range(128, 160)]}
_STAND_INS[13] = "␍"
_STAND_INS[27] = "␛"


def shown_text(text: str) -> str:
    """The turn's text as the TextArea shows it: controls replaced one for one."""
    return text.translate(_STAND_INS)


class ReviewScreen(Screen):
    BINDINGS = [
        Binding("n", "turn(1)", "Next turn", id="review.next_turn", tooltip="The next turn"),
        Binding("p", "turn(-1)", "Prev turn", id="review.prev_turn", tooltip="The previous turn"),
        Binding("s", "score", "Score", id="review.score", tooltip="Score a rubric item with the selected span as its quote"),
        Binding("l", "count", "L event", id="review.count", tooltip="Record an L-axis event or a probe's mark"),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last annotation"),
        Binding("U,ctrl+y", "redo", "Redo", id="review.redo", tooltip="Redo what was undone"),
        Binding("e", "edit", "Edit", id="review.edit", tooltip="Change the annotation highlighted in the list"),
        Binding("x,delete", "delete", "Delete", id="review.delete", tooltip="Delete the annotation highlighted in the list"),
        Binding("R", "reveal", "Reveal", id="review.reveal", tooltip="Blind review: show which model this is (once every item is scored)"),
        Binding("escape", "back", "Back", id="review.back", tooltip="Back to where you came from"),
    ]

    DEFAULT_CSS = """
    ReviewScreen #main { width: 1fr; }
    ReviewScreen #side { width: 64; }
    ReviewScreen #context { height: auto; max-height: 8; color: $text-muted; padding: 0 1; border-bottom: solid $secondary; }
    ReviewScreen #turn-title { height: 1; padding: 0 1; text-style: bold; }
    ReviewScreen #text { height: 1fr; }
    ReviewScreen #annotations { height: 12; border: round $secondary; border-title-color: $secondary; }
    """

    def __init__(self, db: Database, scenario: Scenario, run_id: str, reviewer: str, blind: bool = False):
        super().__init__()
        self.db = db
        self.scenario = scenario
        self.run_id = run_id
        self.reviewer = reviewer
        self.blind = blind
        self.revealed = False
        # In a blind review, names of models and makers are masked (same length, so
        # offsets still point into the original text).
        self.mask = blind_run_masker(db, run_id) if blind else (lambda text: text)
        self.turns: list[dict[str, Any]] = []
        self.position = 0
        self._step_of_reply: dict[str, str] = {}

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
        return True

    def _identify(self) -> None:
        if self.blind and not self.revealed:
            self.sub_title = f"blind review · {blind_code(self.db, self.run_id)} · reviewer {self.reviewer}"
            return
        run = record.get_run(self.db, self.run_id)
        if self.revealed:
            providers = sorted({t["provider"] for t in self.turns if t["provider"]})
            cost = "-" if run["cost"] is None else f"${run['cost']:.4f}"
            self.sub_title = (
                f"{blind_code(self.db, self.run_id)} is {run['model']} via {run['endpoint']} "
                f"({', '.join(providers) or 'no provider'}), cost {cost} · reviewer {self.reviewer}"
            )
            return
        self.sub_title = f"{run['model']} · run {self.run_id} · reviewer {self.reviewer}"

    def on_mount(self) -> None:
        self.title = f"sieve · review · {self.scenario.title}"
        self._identify()
        self.query_one("#annotations", OptionList).border_title = "annotations (e edit, x delete)"
        self.reload_turns()
        replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
        self.show_turn(replies[0] if replies else 0)
        self.refresh_card()
        self.query_one("#text", TextArea).focus()

    def reload_turns(self) -> None:
        self.turns = record.chosen_turns(self.db, self.run_id)
        self._step_of_reply = {}
        step = None
        for turn in self.turns:
            if turn["role"] == "user":
                step = turn["step_id"] or f"live@{turn['idx']}"
            elif turn["role"] == "assistant" and step:
                self._step_of_reply[turn["id"]] = step

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
        area.selection = Selection(area.document.get_location_from_index(start), area.document.get_location_from_index(end))

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
        turn_id = quote.turn_id if quote else (self.turns[self.position]["id"] if self.turns else None)
        notes.add(
            self.db,
            self.run_id,
            reviewer=self.reviewer,
            item=choice.target,
            rubric=choice.rubric,
            kind=choice.kind,
            score=choice.score,
            score_high=choice.score_high,
            value=choice.value,
            quote=quote,
            note=choice.note,
            turn_id=turn_id,
            replaces=replaces,
            blind=self.blind and not self.revealed,
        )
        if quote is None:
            self.notify(f"{choice.target} saved without a quote.", severity="warning")
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
        card = build_card(self.scenario, notes.active(self.db, self.run_id, self.reviewer), self._step_of_reply)
        missing = [i.item.id for r in card.rubrics for i in r.items if not i.scored]
        if missing:
            self.notify(f"Finish scoring first: {len(missing)} items not scored ({' '.join(missing[:8])}{' …' if len(missing) > 8 else ''}).", severity="warning")
            return
        self.revealed = True
        self.mask = lambda text: text
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
        active = notes.active(self.db, self.run_id, self.reviewer)
        self.query_one(ScoreCardView).show(build_card(self.scenario, active, self._step_of_reply), self.mask)
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
        if a["kind"] == "score":
            value = self.scenario.item(a["item"])[1].scale
            shown = value.label(a["score"]) + (f"–{value.label(a['score_high'])}" if a["score_high"] is not None else "")
        elif a["kind"] == "count":
            shown = f"chain {int(a['score'])}" if a["score"] is not None else "+1"
        else:
            shown = a["value"] or ""
        line.append(f"{visible(shown):<9}")
        mark, style = verification_mark(a)
        line.append(mark + " ", style=style)
        line.append(visible(short(self.mask(a["quote"] or ""))), style="italic")
        if a["note"]:
            line.append("\n      ✎ " + visible(self.mask(a["note"])), style="dim")
        return line

    @on(OptionList.OptionHighlighted, "#annotations")
    def jump_to_quote(self, event: OptionList.OptionHighlighted) -> None:
        """Highlighting an annotation in the list shows its quote in its turn."""
        if not event.option_list.has_focus:
            return  # a refresh of the list, not the reviewer browsing it
        annotation = next((a for a in notes.active(self.db, self.run_id, self.reviewer) if a["id"] == event.option.id), None)
        if not annotation or annotation["quote_turn_id"] is None:
            return
        for i, turn in enumerate(self.turns):
            if turn["id"] == annotation["quote_turn_id"]:
                if i != self.position:
                    self.show_turn(i)
                self.select_span(annotation["quote_start"], annotation["quote_end"])
                break
