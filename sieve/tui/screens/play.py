"""The Play screen: send the script step by step (or all of it), take over live, watch replies stream.

The screen shows the session's events in the transcript and the panels beside it, and says
which keys apply (the take-over input takes all but three); what runs in the background, and
how it stops, is the runner's (play_runner.py), a model in the player's seat included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Input, Static
from textual.worker import Worker

from sieve.engine.session import Event, Session, TurnDelta, TurnFailed, TurnFinished, TurnStarted
from sieve.safe_text import one_line, visible
from sieve.store.record import turns as record
from sieve.store.record.archive import discard_if_unplayed
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.play_runner import PlayRunner
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.panels import FiguresPanel, StepPanel
from sieve.tui.widgets.text_input import TextInput
from sieve.tui.widgets.transcript import TranscriptView


class LiveInput(TextInput):
    """The take-over input. It lets `c` through to the screen (cancel) while a reply streams and nothing is
    typed; Textual leaves the keys an input consumes out of the footer and the bindings, so this is asked."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        screen = self.screen
        if key == "c" and isinstance(screen, PlayScreen) and screen.c_cancels():
            return False
        return super().check_consume_key(key, character)


class PlayScreen(SieveScreen):
    """Plays one run. The session runs in a worker; its events drive the transcript."""

    BINDINGS = [
        Binding("n", "send_next", "Next step", id="play.next", tooltip="Send the next scripted step, word for word"),
        Binding("a", "play_all", "Play all", id="play.all", tooltip="Play the rest of the script; press again to stop"),
        Binding("t", "take_over", "Take over", id="play.take_over", tooltip="Type a message of your own"),
        Binding(
            "m",
            "model_player",
            "Model plays",
            id="play.model_player",
            tooltip="Hand the player's seat to a model under a brief for a few turns; m again stops",
        ),
        Binding(
            "c", "cancel_reply", "Cancel", id="play.cancel", tooltip="Cancel the streaming reply (its text is kept)"
        ),
        Binding("r", "regenerate", "Regenerate", id="play.regenerate", tooltip="Ask again for the last reply"),
        Binding(
            "left_square_bracket",
            "alternative(-1)",
            "Prev alt",
            id="play.alt_prev",
            tooltip="Choose the previous alternative reply",
        ),
        Binding(
            "right_square_bracket",
            "alternative(1)",
            "Next alt",
            id="play.alt_next",
            tooltip="Choose the next alternative reply",
        ),
        # Priority: the transcript would otherwise take the arrows to scroll; selecting scrolls too.
        Binding("up", "select(-1)", "Select turn", id="play.select_up", show=False, priority=True),
        Binding("down", "select(1)", "Select turn", id="play.select_down", show=False, priority=True),
        Binding("b", "branch", "Branch", id="play.branch", tooltip="A new run from the selected turn"),
        Binding("v", "review", "Review", id="play.review", tooltip="Score this run"),
        Binding("escape", "home", "Home", id="play.home", tooltip="Back to the list of runs"),
        # While the take-over input has the keys: what each key does there, in the footer.
        Binding("enter", "send_typed", "Send", id="play.send", priority=True, tooltip="Send the message typed"),
        Binding(
            "c",
            "cancel_typing",
            "Cancel reply",
            id="play.cancel_typing",
            priority=True,
            tooltip="Cancel the streaming reply (the input is empty; else escape, then c)",
        ),
        Binding("escape", "back_to_script", "Script", id="play.back_to_script", tooltip="Back to the script"),
    ]
    # The keys that mean something while the take-over input has the focus; every other key types.
    TYPING = {"send_typed", "back_to_script", "cancel_typing"}

    def __init__(self, session: Session):
        super().__init__()
        self.session = session
        self.selected: str | None = None  # the selected turn's id
        self.live = False
        self.runner = PlayRunner(self)  # what runs in the background
        self._last_reply: Mapping[str, Any] | None = None
        self._streaming = False  # a reply streams now: the figures say `playing`

    @property
    def run_id(self) -> str:
        return self.session.run_id

    @property
    def busy(self) -> bool:
        return self.runner.busy

    def _typing(self) -> bool:
        return self.is_mounted and self.query_one("#live", Input).has_focus

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if not super().check_action(action, parameters):
            return False
        if not self._typing():
            return action not in self.TYPING
        if action == "cancel_typing":
            return self.c_cancels()
        return action in self.TYPING

    def c_cancels(self) -> bool:
        """In the take-over input, c cancels only while a reply streams and nothing is typed; else it is a letter."""
        return self.busy and not self.query_one("#live", Input).value

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    @on(Input.Changed, "#live")
    def _typed(self) -> None:
        self.refresh_bindings()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Textual calls ReportsWorkerErrors' handler too (it walks the classes): errors are reported there.
        self.refresh_bindings()  # c in the input cancels only while a reply streams

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="main"):
                yield Static(
                    "Nothing sent yet. Press n to send the next step (shown on the right, with what it tests), "
                    "a to play the whole script, t to type a message of your own. Replies stream in here.",
                    id="hint",
                )
                yield TranscriptView(exact=False, id="transcript")
            with Vertical(id="side"):
                yield FiguresPanel(id="figures")
                with VerticalScroll(id="step-scroll"):
                    yield StepPanel(id="step")
        yield LiveInput(placeholder="Your own message; Enter sends it, Escape goes back to the script", id="live")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.session.on_event = self.on_session_event
        self.title = one_line(f"sieve · play · {self.session.scenario.title}")
        self.sub_title = one_line(f"{self.session.settings.model} · run {self.run_id}")
        self.transcript = self.query_one(TranscriptView)
        turns = record.chosen_turns(self.session.db, self.run_id)
        self.query_one("#hint").display = not turns
        self.transcript.set_turns(turns, {t["id"]: self._alternatives(t) for t in turns})
        replies = [t for t in turns if t["role"] == "assistant"]
        self._last_reply = replies[-1] if replies else None
        self._streaming = bool(self._last_reply and self._last_reply["status"] == "streaming")
        self.refresh_panels()

    def on_unmount(self) -> None:
        self._discard_if_unplayed()  # quitting, or another screen in its place

    def _discard_if_unplayed(self) -> None:
        # Left before its first send, the run holds nothing, and a list of empty runs is clutter
        # (issue 26 §7). A write that fails now is left to the next open, which removes a run
        # nothing was sent in once its process is gone.
        if not self.busy:
            try:
                discard_if_unplayed(self.session.db, self.run_id)
            except sqlite3.Error:
                pass

    # -- panels ------------------------------------------------------------------

    def _alternatives(self, turn: Mapping[str, Any]) -> int:
        if turn["role"] != "assistant":
            return 1
        return len(record.alternatives(self.session.db, self.run_id, turn["idx"]))

    def refresh_panels(self) -> None:
        self.query_one(StepPanel).show(self.session.scenario, self.session.next_entry(), self.live)
        run = record.get_run(self.session.db, self.run_id)
        self.query_one(FiguresPanel).show(run, self._last_reply, self._streaming)

    # -- the session's events ------------------------------------------------------

    def on_session_event(self, event: Event) -> None:
        if isinstance(event, TurnDelta):
            # The hot path: one call per token, so nothing here but handing the text on.
            self.transcript.feed(event.turn_id, event.text)
            return
        transcript = self.transcript
        turn = self.session.db.table("turns").get(event.turn_id)
        if isinstance(event, TurnStarted):
            self.query_one("#hint").display = False
            transcript.show(turn, self._alternatives(turn))
            self._select(None)
            self._streaming = event.role == "assistant"
            self.refresh_panels()
        elif isinstance(event, TurnFailed) and event.will_retry:
            self.notify(
                visible(f"{event.error}\nTrying again in {event.retry_in:.1f} s (attempt {event.attempt + 1})."),
                severity="warning",
                timeout=4,
                markup=False,  # the server's words
            )
        elif isinstance(event, (TurnFinished, TurnFailed)):
            transcript.finish(turn, self._alternatives(turn))
            self._last_reply = turn
            self._streaming = False
            self.refresh_panels()

    # -- actions -----------------------------------------------------------------

    def action_send_next(self) -> None:
        if self.runner.playing_model:
            self.runner.stop_model("The model stops after this turn; then the script goes on.", then="next")
            return
        if self.session.next_entry() is None:
            self.notify("The script is finished. Take over (t) to go on live.")
            return
        self.runner.run(self.session.send_next)

    def action_play_all(self) -> None:
        self.runner.play_all()

    def worker_failed(self, worker: Worker, error: BaseException) -> None:
        # The engine has already closed the turn in the record; the screen shows how it ended.
        self.runner.failed()
        self._streaming = False
        for turn in record.chosen_turns(self.session.db, self.run_id)[-2:]:
            if turn["id"] in self.transcript.turns:
                self.transcript.finish(turn, self._alternatives(turn))
        self.refresh_panels()

    def action_cancel_reply(self) -> None:
        self.runner.cancel()

    def action_cancel_typing(self) -> None:
        self.action_cancel_reply()

    def action_regenerate(self) -> None:
        self.runner.run(self.session.regenerate)

    def action_model_player(self) -> None:
        self.runner.model_player()

    def action_take_over(self) -> None:
        if self.runner.playing_model:
            self.runner.stop_model("The model stops after this turn; then send your own message.")
        live = self.query_one("#live", Input)
        live.add_class("-visible")
        live.focus()
        self.live = True
        self.refresh_panels()

    @on(Input.Submitted, "#live")
    def send_live(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if self.runner.run(lambda: self.session.send_live(text)):
            event.input.value = ""

    async def action_send_typed(self) -> None:
        await self.query_one("#live", Input).action_submit()

    def action_back_to_script(self) -> None:
        self._back_to_script()

    def _back_to_script(self) -> None:
        live = self.query_one("#live", Input)
        live.remove_class("-visible")
        self.live = False
        self.transcript.focus()
        self.refresh_panels()

    def action_select(self, delta: int) -> None:
        keys = self.transcript.keys
        if not keys:
            return
        current = keys.index(self.selected) if self.selected in keys else len(keys)
        self._select(keys[max(0, min(len(keys) - 1, current + delta))])

    def _select(self, key: str | None) -> None:
        self.selected = key
        self.transcript.select_turn(key)

    @on(TranscriptView.TurnClicked)
    def turn_clicked(self, event: TranscriptView.TurnClicked) -> None:
        # A click selects the turn as up and down do.
        self._select(event.key)

    def _selected_turn(self) -> dict[str, Any] | None:
        keys = self.transcript.keys
        key = self.selected if self.selected in keys else (keys[-1] if keys else None)
        return self.transcript.turns.get(key) if key else None

    def action_alternative(self, delta: int) -> None:
        if self.busy:
            self.notify("Wait for the reply to finish.", severity="warning")
            return
        turn = self._selected_turn()
        if turn is not None and turn["role"] != "assistant":
            turn = next((t for t in self.transcript.turns.values() if t["idx"] == turn["idx"] + 1), None)
        if turn is None or turn["role"] != "assistant":
            self.notify("Select a reply first (up/down).")
            return
        alts = record.alternatives(self.session.db, self.run_id, turn["idx"])
        if len(alts) < 2:
            self.notify("This reply has no alternatives: regenerate (r) makes one.")
            return
        current = next(i for i, a in enumerate(alts) if a["chosen"])
        target = alts[(current + delta) % len(alts)]
        record.choose(self.session.db, self.run_id, target["idx"], target["alt"])
        self.transcript.finish(dict(target, chosen=1), len(alts))

    def action_branch(self) -> None:
        if self.busy:
            self.notify("Wait for the reply to finish.", severity="warning")
            return
        turn = self._selected_turn()
        if turn is None:
            return
        branch = self.session.branch(turn["idx"])
        self.notify(f"Branched from turn {turn['idx']} into run {branch.run_id}.")
        self.app.switch_screen(PlayScreen(branch))

    def action_review(self) -> None:
        self.app.push_screen(ReviewScreen(RunView.open(self.session.db, self.run_id)))

    def action_home(self) -> None:
        if self.runner.playing_model:
            self.runner.stop_model("Stopping after this turn.")
            return
        if self.query_one("#live", Input).has_focus:
            self._back_to_script()
            return
        if self.busy:
            self.notify("A reply is streaming: cancel it (c) before leaving.", severity="warning")
            return
        self._discard_if_unplayed()  # before Home lists the runs
        self.app.go_home()
