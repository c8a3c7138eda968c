"""Annotating in Review: the pickers (`s`, `l`, an item's id typed), saving what was picked with the selected
span as its quote, editing and deleting an annotation, undo and redo (each saying what it undid).

Every annotation is made by `sieve.store.scoring.evidence.annotate`, which verifies the quote and
applies the scenario's rules; a refusal is said on the screen and nothing is saved. The quote saved
is the span selected when the picker saves (the picker's quote keys move it, and show it); after a
save nothing is selected, so a quote never carries over to the next item unseen. A value that
disqualifies the run, and a score without the quote its rubric asks for, are saved only when the
reviewer says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from sqlite_utils import Database
from textual import events
from textual.binding import ActiveBinding

from sieve.safe_text import visible
from sieve.scenarios import Scenario
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.record.rows import Annotation, Turn
from sieve.store.scoring import evidence
from sieve.store.scoring.labels import annotation_label
from sieve.store.scoring.navigation import Task
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.dialogs import Confirm
from sieve.tui.screens.picker_entries import Choice, deduction_entry_id, score_entries, value_id_of
from sieve.tui.screens.pickers import Picker, counter_picker, every_picker, rubric_picker
from sieve.tui.screens.review.host import Notifies
from sieve.tui.widgets.overlay import Overlay, overlay_open
from sieve.tui.widgets.transcript import TranscriptView


class AnnotatingHost(Notifies, Protocol):
    """What annotating needs of its screen."""

    view: RunView
    db: Database
    run_id: str
    scenario: Scenario
    read_only: bool
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
    def transcript(self) -> TranscriptView: ...
    @property
    def active_bindings(self) -> dict[str, ActiveBinding]: ...
    def mask(self, text: str) -> str: ...
    def selected_quote(self) -> Quote | None: ...
    def ask(self, overlay: Overlay, on_done: Callable[[Any], None]) -> None: ...
    def refresh_card(self) -> None: ...
    def show_header(self) -> None: ...


class Annotating:
    """Pickers over the transcript, and what they save."""

    def __init__(self, host: AnnotatingHost) -> None:
        self.host = host
        # One picker, made the first time and kept (hidden between items): opening it and saving from it
        # mount and free nothing (widgets/overlay.py).
        self.picker: Picker | None = None
        scenario = host.scenario
        # The characters an id typed straight away may begin with (T7, L3, P1).
        self._first_chars = (
            {e.id[0] for e in score_entries(scenario)}
            | {c.id[0] for c in scenario.counters}
            | {p.id[0] for p in scenario.probes}
        )

    def _max_chain(self) -> int:
        return max(2, sum(1 for t in self.host.turns if t["role"] == "assistant"))

    def _shown(self, quote: Quote | None = None) -> str | None:
        """The quote as the picker shows it (masked in a blind review): the selected span's, else `quote`."""
        quote = self.host.selected_quote() or quote
        return self.host.mask(quote.text) if quote else None

    def _reselect(self, move: str) -> str | None:
        """A picker's quote key: the transcript's selection moved, and the quote it leaves."""
        self.host.transcript.move_selection(move)
        return self._shown()

    def _ask(self, picker: Picker, on_done: Callable[[Any], None]) -> None:
        self.picker = picker
        self.host.ask(picker, on_done)

    def _with_quote(self, choice: Choice | None, kept: Quote | None = None, replaces: str | None = None) -> None:
        """Save what a picker chose with the span selected now (else `kept`, an edited annotation's own quote)."""
        self._save(choice, self.host.selected_quote() or kept, replaces)

    def open_picker(self, which: str, preselect: str) -> None:
        """The picker (`score`, `count` or `every`) on one entry (what the header offers); escaping it keeps the entry
        offered: `i`, `s` and `l` open on it again."""
        scenario = self.host.scenario
        if which == "score":
            picker = rubric_picker(scenario, self._shown(), preselect, reselect=self._reselect, into=self.picker)
        elif which == "count":
            chain = self._max_chain()
            picker = counter_picker(
                scenario, self._shown(), chain, preselect, reselect=self._reselect, into=self.picker
            )
        else:
            picker = every_picker(
                scenario, self._shown(), self._max_chain(), "", preselect, reselect=self._reselect, into=self.picker
            )
        self._ask(picker, self._with_quote)

    def _open_on_offered(self, own: str) -> bool:
        """`s` or `l` while the header offers something that the other key's picker holds (`s` on L1 at m1): the
        picker of everything, open on it, as the header says. False when nothing of the other kind is offered."""
        offered = self.host.offered
        if offered is None or offered.picker == own:
            return False
        self.open_picker("every", offered.id)
        return True

    def score(self) -> None:
        if self._open_on_offered("score"):
            return
        offered = self.host.offered
        preselect = offered.id if offered is not None else None
        picker = rubric_picker(self.host.scenario, self._shown(), preselect, reselect=self._reselect, into=self.picker)
        self._ask(picker, self._with_quote)

    def count(self) -> None:
        scenario = self.host.scenario
        if self._open_on_offered("count"):
            return
        if not scenario.counters and not scenario.probes:
            self.host.notify("This scenario has no counters and no probes.")
            return
        offered = self.host.offered
        preselect = offered.id if offered is not None else None
        chain = self._max_chain()
        picker = counter_picker(scenario, self._shown(), chain, preselect, reselect=self._reselect, into=self.picker)
        self._ask(picker, self._with_quote)

    def typed(self, event: events.Key) -> bool:
        """An item's id typed straight away (`T7`) opens the picker on it, with the selected span as the quote.

        Only a character that begins some id and is none of the screen's own keys (R
        in a blind review, U, N while searching keep their meaning). True: it did.
        """
        host = self.host
        char = event.character
        if (
            not char
            or char not in self._first_chars
            or host.read_only
            or overlay_open(host)
            or host.transcript.screen.focused is not host.transcript  # (has_focus waits for an event)
            or event.key in host.active_bindings
        ):
            return False
        event.stop()
        event.prevent_default()
        chain = self._max_chain()
        picker = every_picker(host.scenario, self._shown(), chain, char, reselect=self._reselect, into=self.picker)
        self._ask(picker, self._with_quote)
        return True

    def _save(self, choice: Choice | None, quote: Quote | None, replaces: str | None = None) -> None:
        if choice is None:
            return
        scenario = self.host.scenario
        rubric = next((r for r in scenario.rubrics if r.id == choice.rubric), None)
        # A written judgment is the reviewer's own words, no number: a quote is welcome, never asked for.
        needs_quote = choice.kind in ("score", "deduction")
        unquoted = quote is None and needs_quote and rubric is not None and rubric.quote_required
        questions = []
        if choice.disqualifies:  # one key must never disqualify a run unasked
            questions.append(f"{choice.describe(scenario)} disqualifies the run.")
        if unquoted:
            # The rubric asks for a verbatim quote: a score without one is saved only
            # when the reviewer says so, and then it is marked low confidence.
            assert rubric is not None
            questions.append(f"{choice.target} has no quote, and rubric {rubric.id} asks for a verbatim one.")
        off = self._off_its_step(choice, quote)
        if off:
            # Kept, but no evidence: said before the save, not found afterwards as a ✗ on the card.
            questions.append(off + ": it is kept as low-confidence evidence.")
        if questions:
            confidence = "low" if unquoted else None
            low = unquoted or bool(off)
            message = "\n".join(questions) + "\nSave it anyway" + (", marked low confidence?" if low else "?")
            self.host.ask(
                Confirm(message), lambda yes: self._store(choice, quote, replaces, confidence) if yes else None
            )
            return
        self._store(choice, quote, replaces, None)

    def _off_its_step(self, choice: Choice, quote: Quote | None) -> str | None:
        """What to say when the quote stands at a step its item is not judged on (evidence.off_step), else None."""
        if quote is None or choice.kind != "score":  # a verdict names its own step; a probe's off-step quote is refused
            return None
        view = self.host.view
        if not evidence.off_step(
            view.scenario, choice.target, view.steps.get(quote.turn_id or ""), set(view.steps.values())
        ):
            return None
        return evidence.off_step_text(choice.target, evidence.judged_on(view.scenario, choice.target))

    def _store(self, choice: Choice, quote: Quote | None, replaces: str | None, confidence: str | None) -> None:
        host = self.host
        turn_id = quote.turn_id if quote else (host.turns[host.position]["id"] if host.turns else None)
        try:
            evidence.annotate(
                host.db,
                host.run_id,
                quote=quote,
                view=host.view,
                reviewer=host.reviewer,
                item=choice.target,
                rubric=choice.rubric,
                kind=choice.kind,
                score=choice.score,
                score_high=choice.score_high,
                value=choice.value,
                note=choice.note,
                turn_id=turn_id,
                step_id=None if choice.kind == "verdict" else host.view.steps.get(turn_id or ""),
                replaces=replaces,
                confidence=confidence,
                seconds=round(time.monotonic() - choice.started, 3),
                source="review",
                blind=host.blind_now,
            )
        except evidence.EvidenceRefused as exc:
            host.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return
        if host.offered is not None and host.offered.id == choice.target:
            host.offered = None
        host.transcript.clear_selection()  # the quote is spent: the next item's is chosen anew
        host.refresh_card()

    def edit(self, annotation: Annotation | None) -> None:
        """The picker on the annotation's own item, its value and note; the quote stays unless a span is selected.

        The annotation is the one under the cursor (the line under the transcript names it first), else the
        one highlighted in the list; in the list, always the list's (Evidence.to_edit).
        """
        if annotation is None:
            self.host.notify("Put the cursor on a highlighted quote, or highlight an annotation in the list (tab).")
            return
        self.edit_annotation(annotation)

    def edit_annotation(self, annotation: Annotation) -> None:
        """The picker on this annotation's item, value and note; saving replaces it."""
        host = self.host
        own = (
            Quote(annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"], annotation["quote"])
            if annotation["quote"] is not None
            else None
        )
        shown = self._shown(own)
        given = {"value": value_id_of(annotation), "note": annotation["note"], "reselect": self._reselect}
        kind = annotation["kind"]
        if kind in ("score", "deduction", "judgment"):
            entry = annotation["item"]
            if kind == "deduction":
                entry = deduction_entry_id(next(r for r in host.scenario.rubrics if r.id == annotation["rubric"]))
            picker = rubric_picker(host.scenario, shown, entry, into=self.picker, **given)
        else:
            chain = self._max_chain()
            picker = counter_picker(host.scenario, shown, chain, annotation["item"], into=self.picker, **given)
        self._ask(picker, lambda c: self._with_quote(c, own, annotation["id"]))

    def edit_by_id(self, annotation_id: str) -> None:
        """The edit picker on one of the reviewer's annotations (its quote stands in the turn shown)."""
        host = self.host
        annotation = next((a for a in host.view.annotations(host.reviewer) if a["id"] == annotation_id), None)
        if annotation is None:
            return
        turn_id, start, end = annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"]
        if turn_id in host.transcript.keys and start is not None and end is not None:
            host.transcript.select_span(turn_id, start, end)
        self.edit_annotation(annotation)

    def delete(self, annotation: Annotation | None) -> None:
        """Delete the annotation under the cursor, else the one highlighted in the list (in the list, its own)."""
        if annotation is None:
            self.host.notify("Put the cursor on a highlighted quote, or highlight an annotation in the list (tab).")
            return
        notes.remove(self.host.db, annotation["id"], self.host.reviewer)
        self.host.refresh_card()

    def undo(self) -> None:
        touched = notes.undo(self.host.db, self.host.run_id, self.host.reviewer)
        self.host.notify(self._said(touched, undone=True) if touched else "Nothing to undo.", markup=False)
        self.host.refresh_card()

    def redo(self) -> None:
        touched = notes.redo(self.host.db, self.host.run_id, self.host.reviewer)
        self.host.notify(self._said(touched, undone=False) if touched else "Nothing to redo.", markup=False)
        self.host.refresh_card()

    def _said(self, touched: list[str], *, undone: bool) -> str:
        """What an undo or a redo did, by name: `undid T3 = 2`, `undid T3 = 2 (T3 = 1 is back)`."""
        scenario = self.host.scenario
        rows = notes.by_ids(self.host.db, touched)
        gone = [annotation_label(a, scenario) for a in rows if a["removed"] is not None]
        back = [annotation_label(a, scenario) for a in rows if a["removed"] is None]
        # Undone, a gesture's additions are gone and what it removed is back; redone, the other way round.
        made, unmade = (gone, back) if undone else (back, gone)
        verb = "undid" if undone else "redid"
        if not made:  # the gesture only removed: a deletion
            return visible(f"{verb} the deletion of {', '.join(unmade)}")
        text = f"{verb} {', '.join(made)}"
        if unmade:
            text += f" ({', '.join(unmade)} {'is back' if undone else 'replaced again'})"
        return visible(text)
