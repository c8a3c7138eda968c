"""Excerpts in Review: `m` marks the selected passage as an excerpt with a caption, for the report's excerpts page.

An excerpt scores nothing. It is stored like every annotation, by `evidence.annotate`, which verifies
its quote; `e` on one asks for its caption again, `x` deletes it, `u` undoes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from sqlite_utils import Database

from sieve.safe_text import visible
from sieve.store.record.annotations import EXCERPT, Quote
from sieve.store.record.rows import Annotation
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.dialogs import Prompt
from sieve.tui.screens.review.host import Notifies
from sieve.tui.widgets.overlay import Overlay

QUESTION = "Caption for this excerpt (what the passage shows):"
PLACEHOLDER = "e.g. Havel hands the letter back; enter with nothing cancels"


class ExcerptsHost(Notifies, Protocol):
    """What marking excerpts needs of its screen."""

    view: RunView
    db: Database
    run_id: str

    @property
    def reviewer(self) -> str: ...
    @property
    def blind_now(self) -> bool: ...
    def mask(self, text: str) -> str: ...
    def selected_quote(self) -> Quote | None: ...
    def ask(self, overlay: Overlay, on_done: Callable[[Any], None]) -> None: ...
    def refresh_card(self) -> None: ...


def is_excerpt(annotation: Annotation) -> bool:
    return annotation["kind"] == EXCERPT


class Excerpts:
    """The excerpt key and the caption it asks for."""

    def __init__(self, host: ExcerptsHost) -> None:
        self.host = host

    def mark(self) -> None:
        """Ask for a caption, then store the selected passage as an excerpt."""
        quote = self.host.selected_quote()
        if quote is None:
            self.host.notify("Select the passage first (shift+arrows, or drag), then m marks it as an excerpt.")
            return
        self.host.ask(Prompt(QUESTION, PLACEHOLDER), lambda caption: self._save(quote, caption, None))

    def edit(self, annotation: Annotation) -> None:
        """Ask for the excerpt's caption again; the passage stays."""
        quote = Quote(
            annotation["quote_turn_id"], annotation["quote_start"], annotation["quote_end"], annotation["quote"] or ""
        )
        prompt = Prompt(QUESTION, PLACEHOLDER, self.host.mask(annotation["note"] or ""))
        self.host.ask(prompt, lambda caption: self._save(quote, caption, annotation["id"]))

    def _save(self, quote: Quote, caption: str | None, replaces: str | None) -> None:
        if caption is None:
            return
        host = self.host
        try:
            evidence.annotate(
                host.db,
                host.run_id,
                quote=quote,
                view=host.view,
                reviewer=host.reviewer,
                item=EXCERPT,
                kind=EXCERPT,
                note=caption,
                turn_id=quote.turn_id,
                step_id=host.view.steps.get(quote.turn_id or ""),
                replaces=replaces,
                source="review",
                blind=host.blind_now,
            )
        except evidence.EvidenceRefused as exc:
            host.notify(visible(str(exc)), severity="warning", timeout=8, markup=False)
            return
        host.refresh_card()
        host.notify(f"Excerpt saved: {visible(caption)}", markup=False)
