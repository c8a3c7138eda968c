"""The transcript: one TurnView per message, replies streaming in as they arrive.

Model text is data: it is shown as plain text (never Rich markup), with control
characters made visible. A streaming reply is split into blocks of bounded size
and only the last block is redrawn, so the cost of an update does not grow with
the length of the reply; updates are batched to at most twenty a second.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from sieve.safe_text import visible

BLOCK = 3000  # characters in one block of a long reply before a new block starts (at a newline)
HARD_BLOCK = 8000  # a paragraph this long without a newline is cut at a space
FRAME = 0.05  # seconds between redraws of a streaming reply
FAST_FRAME = 0.25  # ... when more than FAST_CHARS arrived in one frame
FAST_CHARS = 4000

ROLE_TITLES = {"system": "system prompt", "user": "player", "assistant": "model"}
STATUS_NOTES = {
    "streaming": "streaming…",
    "cancelled": "cancelled by the reviewer (partial text kept)",
    "failed": "failed",
    "filtered": "filtered",
    "length": "cut at the output ceiling",
    "interrupted": "interrupted (partial text kept)",
}


def turn_title(turn: dict[str, Any], alternatives: int = 1) -> str:
    role = ROLE_TITLES.get(turn["role"], turn["role"])
    if turn.get("speaker"):  # a chat's speaker by name (a group chat has several)
        role += f" ({turn['speaker']})"
    if turn["role"] == "user":
        if turn["origin"] == "live":
            where = "live"
        elif turn["step_id"]:
            where = turn["step_id"] + (f" #{turn['step_repeat']}" if (turn["step_repeat"] or 1) > 1 else "")
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


class TurnView(Vertical):
    """One message: a title line, its text in blocks, and its error if it has one."""

    def __init__(self, turn: dict[str, Any], alternatives: int = 1):
        super().__init__(classes=f"-{turn['role']} -{turn['status']}")
        self.turn = dict(turn)
        self.alternatives = alternatives
        self._blocks: list[str] = []
        self._statics: list[Static] = []
        self._pending: list[str] = []
        self._scheduled = False
        self._frame = FRAME

    @property
    def turn_id(self) -> str:
        return self.turn["id"]

    def compose(self):
        yield Static(Text(visible(turn_title(self.turn, self.alternatives))), classes="title")
        yield Static("", classes="error")

    def on_mount(self) -> None:
        self.query_one(".error", Static).display = False
        self._append(self.turn["text"] + "".join(self._pending))
        self._pending.clear()
        self._show_error()

    # -- streaming ---------------------------------------------------------------

    def feed(self, text: str) -> None:
        """Take a delta; it is drawn with the others at the next frame."""
        self._pending.append(text)
        if not self._scheduled and self.is_mounted:
            self._scheduled = True
            self.set_timer(self._frame, self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if self._pending and self.is_mounted:
            text = "".join(self._pending)
            self._pending.clear()
            # A stream faster than anyone reads gets fewer, larger frames: each frame
            # redraws the scrolled transcript, and that time is taken from the stream.
            self._frame = FAST_FRAME if len(text) > FAST_CHARS else FRAME
            self._append(text)

    def _append(self, text: str) -> None:
        """Add text to the last block, starting new blocks as it grows; only those are redrawn."""
        if not text:
            return
        if not self._blocks:
            self._blocks = [""]
        last = len(self._blocks) - 1
        self._blocks[last:] = _split(self._blocks[last] + text)
        error = self.query_one(".error", Static)
        for i in range(last, len(self._blocks)):
            content = _shown(self._blocks[i])
            if i < len(self._statics):
                self._statics[i].update(content)
            else:
                static = Static(content, classes="block")
                self._statics.append(static)
                self.mount(static, before=error)

    @property
    def text(self) -> str:
        return "".join(self._blocks) + "".join(self._pending)

    # -- after the reply ---------------------------------------------------------

    def finish(self, turn: dict[str, Any], alternatives: int | None = None) -> None:
        """Redraw the title and error for the turn's final state (text kept as streamed)."""
        self.flush()
        old_status = self.turn["status"]
        self.turn.update(turn)
        if alternatives is not None:
            self.alternatives = alternatives
        self.remove_class(f"-{old_status}")
        self.add_class(f"-{self.turn['status']}")
        self.query_one(".title", Static).update(Text(visible(turn_title(self.turn, self.alternatives))))
        if self.text != turn["text"]:
            self.replace_text(turn["text"])
        self._show_error()

    def replace_text(self, text: str) -> None:
        for static in self._statics:
            static.remove()
        self._statics = []
        self._blocks = []
        self._pending.clear()
        self._append(text)

    def _show_error(self) -> None:
        error = self.query_one(".error", Static)
        message = self.turn.get("error")
        if message and self.turn["status"] in ("failed", "filtered", "interrupted", "cancelled"):
            error.update(Text(visible(message)))
            error.display = True
        else:
            error.display = False


def _split(text: str) -> list[str]:
    """Cut text into blocks after a newline, so that blocks stack into the same lines.

    Only a paragraph longer than HARD_BLOCK without any newline is cut at a space.
    """
    blocks = []
    while len(text) > BLOCK:
        cut = text.rfind("\n", 0, BLOCK) + 1 or text.find("\n", BLOCK, HARD_BLOCK) + 1
        if cut == 0:
            if len(text) <= HARD_BLOCK:
                break
            cut = text.rfind(" ", 0, HARD_BLOCK) + 1 or HARD_BLOCK
        blocks.append(text[:cut])
        text = text[cut:]
    blocks.append(text)
    return blocks


def _shown(block: str) -> Text:
    # A block's closing newline is the line break between it and the next block.
    return Text(visible(block[:-1] if block.endswith("\n") else block))


class Transcript(VerticalScroll):
    """The conversation; follows the end while replies stream unless the reviewer scrolled up."""

    def on_mount(self) -> None:
        self.anchor()

    def views(self) -> list[TurnView]:
        return list(self.query(TurnView).results(TurnView))

    def view(self, turn_id: str) -> TurnView | None:
        for view in self.views():
            if view.turn_id == turn_id:
                return view
        return None

    def view_at(self, idx: int) -> TurnView | None:
        for view in self.views():
            if view.turn["idx"] == idx:
                return view
        return None

    def show(self, turn: dict[str, Any], alternatives: int = 1) -> TurnView:
        """Add a turn, or replace the view of the turn at the same position (a new alternative)."""
        old = self.view_at(turn["idx"])
        view = TurnView(turn, alternatives)
        if old is not None:
            self.mount(view, after=old)
            old.remove()
        else:
            self.mount(view)
        return view
