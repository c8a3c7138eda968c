"""The turns a transcript shows, each a block of lines (its title, its text as shown, its error), and the text streamed into them that waits for the next frame.

No Textual here: the widget (transcript.py) draws what this holds and times the
frames; this says how long the next one waits (longer for a stream faster than
anyone reads). A turn keeps its place by its position in the run (`idx`), so a new
alternative or a turn's final state replaces the block at that place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sieve.safe_text import one_line, visible
from sieve.store.scoring.labels import ROLE_TITLES, played_label, turn_label
from sieve.tui.widgets.layout import Block, Layout, shown_text

FRAME = 0.05  # seconds between redraws of a streaming reply
FAST_FRAME = 0.25  # ... when more than FAST_CHARS arrived in one frame: faster than anyone reads
FAST_CHARS = 4000

STATUS_NOTES = {
    "streaming": "streaming…",
    "cancelled": "cancelled by the reviewer (partial text kept)",
    "failed": "failed",
    "filtered": "filtered",
    "length": "cut at the output ceiling",
    "interrupted": "interrupted (partial text kept)",
}


def turn_title(turn: Mapping[str, Any], alternatives: int = 1) -> str:
    """A turn's title line: its number, who speaks and from where (a step, live, a model playing), which
    alternative it is of how many, and a note on its status (STATUS_NOTES: streaming, cancelled, ...)."""
    role = ROLE_TITLES.get(turn["role"], turn["role"])
    if turn.get("speaker"):  # a chat's speaker by name (a group chat has several)
        role += f" ({turn['speaker']})"
    if turn["role"] == "user":
        if turn["origin"] == "live":
            where = "live"
        elif turn["origin"] == "player":
            where = played_label(turn)
        elif turn["step_id"]:
            where = turn_label(turn)
        else:
            where = turn["origin"]
        title = f"{turn['idx']} · {role} · {where}"
    else:
        title = f"{turn['idx']} · {role}"
    if alternatives > 1:
        title += f" · alternative {turn['alt'] + 1} of {alternatives}" + (" (chosen)" if turn["chosen"] else "")
    note = STATUS_NOTES.get(turn["status"])
    if note:
        title += f" · {note}"
    return title


class TurnBlocks:
    """The turns by id, in the order shown, their blocks laid out at the transcript's width, the deltas
    streamed into them since the last frame (`pending`: the widget appends to its lists) and how long the
    next frame waits (`frame`)."""

    def __init__(self, exact: bool = True) -> None:
        """`exact`: control characters as same-length stand-ins, so offsets are the original's (Review);
        else written out as escapes (Play)."""
        self.exact = exact
        self.layout = Layout(80)
        self.turns: dict[str, dict[str, Any]] = {}
        self.pending: dict[str, list[str]] = {}
        self.frame = FRAME

    def shown(self, text: str) -> str:
        return shown_text(text) if self.exact else visible(text)

    def block(self, turn: Mapping[str, Any], alternatives: int = 1) -> Block:
        error = turn.get("error") if turn["status"] in ("failed", "filtered", "interrupted", "cancelled") else ""
        return Block(
            key=turn["id"],
            # A caller may title a block itself (the step view names the run a reply comes from).
            title=one_line(turn.get("title") or turn_title(turn, alternatives)),
            text=self.shown(turn["text"]),
            error=one_line(error or ""),
        )

    @property
    def keys(self) -> list[str]:
        return [b.key for b in self.layout.blocks]

    def set_turns(self, turns: Sequence[Mapping[str, Any]], alternatives: dict[str, int]) -> None:
        self.pending.clear()
        self.turns = {t["id"]: dict(t) for t in turns}
        self.layout.set_blocks([self.block(t, alternatives.get(t["id"], 1)) for t in turns])

    def _at_place(self, turn: Mapping[str, Any]) -> str | None:
        """The id of the turn shown at the same position in the run as `turn`, if any."""
        return next((k for k, t in self.turns.items() if t["idx"] == turn["idx"]), None)

    def show(self, turn: Mapping[str, Any], alternatives: int = 1) -> str | None:
        """Add a turn at the end, or replace the turn at the same position; the id of the one replaced."""
        old = self._at_place(turn)
        block = self.block(turn, alternatives)
        if old is not None:
            self.turns.pop(old)
            self.turns[turn["id"]] = dict(turn)
            self.layout.replace(old, block)
        else:
            self.turns[turn["id"]] = dict(turn)
            self.layout.add(block)
        return old

    def finish(self, turn: Mapping[str, Any], alternatives: int = 1) -> str:
        """The turn's final state, in place of the turn at its position (else of itself, else at the end);
        the id of the one replaced. What was streamed into it and not drawn yet is dropped."""
        self.pending.pop(turn["id"], None)
        old = self._at_place(turn)
        if old is None:
            old = turn["id"]
        self.turns.pop(old, None)
        self.turns[turn["id"]] = dict(turn)
        if self.layout.block(old) is None:
            self.layout.add(self.block(turn, alternatives))
        else:
            self.layout.replace(old, self.block(turn, alternatives))
        return old

    def flush(self) -> None:
        """Add what was streamed to the turns' blocks, re-wrapping only their last lines."""
        arrived = 0
        for key, parts in self.pending.items():
            block = self.layout.block(key)
            if block is None:
                continue
            more = "".join(parts)
            arrived += len(more)
            block.append(self.shown(more))
            self.layout.grew(key)
        # A stream faster than anyone reads gets fewer, larger frames: a frame's time is taken from the stream.
        self.frame = FAST_FRAME if arrived > FAST_CHARS else FRAME
        self.pending.clear()

    def text_of(self, key: str) -> str:
        """What is shown of a turn, with what is still waiting for the next frame."""
        block = self.layout.block(key)
        shown = block.text if block else ""
        return shown + self.shown("".join(self.pending.get(key, [])))
