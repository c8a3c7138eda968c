"""Headless batch runs: many models (and repeats) playing one scenario concurrently.

Progress is drawn on stderr with one bar per run (rich, not Textual); the summary
is returned as rows for the caller to print.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import Progress
from sqlite_utils import Database

from sieve.engine.gateway import Gateway, RequestSettings
from sieve.engine.player import Seat
from sieve.engine.progress import bars, finished
from sieve.engine.session import Event, RetryPolicy, Session, TurnFailed, TurnFinished, TurnStarted
from sieve.safe_text import one_line
from sieve.scenarios import Scenario
from sieve.store.record import turns as record
from sieve.store.scoring import extreme
from sieve.store.scoring.runview import RunView


@dataclass(frozen=True)
class RunSpec:
    """One run to play: a model with its settings on a gateway, and which repeat it is."""

    settings: RequestSettings
    gateway: Gateway
    repeat: int = 0
    seat: Seat | None = None  # a model in the player's seat after (or instead of) the script
    follow_script: bool = True

    @property
    def label(self) -> str:
        return self.settings.model + (f" #{self.repeat + 1}" if self.repeat else "")


def summary_row(db: Database, run_id: str) -> dict[str, Any]:
    """What the summary table shows for one run, read back from the record.

    `empty` counts the replies without a word (filtered or not); `extreme` is what made the run extreme
    (store.scoring.extreme), so that a run that finished but said little says so."""
    run = record.get_run(db, run_id)
    turns = record.chosen_turns(db, run_id)
    replies = [t for t in turns if t["role"] == "assistant"]
    return {
        "run": run_id,
        "model": run["model"],
        "repeat": run["repeat"],
        "status": run["status"],
        "turns": len(replies),
        "prompt_tokens": run["prompt_tokens"],
        "completion_tokens": run["completion_tokens"],
        "cost": run["cost"],
        "filtered": sum(1 for t in replies if t["status"] == "filtered"),
        "ceiling": sum(1 for t in replies if t["status"] == "length"),
        "empty": sum(1 for t in replies if not (t["text"] or "").strip()),
        "extreme": extreme.flags(RunView.open(db, run_id)) if run["status"] != "running" else [],
        "error": run["error"],
    }


async def _play(session: Session, progress: Progress | None, task: Any) -> str:
    try:
        return await session.play()
    except asyncio.CancelledError:
        session.close("interrupted", "stopped before the script ended")
        raise
    except Exception as exc:  # a bug must not take the other runs down with it
        session.close("failed", f"{type(exc).__name__}: {exc}")
        return "failed"
    finally:
        if progress is not None:
            finished(progress, task, record.get_run(session.db, session.run_id)["status"], "played")


async def run_batch(
    db: Database,
    scenario: Scenario,
    specs: Sequence[RunSpec],
    *,
    concurrency: int = 4,
    retry: RetryPolicy | None = None,
    console: Console | None = None,
) -> list[dict[str, Any]]:
    """Play every spec to the end (at most `concurrency` at once); returns the summary rows."""
    sessions = [
        Session.start(
            db,
            scenario,
            spec.gateway,
            spec.settings,
            repeat=spec.repeat,
            retry=retry or RetryPolicy(),
            seat=spec.seat,
            follow_script=spec.follow_script,
        )
        for spec in specs
    ]
    return await play_sessions(db, sessions, [spec.label for spec in specs], concurrency=concurrency, console=console)


async def play_sessions(
    db: Database,
    sessions: Sequence[Session],
    labels: Sequence[str],
    *,
    concurrency: int = 4,
    console: Console | None = None,
) -> list[dict[str, Any]]:
    """Play existing sessions concurrently with a progress bar each."""
    # Labels are model names: data, never markup, and made visible (one_line) before drawing.
    progress = bars(console)
    gate = asyncio.Semaphore(max(1, concurrency))

    def bar(session: Session, label: str) -> Any:
        done = session.position() - (1 if session.needs_reply() else 0)
        return progress.add_task(
            one_line(label), total=session.planned_turns(), completed=max(0, done), status="waiting"
        )

    async def one(session: Session, task: Any) -> None:
        def on_event(event: Event) -> None:
            if isinstance(event, TurnStarted) and event.role == "assistant":
                progress.update(task, status="streaming")
            elif isinstance(event, TurnFinished) and event.status != "cancelled":
                progress.update(task, advance=1, status=event.status)
            elif isinstance(event, TurnFailed):
                progress.update(task, status=f"retry in {event.retry_in:.0f}s" if event.will_retry else "failed")

        session.on_event = on_event
        session.reviewer_cancels = False  # nobody is watching: a stop is an interruption
        session.stream_deltas = False  # progress bars count turns, not tokens
        async with gate:
            await _play(session, progress, task)

    # Every bar before the display starts: a bar added to a running display redraws all of them.
    tasks = [bar(session, label) for session, label in zip(sessions, labels)]
    with progress:
        await asyncio.gather(*(one(session, task) for session, task in zip(sessions, tasks)))
    return [summary_row(db, s.run_id) for s in sessions]
