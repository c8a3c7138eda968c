"""What Play runs in the background, one thing at a time: a turn, the rest of the script, or a model in the player's seat.

A turn (a scripted step, a live message, a regeneration) runs to its end unless it is
cancelled (c; its text is kept). Playing the script and a model's turns stop after the
turn under way when asked. The workers are the screen's, so their failures reach it
(sieve.tui.workers); the runner holds what they share: which one runs and whether to stop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import ResultType, Worker, WorkType

from sieve.engine.endpoints import is_local, settings_for
from sieve.engine.player import PLAYER_MAX_TOKENS, Seat
from sieve.engine.session import Session
from sieve.tui.screens.player_dialog import PlayerDialog, SeatRequest
from sieve.tui.screens.review.host import Notifies
from sieve.tui.widgets.overlay import Overlay
from sieve.tui.widgets.transcript import TranscriptView

if TYPE_CHECKING:
    from sieve.tui.app import SieveApp

Job = Callable[[], Awaitable[object]]  # one request of the session's: send_next, a live message, regenerate


class RunnerHost(Notifies, Protocol):
    """What the runner needs of the Play screen: the session, the panels to refresh, its workers and dialogs."""

    session: Session

    @property
    def app(self) -> SieveApp: ...
    @property
    def transcript(self) -> TranscriptView: ...
    def refresh_panels(self) -> None: ...
    def action_send_next(self) -> None: ...
    def open_dialog(self, overlay: Overlay, on_done: Callable[[Any], None], focus: Any = None) -> None: ...
    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...
    def run_worker(
        self,
        work: WorkType[ResultType],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[ResultType]: ...


class PlayRunner:
    """The turn under way (`worker`), what it belongs to (playing the script, a model playing), and whether to stop."""

    def __init__(self, host: RunnerHost) -> None:
        self.host = host
        self.worker: Worker[None] | None = None
        self.stop_after_turn = False
        self.playing_all = False
        self.playing_model = False  # a model sits in the player's seat
        self._after_model: str | None = None  # "next": back to the script when the model stops

    @property
    def busy(self) -> bool:
        return self.worker is not None and self.worker.is_running

    def ready(self) -> bool:
        """Nothing runs (else the reviewer is told so)."""
        if self.busy:
            self.host.notify("A reply is streaming: wait, or cancel it with c.", severity="warning")
            return False
        return True

    def _start(
        self,
        work: WorkType[None],
        name: str,
        description: str,
        group: str = "turn",
        exclusive: bool = True,
        thread: bool = False,
    ) -> Worker[None]:
        """A worker of the screen's, started as `@work(exit_on_error=False, ...)` would: its failure is the screen's."""
        return self.host.run_worker(
            work, name, group, description, exit_on_error=False, exclusive=exclusive, thread=thread
        )

    # -- one turn, the whole script ------------------------------------------------------

    def run(self, job: Job) -> bool:
        """One request in the background: a scripted step, a live message or a regeneration (False: busy)."""
        if not self.ready():
            return False
        self.worker = self._start(partial(self._turn, job), "_turn", "The turn")
        return True

    async def _turn(self, job: Job) -> None:
        try:
            await job()
        finally:
            self.host.refresh_panels()

    def play_all(self) -> None:
        """Play the rest of the script; while it plays, stop after the reply under way."""
        if self.busy and self.playing_all:
            self.stop_after_turn = True
            self.host.notify("Stopping after this reply (c cancels it now).")
            return
        if self.ready():
            self.stop_after_turn = False
            self.worker = self._start(self._play_all, "_play_all", "Playing the script")

    async def _play_all(self) -> None:
        self.playing_all = True
        session = self.host.session
        try:
            while not self.stop_after_turn and session.next_entry() is not None:
                result = await session.send_next()
                if result.status == "failed":
                    self.host.notify(
                        "The reply failed: playing stopped. Regenerate (r) or go on (n).", severity="error"
                    )
                    break
        finally:
            self.playing_all = False
            self.stop_after_turn = False
            self.host.refresh_panels()

    def cancel(self) -> None:
        """Cancel the reply streaming now (its text is kept), and whatever it belongs to."""
        if not self.busy:
            self.host.notify("Nothing is streaming.")
            return
        self.stop_after_turn = True
        if self.worker is not None:  # busy: it is running
            self.worker.cancel()

    def failed(self) -> None:
        """A worker failed: nothing plays any more (the engine has already closed the turn in the record)."""
        self.playing_all = False
        self.playing_model = False
        self.stop_after_turn = False

    # -- a model in the player's seat ---------------------------------------------------

    def model_player(self) -> None:
        """Ask which model plays under which brief, then seat it; while it plays, stop it after the turn."""
        if self.busy and self.playing_model:
            self.stop_model("Stopping after this turn.")
            return
        if not self.ready():
            return
        scenario = self.host.session.scenario
        if not scenario.players:
            self.host.notify("This scenario has no player briefs ([[players]] in its file).", severity="warning")
            return
        self.host.open_dialog(PlayerDialog(scenario), self._seat_chosen, focus=self.host.transcript)

    def stop_model(self, message: str, then: str | None = None) -> None:
        """The model leaves the seat after the turn under way; `then="next"`: the script goes on."""
        self.stop_after_turn = True
        self._after_model = then
        self.host.notify(message)

    def _seat_chosen(self, request: SeatRequest | None) -> None:
        if request is not None:
            # In a thread, and not exclusive: the embedded model may have to start first.
            work = partial(self._prepare_seat, request)
            self._start(
                work, "_prepare_seat", "Seating the player model", group="prepare", exclusive=False, thread=True
            )

    def _prepare_seat(self, request: SeatRequest) -> None:
        app = self.host.app
        scenario = self.host.session.scenario
        local = is_local(request.endpoint)
        if local and app.endpoints.local is None:
            app.call_from_thread(self.host.notify, "Starting the embedded model…")
        gateway = app.endpoints.gateway(request.endpoint)
        settings = settings_for(scenario, request.model, local, {"max_tokens": PLAYER_MAX_TOKENS})
        seat = Seat(scenario.player(request.brief), gateway, settings, turns=request.turns)
        app.call_from_thread(self._seat_model, seat)

    def _seat_model(self, seat: Seat) -> None:
        if self.ready():
            self.stop_after_turn = False
            self.host.notify(
                f"{seat.settings.model} plays the player ({seat.player.id}) for {seat.turns} turns: "
                "m or escape stops, t takes over, n goes back to the script."
            )
            self.worker = self._start(
                partial(self._model_plays, seat), "_model_plays", "The model in the player's seat"
            )

    async def _model_plays(self, seat: Seat) -> None:
        self.playing_model = True
        session = self.host.session
        try:
            for _ in range(seat.turns):
                if self.stop_after_turn:
                    break
                result = await session.send_played(seat)
                if result.status == "failed":
                    self.host.notify("A turn failed: the model left the player's seat.", severity="error")
                    break
        finally:
            self.playing_model = False
            self.stop_after_turn = False
            self.host.refresh_panels()
            after, self._after_model = self._after_model, None
            if after == "next" and session.next_entry() is not None:
                self.host.call_later(self.host.action_send_next)
