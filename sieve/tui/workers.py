"""Background work that fails where the user can see it (harlequin's pattern).

Every worker of the app and its screens is started with `@work(exit_on_error=False)`;
its state changes come to one handler, here, which turns an error into a
notification and gives the screen a chance to put itself right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker, WorkerState

from sieve.errors import SieveError
from sieve.safe_text import visible

if TYPE_CHECKING:
    from textual.app import App


def describe(error: BaseException) -> str:
    """What the user reads: a SieveError's own message, else the exception's type and text."""
    if isinstance(error, SieveError):
        return str(error)
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class _Reporting(Protocol):
    """What the mixin needs of the app or the screen it is mixed into."""

    @property
    def app(self) -> App[Any]: ...

    def worker_failed(self, worker: Worker[Any], error: BaseException) -> None: ...


class ReportsWorkerErrors:
    """Mixed into the app and every screen: the one Worker.StateChanged handler."""

    # Found by name through the MRO (a mixin has no decorated-handler table of its own).
    def on_worker_state_changed(self: _Reporting, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR or event.worker.error is None:
            return
        error = event.worker.error
        self.app.log.error(f"worker {event.worker.name} failed", error)
        self.app.notify(
            visible(describe(error)),
            title=f"{event.worker.description or event.worker.name or 'background work'} failed",
            severity="error",
            timeout=20,
            markup=False,  # an error's text may hold anything: a server's body, a reply, a file's contents
        )
        self.worker_failed(event.worker, error)

    def worker_failed(self, worker: Worker[Any], error: BaseException) -> None:
        """Put the screen right after a failure (the record itself is kept consistent by the engine)."""
