"""A search of Review's transcript: the words asked for, where they stand, and which of those places is current."""

from __future__ import annotations

from dataclasses import dataclass, field

from sieve.store.scoring.navigation import Hit
from sieve.tui.widgets.transcript import Highlight


@dataclass
class Search:
    """No search is on while `text` is None; `current` is the index of the hit shown, -1 before the first."""

    text: str | None = None
    hits: list[Hit] = field(default_factory=list)
    current: int = -1

    @property
    def on(self) -> bool:
        return self.text is not None

    def start(self, text: str, hits: list[Hit], order: dict[str, int], position: int) -> None:
        """A new search, found at `hits`; the next hit is the first in the turn at `position` (in `order`) or after."""
        self.text, self.hits = text, hits
        self.current = next((i for i, h in enumerate(hits) if order[h.turn_id] >= position), 0) - 1

    def step(self, delta: int) -> Hit | None:
        """The next (or previous) hit, round the ends; None when there is none."""
        if not self.hits:
            return None
        self.current = (self.current + delta) % len(self.hits)
        return self.hits[self.current]

    def end(self) -> None:
        self.text, self.hits, self.current = None, [], -1

    def highlights(self) -> dict[str, list[Highlight]]:
        """The hits, as marks on the transcript."""
        out: dict[str, list[Highlight]] = {}
        for hit in self.hits:
            out.setdefault(hit.turn_id, []).append(Highlight(hit.start, hit.end, "search"))
        return out

    def status(self) -> str:
        """What the header says while the search is on: `search “coins”: 2 of 14 (n N, escape ends)`."""
        where = f"{self.current + 1} of {len(self.hits)}" if self.current >= 0 else f"{len(self.hits)} hits"
        return f"search “{self.text}”: {where} (n N, escape ends)"
